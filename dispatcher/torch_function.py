"""torch's ``__torch_function__`` layer (torch/overrides.py and its torch._C half), tensor-agnostic.

A function that takes tensors asks ``has_torch_function(args)`` and, when
true, returns ``handle_torch_function(itself, args, *args, **kwargs)``:
the innermost active ``TorchFunctionMode`` sees the call first (popped
from the mode stack while its handler runs, as torch does), then each
overloaded argument's type's ``__torch_function__`` (a subclass before its
bases, otherwise left to right), until one returns something other than
NotImplemented.  An argument is *overloaded* when its type has a
``__torch_function__`` and is neither a plain tensor type (registered by
the tensor library with ``register_plain_tensor_type``: torch's exact
Tensor) nor one whose handler is ``disabled_torch_function_impl``.

The state is per thread, as torch's: ``DisableTorchFunctionSubclass``
turns off the subclasses' handlers (modes still run),
``DisableTorchFunction`` turns off both, and ``redispatch_function`` lets
the next check answer False once (torch's ``_skip_one_hop_torch_function``).

Who checks (the callers of this module) is the tensor library's business;
for the prototype see dispatcher/prototype/torch_function_methods.py.  So
that plain tensors pay nothing, the library can ask to hear when the first
mode is pushed and the last popped (``on_mode_stack_change``) and install
checking paths only while a mode is active.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

__all__ = ["BaseTorchFunctionMode", "DisableTorchFunction", "DisableTorchFunctionSubclass", "TorchFunctionMode",
           "disabled_torch_function_impl", "get_overloaded_args", "handle_bound_call", "handle_self_call",
           "handle_torch_function", "has_bound_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_torch_function_mode_enabled", "mode_stack_len",
           "on_mode_stack_change", "pop_mode", "push_mode", "redispatch_function", "register_plain_tensor_type", "register_unchecked_type"]

# torch's TorchFunctionDisabledState
ENABLED, SUBCLASSES_DISABLED, ALL_DISABLED = 0, 1, 2


class _State(threading.local):
    def __init__(self) -> None:
        self.disabled = ENABLED
        self.modes: list[TorchFunctionMode] = []
        self.skip_one_hop = False


_state = _State()
# Types whose instances never overload (torch's exact Tensor and Parameter).
_plain_types: set[type] = set()
# Callables that call without a check of their own (this package's torch.ops
# objects: the engine's call path has none, see Note [torch.ops calls] in
# dispatcher/prototype/torch_function_methods.py): redispatch_function calls
# them as they are, leaving no hop to skip for the calls inside them.
_unchecked_types: set[type] = set()
# Called with True when some thread's first mode is pushed, False when the
# last thread's last mode is popped (the library swaps its checking paths).
_mode_listeners: list[Callable[[bool], None]] = []
_modes_active_in_threads = 0
_listener_lock = threading.Lock()


def disabled_torch_function_impl(func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
    """torch._C._disabled_torch_function_impl: a type whose ``__torch_function__``
    is this one does not overload (its calls go straight to ``func``)."""
    return func(*args, **(kwargs or {}))


def register_plain_tensor_type(cls: type) -> None:
    """Instances of ``cls`` (exactly) never overload: the tensor library's base tensor type."""
    _plain_types.add(cls)


def register_unchecked_type(cls: type) -> None:
    """Instances of ``cls`` are callables that make no ``__torch_function__`` check."""
    _unchecked_types.add(cls)


def on_mode_stack_change(listener: Callable[[bool], None]) -> None:
    """Call ``listener(True)`` when a mode becomes active in a thread where none
    was and no other thread had one, ``listener(False)`` when none is left."""
    _mode_listeners.append(listener)


def _handler(cls: type) -> Any:
    handler = getattr(cls, "__torch_function__", None)
    return getattr(handler, "__func__", handler)


def _overloads(value: Any) -> bool:
    cls = type(value)
    if cls in _plain_types:
        return False
    handler = _handler(cls)
    return handler is not None and handler is not disabled_torch_function_impl


def _consume_skip() -> bool:
    if _state.skip_one_hop:
        _state.skip_one_hop = False
        return True
    return False


def is_torch_function_mode_enabled() -> bool:
    """torch._C._is_torch_function_mode_enabled: a mode is pushed and modes are not disabled."""
    return bool(_state.modes) and _state.disabled != ALL_DISABLED


def _flatten(relevant_args: Iterable[Any]) -> Iterator[Any]:
    # torch looks into lists and tuples of tensors (TensorList arguments).
    for arg in relevant_args:
        if isinstance(arg, (list, tuple)):
            yield from arg
        else:
            yield arg


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """torch.overrides.has_torch_function: whether a call with these arguments
    must go through ``handle_torch_function`` (lists among them are not looked into)."""
    if _consume_skip():
        return False
    if _state.modes and _state.disabled != ALL_DISABLED:
        return True
    return _state.disabled == ENABLED and any(_overloads(arg) for arg in relevant_args)


def has_bound_torch_function(relevant_args: Iterable[Any]) -> bool:
    """has_torch_function as torch's C++ bindings ask it: tensors in list arguments count."""
    if _consume_skip():
        return False
    if _state.modes and _state.disabled != ALL_DISABLED:
        return True
    return _state.disabled == ENABLED and any(_overloads(arg) for arg in _flatten(relevant_args))


def has_torch_function_unary(arg: Any) -> bool:
    """torch._C._has_torch_function_unary."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """torch._C._has_torch_function_variadic."""
    return has_torch_function(args)


def get_overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """torch.overrides._get_overloaded_args: one argument per type with a
    ``__torch_function__`` that is not disabled (plain tensors too: this is
    the Python side's list), a subclass before its bases, otherwise in the
    arguments' order."""
    return _overloaded(relevant_args, with_plain=True)


def _overloaded(relevant_args: Iterable[Any], with_plain: bool) -> list[Any]:
    found: list[Any] = []
    seen: set[type] = set()
    for arg in _flatten(relevant_args):
        cls = type(arg)
        if cls in seen or not (_overloads(arg) or (with_plain and cls in _plain_types)):
            continue
        seen.add(cls)
        position = next((i for i, other in enumerate(found) if issubclass(cls, type(other))), len(found))
        found.insert(position, arg)
    return found


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """torch.overrides.handle_torch_function: the mode, then the overloaded
    arguments' handlers (plain tensors' among them, as torch's Python side
    has it), with ``public_api``, the overloading types and the call's
    arguments; a TypeError when none of them implements it."""
    return _handle(public_api, _overloaded(relevant_args, with_plain=True), args, kwargs)


def handle_bound_call(public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
    """handle_torch_function as torch's C++ bindings do it (its Tensor methods
    taking arguments, torch.* functions, OpOverload calls): plain tensors
    are not among the overloaded arguments and types."""
    return _handle(public_api, _overloaded(relevant_args, with_plain=False), args, kwargs)


def handle_self_call(public_api: Callable[..., Any], self: Any) -> Any:
    """handle_torch_function as torch's C++ Tensor methods without arguments
    do it (``x.neg()``, ``x.dim()``): the types are ``self``'s, plain or not."""
    return _handle(public_api, [self], (self,), {}, subclasses_off_clears=False)


def _handle(public_api: Callable[..., Any], overloaded: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
            subclasses_off_clears: bool = True) -> Any:
    # With the subclasses' handlers off, a mode sees no types, but for torch's
    # argument-less methods (which give self's type whatever the state).
    if _state.disabled != ENABLED and subclasses_off_clears:
        overloaded = []
    types = tuple(type(arg) for arg in overloaded)
    if is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public_api, '__module__', None)}.{getattr(public_api, '__name__', public_api)}"
    message = (f"no implementation found for '{name}' on types that implement __torch_function__: "
               f"{[type(arg) for arg in overloaded]}")
    if is_torch_function_mode_enabled():
        message += f" nor in mode {_state.modes[-1]}"
    raise TypeError(message)


def redispatch_function(func: Callable[..., Any], types: Sequence[type], args: Sequence[Any] = (),
                        kwargs: Optional[dict[str, Any]] = None) -> Any:
    """torch.overrides.redispatch_function: call ``func`` with the next
    ``__torch_function__`` check (``func``'s own) answering False, so that
    ``func``'s implementation runs and the calls inside it are checked again."""
    if type(func) in _unchecked_types:
        return func(*args, **(kwargs or {}))
    saved = _state.skip_one_hop
    _state.skip_one_hop = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _state.skip_one_hop = saved


def is_tensor_like(value: Any, tensor_type: Optional[type] = None) -> bool:
    """torch.overrides.is_tensor_like: a tensor, or an object whose type has a ``__torch_function__``.
    ``tensor_type`` is the library's tensor type (default: the registered plain types)."""
    bases = tuple(_plain_types) if tensor_type is None else (tensor_type,)
    return isinstance(value, bases) or hasattr(type(value), "__torch_function__")


class _DisabledState:
    """A context manager setting the thread's disabled state (restored on exit)."""

    _level = ENABLED

    def __enter__(self) -> "_DisabledState":
        self._saved = _state.disabled
        _state.disabled = max(self._saved, self._level)
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.disabled = self._saved


class DisableTorchFunctionSubclass(_DisabledState):
    """torch._C.DisableTorchFunctionSubclass: subclasses' ``__torch_function__`` does not run inside; modes do."""

    _level = SUBCLASSES_DISABLED


class DisableTorchFunction(_DisabledState):
    """torch._C.DisableTorchFunction: neither subclasses' ``__torch_function__`` nor modes run inside."""

    _level = ALL_DISABLED


def _notify(active: bool) -> None:
    for listener in _mode_listeners:
        listener(active)


def push_mode(mode: "TorchFunctionMode") -> None:
    """torch._C._push_on_torch_function_stack."""
    global _modes_active_in_threads
    if not _state.modes:
        with _listener_lock:
            _modes_active_in_threads += 1
            if _modes_active_in_threads == 1:
                _notify(True)
    _state.modes.append(mode)


def pop_mode() -> "TorchFunctionMode":
    """torch._C._pop_torch_function_stack."""
    global _modes_active_in_threads
    if not _state.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _state.modes.pop()
    if not _state.modes:
        with _listener_lock:
            _modes_active_in_threads -= 1
            if _modes_active_in_threads == 0:
                _notify(False)
    return mode


def mode_stack_len() -> int:
    """torch._C._len_torch_function_stack."""
    return len(_state.modes)


@contextlib.contextmanager
def _pop_mode_temporarily() -> Iterator["TorchFunctionMode"]:
    mode = pop_mode()
    try:
        yield mode
    finally:
        push_mode(mode)


class TorchFunctionMode:
    """torch.overrides.TorchFunctionMode: ``with Mode():`` makes the mode's
    ``__torch_function__(func, types, args, kwargs)`` see every checked call
    in the thread; inside it the mode is off (``with self:`` turns it on again)."""

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> "TorchFunctionMode":
        push_mode(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> "TorchFunctionMode":
        raise RuntimeError("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`")


class BaseTorchFunctionMode(TorchFunctionMode):
    """torch.overrides.BaseTorchFunctionMode: a mode that calls the function as it is."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))
