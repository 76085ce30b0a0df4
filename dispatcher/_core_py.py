"""Pure-Python twin of the compiled core ``dispatcher._C``.

Same names, same behaviour, slower.  It is used when the extension is not
built or ``DISPATCHER_NO_EXTENSIONS=1`` is set, and every test of the core
runs against both (see tests/conftest.py).  Keep the two files in step:
a change to one is a change to the other.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from . import _layout
from ._layout import FULL_BACKEND_MASK, FULL_REPR, KEY_REPRS, KEYS_BY_VALUE, MASKS, OFFSETS
from .keys import (
    NUM_BACKENDS,
    BackendComponent,
    DispatchKey,
    as_dispatch_key,
    is_per_backend_functionality_key,
    to_runtime_per_backend_functionality_key,
)

__all__ = [
    "DEFAULT_EXCLUDED_SET",
    "DEFAULT_INCLUDED_SET",
    "DispatchKeySet",
    "TensorBase",
    "register_tensor_type",
    "tensor_key_set",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
    "tls_set_local_exclude_set",
    "tls_set_local_include_set",
    "unregister_tensor_type",
]

_UINT64_MAX = (1 << 64) - 1
# Functionality bits (shifted down by NUM_BACKENDS) of the per-backend functionalities.
_PER_BACKEND_FUNCTIONALITY_BITS = sum(1 << (f - 1) for f in range(1, 64) if is_per_backend_functionality_key(f))


def _check_repr(x: object) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise TypeError(f"a raw DispatchKeySet repr must be an int, not {type(x).__name__}")
    if x < 0 or x > _UINT64_MAX:
        raise ValueError(f"raw DispatchKeySet repr {x} is not a 64-bit unsigned integer")
    if x & ~FULL_REPR:
        raise ValueError(
            f"raw DispatchKeySet repr {x:#x} sets bits above the {FULL_REPR.bit_length()} "
            "bits that name backends and functionalities"
        )
    return x


def _bits_of(item: object) -> int:
    """The bits of one constructor item: a key, a key name, a backend or a set."""
    if isinstance(item, DispatchKeySet):
        return item._repr
    if isinstance(item, BackendComponent):
        return _layout.backend_repr(item)
    return KEY_REPRS[as_dispatch_key(item)]  # type: ignore[arg-type]


def _keyset_arg(ks: object, what: str) -> int:
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(f"{what} expects a DispatchKeySet, got {type(ks).__name__}")
    return ks._repr


class DispatchKeySet:
    """An immutable set of dispatch keys in c10's 64-bit representation.

    ``DispatchKeySet()`` is empty; ``DispatchKeySet(key)`` takes a DispatchKey,
    a key name, a BackendComponent or another set; ``DispatchKeySet([k1, k2])``
    is their union.  See Note [DispatchKeySet bit layout] in dispatcher/_layout.py.
    """

    __slots__ = ("_repr",)
    _repr: int

    def __init__(self, keys: Any = None) -> None:
        if keys is None:
            bits = 0
        elif isinstance(keys, (DispatchKeySet, str, int)):
            bits = _bits_of(keys)
        else:
            try:
                items = iter(keys)
            except TypeError:
                raise TypeError(
                    "DispatchKeySet() takes a DispatchKey, a key name, a BackendComponent, "
                    f"a DispatchKeySet or an iterable of those, not {type(keys).__name__}"
                ) from None
            bits = 0
            for item in items:
                bits |= _bits_of(item)
        object.__setattr__(self, "_repr", bits)

    @classmethod
    def _from_bits(cls, bits: int) -> "DispatchKeySet":
        ks = object.__new__(cls)
        object.__setattr__(ks, "_repr", bits)
        return ks

    @classmethod
    def from_raw_repr(cls, x: int) -> "DispatchKeySet":
        return cls._from_bits(_check_repr(x))

    @classmethod
    def full(cls) -> "DispatchKeySet":
        return cls._from_bits(FULL_REPR)

    @classmethod
    def full_after(cls, key: Any) -> "DispatchKeySet":
        """Every key of lower priority than ``key``, plus PythonDispatcher."""
        return cls._from_bits(_layout.full_after_repr(as_dispatch_key(key)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DispatchKeySet is immutable")

    def __reduce__(self):
        return (DispatchKeySet.from_raw_repr, (self._repr,))

    def raw_repr(self) -> int:
        return self._repr

    # -- set algebra ------------------------------------------------------
    def __or__(self, other: object) -> "DispatchKeySet":
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._from_bits(self._repr | other._repr)

    def __and__(self, other: object) -> "DispatchKeySet":
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._from_bits(self._repr & other._repr)

    def __sub__(self, other: object) -> "DispatchKeySet":
        # c10 keeps the backend bits: removing CPU from {CPU, CUDA} must not
        # drop the CPU bit that CUDA's functionality (Dense) still uses.
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._from_bits(self._repr & (FULL_BACKEND_MASK | ~other._repr))

    def __xor__(self, other: object) -> "DispatchKeySet":
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._from_bits(self._repr ^ other._repr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return self._repr == other._repr

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return self._repr != other._repr

    def __hash__(self) -> int:
        return hash(self._repr)

    def __bool__(self) -> bool:
        return self._repr != 0

    def empty(self) -> bool:
        return self._repr == 0

    def has(self, key: Any) -> bool:
        bits = KEY_REPRS[as_dispatch_key(key)]
        return self._repr & bits == bits

    def __contains__(self, key: object) -> bool:
        return self.has(key)

    def has_backend(self, backend: BackendComponent) -> bool:
        bits = _layout.backend_repr(BackendComponent(backend))
        return self._repr & bits == bits

    def has_all(self, ks: "DispatchKeySet") -> bool:
        bits = _keyset_arg(ks, "has_all")
        return self._repr & bits == bits

    def is_superset_of(self, ks: "DispatchKeySet") -> bool:
        return self.has_all(ks)

    def has_any(self, ks: "DispatchKeySet") -> bool:
        return self._repr & _keyset_arg(ks, "has_any") != 0

    def add(self, key: Any) -> "DispatchKeySet":
        return DispatchKeySet._from_bits(self._repr | _bits_of(key))

    def remove(self, key: Any) -> "DispatchKeySet":
        # Only the functionality bit goes, as in c10: other keys of the set
        # may share the backend bit.
        bits = KEY_REPRS[as_dispatch_key(key)]
        return DispatchKeySet._from_bits(self._repr & ~(bits & ~FULL_BACKEND_MASK))

    def remove_backend(self, backend: BackendComponent) -> "DispatchKeySet":
        return DispatchKeySet._from_bits(self._repr & ~_layout.backend_repr(BackendComponent(backend)))

    # -- priority -----------------------------------------------------------
    def highest_functionality_key(self) -> DispatchKey:
        f = (self._repr >> NUM_BACKENDS).bit_length()
        return KEYS_BY_VALUE[f]  # type: ignore[return-value]

    def highest_backend(self) -> BackendComponent:
        return BackendComponent((self._repr & FULL_BACKEND_MASK).bit_length())

    def highest_priority_key(self) -> DispatchKey:
        """c10's highestPriorityTypeId: the key this set dispatches to."""
        f = self.highest_functionality_key()
        if is_per_backend_functionality_key(f):
            return to_runtime_per_backend_functionality_key(f, self.highest_backend())
        return f

    def dispatch_table_index(self) -> int:
        """See Note [Runtime table index] in dispatcher/_layout.py."""
        r = self._repr
        f = (r >> NUM_BACKENDS).bit_length()
        return OFFSETS[f] + ((r & MASKS[f]) >> 1).bit_length()

    # -- iteration ------------------------------------------------------------
    def __iter__(self) -> Iterator[DispatchKey]:
        """Keys in c10's order: functionalities from lowest to highest
        priority, each per-backend functionality expanded over the set's
        backends from lowest to highest bit.  Backend bits on their own
        yield nothing."""
        r = self._repr
        backends = r & FULL_BACKEND_MASK
        functionalities = r >> NUM_BACKENDS
        f = 0
        while functionalities:
            f += 1
            present = functionalities & 1
            functionalities >>= 1
            if not present:
                continue
            if is_per_backend_functionality_key(f):
                b, bits = 0, backends
                while bits:
                    b += 1
                    if bits & 1:
                        yield to_runtime_per_backend_functionality_key(f, b)
                    bits >>= 1
            else:
                yield KEYS_BY_VALUE[f]  # type: ignore[misc]

    def __len__(self) -> int:
        # Each per-backend functionality counts once per backend bit.
        functionalities = self._repr >> NUM_BACKENDS
        per_backend = functionalities & _PER_BACKEND_FUNCTIONALITY_BITS
        n_backends = bin(self._repr & FULL_BACKEND_MASK).count("1")
        return bin(functionalities ^ per_backend).count("1") + bin(per_backend).count("1") * n_backends

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"


# -- thread-local include / exclude sets --------------------------------------
# Note [TLS stored as a difference from the defaults]
# Like c10's PODLocalDispatchKeySet, a thread stores its included set XOR the
# default included set, so a new thread's zero state means "the defaults"
# without any per-thread initialisation.  The compiled core does the same
# with C __thread variables; here threading.local plays that role.
DEFAULT_INCLUDED_SET = DispatchKeySet([DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView])
DEFAULT_EXCLUDED_SET = DispatchKeySet(
    [
        DispatchKey.AutocastCPU, DispatchKey.AutocastMPS, DispatchKey.AutocastCUDA,
        DispatchKey.AutocastXPU, DispatchKey.AutocastIPU, DispatchKey.AutocastHPU,
        DispatchKey.AutocastXLA, DispatchKey.AutocastPrivateUse1,
        DispatchKey.AutocastMTIA, DispatchKey.AutocastMAIA,
    ]
)
_DEFAULT_INCLUDED = DEFAULT_INCLUDED_SET._repr
_DEFAULT_EXCLUDED = DEFAULT_EXCLUDED_SET._repr


class _TLS(threading.local):
    included_delta = 0
    excluded_delta = 0


_tls = _TLS()


def _tls_included_bits() -> int:
    return _tls.included_delta ^ _DEFAULT_INCLUDED


def _tls_excluded_bits() -> int:
    return _tls.excluded_delta ^ _DEFAULT_EXCLUDED


def tls_local_include_set() -> DispatchKeySet:
    return DispatchKeySet._from_bits(_tls_included_bits())


def tls_local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet._from_bits(_tls_excluded_bits())


def tls_set_local_include_set(ks: DispatchKeySet) -> None:
    _tls.included_delta = _keyset_arg(ks, "tls_set_local_include_set") ^ _DEFAULT_INCLUDED


def tls_set_local_exclude_set(ks: DispatchKeySet) -> None:
    _tls.excluded_delta = _keyset_arg(ks, "tls_set_local_exclude_set") ^ _DEFAULT_EXCLUDED


def tls_is_dispatch_key_included(key: Any) -> bool:
    return tls_local_include_set().has(key)


def tls_is_dispatch_key_excluded(key: Any) -> bool:
    return tls_local_exclude_set().has(key)


def tls_set_dispatch_key_included(key: Any, state: bool) -> None:
    ks = tls_local_include_set()
    tls_set_local_include_set(ks.add(key) if state else ks.remove(key))


def tls_set_dispatch_key_excluded(key: Any, state: bool) -> None:
    ks = tls_local_exclude_set()
    tls_set_local_exclude_set(ks.add(key) if state else ks.remove(key))


# -- tensors --------------------------------------------------------------------
class TensorBase:
    """Base for tensor types: carries the DispatchKeySet the dispatcher reads."""

    __slots__ = ("_key_set",)

    def __new__(cls, *args: Any, **kwargs: Any) -> "TensorBase":
        # Set before any __init__ runs, so a subclass that forgets to call
        # TensorBase.__init__ still has a (empty) keyset.
        self = object.__new__(cls)
        self._key_set = _EMPTY_SET
        return self

    def __init__(self, key_set: Optional[DispatchKeySet] = None) -> None:
        self.key_set = DispatchKeySet() if key_set is None else key_set

    @property
    def key_set(self) -> DispatchKeySet:
        return self._key_set

    @key_set.setter
    def key_set(self, ks: DispatchKeySet) -> None:
        if not isinstance(ks, DispatchKeySet):
            raise TypeError(f"key_set must be a DispatchKeySet, not {type(ks).__name__}")
        self._key_set = ks


_EMPTY_SET = DispatchKeySet()

KeySetSource = Union[DispatchKeySet, Callable[[Any], DispatchKeySet]]

# Note [Tensor type cache]
# Which objects are tensors is decided per type and cached: a registered type
# (or subclass) maps to its keyset or function; a type whose instances may
# carry __dispatch_keys__ maps to _BY_ATTRIBUTE; an immutable type (int,
# str, tuple, ...) without the attribute can never grow it and maps to None.
# register_tensor_type clears the cache, so the answer never goes stale.
_BY_ATTRIBUTE = object()
_registered_types: dict = {}
_type_cache: dict = {}
_Py_TPFLAGS_IMMUTABLETYPE = 1 << 8


def register_tensor_type(cls: type, key_set_or_function: KeySetSource) -> None:
    """Make instances of ``cls`` (and its subclasses) dispatch as tensors.

    ``key_set_or_function`` is the DispatchKeySet every instance has, or a
    function from an instance to its DispatchKeySet.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_tensor_type expects a type, got {type(cls).__name__}")
    if not isinstance(key_set_or_function, DispatchKeySet) and not callable(key_set_or_function):
        raise TypeError(
            "register_tensor_type expects a DispatchKeySet or a function returning one, "
            f"got {type(key_set_or_function).__name__}"
        )
    _registered_types[cls] = key_set_or_function
    _type_cache.clear()


def unregister_tensor_type(cls: type) -> None:
    if cls not in _registered_types:
        raise KeyError(f"{cls!r} is not a registered tensor type")
    del _registered_types[cls]
    _type_cache.clear()


def _classify(tp: type) -> object:
    for base in tp.__mro__:
        if base in _registered_types:
            return _registered_types[base]
    if hasattr(tp, "__dispatch_keys__") or not tp.__flags__ & _Py_TPFLAGS_IMMUTABLETYPE:
        return _BY_ATTRIBUTE
    return None


def _checked(ks: object, obj: object) -> DispatchKeySet:
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(
            f"the dispatch keys of a {type(obj).__name__} must be a DispatchKeySet, "
            f"got {type(ks).__name__}"
        )
    return ks


def tensor_key_set(obj: object) -> Optional[DispatchKeySet]:
    """The DispatchKeySet of ``obj`` if the dispatcher treats it as a tensor, else None."""
    if isinstance(obj, TensorBase):
        return obj._key_set
    tp = type(obj)
    try:
        how = _type_cache[tp]
    except KeyError:
        how = _type_cache[tp] = _classify(tp)
    if how is None:
        return None
    if how is _BY_ATTRIBUTE:
        ks = getattr(obj, "__dispatch_keys__", None)
        return None if ks is None else _checked(ks, obj)
    if isinstance(how, DispatchKeySet):
        return how
    return _checked(how(obj), obj)  # type: ignore[operator]
