"""Where the prototype runs torch's ``__torch_function__`` layer (dispatcher/torch_function.py):
Tensor's methods and operators, and the functions given to ``checked_function``.

torch checks on every Tensor method call; here plain tensors pay nothing:

- a subclass of Tensor gets, at its creation, a checking wrapper for each
  of Tensor's methods it does not define itself (``x + 1``, ``x.sum()``
  on a subclass instance reach its ``__torch_function__``, whose default,
  Tensor's, gives results the subclass's type), unless its
  ``__torch_function__`` is disabled: as torch's metaclass does, a
  subclass with a ``__torch_dispatch__`` and Tensor's default
  ``__torch_function__`` gets ``disabled_torch_function_impl``;
- while a ``TorchFunctionMode`` is active in any thread, Tensor itself
  carries the wrappers (put on when the first mode is pushed, taken off
  when the last is popped), so the mode sees plain tensors' methods too.

Handlers get as ``func`` the method's checking function, named as torch
names it: ``Tensor.add`` for ``x + y`` and ``y + x``, ``Tensor.mul`` for
``*``, and so on (``OPERATOR_METHODS``); calling it checks again, as
torch's methods do.  Outside a mode it is not ``Tensor.add`` itself
(that is the unchecked method): compare ``func.__name__``.  The types
are those torch gives (``PYTHON_METHODS``, ``BOUND_WITH_ARGUMENTS``).

Note [torch.ops calls]
torch also checks when an OpOverload or a packet is called.  Here
``ops.<ns>.<op>`` calls go straight into the engine (its call path has no
room for a check without costing every call), so they do not see
``__torch_function__``; a custom operator's CustomOpDef makes the check
itself (custom_ops.py).

Not covered: Tensor's properties (torch gives ``x.shape`` to the handler
as ``getset_descriptor.__get__``), the prototype's private helpers (names
starting with ``_``), and ``__hash__`` (a tensor hashes by identity, with
no handler asked).
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable, TypeVar

from dispatcher import torch_function
from dispatcher.torch_function import (handle_bound_call, handle_self_call, handle_torch_function,
                                       has_bound_torch_function, has_torch_function)

from .subclassing import default_torch_function, disabled_torch_function_impl
from .tensor import SUBCLASS_HOOKS, Tensor, answers_its_operators

__all__ = ["OPERATOR_METHODS", "PYTHON_METHODS", "checked_function"]

_F = TypeVar("_F", bound=Callable[..., Any])

# The method torch gives a handler for an operator (torch binds these dunders to the method).
OPERATOR_METHODS = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul", "__rmul__": "mul",
                    "__truediv__": "div", "__neg__": "neg", "__matmul__": "matmul", "__pow__": "pow"}
# Tensor's methods that torch writes in Python (torch/_tensor.py): they call
# torch.overrides.handle_torch_function, whose types include plain tensors'.
# The others are C++ bindings: without arguments (x.neg(), x.dim()) their
# handlers get self's type; with arguments, the overloading types only.
PYTHON_METHODS = frozenset({"split", "__repr__", "__format__", "__deepcopy__", "__reduce_ex__", "backward", "__rsub__",
                            "__rtruediv__", "__len__", "storage", "__rpow__", "__rmatmul__", "__iter__", "__contains__",
                            "__array__", "unique", "norm", "__reversed__", "register_hook"})
# Methods torch binds with arguments (types as above) where the prototype's take none.
BOUND_WITH_ARGUMENTS = frozenset({"all", "any", "clone", "cpu", "nonzero", "stride"})
_KEEP_OWN_PATH = {"__init__", "__init_subclass__", "__new__", "__torch_function__", "__torch_dispatch__", "__hash__"}


def _methods() -> dict[str, tuple[type, Callable[..., Any]]]:
    """Tensor's checked methods by name: the class holding each and the function."""
    found: dict[str, tuple[type, Callable[..., Any]]] = {}
    for owner in reversed(Tensor.__mro__[:-1]):
        for name, value in vars(owner).items():
            private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
            if isinstance(value, types.FunctionType) and not private and name not in _KEEP_OWN_PATH:
                found[name] = (owner, value)
    return found


def _checking(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """Tensor's method ``method`` checking first, under torch's name ``name``.
    It is also what handlers get as ``func`` (torch's methods check when
    called: a mode's handler calling ``func`` reaches the next mode, a
    subclass's default handler the method itself)."""
    def python_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        relevant = (self, *args, *kwargs.values()) if kwargs else (self, *args)
        if has_torch_function(relevant):
            return handle_torch_function(checked, relevant, self, *args, **kwargs)
        return method(self, *args, **kwargs)

    def bound_without_arguments(self: Any) -> Any:
        if has_torch_function((self,)):
            return handle_self_call(checked, self)
        return method(self)

    def bound_with_arguments(self: Any, *args: Any, **kwargs: Any) -> Any:
        relevant = (self, *args, *kwargs.values()) if kwargs else (self, *args)
        if has_bound_torch_function(relevant):
            return handle_bound_call(checked, relevant, self, *args, **kwargs)
        return method(self, *args, **kwargs)

    checked: Callable[..., Any]
    if name in PYTHON_METHODS:
        checked = python_method
    elif name not in BOUND_WITH_ARGUMENTS and _takes_only_self(method):
        checked = bound_without_arguments
    else:
        checked = bound_with_arguments
    functools.update_wrapper(checked, method)
    checked.__name__, checked.__qualname__ = name, f"Tensor.{name}"
    # A class that replaces the method (python_metadata.py's slow paths) keeps the
    # check: ``checked.checking(other)`` checks, then runs ``other``.
    checked.checking = lambda other: _checking(other, name)  # type: ignore[attr-defined]
    return checked


def _takes_only_self(method: Callable[..., Any]) -> bool:
    parameters = list(inspect.signature(method).parameters.values())
    return len(parameters) == 1 and parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


def checked_function(fn: _F) -> _F:
    """``fn`` checking ``__torch_function__`` on its arguments first, as torch's
    C++ functions do (a torch.* function); handlers get the checking function."""
    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        relevant = (*args, *kwargs.values()) if kwargs else args
        if has_bound_torch_function(relevant):
            return handle_bound_call(checked, relevant, *args, **kwargs)
        return fn(*args, **kwargs)
    return checked  # type: ignore[return-value]


_ORIGINALS = _methods()
_CHECKED = {name: _checking(method, name) for name, (_, method) in _ORIGINALS.items()
            if name not in OPERATOR_METHODS}
# An operator is its method's checking function under torch (x + y calls Tensor.add).
_WRAPPERS = {**_CHECKED, **{name: _CHECKED[method] for name, method in OPERATOR_METHODS.items()
                            if name in _ORIGINALS and method in _CHECKED}}


def _defined_below_tensor(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if klass is Tensor:
            return False
        if name in vars(klass):
            return True
    return False


def install_checks(cls: type) -> None:
    """Give subclass ``cls`` the checking wrappers of the methods it does not define."""
    for name, wrapper in _WRAPPERS.items():
        if not _defined_below_tensor(cls, name):
            setattr(cls, name, wrapper)


def _on_new_subclass(cls: type) -> None:
    if answers_its_operators(cls) and _handler(cls) is default_torch_function:
        # torch's metaclass: a subclass with a __torch_dispatch__ and Tensor's
        # default __torch_function__ has its __torch_function__ disabled.
        cls.__torch_function__ = staticmethod(disabled_torch_function_impl)  # type: ignore[attr-defined]
    if _handler(cls) is not disabled_torch_function_impl:
        install_checks(cls)


def _handler(cls: type) -> Any:
    handler = getattr(cls, "__torch_function__", None)
    return getattr(handler, "__func__", handler)


def _mode_stack_changed(active: bool) -> None:
    """Tensor's own methods check while a mode is active, and are themselves again after."""
    for name, (owner, method) in _ORIGINALS.items():
        if active:
            setattr(Tensor, name, _WRAPPERS[name])
        elif owner is Tensor:
            setattr(Tensor, name, method)
        else:
            delattr(Tensor, name)


def _existing_subclasses(cls: type) -> list[type]:
    found: list[type] = []
    subclasses: list[type] = type.__subclasses__(cls)
    for subclass in subclasses:
        found += [subclass, *_existing_subclasses(subclass)]
    return found


torch_function.register_plain_tensor_type(Tensor)
torch_function.on_mode_stack_change(_mode_stack_changed)
SUBCLASS_HOOKS.append(_on_new_subclass)
for _subclass in _existing_subclasses(Tensor):
    _on_new_subclass(_subclass)
