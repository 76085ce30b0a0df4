"""``torch.inference_mode``: calls that record nothing, and the inference tensors they make.

As c10's InferenceMode guard, entering ``inference_mode()`` takes
ADInplaceOrView out of the thread's included keys and puts the autograd keys
in its excluded ones, so nothing is recorded; ``inference_mode(False)`` (inside
one) puts them back.  It is a context manager and a decorator, as torch's.

A tensor made in inference mode is an *inference tensor* (``is_inference()``):
its keys have neither autograd nor ADInplaceOrView, and it has no version
counter.  As torch's, outside inference mode such a tensor

* may not be written in place ("Inplace update to inference tensor outside
  InferenceMode is not allowed..."),
* may not be saved for backward by an autograd-recorded call,
* may not be made to require grad, and
* has no ``_version``.

Inside inference mode, normal tensors still carry ADInplaceOrView: their
in-place writes bump their version counter and their views are tracked.

What differs from torch: an inference tensor made to require grad does not
record inside ``inference_mode(False)`` (it has no autograd keys; torch's
does), and a refused in-place write leaves the tensor as it was (torch's
``add_`` writes, then refuses).
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Optional, TypeVar

from dispatcher._core import ENGINE
from dispatcher.keys import DispatchKey
from dispatcher.keysets import AUTOGRAD_DISPATCH_KEYSET

__all__ = [
    "INFERENCE_VERSION_COUNTER", "InferenceVersionCounter", "check_inference_write", "inference_mode",
    "is_inference_mode_enabled", "making_inference_tensors",
]

F = TypeVar("F", bound=Callable[..., Any])

_INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")
SAVED_FOR_BACKWARD = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
NO_VERSION = "Inference tensors do not track version counter."
REQUIRES_GRAD_OUTSIDE = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."


class _State(threading.local):
    enabled = False  # this thread's InferenceMode::is_enabled()


_state = _State()
# How many threads are in inference mode now: tensor factories ask the
# thread-local state only when some thread is (one global read otherwise).
_threads_inside = [0]
_count_lock = threading.Lock()


def is_inference_mode_enabled() -> bool:
    """torch.is_inference_mode_enabled."""
    return _state.enabled


def making_inference_tensors() -> bool:
    """Whether a tensor made now is an inference tensor (this thread is in inference mode)."""
    return bool(_threads_inside[0]) and _state.enabled


class InferenceVersionCounter:
    """An inference tensor's version counter: there is none (torch's disabled
    VariableVersion).  Autograd reads a tensor's version when it saves it, so
    reading one outside inference mode is the "cannot be saved for backward"
    error; inside it, an ADInplaceOrView kernel's bump of it (a write into an
    inference tensor with a normal tensor's keys) changes nothing, as torch's."""

    __slots__ = ()

    @property
    def value(self) -> int:
        if not _state.enabled:
            raise RuntimeError(SAVED_FOR_BACKWARD)
        return 0

    @value.setter
    def value(self, new: int) -> None:
        check_inference_write_allowed()


INFERENCE_VERSION_COUNTER = InferenceVersionCounter()


def check_inference_write_allowed() -> None:
    if not _state.enabled:
        raise RuntimeError(_INPLACE_OUTSIDE)


def check_inference_write(t: Any) -> None:
    """An in-place write to ``t``: refused for an inference tensor outside inference mode."""
    if getattr(t, "_version_counter", None) is INFERENCE_VERSION_COUNTER:
        check_inference_write_allowed()


class inference_mode:  # noqa: N801  (torch's name)
    """``with inference_mode():`` / ``@inference_mode()`` / ``@inference_mode``
    (see the module's docstring); ``inference_mode(False)`` turns it off inside one."""

    def __new__(cls, mode: Any = True) -> Any:
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        if not callable(mode):
            raise TypeError(f"inference_mode() takes a bool (mode) or a function to decorate, not {type(mode).__name__}")
        return cls()(mode)  # ``@inference_mode`` without parentheses

    def __init__(self, mode: Optional[bool] = True) -> None:
        self.mode = True if mode is None else mode
        self._saved: list[tuple[Any, Any, bool]] = []

    def __enter__(self) -> None:
        included, excluded = ENGINE.tls_local_include_set(), ENGINE.tls_local_exclude_set()
        self._saved.append((included, excluded, _state.enabled))
        inplace_or_view = ENGINE.DispatchKeySet(DispatchKey.ADInplaceOrView)
        if self.mode:
            ENGINE.tls_set_local_include_set(included - inplace_or_view)
            ENGINE.tls_set_local_exclude_set(excluded | AUTOGRAD_DISPATCH_KEYSET)
        else:
            ENGINE.tls_set_local_include_set(included | inplace_or_view)
            ENGINE.tls_set_local_exclude_set(excluded - AUTOGRAD_DISPATCH_KEYSET)
        self._set_enabled(self.mode)

    def __exit__(self, *exc_info: object) -> None:
        included, excluded, enabled = self._saved.pop()
        ENGINE.tls_set_local_include_set(included)
        ENGINE.tls_set_local_exclude_set(excluded)
        self._set_enabled(enabled)

    @staticmethod
    def _set_enabled(enabled: bool) -> None:
        if enabled == _state.enabled:
            return
        with _count_lock:
            _threads_inside[0] += 1 if enabled else -1
        _state.enabled = enabled

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def run_in_mode(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return run_in_mode  # type: ignore[return-value]

    def clone(self) -> "inference_mode":
        """A new guard of the same mode (torch's: a decorated function enters its own on each call)."""
        return type(self)(self.mode)
