"""The engines: the hot side of the dispatcher, compiled or pure Python.

Both come from one source, ``core.py`` (see its docstring).  An engine is a
module with the names of ``core.__all__``; the registration side is given
one (``Dispatcher(engine)``), and the package's public names come from the
default engine:

  DISPATCHER_NO_EXTENSIONS=1     the default is the pure-Python engine even
                                 if the compiled one is built
  DISPATCHER_REQUIRE_EXTENSION=1 importing fails if the compiled engine is
                                 not built (CI sets it, so a broken build
                                 cannot pass as the pure engine)

The pure-Python engine is loaded only when asked for (``pure_engine()``):
a process using the compiled engine never imports it.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType
from typing import Optional

from .._env import env_flag

__all__ = ["HAS_EXTENSION", "compiled_engine", "default_engine", "loaded_engines", "pure_engine"]

_CORE_SOURCE = os.path.join(os.path.dirname(__file__), "core.py")
_PURE_NAME = __name__ + ".core_py"


def _load_compiled() -> Optional[ModuleType]:
    try:
        from . import _fastcall, core
    except ImportError as exc:
        if env_flag("DISPATCHER_REQUIRE_EXTENSION"):
            raise ImportError(
                "DISPATCHER_REQUIRE_EXTENSION is set but the compiled engine could not be imported "
                f"({exc}); build it with `pip install .`"
            ) from exc
        return None
    if not core.COMPILED:
        # No extension was built: ``core`` is core.py itself, the pure engine.
        if env_flag("DISPATCHER_REQUIRE_EXTENSION"):
            raise ImportError(
                "DISPATCHER_REQUIRE_EXTENSION is set but dispatcher._engine.core is not compiled; "
                "build it with `pip install .`"
            )
        sys.modules[_PURE_NAME] = core
        return None
    _fastcall.install()
    return core


_compiled = _load_compiled()


def compiled_engine() -> Optional[ModuleType]:
    """The compiled engine, or None if it is not built."""
    return _compiled


def pure_engine() -> ModuleType:
    """The pure-Python engine: core.py run as Python, under its own module name."""
    module = sys.modules.get(_PURE_NAME)
    if module is None:
        spec = importlib.util.spec_from_file_location(_PURE_NAME, _CORE_SOURCE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[_PURE_NAME] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[_PURE_NAME]
            raise
    return module


def loaded_engines() -> list[ModuleType]:
    """The engines this process has loaded (neither loads here)."""
    pure = sys.modules.get(_PURE_NAME)
    return [engine for engine in (_compiled, pure) if engine is not None]


HAS_EXTENSION = _compiled is not None and not env_flag("DISPATCHER_NO_EXTENSIONS")


def default_engine() -> ModuleType:
    """The engine the package's public names come from."""
    return _compiled if HAS_EXTENSION and _compiled is not None else pure_engine()
