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
from dispatcher._kernel_kind import DUMP_STATE, KernelKind
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
    "AutoDispatchBelowADInplaceOrView",
    "AutoDispatchBelowAutograd",
    "Boxer",
    "DEFAULT_EXCLUDED_SET",
    "ExcludeDispatchKeyGuard",
    "IValue",
    "IncludeDispatchKeyGuard",
    "KernelFunction",
    "KernelKind",
    "OperatorHandle",
    "Stack",
    "DEFAULT_INCLUDED_SET",
    "DispatchKeySet",
    "TensorBase",
    "box",
    "box_returns",
    "compute_dispatch_key_set",
    "register_tensor_type",
    "set_show_dispatch_trace",
    "show_dispatch_trace",
    "tensor_key_set",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
    "tls_set_local_exclude_set",
    "tls_set_local_include_set",
    "unbox_arguments",
    "unbox_returns",
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


def compute_dispatch_key_set(keyset, mask=None):
    """c10's computeDispatchKeySet: ``((keyset | included) - excluded) & mask``
    with this thread's include/exclude sets, as a call computes its keyset."""
    cdef uint64_t bits = (_keyset_arg(keyset, "compute_dispatch_key_set") | _tls_included_bits()) & (
        FULL_BACKEND_MASK | ~_tls_excluded_bits())
    if mask is not None:
        bits &= _keyset_arg(mask, "compute_dispatch_key_set")
    return _make(bits)


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
    # _key_set's bits, kept beside it: the call path reads them with one
    # load fewer (a DispatchKeySet is immutable, so they cannot drift apart).
    cdef uint64_t _bits

    def __cinit__(self, *args, **kwargs):
        # Set before any __init__ runs, so a subclass that forgets to call
        # TensorBase.__init__ still has a (empty) keyset, never None.
        self._key_set = _EMPTY_SET
        self._bits = 0

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
        self._bits = (<DispatchKeySet>ks).repr_


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


# -- kernels -----------------------------------------------------------------------
cdef enum:
    # Mirrors dispatcher._kernel_kind.KernelKind (checked at import below).
    KIND_UNBOXED = 0
    KIND_WITH_KEYSET = 1
    KIND_BOXED = 2
    KIND_FALLTHROUGH = 3
    KIND_MISSING = 4
    KIND_AMBIGUOUS_AUTOGRAD_OTHER = 5

assert [int(k) for k in KernelKind] == [KIND_UNBOXED, KIND_WITH_KEYSET, KIND_BOXED, KIND_FALLTHROUGH,
                                        KIND_MISSING, KIND_AMBIGUOUS_AUTOGRAD_OTHER]



@cython.final
cdef class KernelFunction:
    """How to call one kernel: its kind (a KernelKind) and its callable."""
    cdef readonly int _kind
    cdef readonly object fn

    def __init__(self, kind, fn):
        self._kind = KernelKind(kind)
        self.fn = fn

    @property
    def kind(self):
        return KernelKind(self._kind)

    def is_fallthrough(self):
        return self._kind == KIND_FALLTHROUGH

    def is_valid(self):
        return self._kind != KIND_MISSING

    def dump_state(self):
        return DUMP_STATE[self._kind]

    def __repr__(self):
        return f"KernelFunction({self.kind.name}, {self.fn!r})"


# -- thread-local guards -----------------------------------------------------------
cdef uint64_t AUTOGRAD_KEYS = DispatchKeySet(
    [DispatchKey.AutogradFunctionality, DispatchKey.AutogradOther, DispatchKey.AutogradNestedTensor]).repr_
cdef uint64_t AUTOGRAD_AND_INPLACE_KEYS = AUTOGRAD_KEYS | DispatchKeySet(DispatchKey.ADInplaceOrView).repr_


cdef uint64_t _guard_bits(object keys) except? 0:
    if isinstance(keys, DispatchKeySet):
        return (<DispatchKeySet>keys).repr_
    return DispatchKeySet(keys).repr_


cdef class _TLSGuard:
    # Shared by the four guards: c10's Include/ExcludeDispatchKeyGuard.  On
    # entry only the keys not already in the set are added (``keys - set``,
    # which keeps backend bits, as c10 does), and exactly those are taken
    # out on exit, so nesting and exceptions restore the previous state.
    cdef uint64_t keys
    cdef uint64_t added
    cdef bint is_include
    cdef bint active

    def __enter__(self):
        global tls_included_delta, tls_excluded_delta
        if self.active:
            raise RuntimeError(f"{type(self).__name__} is already active; use a new guard to nest")
        self.active = True
        cdef uint64_t current = _tls_included_bits() if self.is_include else _tls_excluded_bits()
        self.added = self.keys & (FULL_BACKEND_MASK | ~current)
        if self.is_include:
            tls_included_delta = (current | self.added) ^ DEFAULT_INCLUDED
        else:
            tls_excluded_delta = (current | self.added) ^ DEFAULT_EXCLUDED
        return self

    def __exit__(self, *exc_info):
        global tls_included_delta, tls_excluded_delta
        self.active = False
        cdef uint64_t current = _tls_included_bits() if self.is_include else _tls_excluded_bits()
        current &= FULL_BACKEND_MASK | ~self.added
        if self.is_include:
            tls_included_delta = current ^ DEFAULT_INCLUDED
        else:
            tls_excluded_delta = current ^ DEFAULT_EXCLUDED
        return False


@cython.final
cdef class IncludeDispatchKeyGuard(_TLSGuard):
    """``with IncludeDispatchKeyGuard(keys):`` adds keys to this thread's included set."""

    def __init__(self, keys):
        self.keys = _guard_bits(keys)
        self.is_include = True


@cython.final
cdef class ExcludeDispatchKeyGuard(_TLSGuard):
    """``with ExcludeDispatchKeyGuard(keys):`` adds keys to this thread's excluded set."""

    def __init__(self, keys):
        self.keys = _guard_bits(keys)
        self.is_include = False


@cython.final
cdef class AutoDispatchBelowAutograd(_TLSGuard):
    """Exclude the autograd keys: calls inside go straight below autograd."""

    def __init__(self):
        self.keys = AUTOGRAD_KEYS
        self.is_include = False


@cython.final
cdef class AutoDispatchBelowADInplaceOrView(_TLSGuard):
    """Exclude the autograd keys and ADInplaceOrView."""

    def __init__(self):
        self.keys = AUTOGRAD_AND_INPLACE_KEYS
        self.is_include = False


# -- the call path ---------------------------------------------------------------------
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject_Call
from cpython.ref cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE

import os
import sys

cdef bint _show_trace = os.environ.get("DISPATCHER_SHOW_DISPATCH_TRACE", "") not in ("", "0")
cdef object _trace_state = __import__("threading").local()


def set_show_dispatch_trace(enabled):
    global _show_trace
    _show_trace = bool(enabled)


def show_dispatch_trace():
    return _show_trace


cdef void _print_trace(str what, str name, uint64_t bits) except *:
    depth = getattr(_trace_state, "depth", 0)
    key = KEYS_BY_VALUE[_highest_priority_value(bits)]
    print(f"{' ' * depth}{what} op=[{name}], key=[{key.name if key is not None else 'Undefined'}]",
          file=sys.stderr)


cdef object _ivalue = None


cdef object _boxing():
    global _ivalue
    if _ivalue is None:
        from dispatcher import ivalue  # imported late: ivalue imports the core
        _ivalue = ivalue
    return _ivalue


include "_boxing.pxi"


cdef enum:
    ARG_TENSOR = 0
    ARG_OPTIONAL_TENSOR = 1
    ARG_TENSOR_LIST = 2
    ARG_OPTIONAL_TENSOR_LIST = 3


@cython.final
cdef class _DispatchArgs:
    # Where a schema's dispatch-relevant arguments are, as C arrays.  Calls
    # hold a reference while they read it, so replacing it (a re-def) never
    # frees arrays under a running call.
    cdef Py_ssize_t n
    cdef Py_ssize_t* positions
    cdef int* kinds
    # A required tensor argument that is missing is the caller's mistake,
    # reported as Python would (via schema.bind).
    cdef bint* required
    cdef tuple names
    # When every dispatch-relevant argument is a required Tensor that can be
    # passed positionally: how many positional arguments a call needs to
    # pass them all.  A call that does has no keywords or omissions to look
    # for (the vectorcall path's fast loop).  -1 otherwise.
    cdef Py_ssize_t positional_span

    def __dealloc__(self):
        PyMem_Free(self.positions)
        PyMem_Free(self.kinds)
        PyMem_Free(self.required)


cdef _DispatchArgs _make_dispatch_args(object schema):
    cdef _DispatchArgs d = _DispatchArgs.__new__(_DispatchArgs)
    entries = () if schema is None else tuple(schema.dispatch_args)
    d.n = len(entries)
    d.names = tuple(a.name for a in entries)
    d.positions = <Py_ssize_t*>PyMem_Malloc(max(d.n, 1) * sizeof(Py_ssize_t))
    d.kinds = <int*>PyMem_Malloc(max(d.n, 1) * sizeof(int))
    d.required = <bint*>PyMem_Malloc(max(d.n, 1) * sizeof(bint))
    if d.positions == NULL or d.kinds == NULL or d.required == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    d.positional_span = 0
    for i in range(d.n):
        d.positions[i] = entries[i].position
        d.kinds[i] = int(entries[i].kind)
        argument = schema.arguments[entries[i].position]
        d.required[i] = not argument.has_default
        if d.kinds[i] != ARG_TENSOR or not d.required[i] or argument.kwarg_only or d.positional_span < 0:
            d.positional_span = -1
        else:
            d.positional_span = max(d.positional_span, d.positions[i] + 1)
    return d


@cython.final
cdef class _DispatchState:
    # The runtime table and per-backend fallthrough masks, replaced together.
    cdef tuple table
    cdef uint64_t masks[16]
    # See Note [Last dispatch cache].
    cdef uint64_t last_key
    cdef uint64_t last_bits
    cdef PyObject* last_entry  # borrowed from table

# Note [Last dispatch cache]
# Most call sites call an operator with the same kinds of tensors again and
# again.  Between the keyset a call computes (arguments | TLS include, minus
# TLS exclude) and its kernel lie the fallthrough mask, the table index (two
# count-leading-zeros and two table reads) and the entry's loads: a chain of
# dependent loads the CPU cannot overlap.  Each dispatch state remembers the
# last keyset it saw (last_key), the keyset the mask left (last_bits) and
# the entry, so a repeated call goes straight to its kernel.  The state is
# replaced whole on registration, so the memory is never stale; last_key
# starts with bit 63 set, which no keyset has (see from_raw_repr).


cdef _DispatchArgs _NO_DISPATCH_ARGS = _make_dispatch_args(None)
cdef object _NOT_GIVEN = object()

# Note [Vectorcall fast path]
# A call ``op(a, b)`` from Python arrives as a C array of arguments
# (vectorcall, PEP 590) if the type says it accepts that.  Cython's __call__
# would pack them into a tuple and a dict; instead OperatorHandle installs
# _op_vectorcall in a per-instance slot, reads the tensors straight from the
# array, and passes the same array on to an unboxed kernel: no allocation on
# the way.  A with-keyset kernel needs the keyset in front of the arguments;
# when the caller allows it (PY_VECTORCALL_ARGUMENTS_OFFSET) the slot before
# the array is borrowed for it, as PEP 590 intends.
cdef extern from *:
    """
    typedef PyObject *(*dispatcher_vectorcallfunc)(PyObject *, PyObject *const *, size_t, PyObject *);
    """
    ctypedef PyObject* (*dispatcher_vectorcallfunc)(PyObject*, PyObject**, size_t, PyObject*)

cdef extern from "Python.h":
    bint PyObject_TypeCheck(object obj, type tp)
    ctypedef struct PyTypeObject:
        Py_ssize_t tp_vectorcall_offset
        unsigned long tp_flags
    unsigned long Py_TPFLAGS_HAVE_VECTORCALL
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    Py_ssize_t PyVectorcall_NARGS(size_t nargsf)
    object PyObject_Vectorcall(object callable, PyObject** args, size_t nargsf, PyObject* kwnames)
    void PyType_Modified(PyTypeObject* tp)


@cython.final
cdef class OperatorHandle:
    """The call side of one operator: what registration publishes, and calls.

    Registration (dispatcher.operator.OperatorEntry) hands it the schema, the
    runtime table and the per-backend fallthrough masks; a call reads only
    these.  Each is replaced whole, so a call racing a registration sees the
    old state or the new one.
    """
    cdef readonly str name
    cdef readonly object schema
    cdef _DispatchState _state
    cdef _DispatchArgs _dargs
    cdef object _report_error
    cdef dispatcher_vectorcallfunc _vectorcall
    # op.redispatch(keyset, *args, **kwargs): the kernel for ``keyset`` as
    # given, with no extraction, TLS or mask (c10's Dispatcher::redispatch).
    cdef readonly _Redispatch redispatch

    def __cinit__(self, *args, **kwargs):
        self._vectorcall = <dispatcher_vectorcallfunc>_op_vectorcall
        self._dargs = _NO_DISPATCH_ARGS
        self.redispatch = _Redispatch.__new__(_Redispatch)
        self.redispatch.handle = self
        self.redispatch._vectorcall = <dispatcher_vectorcallfunc>_redispatch_vectorcall

    def __init__(self, str name):
        self.name = name

    def __repr__(self):
        return f"OperatorHandle({self.name})"

    # -- published by registration ---------------------------------------------
    def _set_dispatch_state(self, tuple table, tuple masks):
        if len(table) != len(_layout.RUNTIME_SLOT_KEYS) or len(masks) != NUM_BACKENDS:
            raise ValueError("a dispatch state has one entry per runtime slot and one mask per backend")
        for entry in table:
            if not isinstance(entry, KernelFunction):
                raise TypeError("table entries must be KernelFunctions")
        cdef _DispatchState state = _DispatchState.__new__(_DispatchState)
        state.table = table
        state.last_key = 1ULL << 63
        cdef int i
        for i in range(NUM_BACKENDS):
            state.masks[i] = masks[i]
        self._state = state

    def _set_schema(self, schema):
        self._dargs = _make_dispatch_args(schema)
        self.schema = schema

    cdef tuple _unbox_call(self, Boxer boxer, object stack):
        """Pop the arguments off ``stack`` as a Python call: (args, kwargs)."""
        return self.schema.split_call(boxer._unbox_arguments(stack))

    def _set_error_reporter(self, report):
        self._report_error = report

    # -- key extraction ------------------------------------------------------------
    cdef int _missing_argument(self, tuple args, dict kwargs, str name) except -1:
        self.schema.bind(args, kwargs)  # raises Python's own TypeError wording
        raise TypeError(f"{self.name}() missing required argument: '{name}'")

    cdef int _wrong_type(self, object value, Py_ssize_t i, _DispatchArgs d, str expected) except -1:
        raise TypeError(
            f"{self.name}: argument '{d.names[i]}' (position {d.positions[i] + 1}) must be {expected}, "
            f"not {type(value).__name__}"
        )

    cdef inline int _tensor_bits(self, object value, Py_ssize_t i, _DispatchArgs d, uint64_t* bits) except -1:
        if isinstance(value, TensorBase):
            bits[0] |= (<TensorBase>value)._bits
            return 0
        ks = tensor_key_set(value)
        if ks is None:
            self._wrong_type(value, i, d, "a tensor")
        bits[0] |= (<DispatchKeySet>ks).repr_
        return 0

    cdef int _extract(self, _DispatchArgs d, tuple args, dict kwargs, uint64_t* bits) except -1:
        cdef Py_ssize_t i, position, nargs = PyTuple_GET_SIZE(args)
        for i in range(d.n):
            position = d.positions[i]
            if position < nargs:
                value = <object>PyTuple_GET_ITEM(args, position)
            else:
                value = kwargs.get(d.names[i], _NOT_GIVEN) if kwargs else _NOT_GIVEN
                if value is _NOT_GIVEN:
                    if d.required[i]:
                        self._missing_argument(args, kwargs, d.names[i])
                    continue  # an omitted argument: its default is no tensor
            _extract_one(self, value, d.kinds[i], i, d, bits)
        return 0

    cdef inline _DispatchState _live_state(self):
        if self._state is None:
            raise RuntimeError(f"operator {self.name} has no dispatch state")
        return self._state

    # -- calling ---------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        cdef _DispatchState state = self._live_state()
        cdef uint64_t bits = 0
        self._extract(self._dargs, args, kwargs, &bits)
        bits = (bits | _tls_included_bits()) & (FULL_BACKEND_MASK | ~_tls_excluded_bits())
        bits &= state.masks[index_of_highest_bit((bits & FULL_BACKEND_MASK) >> 1)]
        cdef KernelFunction entry = <KernelFunction>PyTuple_GET_ITEM(state.table, _table_index(bits))
        if entry._kind == KIND_UNBOXED and not _show_trace:
            return PyObject_Call(entry.fn, args, kwargs)
        return self._dispatch("[call]", state, bits, args, kwargs)

    cdef object _redispatch_packed(self, object keyset, tuple args, dict kwargs):
        cdef uint64_t bits = _keyset_arg(keyset, "redispatch")
        return self._dispatch("[redispatch]", self._live_state(), bits, args, kwargs)

    cdef object _dispatch(self, str what, _DispatchState state, uint64_t bits, tuple args, dict kwargs):
        cdef KernelFunction entry
        while True:
            entry = <KernelFunction>PyTuple_GET_ITEM(state.table, _table_index(bits))
            if entry._kind != KIND_FALLTHROUGH or bits == 0:
                break
            # Only a call racing a registration (or a redispatch with a keyset
            # that still holds a fallthrough key) gets here: skip the key.
            bits &= ~(KEY_REPRS[_highest_priority_value(bits)] & ~FULL_BACKEND_MASK)
        if not _show_trace:
            return self._run(entry, bits, args, kwargs)
        _print_trace(what, self.name, bits)
        _trace_state.depth = getattr(_trace_state, "depth", 0) + 1
        try:
            return self._run(entry, bits, args, kwargs)
        finally:
            _trace_state.depth -= 1

    cdef object _run(self, KernelFunction entry, uint64_t bits, tuple args, dict kwargs):
        if entry._kind == KIND_UNBOXED:
            return PyObject_Call(entry.fn, args, kwargs)
        if entry._kind == KIND_WITH_KEYSET:
            return PyObject_Call(entry.fn, (_make(bits),) + args, kwargs)
        if entry._kind == KIND_BOXED:
            boxer = _boxer_for(self.schema)
            stack = boxer._box(args, kwargs)
            entry.fn(self, _make(bits), stack)
            return boxer._unbox_returns(stack)
        return self._raise_for(entry, bits)

    cdef object _raise_for(self, KernelFunction entry, uint64_t bits):
        if self._report_error is None:
            raise RuntimeError(f"operator {self.name} has no kernels")
        key = KEYS_BY_VALUE[_highest_priority_value(bits)]
        self._report_error(KernelKind(entry._kind), DispatchKey.Undefined if key is None else key)
        raise AssertionError("the error reporter returned")  # it always raises

    def call_boxed(self, stack):
        """Dispatch a call whose arguments are on ``stack`` (a dispatcher.ivalue.Stack);
        the results replace them, as in c10's callBoxed."""
        cdef _DispatchState state = self._live_state()
        cdef tuple args
        cdef dict kwargs
        cdef Boxer boxer = _boxer_for(self.schema)
        args, kwargs = self._unbox_call(boxer, stack)
        cdef uint64_t bits = 0
        self._extract(self._dargs, args, kwargs, &bits)
        bits = (bits | _tls_included_bits()) & (FULL_BACKEND_MASK | ~_tls_excluded_bits())
        bits &= state.masks[index_of_highest_bit((bits & FULL_BACKEND_MASK) >> 1)]
        stack.extend(boxer._box(args, kwargs))
        self._dispatch_boxed("[call]", state, bits, stack)

    def redispatch_boxed(self, keyset, stack):
        self._dispatch_boxed("[redispatch]", self._live_state(), _keyset_arg(keyset, "redispatch_boxed"), stack)

    cdef object _dispatch_boxed(self, str what, _DispatchState state, uint64_t bits, object stack):
        cdef KernelFunction entry = <KernelFunction>PyTuple_GET_ITEM(state.table, _table_index(bits))
        if entry._kind == KIND_BOXED:
            if _show_trace:
                _print_trace(what, self.name, bits)
            entry.fn(self, _make(bits), stack)
            return None
        # Any other entry: unbox the arguments, call, box the results.
        cdef tuple args
        cdef dict kwargs
        cdef Boxer boxer = _boxer_for(self.schema)
        args, kwargs = self._unbox_call(boxer, stack)
        boxer._box_returns(self._dispatch(what, state, bits, args, kwargs), stack)
        return None


cdef inline PyObject* _keyword_arg(PyObject** args, Py_ssize_t nargs, PyObject* kwnames, object name):
    # The argument passed by ``name`` (borrowed), or NULL.
    cdef Py_ssize_t j, nkw
    if kwnames == NULL:
        return NULL
    nkw = PyTuple_GET_SIZE(<tuple>kwnames)
    for j in range(nkw):
        if <PyObject*>PyTuple_GET_ITEM(<tuple>kwnames, j) == <PyObject*>name:  # interned: the usual case
            return args[nargs + j]
    for j in range(nkw):
        if <object>PyTuple_GET_ITEM(<tuple>kwnames, j) == name:
            return args[nargs + j]
    return NULL


cdef object _op_vectorcall(OperatorHandle self, PyObject** args, size_t nargsf, PyObject* kwnames):
    """See Note [Vectorcall fast path]."""
    # Held for the whole extraction: it may run Python code (a type's
    # key-set function), which may re-def the operator and replace _dargs.
    cdef _DispatchArgs d = self._dargs
    cdef Py_ssize_t nargs = PyVectorcall_NARGS(nargsf)
    cdef Py_ssize_t i
    cdef PyObject* arg
    cdef uint64_t bits = 0
    if 0 <= d.positional_span <= nargs:
        # Arguments are read as borrowed pointers: the caller keeps them alive
        # for the whole call, and skipping the refcounting is most of the win.
        for i in range(d.n):
            arg = args[d.positions[i]]
            if PyObject_TypeCheck(<object>arg, TensorBase):  # the common case, inline
                bits |= (<TensorBase>arg)._bits
            else:
                _extract_one(self, <object>arg, ARG_TENSOR, i, d, &bits)
    else:
        _extract_from_vector(self, d, args, nargs, kwnames, &bits)
    # From here to the kernel call no Python code runs, so the state and its
    # table entry can be read as borrowed pointers; only the kernel itself is
    # held, since a registration during the call may drop the old table.
    if self._state is None:
        self._live_state()  # raises
    cdef PyObject* state = <PyObject*>self._state
    bits = (bits | _tls_included_bits()) & (FULL_BACKEND_MASK | ~_tls_excluded_bits())
    cdef PyObject* entry
    if bits == (<_DispatchState>state).last_key:  # Note [Last dispatch cache]
        bits = (<_DispatchState>state).last_bits
        entry = (<_DispatchState>state).last_entry
    else:
        (<_DispatchState>state).last_key = bits
        bits &= (<_DispatchState>state).masks[index_of_highest_bit((bits & FULL_BACKEND_MASK) >> 1)]
        entry = PyTuple_GET_ITEM((<_DispatchState>state).table, _table_index(bits))
        (<_DispatchState>state).last_bits = bits
        (<_DispatchState>state).last_entry = entry
    cdef int entry_kind = (<KernelFunction>entry)._kind
    if not _show_trace:
        if entry_kind == KIND_UNBOXED:
            fn = (<KernelFunction>entry).fn
            return PyObject_Vectorcall(fn, args, nargsf, kwnames)
        if entry_kind == KIND_WITH_KEYSET and nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET:
            fn = (<KernelFunction>entry).fn
            return _call_with_keyset_in_front(fn, _make(bits), args, nargs, kwnames)
        if entry_kind == KIND_BOXED:
            return _call_boxed_kernel(self, (<KernelFunction>entry).fn, bits, args, nargs, kwnames)
    # Everything else takes the general path, with the arguments packed.
    packed, kw = _pack_call(args, 0, nargs, kwnames)
    return self._dispatch("[call]", <_DispatchState>state, bits, packed, kw)


cdef int _extract_from_vector(OperatorHandle self, _DispatchArgs d, PyObject** args, Py_ssize_t nargs,
                              PyObject* kwnames, uint64_t* bits) except -1:
    # _op_vectorcall's key extraction for any call: keywords, omitted
    # arguments, optional tensors and tensor lists.
    cdef Py_ssize_t i, position
    cdef PyObject* arg
    for i in range(d.n):
        position = d.positions[i]
        arg = args[position] if position < nargs else _keyword_arg(args, nargs, kwnames, d.names[i])
        if arg == NULL:
            if d.required[i]:
                _raise_missing(self, args, nargs, kwnames, d.names[i])
            continue  # an omitted argument: its default is no tensor
        _extract_one(self, <object>arg, d.kinds[i], i, d, bits)
    return 0


cdef object _call_boxed_kernel(OperatorHandle self, object fn, uint64_t bits, PyObject** args, Py_ssize_t nargs,
                               PyObject* kwnames):
    # A boxed kernel, called from the vectorcall path: boxed straight from the argument array.
    cdef Boxer boxer = _boxer_for(self.schema)
    stack = boxer._box_vector(args, nargs, kwnames)
    fn(self, _make(bits), stack)
    return boxer._unbox_returns(stack)


cdef tuple _pack_call(PyObject** args, Py_ssize_t first, Py_ssize_t nargs, PyObject* kwnames):
    # A vectorcall's arguments as (args tuple from ``first`` on, kwargs dict), for the general path.
    cdef Py_ssize_t i
    cdef dict kw = {}
    if kwnames != NULL:
        for i in range(PyTuple_GET_SIZE(<tuple>kwnames)):
            kw[<object>PyTuple_GET_ITEM(<tuple>kwnames, i)] = <object>args[nargs + i]
    return tuple([<object>args[i] for i in range(first, nargs)]), kw


cdef int _extract_one(OperatorHandle self, object value, int kind, Py_ssize_t i, _DispatchArgs d,
                      uint64_t* bits) except -1:
    # One dispatch-relevant argument's key bits, any kind (the vectorcall
    # path inlines the plain-TensorBase case before calling this).
    if kind == ARG_TENSOR:
        return self._tensor_bits(value, i, d, bits)
    if kind == ARG_OPTIONAL_TENSOR:
        if value is not None:
            self._tensor_bits(value, i, d, bits)
        return 0
    if not isinstance(value, (list, tuple)):
        self._wrong_type(value, i, d, "a list of tensors")
    for item in value:
        if item is None and kind == ARG_OPTIONAL_TENSOR_LIST:
            continue
        self._tensor_bits(item, i, d, bits)
    return 0


cdef int _raise_missing(OperatorHandle self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames,
                        str name) except -1:
    packed, kw = _pack_call(args, 0, nargs, kwnames)
    return self._missing_argument(packed, kw, name)


cdef object _call_with_keyset_in_front(object fn, DispatchKeySet keyset, PyObject** args, Py_ssize_t nargs,
                                       PyObject* kwnames):
    # PY_VECTORCALL_ARGUMENTS_OFFSET lets us use args[-1] for the duration of the call.
    cdef PyObject* saved = args[-1]
    args[-1] = <PyObject*>keyset
    try:
        return PyObject_Vectorcall(fn, args - 1, <size_t>(nargs + 1), kwnames)
    finally:
        args[-1] = saved


@cython.final
cdef class _Redispatch:
    """``op.redispatch``: a callable bound to its operator once, so that
    ``op.redispatch(keyset, x, y)`` costs no bound-method object and, through
    vectorcall, no argument tuple (see Note [Vectorcall fast path])."""
    cdef OperatorHandle handle
    cdef dispatcher_vectorcallfunc _vectorcall

    def __call__(self, keyset, *args, **kwargs):
        return self.handle._redispatch_packed(keyset, args, kwargs)

    def __repr__(self):
        return f"<redispatch of {self.handle.name}>"


cdef object _redispatch_vectorcall(object self_obj, PyObject** args, size_t nargsf, PyObject* kwnames):
    cdef OperatorHandle handle = (<_Redispatch>self_obj).handle
    cdef Py_ssize_t nargs = PyVectorcall_NARGS(nargsf)
    if nargs < 1:
        raise TypeError(f"{handle.name}: redispatch() takes the DispatchKeySet to dispatch on first")
    cdef uint64_t bits = _keyset_arg(<object>args[0], "redispatch")
    cdef _DispatchState state = handle._live_state()
    cdef KernelFunction entry = <KernelFunction>PyTuple_GET_ITEM(state.table, _table_index(bits))
    if not _show_trace:
        if entry._kind == KIND_UNBOXED:
            return PyObject_Vectorcall(entry.fn, args + 1, <size_t>(nargs - 1), kwnames)
        if entry._kind == KIND_WITH_KEYSET:
            # The keyset a with-keyset kernel gets is the one given: pass it on.
            return PyObject_Vectorcall(entry.fn, args, <size_t>nargs, kwnames)
    packed, kw = _pack_call(args, 1, nargs, kwnames)
    return handle._dispatch("[redispatch]", state, bits, packed, kw)


cdef void _enable_vectorcall(type cls, Py_ssize_t offset):
    cdef PyTypeObject* tp = <PyTypeObject*>cls
    tp.tp_vectorcall_offset = offset
    tp.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL
    PyType_Modified(tp)


def _install_vectorcall():
    cdef OperatorHandle probe = OperatorHandle.__new__(OperatorHandle)
    _enable_vectorcall(OperatorHandle, <Py_ssize_t>(<char*>&probe._vectorcall - <char*><PyObject*>probe))
    _enable_vectorcall(_Redispatch, <Py_ssize_t>(<char*>&probe.redispatch._vectorcall - <char*><PyObject*>probe.redispatch))


_install_vectorcall()
