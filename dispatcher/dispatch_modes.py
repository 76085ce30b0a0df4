"""Dispatch modes, as ``torch.utils._python_dispatch`` has them.

A ``TorchDispatchMode`` sees every operator call of its thread while it is
active::

    class Logging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)                          # the overload handle: aten.add.Tensor
            return func(*args, **(kwargs or {}))  # on to the next mode, or the kernels

    with Logging():
        ops.aten.add.Tensor(x, y)

``with mode:`` pushes it on the thread's mode stack and puts the Python keys
in the thread's included set, so every call reaches the Python key, plain
tensors included; its handler runs with the mode popped, so that what it
calls goes to the next mode down, or to the kernels.  Tensor subclasses that
define ``__torch_dispatch__`` (a classmethod) are the other way in: their
tensors carry the Python keys themselves.  What happens at those keys is
Note [The Python key] in dispatcher/_engine/core.py.

The stack is the engine's, one per thread.  The functions here use the
stack of the engine of the registry in use (Note [The registry in use] in
dispatcher/registry.py): the default engine's, unless a ``using_registry``
block names a registry on the other engine, as the tests do.
"""
from __future__ import annotations

import contextlib
import threading
from types import ModuleType, TracebackType
from typing import Any, Iterator, Optional

from .registry import registry_in_use

__all__ = [
    "BaseTorchDispatchMode",
    "RestorePythonTLSSnapshot",
    "TorchDispatchMode",
    "enable_reentrant_dispatch",
    "is_in_torch_dispatch_mode",
    "is_traceable_wrapper_subclass",
    "is_traceable_wrapper_subclass_type",
]

# Whether a mode's ``with`` block is open, and whether one of them is not an
# infra mode: set by ``TorchDispatchMode.__enter__`` and put back by
# ``__exit__`` (so a handler, which runs with its mode off the stack, still
# counts as inside the mode).  torch keeps the two flags as module globals;
# here they are per thread, as the mode stack is: with globals, two threads
# leaving their modes out of order leave the flags set for good.
class _ModeFlags(threading.local):
    in_mode = False
    in_non_infra_mode = False


_flags = _ModeFlags()


def _engine() -> ModuleType:
    """The engine whose mode stack and TLS these functions use (see the docstring)."""
    engine: ModuleType = registry_in_use().engine
    return engine


class TorchDispatchMode:
    """Override what every operator call does, for as long as the mode is active.

    Subclass it and define ``__torch_dispatch__(self, func, types, args=(),
    kwargs=None)``: ``func`` is the operator's overload handle (``name()``,
    ``_schema``, ``overloadpacket``, ...), ``types`` the types of the
    arguments that are tensor subclasses with their own ``__torch_dispatch__``,
    ``args`` and ``kwargs`` the call as torch hands it over (positional
    arguments up to the last that is not its default, keyword-only ones that
    are not their defaults).  Return the result, or ``NotImplemented`` to let
    the tensor subclasses' handlers have the call.

    ``with mode:`` activates it on this thread (modes nest: the innermost
    runs first); calls made by the handler go to the next mode down, or to
    the kernels.  A mode is not entered into its own handler again unless the
    handler says ``with self:``.
    """

    # torch's: whether the mode's handler sees higher-order operators (this
    # package has none; the attribute is there for code that reads it).
    supports_higher_order_operators = False

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        raise NotImplementedError

    @classmethod
    def is_infra_mode(cls) -> bool:
        """Whether the mode is infrastructure (``is_in_torch_dispatch_mode(include_infra_modes=False)``
        does not count it); override to say True."""
        return False

    def __enter__(self) -> TorchDispatchMode:
        _push_mode(self)
        flags = _flags
        # A mode entered twice (``with m: with m:``) keeps one pair per entry.
        self.__dict__.setdefault("_mode_flags_before", []).append((flags.in_mode, flags.in_non_infra_mode))
        flags.in_mode = True
        flags.in_non_infra_mode = flags.in_non_infra_mode or not self.is_infra_mode()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc_value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        top = _get_current_dispatch_mode()
        if top is not self:
            # torch pops whatever is on top; that would leave this mode active.
            raise RuntimeError(
                f"{self!r} is leaving its `with` block, but the top of this thread's dispatch-mode stack is "
                f"{top!r}: modes must be left in the reverse order they were entered "
                "(a _push_mode without its _pop_mode?)"
            )
        _pop_mode()
        _flags.in_mode, _flags.in_non_infra_mode = self.__dict__["_mode_flags_before"].pop()


class BaseTorchDispatchMode(TorchDispatchMode):
    """A mode that runs every call as it is: a base for modes that only watch."""

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """Whether a mode's ``with`` block is open on this thread (torch's flag, set
    by entering a TorchDispatchMode and put back by leaving it); with
    ``include_infra_modes=False``, whether one open is not an infra mode."""
    return _flags.in_mode if include_infra_modes else _flags.in_non_infra_mode


def _has_traceable_wrapper_subclass_protocol(t: object) -> bool:
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t: object) -> bool:
    """Whether ``t`` is a tensor of a subclass that has ``__tensor_flatten__``
    and ``__tensor_unflatten__`` (torch's test of its traceable-wrapper protocol)."""
    base = _engine().TensorBase
    return isinstance(t, base) and type(t) is not base and _has_traceable_wrapper_subclass_protocol(t)


def is_traceable_wrapper_subclass_type(t: type) -> bool:
    """is_traceable_wrapper_subclass for a type."""
    base = _engine().TensorBase
    return issubclass(t, base) and t is not base and _has_traceable_wrapper_subclass_protocol(t)


def _get_current_dispatch_mode() -> Any:
    """The mode a call reaches first on this thread (the top of its stack), or None."""
    stack = _engine().dispatch_mode_stack()
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack() -> list[Any]:
    """This thread's modes, the one a call reaches first last."""
    stack: list[Any] = _engine().dispatch_mode_stack()
    return stack


def _push_mode(mode: Any) -> None:
    """Push ``mode`` on this thread's stack (what ``with mode:`` does on entry).

    Raises TypeError for an object without ``__torch_dispatch__`` and
    RuntimeError for one whose ``__torch_dispatch__`` is a classmethod or
    staticmethod (torch raises that when a call first reaches the mode).
    """
    _engine().push_dispatch_mode(mode)


def _pop_mode() -> Any:
    """Pop this thread's top mode and return it; RuntimeError if there is none."""
    return _engine().pop_dispatch_mode()


@contextlib.contextmanager
def _pop_mode_temporarily() -> Iterator[Any]:
    """``with _pop_mode_temporarily() as mode:`` -- the top mode, off the stack for the block."""
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


@contextlib.contextmanager
def _disable_current_modes() -> Iterator[list[Any]]:
    """``with _disable_current_modes() as modes:`` -- every mode off the stack for
    the block (``modes``, the one a call reached first last), put back after."""
    old = [_pop_mode() for _ in range(len(_engine().dispatch_mode_stack()))]
    try:
        yield old
    finally:
        for mode in reversed(old):
            _push_mode(mode)


class RestorePythonTLSSnapshot:
    """``torch._C._RestorePythonTLSSnapshot``: inside a ``__torch_dispatch__``
    handler, run a block with this thread's include/exclude sets as they were
    when the outermost call under way entered the dispatcher (so the block's
    calls go through autograd and the other keys above Python again).

    Outside a handler there is no snapshot: entering raises RuntimeError.
    The sets and the snapshot are put back on leaving the block.
    """

    def __init__(self) -> None:
        self._saved: Optional[tuple[Any, Any, Any]] = None

    def __enter__(self) -> RestorePythonTLSSnapshot:
        if self._saved is not None:
            raise RuntimeError("this RestorePythonTLSSnapshot is already active; use a new one to nest")
        snapshot = _engine().python_tls_snapshot()
        if snapshot is None:
            raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.")
        self._saved = (snapshot, _engine().tls_local_include_set(), _engine().tls_local_exclude_set())
        _engine().tls_set_local_include_set(snapshot[0])
        _engine().tls_set_local_exclude_set(snapshot[1])
        _engine().set_python_tls_snapshot(None)
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc_value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        saved = self._saved
        if saved is None:
            raise RuntimeError("RestorePythonTLSSnapshot was exited without being entered")
        self._saved = None
        snapshot, included, excluded = saved
        _engine().tls_set_local_include_set(included)
        _engine().tls_set_local_exclude_set(excluded)
        _engine().set_python_tls_snapshot(snapshot)


def enable_reentrant_dispatch() -> RestorePythonTLSSnapshot:
    """``with enable_reentrant_dispatch():`` -- ``torch.overrides``' name for the
    same guard, for a handler whose calls should go through the whole
    dispatcher again."""
    return RestorePythonTLSSnapshot()
