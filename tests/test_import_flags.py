"""The environment switches that choose the core (see dispatcher/_core.py)."""
import os
import subprocess
import sys

import pytest

from dispatcher import _engine


def run(code, **env):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCHER_")}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True)


def test_no_extensions_forces_the_twin():
    out = run("import dispatcher; print(dispatcher.HAS_EXTENSION, type(dispatcher.DispatchKeySet()).__module__)",
              DISPATCHER_NO_EXTENSIONS="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "dispatcher._engine.core_py"]


def test_extension_is_used_when_built():
    if _engine.compiled_engine() is None:
        pytest.skip("compiled engine not built")
    code = ("import sys, dispatcher; print(dispatcher.HAS_EXTENSION, type(dispatcher.DispatchKeySet()).__module__, "
            "'dispatcher._engine.core_py' in sys.modules)")
    out = run(code)
    # The pure-Python engine is not even imported when the compiled one is used.
    assert out.stdout.split() == ["True", "dispatcher._engine.core", "False"], out.stderr


def test_require_extension_raises_when_missing():
    # sys.modules[name] = None makes that import fail, as a missing build would.
    code = "import sys; sys.modules['dispatcher._engine._fastcall'] = None; import dispatcher"
    out = run(code, DISPATCHER_REQUIRE_EXTENSION="1")
    assert out.returncode != 0
    assert "ImportError" in out.stderr and "DISPATCHER_REQUIRE_EXTENSION" in out.stderr
    assert run(code).returncode == 0  # without the flag the twin takes over


def test_both_engines_declare_the_same_names():
    pure = _engine.pure_engine()
    assert not pure.COMPILED
    compiled = _engine.compiled_engine()
    if compiled is None:
        pytest.skip("compiled engine not built")
    assert compiled.COMPILED
    assert compiled.__all__ == pure.__all__
    assert all(hasattr(compiled, name) and hasattr(pure, name) for name in pure.__all__)
