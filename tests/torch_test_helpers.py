"""torch's own test helpers, ``torch.testing._internal.logging_tensor``
(LoggingTensor, LoggingTensorMode, capture_logs) and
``torch.testing._internal.two_tensor`` (TwoTensor), run through the torch
shim exactly as PyTorch's test files are: from copies of torch 2.13's files
at ``$DISPATCHER_UPSTREAM/testing_internal/<name>.py`` (outside the
repository, as the test files are).  Without a copy the module is
``unavailable_module``, naming the helper.

The names of torch those files use beyond the test files' are given here:
the prototype's (dtype abbreviations, weak tensor dictionaries,
return_and_correct_aliasing, enable_reentrant_dispatch) and, for the export
and dynamo decorators and the traceback gatherer of torch's profiler, which
the helpers apply as they load but the tests here never ask for, the
function as it is (a decorator) or Unavailable naming the feature.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import dispatcher.prototype.python_dispatch as python_dispatch
import dispatcher.weak
from dispatcher.prototype.dtypes import dtype_abbrs

from . import torch_test_files as files
from .torch_shim import overrides_module
from .torch_test_files import Unavailable, unavailable_module

INTERNAL = "torch.testing._internal"
# The file of each helper module, in $DISPATCHER_UPSTREAM/testing_internal/.
HELPERS = {f"{INTERNAL}.logging_tensor": "logging_tensor.py", f"{INTERNAL}.two_tensor": "two_tensor.py",
           f"{INTERNAL}.common_subclass": "common_subclass.py"}
PROFILER = "torch's profiler (C++ tracebacks)"


def _module(name: str, **names: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(names)
    return module


def _as_it_is(fn: Callable[..., Any]) -> Callable[..., Any]:
    """torch._disable_dynamo and export's constructor marker: they change only
    what torch.compile and torch.export see."""
    return fn


def _symbolize_tracebacks(tracebacks: list[Any]) -> list[Any]:
    """torch._C._profiler.symbolize_tracebacks, which capture_logs calls on
    leaving: the tracebacks gathered (none unless a traceback was asked for,
    which gather_traceback refuses)."""
    if tracebacks:
        raise NotImplementedError(f"symbolize_tracebacks needs {PROFILER}, which this package does not have")
    return []


def call_time_modules(compile_feature: str) -> dict[str, types.ModuleType]:
    """Modules the helpers import while they run: TwoTensor's handler compares
    its operator with torch.cond's (torch.compile's: ``compile_feature``);
    ``torch.overrides`` and the names of ``torch.utils._python_dispatch`` the
    helpers use."""
    return {
        "torch._higher_order_ops": _module("torch._higher_order_ops"),
        "torch._higher_order_ops.cond": unavailable_module(
            "torch._higher_order_ops.cond", compile_feature, cond_op=Unavailable("torch.cond", compile_feature)),
        "torch.overrides": overrides_module(),
        "torch.utils._python_dispatch": python_dispatch,  # type: ignore[dict-item]
    }


def _load_time_modules() -> dict[str, types.ModuleType]:
    return {
        "torch.utils._dtype_abbrs": _module("torch.utils._dtype_abbrs", dtype_abbrs=dtype_abbrs),
        "torch.utils.weak": dispatcher.weak,  # type: ignore[dict-item]
        "torch._C._profiler": _module("torch._C._profiler", symbolize_tracebacks=_symbolize_tracebacks,
                                      gather_traceback=Unavailable("torch._C._profiler.gather_traceback", PROFILER)),
        "torch._export": _module("torch._export"),
        "torch._export.wrappers": _module("torch._export.wrappers",
                                          mark_subclass_constructor_exportable_experimental=_as_it_is),
    }


def helper_modules(modules: dict[str, types.ModuleType], unavailable: dict[str, str]) -> dict[str, types.ModuleType]:
    """The helper modules (by their names in sys.modules), each loaded through the
    shim with ``modules`` installed, or ``unavailable_module(name, unavailable[name])``
    without a copy.  A copy that does not load gives an unavailable module
    whose feature says why (the tests using it fail with that)."""
    loaded: dict[str, types.ModuleType] = {}
    for name, filename in HELPERS.items():
        path = files.UPSTREAM / "testing_internal" / filename
        if not path.is_file():
            loaded[name] = unavailable_module(name, unavailable[name])
            continue
        module = types.ModuleType(name)
        module.__file__ = str(path)
        try:
            with files.torch_installed(modules | _load_time_modules() | loaded) as torch:
                torch._disable_dynamo = _as_it_is  # type: ignore[attr-defined]
                exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
        except Exception as exc:  # noqa: BLE001  (reported by the tests that use the module)
            loaded[name] = unavailable_module(name, f"{unavailable[name]}: its copy at {path} does not load "
                                                    f"through the shim ({type(exc).__name__}: {exc})")
            continue
        loaded[name] = module
    return loaded
