# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled core of the dispatcher: keysets, thread-local state, tensors.

``dispatcher/_core_py.py`` is its pure-Python twin: same names, same
behaviour.  The layout tables come from ``dispatcher._layout`` at import, so
the bit layout is described in one place; this module only does the
arithmetic on them fast.
"""
cimport cython
from libc.stdint cimport uint16_t, uint64_t

from dispatcher import _layout
from dispatcher.keys import (
    NUM_BACKENDS as _NUM_BACKENDS_PY,
    NUM_FUNCTIONALITY_KEYS as _NUM_FUNCTIONALITY_KEYS_PY,
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

cdef extern from "dispatcher_bits.h":
    int index_of_highest_bit "dispatcher_index_of_highest_bit"(uint64_t x) nogil
    int popcount "dispatcher_popcount"(uint64_t x) nogil
    uint64_t tls_included_delta "dispatcher_tls_included_delta"
    uint64_t tls_excluded_delta "dispatcher_tls_excluded_delta"

cdef enum:
    MAX_FUNCTIONALITY_KEYS = 64
    MAX_KEY_VALUES = 256

cdef int NUM_BACKENDS = _NUM_BACKENDS_PY
cdef int NUM_FUNCTIONALITY_KEYS = _NUM_FUNCTIONALITY_KEYS_PY
cdef uint64_t FULL_BACKEND_MASK = _layout.FULL_BACKEND_MASK
cdef uint64_t FULL_REPR = _layout.FULL_REPR

# See Note [Runtime table index] in dispatcher/_layout.py.
cdef uint16_t OFFSETS[MAX_FUNCTIONALITY_KEYS]
cdef uint64_t MASKS[MAX_FUNCTIONALITY_KEYS]
# For a per-backend functionality f, the value of its StartOf<f>Backends
# sentinel, so that PER_BACKEND_START[f] + backend is the runtime key; else 0.
cdef int PER_BACKEND_START[MAX_FUNCTIONALITY_KEYS]
# Functionality bits (shifted down by NUM_BACKENDS) of the per-backend functionalities.
cdef uint64_t PER_BACKEND_FUNCTIONALITY_BITS = 0
cdef uint64_t KEY_REPRS[MAX_KEY_VALUES]
cdef int NUM_KEY_VALUES = len(_layout.KEYS_BY_VALUE)
cdef tuple KEYS_BY_VALUE = _layout.KEYS_BY_VALUE
cdef tuple BACKENDS_BY_VALUE = tuple(BackendComponent)

assert len(_layout.OFFSETS) == NUM_FUNCTIONALITY_KEYS <= MAX_FUNCTIONALITY_KEYS
assert NUM_KEY_VALUES <= MAX_KEY_VALUES


def _load_tables():
    global PER_BACKEND_FUNCTIONALITY_BITS
    cdef int f, v
    for f in range(NUM_FUNCTIONALITY_KEYS):
        if is_per_backend_functionality_key(f):
            PER_BACKEND_FUNCTIONALITY_BITS |= (<uint64_t>1) << (f - 1)
        OFFSETS[f] = _layout.OFFSETS[f]
        MASKS[f] = _layout.MASKS[f]
        PER_BACKEND_START[f] = (
            to_runtime_per_backend_functionality_key(f, BackendComponent.CPUBit) - 1
            if is_per_backend_functionality_key(f) else 0
        )
    for v in range(NUM_KEY_VALUES):
        KEY_REPRS[v] = _layout.KEY_REPRS[v]


_load_tables()


cdef inline DispatchKeySet _make(uint64_t bits):
    cdef DispatchKeySet ks = DispatchKeySet.__new__(DispatchKeySet)
    ks.repr_ = bits
    return ks


cdef uint64_t _check_repr(object x) except? 0:
    if not isinstance(x, int) or isinstance(x, bool):
        raise TypeError(f"a raw DispatchKeySet repr must be an int, not {type(x).__name__}")
    if x < 0 or x > 0xFFFFFFFFFFFFFFFF:
        raise ValueError(f"raw DispatchKeySet repr {x} is not a 64-bit unsigned integer")
    if x & ~_layout.FULL_REPR:
        raise ValueError(
            f"raw DispatchKeySet repr {x:#x} sets bits above the {_layout.FULL_REPR.bit_length()} "
            "bits that name backends and functionalities"
        )
    return <uint64_t>x


cdef inline uint64_t _key_bits(object key) except? 0:
    return KEY_REPRS[<int>as_dispatch_key(key)]


cdef inline uint64_t _backend_bits(object backend) except? 0:
    cdef int b = BackendComponent(backend)
    return 0 if b == 0 else (<uint64_t>1) << (b - 1)


cdef uint64_t _bits_of(object item) except? 0:
    """The bits of one constructor item: a key, a key name, a backend or a set."""
    if isinstance(item, DispatchKeySet):
        return (<DispatchKeySet>item).repr_
    if isinstance(item, BackendComponent):
        return _backend_bits(item)
    return _key_bits(item)


cdef inline uint64_t _keyset_arg(object ks, str what) except? 0:
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(f"{what} expects a DispatchKeySet, got {type(ks).__name__}")
    return (<DispatchKeySet>ks).repr_


cdef inline int _table_index(uint64_t r) noexcept nogil:
    cdef int f = index_of_highest_bit(r >> NUM_BACKENDS)
    return OFFSETS[f] + index_of_highest_bit((r & MASKS[f]) >> 1)


cdef inline int _highest_priority_value(uint64_t r) noexcept nogil:
    cdef int f = index_of_highest_bit(r >> NUM_BACKENDS)
    if PER_BACKEND_START[f]:
        return PER_BACKEND_START[f] + index_of_highest_bit(r & FULL_BACKEND_MASK)
    return f


@cython.final
@cython.freelist(64)
cdef class DispatchKeySet:
    """An immutable set of dispatch keys in c10's 64-bit representation.

    ``DispatchKeySet()`` is empty; ``DispatchKeySet(key)`` takes a DispatchKey,
    a key name, a BackendComponent or another set; ``DispatchKeySet([k1, k2])``
    is their union.  See Note [DispatchKeySet bit layout] in dispatcher/_layout.py.
    """
    cdef uint64_t repr_

    def __init__(self, keys=None):
        cdef uint64_t bits = 0
        if keys is None:
            pass
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
            for item in items:
                bits |= _bits_of(item)
        self.repr_ = bits

    @classmethod
    def from_raw_repr(cls, x):
        return _make(_check_repr(x))

    @classmethod
    def full(cls):
        return _make(FULL_REPR)

    @classmethod
    def full_after(cls, key):
        """Every key of lower priority than ``key``, plus PythonDispatcher."""
        return _make(_layout.full_after_repr(as_dispatch_key(key)))

    def __reduce__(self):
        return (DispatchKeySet.from_raw_repr, (self.repr_,))

    def raw_repr(self):
        return self.repr_

    # -- set algebra ------------------------------------------------------
    def __or__(self, other):
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make((<DispatchKeySet>self).repr_ | (<DispatchKeySet>other).repr_)

    def __and__(self, other):
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make((<DispatchKeySet>self).repr_ & (<DispatchKeySet>other).repr_)

    def __sub__(self, other):
        # c10 keeps the backend bits: removing CPU from {CPU, CUDA} must not
        # drop the CPU bit that CUDA's functionality (Dense) still uses.
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make((<DispatchKeySet>self).repr_ & (FULL_BACKEND_MASK | ~(<DispatchKeySet>other).repr_))

    def __xor__(self, other):
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make((<DispatchKeySet>self).repr_ ^ (<DispatchKeySet>other).repr_)

    def __eq__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return self.repr_ == (<DispatchKeySet>other).repr_

    def __ne__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return self.repr_ != (<DispatchKeySet>other).repr_

    def __hash__(self):
        return hash(self.repr_)

    def __bool__(self):
        return self.repr_ != 0

    def empty(self):
        return self.repr_ == 0

    def has(self, key):
        cdef uint64_t bits = _key_bits(key)
        return self.repr_ & bits == bits

    def __contains__(self, key):
        return self.has(key)

    def has_backend(self, backend):
        cdef uint64_t bits = _backend_bits(backend)
        return self.repr_ & bits == bits

    def has_all(self, ks):
        cdef uint64_t bits = _keyset_arg(ks, "has_all")
        return self.repr_ & bits == bits

    def is_superset_of(self, ks):
        return self.has_all(ks)

    def has_any(self, ks):
        return self.repr_ & _keyset_arg(ks, "has_any") != 0

    def add(self, key):
        return _make(self.repr_ | _bits_of(key))

    def remove(self, key):
        # Only the functionality bit goes, as in c10: other keys of the set
        # may share the backend bit.
        return _make(self.repr_ & ~(_key_bits(key) & ~FULL_BACKEND_MASK))

    def remove_backend(self, backend):
        return _make(self.repr_ & ~_backend_bits(backend))

    # -- priority -----------------------------------------------------------
    def highest_functionality_key(self):
        return KEYS_BY_VALUE[index_of_highest_bit(self.repr_ >> NUM_BACKENDS)]

    def highest_backend(self):
        return BACKENDS_BY_VALUE[index_of_highest_bit(self.repr_ & FULL_BACKEND_MASK)]

    def highest_priority_key(self):
        """c10's highestPriorityTypeId: the key this set dispatches to."""
        key = KEYS_BY_VALUE[_highest_priority_value(self.repr_)]
        # A per-backend functionality without a backend bit gives c10's
        # StartOf<F>Backends sentinel, which is no key: see
        # to_runtime_per_backend_functionality_key.
        return DispatchKey.Undefined if key is None else key

    def dispatch_table_index(self):
        """See Note [Runtime table index] in dispatcher/_layout.py."""
        return _table_index(self.repr_)

    # -- iteration ------------------------------------------------------------
    def __iter__(self):
        """Keys in c10's order: functionalities from lowest to highest
        priority, each per-backend functionality expanded over the set's
        backends from lowest to highest bit.  Backend bits on their own
        yield nothing."""
        cdef uint64_t backends = self.repr_ & FULL_BACKEND_MASK
        cdef uint64_t functionalities = self.repr_ >> NUM_BACKENDS
        cdef uint64_t bits
        cdef int f = 0, b
        while functionalities:
            f += 1
            present = functionalities & 1
            functionalities >>= 1
            if not present:
                continue
            if PER_BACKEND_START[f]:
                b = 0
                bits = backends
                while bits:
                    b += 1
                    if bits & 1:
                        yield KEYS_BY_VALUE[PER_BACKEND_START[f] + b]
                    bits >>= 1
            else:
                yield KEYS_BY_VALUE[f]

    def __len__(self):
        return _len(self.repr_)

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join([k.name for k in self]) + ")"


cdef Py_ssize_t _len(uint64_t r):
    # Each per-backend functionality counts once per backend bit.
    cdef uint64_t functionalities = r >> NUM_BACKENDS
    cdef uint64_t per_backend = functionalities & PER_BACKEND_FUNCTIONALITY_BITS
    return (popcount(functionalities ^ per_backend)
            + popcount(per_backend) * popcount(r & FULL_BACKEND_MASK))


# -- thread-local include / exclude sets --------------------------------------
# See Note [TLS stored as a difference from the defaults] in dispatcher_bits.h.
DEFAULT_INCLUDED_SET = DispatchKeySet([DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView])
DEFAULT_EXCLUDED_SET = DispatchKeySet(
    [
        DispatchKey.AutocastCPU, DispatchKey.AutocastMPS, DispatchKey.AutocastCUDA,
        DispatchKey.AutocastXPU, DispatchKey.AutocastIPU, DispatchKey.AutocastHPU,
        DispatchKey.AutocastXLA, DispatchKey.AutocastPrivateUse1,
        DispatchKey.AutocastMTIA, DispatchKey.AutocastMAIA,
    ]
)
cdef uint64_t DEFAULT_INCLUDED = (<DispatchKeySet>DEFAULT_INCLUDED_SET).repr_
cdef uint64_t DEFAULT_EXCLUDED = (<DispatchKeySet>DEFAULT_EXCLUDED_SET).repr_


cdef inline uint64_t _tls_included_bits() noexcept nogil:
    return tls_included_delta ^ DEFAULT_INCLUDED


cdef inline uint64_t _tls_excluded_bits() noexcept nogil:
    return tls_excluded_delta ^ DEFAULT_EXCLUDED


def tls_local_include_set():
    return _make(_tls_included_bits())


def tls_local_exclude_set():
    return _make(_tls_excluded_bits())


def tls_set_local_include_set(ks):
    global tls_included_delta
    tls_included_delta = _keyset_arg(ks, "tls_set_local_include_set") ^ DEFAULT_INCLUDED


def tls_set_local_exclude_set(ks):
    global tls_excluded_delta
    tls_excluded_delta = _keyset_arg(ks, "tls_set_local_exclude_set") ^ DEFAULT_EXCLUDED


def tls_is_dispatch_key_included(key):
    cdef uint64_t bits = _key_bits(key)
    return _tls_included_bits() & bits == bits


def tls_is_dispatch_key_excluded(key):
    cdef uint64_t bits = _key_bits(key)
    return _tls_excluded_bits() & bits == bits


def tls_set_dispatch_key_included(key, state):
    global tls_included_delta
    cdef uint64_t bits = _key_bits(key)
    cdef uint64_t ks = _tls_included_bits()
    ks = ks | bits if state else ks & ~(bits & ~FULL_BACKEND_MASK)
    tls_included_delta = ks ^ DEFAULT_INCLUDED


def tls_set_dispatch_key_excluded(key, state):
    global tls_excluded_delta
    cdef uint64_t bits = _key_bits(key)
    cdef uint64_t ks = _tls_excluded_bits()
    ks = ks | bits if state else ks & ~(bits & ~FULL_BACKEND_MASK)
    tls_excluded_delta = ks ^ DEFAULT_EXCLUDED


# -- tensors --------------------------------------------------------------------
cdef class TensorBase:
    """Base for tensor types: carries the DispatchKeySet the dispatcher reads."""
    cdef DispatchKeySet _key_set

    def __cinit__(self, *args, **kwargs):
        # Set before any __init__ runs, so a subclass that forgets to call
        # TensorBase.__init__ still has a (empty) keyset, never None.
        self._key_set = _EMPTY_SET

    def __init__(self, key_set=None):
        self.key_set = DispatchKeySet() if key_set is None else key_set

    @property
    def key_set(self):
        return self._key_set

    @key_set.setter
    def key_set(self, ks):
        if not isinstance(ks, DispatchKeySet):
            raise TypeError(f"key_set must be a DispatchKeySet, not {type(ks).__name__}")
        self._key_set = ks


cdef DispatchKeySet _EMPTY_SET = _make(0)

# See Note [Tensor type cache] in dispatcher/_core_py.py.
cdef object _BY_ATTRIBUTE = object()
cdef dict _registered_types = {}
cdef dict _type_cache = {}
cdef unsigned long _Py_TPFLAGS_IMMUTABLETYPE = 1 << 8


def register_tensor_type(cls, key_set_or_function):
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


def unregister_tensor_type(cls):
    if cls not in _registered_types:
        raise KeyError(f"{cls!r} is not a registered tensor type")
    del _registered_types[cls]
    _type_cache.clear()


cdef object _classify(type tp):
    for base in tp.__mro__:
        if base in _registered_types:
            return _registered_types[base]
    if hasattr(tp, "__dispatch_keys__") or not tp.__flags__ & _Py_TPFLAGS_IMMUTABLETYPE:
        return _BY_ATTRIBUTE
    return None


cdef DispatchKeySet _checked(object ks, object obj):
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(
            f"the dispatch keys of a {type(obj).__name__} must be a DispatchKeySet, "
            f"got {type(ks).__name__}"
        )
    return <DispatchKeySet>ks


cpdef object tensor_key_set(object obj):
    """The DispatchKeySet of ``obj`` if the dispatcher treats it as a tensor, else None."""
    if isinstance(obj, TensorBase):
        return (<TensorBase>obj)._key_set
    tp = type(obj)
    how = _type_cache.get(tp, _type_cache)
    if how is _type_cache:
        how = _type_cache[tp] = _classify(tp)
    if how is None:
        return None
    if how is _BY_ATTRIBUTE:
        ks = getattr(obj, "__dispatch_keys__", None)
        return None if ks is None else _checked(ks, obj)
    if isinstance(how, DispatchKeySet):
        return how
    return _checked(how(obj), obj)
