"""Run a PyTorch test file (test/test_python_dispatch.py, test/test_custom_ops.py)
as PyTorch wrote it, with ``import torch`` giving tests/torch_shim.py's module
and the modules those files import from torch's test infrastructure given by
this module.

The files are not part of this repository: they are read from
``$DISPATCHER_UPSTREAM/<name>`` (default: tests/upstream/), and the tests that
run them skip without a copy (which copies are the reference, and where
they come from: tests/test_torch_test_files.py).  PyTorch is BSD-3-Clause licensed (Copyright (c)
2016- Facebook, Inc. and its contributors); a copy keeps PyTorch's notice.

What the files import that is not this package's features is a module of
``Unavailable`` names, each saying which feature of torch it is when a test
uses it (CUDA, torch.compile and dynamo, FakeTensorMode, C++ extensions,
make_fx, TorchScript, torch's OpInfo database): the tests that use them fail
with that message, and tests/torch_test_left_out.py lists them with it.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import pathlib
import sys
import types
import unittest
from typing import Any, Callable, Iterator, Optional

import numpy as np

import dispatcher.custom_ops as custom_ops_module

ROOT = pathlib.Path(__file__).resolve().parent.parent
UPSTREAM = pathlib.Path(os.environ.get("DISPATCHER_UPSTREAM") or ROOT / "tests" / "upstream")


class Unavailable:
    """A name of torch's that stands for a feature this package does not have:
    using it (calling, reading an attribute, entering it) raises
    NotImplementedError naming the feature."""

    def __init__(self, name: str, feature: str) -> None:
        self._name, self._feature = name, feature

    def _raise(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self._name} needs {self._feature}, which this package does not have")

    __call__ = __enter__ = __iter__ = _raise

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Unavailable(f"{self._name}.{name}", self._feature)

    def __mro_entries__(self, bases: tuple) -> tuple:
        # ``class X(TwoTensor)``: a class of its own whose instances cannot be made.
        return (type(self._name.rsplit(".", 1)[-1], (), {"__new__": self._raise, "__init__": self._raise}),)

    def __repr__(self) -> str:
        return f"<unavailable {self._name}: {self._feature}>"


def unavailable_module(name: str, feature: str, **names: Any) -> types.ModuleType:
    """A module whose every other attribute is Unavailable(feature)."""
    module = types.ModuleType(name, f"torch's {name} ({feature}): not in this package")
    module.__dict__.update(names)
    module.__getattr__ = lambda attr: (  # type: ignore[attr-defined]
        Unavailable(f"{name}.{attr}", feature) if not attr.startswith("__") else _no_attribute(name, attr))
    return module


def _no_attribute(module: str, attr: str) -> Any:
    raise AttributeError(f"module {module!r} has no attribute {attr!r}")


def needs(feature: str) -> Callable[..., Any]:
    """A decorator factory standing for one of torch's test decorators that needs
    ``feature``: the decorated test raises NotImplementedError naming it."""

    def decorator_factory(*args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def test(*a: Any, **k: Any) -> Any:
                raise NotImplementedError(f"{fn.__name__} needs {feature}, which this package does not have")

            return test

        return decorate

    return decorator_factory


# -- parametrize, as torch's common_utils does it: one test per value --------------------
class parametrize:  # noqa: N801  (torch's name)
    def __init__(self, arg_str: str, arg_values: Any, name_fn: Optional[Callable[..., str]] = None) -> None:
        self.names = [n.strip() for n in arg_str.split(",")]
        self.values = list(arg_values)
        self.name_fn = name_fn

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__dict__.setdefault("_parametrize", []).insert(0, self)
        return fn


class subtest:  # noqa: N801  (torch's name)
    """One value of a parametrize, with the name torch gives its test (the
    value's own name when there is none)."""

    def __init__(self, value: Any, name: Optional[str] = None, decorators: Any = None) -> None:
        self.value, self.name = value, name


def _value_name(value: Any) -> str:
    return str(getattr(value, "name", value)).replace(".", "_")


def instantiate_parametrized_tests(cls: type) -> type:
    for attr, fn in list(vars(cls).items()):
        plans = getattr(fn, "_parametrize", None)
        if not (attr.startswith("test") and plans):
            continue
        delattr(cls, attr)
        for combo in itertools.product(*[p.values for p in plans]):
            kwargs: dict[str, Any] = {}
            parts = []
            for plan, value in zip(plans, combo):
                explicit = value.name if isinstance(value, subtest) else None
                value = value.value if isinstance(value, subtest) else value
                values = value if len(plan.names) > 1 else (value,)
                kwargs.update(zip(plan.names, values))
                parts.append(explicit or (plan.name_fn(*values) if plan.name_fn else
                                          "_".join(f"{n}_{_value_name(v)}" for n, v in zip(plan.names, values))))
            name = f"{attr}_{'_'.join(parts)}"

            # ``*args``: the device of a device-type test (instantiate_device_type_tests passes it).
            def test(self: Any, *args: Any, fn: Callable[..., Any] = fn, kwargs: dict[str, Any] = kwargs) -> Any:
                return fn(self, *args, **kwargs)

            setattr(cls, name, test)
    return cls


def instantiate_device_type_tests(generic: type, scope: dict[str, Any], only_for: Any = None,
                                  except_for: Any = None, **kwargs: Any) -> None:
    """torch's: ``<Name>CPU`` with each test taking ``device="cpu"`` (no other
    device here); the generic class leaves ``scope``."""
    instantiate_parametrized_tests(generic)
    methods: dict[str, Any] = {}
    for attr, fn in vars(generic).items():
        if attr.startswith("test") and callable(fn):
            def test(self: Any, fn: Callable[..., Any] = fn) -> Any:
                return fn(self, "cpu")

            methods[f"{attr}_cpu"] = test
    name = f"{generic.__name__}CPU"
    bases = tuple(b for b in generic.__bases__)
    made = type(name, bases, {k: v for k, v in vars(generic).items() if not k.startswith("test")} | methods
                | {"__module__": generic.__module__})
    made.device_type = "cpu"  # type: ignore[attr-defined]
    scope[name] = made
    scope.pop(generic.__name__, None)


@contextlib.contextmanager
def torch_installed(extra: dict[str, types.ModuleType]) -> Iterator[types.ModuleType]:
    """The torch shim and ``extra`` modules in sys.modules inside the block;
    the attributes of ``extra["torch"]`` (a module of names) added to the shim's torch."""
    from .torch_shim import installed, restore_modules

    extra = dict(extra)
    names = extra.pop("torch", None)
    saved = {name: sys.modules.get(name) for name in extra}
    # The package logs custom ops' notices as dispatcher.custom_ops; code watching
    # torch's logger for them (assertLogs) reads torch's name.
    saved_log, custom_ops_module.log = custom_ops_module.log, logging.getLogger("torch._library.custom_ops")
    try:
        with installed() as torch:
            if names is not None:
                for attr, value in vars(names).items():
                    if not attr.startswith("__") or attr == "__getattr__":
                        setattr(torch, attr, value)
            sys.modules.update(extra)
            for name in sorted(extra):  # each a attribute of its parent, as imports make them
                parent, _, child = name.rpartition(".")
                if parent in sys.modules and child not in vars(sys.modules[parent]):
                    setattr(sys.modules[parent], child, sys.modules[name])
            try:
                yield torch
            finally:
                restore_modules(saved)
    finally:
        custom_ops_module.log = saved_log


def load(path: pathlib.Path, modules: dict[str, types.ModuleType]) -> types.ModuleType:
    """Execute PyTorch's test file at ``path`` with the shim installed."""
    module = types.ModuleType(f"pytorch_{path.stem}")
    module.__file__ = str(path)
    with torch_installed(modules):
        # dont_inherit: the file is compiled as Python would compile it, not with this
        # module's ``from __future__ import annotations`` (its annotations are evaluated).
        exec(compile(path.read_text(), str(path), "exec", dont_inherit=True), module.__dict__)
    return module


def test_cases(module: types.ModuleType) -> list[tuple[str, str]]:
    """(class, method) of every test the file's TestCase classes have."""
    return [
        (name, method)
        for name, cls in vars(module).items()
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase) and cls.__module__ == module.__name__
        for method in unittest.TestLoader().getTestCaseNames(cls)
    ]


def run_case(module: types.ModuleType, modules: dict[str, types.ModuleType], name: str, method: str) -> unittest.TestResult:
    result = unittest.TestResult()
    with torch_installed(modules), _torch_in_subprocesses(), torch_logs_uncaptured():
        getattr(module, name)(method).run(result)
    return result


@contextlib.contextmanager
def _torch_in_subprocesses() -> Iterator[None]:
    """``import torch`` gives the shim in the Pythons a test starts too
    (tests/torch_shim_path/torch), by PYTHONPATH for the block."""
    saved = os.environ.get("PYTHONPATH")
    shim_path = str(ROOT / "tests" / "torch_shim_path")
    os.environ["PYTHONPATH"] = shim_path if not saved else os.pathsep.join((shim_path, saved))
    try:
        yield
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved


@contextlib.contextmanager
def torch_logs_uncaptured() -> Iterator[None]:
    """torch's LoggingTensor logs records whose arguments are not format
    arguments (its capture_logs handler reads them), on a logger capture_logs
    makes non-propagating; pytest attaches its log-capturing handlers, which
    format every record, to such loggers.  Inside the block that logger has
    only the handlers the test adds."""
    logger = logging.getLogger("LoggingTensor")
    saved = logger.handlers[:]
    logger.handlers.clear()
    try:
        yield
    finally:
        logger.handlers[:] = saved


def as_array(value: Any) -> Optional[np.ndarray]:
    if isinstance(value, type):  # a class (assertEqual(type(x), MyTensor)) has no values
        return None
    numpy = getattr(value, "numpy", None)
    return np.asarray(numpy()) if callable(numpy) and hasattr(value, "dtype") and hasattr(value, "shape") else None
