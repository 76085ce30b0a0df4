"""torch.utils.weak's tables keyed by object identity: ``WeakIdRef`` and ``WeakIdKeyDictionary``.

A tensor's ``==`` is elementwise and its hash its identity, so the weakref
module's WeakKeyDictionary (which compares keys with ``==``) cannot key on
tensors; these compare the referents by identity (``is``) and hash by
``id``, as torch's do.  Any object that can be weakly referenced works as a
key: TensorBase instances can (Note [Weak references to tensors] in
dispatcher/_engine/core.py).
"""
from __future__ import annotations

import builtins
import weakref
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Callable, Generic, Iterable, Optional, TypeVar, Union

__all__ = ["WeakIdKeyDictionary", "WeakIdRef", "WeakTensorKeyDictionary"]

K = TypeVar("K")
V = TypeVar("V")


class WeakIdRef(weakref.ref[Any]):
    """A weak reference hashed by its referent's ``id`` and equal to another
    exactly when both referents are alive and the same object (or, once one
    is dead, when the references themselves are the same object)."""

    __slots__ = ("_id",)

    def __init__(self, key: Any, callback: Optional[Callable[[Any], Any]] = None) -> None:
        # The id is kept: after the referent dies the hash must not change,
        # so that the dead reference can still be found and removed.
        self._id = id(key)
        super().__init__(key, callback)  # type: ignore[call-arg]  # weakref.ref's __init__ takes both

    def __call__(self) -> Any:
        referent = super().__call__()
        # torch's hook for objects that keep a Python wrapper alive by hand.
        fix = getattr(referent, "_fix_weakref", None)
        if fix is not None:
            fix()
        return referent

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakIdRef):
            return NotImplemented
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other


class WeakIdKeyDictionary(MutableMapping[K, V], Generic[K, V]):
    """A mapping whose keys are held weakly and compared by identity: an
    entry goes when its key dies (torch.utils.weak.WeakIdKeyDictionary)."""

    def __init__(self, dict: Union[Mapping[K, V], Iterable[tuple[K, V]], None] = None,  # noqa: A002 - torch's name
                 ref_type: type[WeakIdRef] = WeakIdRef) -> None:
        self.ref_type = ref_type
        self.data: builtins.dict[WeakIdRef, V] = {}
        self_ref = weakref.ref(self)

        def remove(key_ref: WeakIdRef) -> None:
            table = self_ref()
            if table is not None:
                table.data.pop(key_ref, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key: K) -> V:
        return self.data[self.ref_type(key)]

    def __setitem__(self, key: K, value: V) -> None:
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key: K) -> None:
        del self.data[self.ref_type(key)]

    def __contains__(self, key: object) -> bool:
        try:
            ref = self.ref_type(key)
        except TypeError:  # cannot be weakly referenced: cannot be a key
            return False
        return ref in self.data

    def __len__(self) -> int:
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __iter__(self) -> Iterator[K]:
        for ref in list(self.data):
            key = ref()
            if key is not None:
                yield key

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"

    def get(self, key: K, default: Any = None) -> Any:
        return self.data.get(self.ref_type(key), default)

    def copy(self) -> "WeakIdKeyDictionary[K, V]":
        return type(self)(list(self.items()), ref_type=self.ref_type)

    __copy__ = copy

    def setdefault(self, key: K, default: Any = None) -> Any:
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def pop(self, key: K, *default: Any) -> Any:
        return self.data.pop(self.ref_type(key), *default)


# torch's older name for the same class.
WeakTensorKeyDictionary = WeakIdKeyDictionary
