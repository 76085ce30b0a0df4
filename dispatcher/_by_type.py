"""``ByType``: objects registered per tensor type, found for a value through its type's MRO.

A tensor library registers what the dispatcher should ask about its tensors
(an autograd engine, opcheck's checks) for its tensor class; a subclass's
instances find their nearest registered base's, as ``isinstance`` would.
"""
from __future__ import annotations

import threading
from typing import Generic, Optional, TypeVar

__all__ = ["ByType"]

_T = TypeVar("_T")


class ByType(Generic[_T]):
    """A map from classes to ``_T``, looked up by instance (nearest class in the MRO wins)."""

    def __init__(self, what: str) -> None:
        self._what = what  # for errors: "an autograd engine"
        self._lock = threading.Lock()
        self._registered: dict[type, _T] = {}
        # type(value) -> the answer, or None: lookups run on every call of a
        # custom op's Autograd kernel, so each type walks its MRO once.
        self._cache: dict[type, Optional[_T]] = {}

    def register(self, cls: type, obj: _T) -> None:
        if not isinstance(cls, type):
            raise TypeError(f"{self._what} is registered for a class (a tensor type), got {cls!r}")
        with self._lock:
            previous = self._registered.get(cls)
            if previous is not None and previous is not obj:
                raise RuntimeError(
                    f"{cls.__qualname__} already has {self._what} ({previous!r}); unregister it first"
                )
            self._registered[cls] = obj
            self._cache = {}

    def unregister(self, cls: type) -> None:
        with self._lock:
            if self._registered.pop(cls, None) is None:
                raise KeyError(f"{cls!r} has no {self._what} registered")
            self._cache = {}

    def lookup(self, value: object) -> Optional[_T]:
        """What is registered for ``value``'s type or its nearest base, if anything."""
        cls = type(value)
        try:
            return self._cache[cls]
        except KeyError:
            pass
        with self._lock:  # so that a registration cannot slip between the walk and the caching
            found = next((self._registered[c] for c in cls.__mro__ if c in self._registered), None)
            self._cache[cls] = found
        return found
