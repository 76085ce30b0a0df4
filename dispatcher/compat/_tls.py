"""``torch._C``'s thread-local dispatch key sets: the ``_dispatch_tls_*``
functions and the guards that change the sets.

Each works on the TLS of the shim registry's engine (the compiled and the
pure-Python engine keep separate sets), read when it is called or entered.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from ..keys import DispatchKey
from ._common import KeyArg, bool_arg, key_arg, keyset_arg, shim_registry

Restore = Callable[[], None]


def _engine() -> Any:
    return shim_registry().engine


# -- functions ---------------------------------------------------------------------------
def _dispatch_tls_local_include_set() -> Any:
    return _engine().tls_local_include_set()


def _dispatch_tls_local_exclude_set() -> Any:
    return _engine().tls_local_exclude_set()


def _dispatch_tls_is_dispatch_key_included(dispatch_key: KeyArg) -> bool:
    return bool(_engine().tls_is_dispatch_key_included(key_arg(dispatch_key)))


def _dispatch_tls_is_dispatch_key_excluded(dispatch_key: KeyArg) -> bool:
    return bool(_engine().tls_is_dispatch_key_excluded(key_arg(dispatch_key)))


def _dispatch_tls_set_dispatch_key_included(dispatch_key: KeyArg, desired_state: bool) -> None:
    state = bool_arg(desired_state, "_dispatch_tls_set_dispatch_key_included", "desired_state")
    _engine().tls_set_dispatch_key_included(key_arg(dispatch_key), state)


def _dispatch_tls_set_dispatch_key_excluded(dispatch_key: KeyArg, desired_state: bool) -> None:
    state = bool_arg(desired_state, "_dispatch_tls_set_dispatch_key_excluded", "desired_state")
    _engine().tls_set_dispatch_key_excluded(key_arg(dispatch_key), state)


# -- guards ------------------------------------------------------------------------------
def _entered(guard: Any) -> Restore:
    """Enter one of the engine's guards; what exits it."""
    guard.__enter__()
    return lambda: guard.__exit__(None, None, None)


class _Guard:
    """A guard as torch binds it with ``py_context_manager``: the C++ guard
    exists from ``__enter__`` to ``__exit__`` (or the object's end).  Entering again while it
    exists first ends it (``std::optional::emplace``), and ``__exit__``
    without a guard does nothing, as in torch.  ``__enter__`` returns None."""

    _restore: Optional[Restore] = None

    def _begin(self) -> Restore:
        """Change this thread's sets; return what puts them back."""
        raise NotImplementedError

    def _end(self) -> None:
        restore, self._restore = self._restore, None
        if restore is not None:
            restore()

    def __enter__(self) -> None:
        self._end()
        self._restore = self._begin()

    def __exit__(self, *exc_info: object) -> None:
        self._end()

    def __del__(self) -> None:
        # The C++ guard's destructor runs with the Python object's end.
        self._end()


class _GuardFromConstruction(_Guard):
    """A guard as torch binds it with ``py_context_manager_DEPRECATED``: the
    C++ guard starts when the object is made; ``__enter__`` does nothing, and
    ``__exit__`` or the object's end (the C++ destructor) ends it."""

    def _start(self) -> None:
        self._restore = self._begin()

    def __enter__(self) -> None:
        return None


class _AutoDispatchBelowAutograd(_GuardFromConstruction):
    """Exclude the autograd keys."""

    def __init__(self) -> None:
        self._start()

    def _begin(self) -> Restore:
        return _entered(_engine().AutoDispatchBelowAutograd())


class _AutoDispatchBelowADInplaceOrView(_Guard):
    """Exclude the autograd keys and ADInplaceOrView."""

    def _begin(self) -> Restore:
        return _entered(_engine().AutoDispatchBelowADInplaceOrView())


class _ExcludeDispatchKeyGuard(_Guard):
    """Exclude the keys of ``keyset`` (c10::impl::ExcludeDispatchKeyGuard)."""

    def __init__(self, keyset: Any) -> None:
        self._keyset = keyset_arg(keyset, _engine(), "_ExcludeDispatchKeyGuard")

    def _begin(self) -> Restore:
        engine = _engine()
        return _entered(engine.ExcludeDispatchKeyGuard(keyset_arg(self._keyset, engine, "_ExcludeDispatchKeyGuard")))


class ExcludeDispatchKeyGuard(_GuardFromConstruction):
    """``_ExcludeDispatchKeyGuard``, but active from construction (torch 2.13 binds both)."""

    def __init__(self, keyset: Any) -> None:
        self._keyset = keyset_arg(keyset, _engine(), "ExcludeDispatchKeyGuard")
        self._start()

    def _begin(self) -> Restore:
        return _entered(_engine().ExcludeDispatchKeyGuard(self._keyset))


class _IncludeDispatchKeyGuard(_Guard):
    """Include ``key`` (c10::impl::IncludeDispatchKeyGuard)."""

    def __init__(self, key: KeyArg) -> None:
        self._key = key_arg(key)

    def _begin(self) -> Restore:
        engine = _engine()
        return _entered(engine.IncludeDispatchKeyGuard(engine.DispatchKeySet(self._key)))


class _ForceDispatchKeyGuard(_Guard):
    """Make the included and excluded sets exactly ``include`` and
    ``exclude``; put the previous sets back at the end."""

    def __init__(self, include: Any, exclude: Any) -> None:
        engine = _engine()
        self._include = keyset_arg(include, engine, "_ForceDispatchKeyGuard")
        self._exclude = keyset_arg(exclude, engine, "_ForceDispatchKeyGuard")

    def _begin(self) -> Restore:
        engine = _engine()
        restore = _preserved(engine)
        engine.tls_set_local_include_set(keyset_arg(self._include, engine, "_ForceDispatchKeyGuard"))
        engine.tls_set_local_exclude_set(keyset_arg(self._exclude, engine, "_ForceDispatchKeyGuard"))
        return restore


def _preserved(engine: Any) -> Restore:
    """What puts this thread's included and excluded sets back as they are now."""
    include, exclude = engine.tls_local_include_set(), engine.tls_local_exclude_set()

    def restore() -> None:
        engine.tls_set_local_include_set(include)
        engine.tls_set_local_exclude_set(exclude)

    return restore


class _PreserveDispatchKeyGuard(_Guard):
    """Put the included and excluded sets back at the end as they were at the start."""

    def _begin(self) -> Restore:
        return _preserved(_engine())


class _SetExcludeDispatchKeyGuard(_Guard):
    """Set whether ``key`` is excluded; put its previous state back at the end."""

    def __init__(self, key: KeyArg, state: bool) -> None:
        self._key = key_arg(key)
        self._state = bool_arg(state, "_SetExcludeDispatchKeyGuard", "state")

    def _begin(self) -> Restore:
        engine, key = _engine(), self._key
        previous = engine.tls_is_dispatch_key_excluded(key)
        engine.tls_set_dispatch_key_excluded(key, self._state)
        return lambda: engine.tls_set_dispatch_key_excluded(key, previous)


class _DisableTorchDispatch(_GuardFromConstruction):
    """Exclude the Python keys (``__torch_dispatch__``) and PreDispatch."""

    def __init__(self) -> None:
        self._start()

    def _begin(self) -> Restore:
        engine = _engine()
        keys = engine.DispatchKeySet([DispatchKey.Python, DispatchKey.PreDispatch, DispatchKey.PythonTLSSnapshot])
        return _entered(engine.ExcludeDispatchKeyGuard(keys))


# Note [The Python dispatcher's state]
# torch keeps, per thread, whether the Python dispatcher is on (its
# PythonDispatcherTLS holds an interpreter, or none) apart from the
# PythonDispatcher bit of the included set: setting the state sets the bit,
# and the guards put back the state they found, so a bit set by hand
# (_dispatch_tls_set_dispatch_key_included) is not put back.
_python_dispatcher_state = threading.local()


def _python_dispatcher_on() -> bool:
    return getattr(_python_dispatcher_state, "on", False)


def _set_python_dispatcher(on: bool) -> None:
    _python_dispatcher_state.on = on
    _engine().tls_set_dispatch_key_included(DispatchKey.PythonDispatcher, on)


class _DisablePythonDispatcher(_Guard):
    """Turn the Python dispatcher off (its key out of the included set), and
    put back the state it found: Note [The Python dispatcher's state]."""

    def _begin(self) -> Restore:
        previous = _python_dispatcher_on()
        _set_python_dispatcher(False)
        return lambda: _set_python_dispatcher(previous)


class _EnablePythonDispatcher(_GuardFromConstruction):
    """Turn the Python dispatcher on from construction to the object's end:
    every call of the thread then reaches the PythonDispatcher key's fallback,
    which chooses and runs the kernel in Python (dispatcher/python_dispatcher_key.py)."""

    def __init__(self) -> None:
        self._start()

    def _begin(self) -> Restore:
        previous = _python_dispatcher_on()
        _set_python_dispatcher(True)
        return lambda: _set_python_dispatcher(previous)


class _EnablePreDispatch:
    """Not available: see the error."""

    def __init__(self) -> None:
        raise NotImplementedError(
            "_EnablePreDispatch cannot apply here: it switches on torch's pre-dispatch tracing "
            "(torch.export), which runs through the PreDispatch key's framework fallback and torch's "
            "Python modes; this package registers no PreDispatch fallback and has no such tracer"
        )
