"""The environment switches that choose the core (see dispatcher/_core.py)."""
import os
import subprocess
import sys

import pytest


def run(code, **env):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCHER_")}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True)


def test_no_extensions_forces_the_twin():
    out = run("import dispatcher; print(dispatcher.HAS_EXTENSION, type(dispatcher.DispatchKeySet()).__module__)",
              DISPATCHER_NO_EXTENSIONS="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "dispatcher._core_py"]


def test_extension_is_used_when_built():
    pytest.importorskip("dispatcher._C")
    out = run("import dispatcher; print(dispatcher.HAS_EXTENSION, type(dispatcher.DispatchKeySet()).__module__)")
    assert out.stdout.split() == ["True", "dispatcher._C"], out.stderr


def test_require_extension_raises_when_missing():
    # sys.modules[name] = None makes that import fail, as a missing build would.
    code = "import sys; sys.modules['dispatcher._C'] = None; import dispatcher"
    out = run(code, DISPATCHER_REQUIRE_EXTENSION="1")
    assert out.returncode != 0
    assert "ImportError" in out.stderr and "DISPATCHER_REQUIRE_EXTENSION" in out.stderr
    assert run(code).returncode == 0  # without the flag the twin takes over


def test_cores_and_stub_declare_the_same_names():
    import ast
    import pathlib

    from dispatcher import _core_py

    stub = ast.parse((pathlib.Path(_core_py.__file__).parent / "_C.pyi").read_text())
    declared = {
        node.name if hasattr(node, "name") else node.target.id
        for node in stub.body
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AnnAssign)) and not getattr(node, "name", "x").startswith("_")
    }
    assert set(_core_py.__all__) - {"KernelKind"} <= declared
    compiled = pytest.importorskip("dispatcher._C")
    assert compiled.__all__ == _core_py.__all__
