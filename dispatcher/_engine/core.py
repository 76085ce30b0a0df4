# cython: annotation_typing=False
"""The dispatcher's engine: keysets, thread-local state, tensors, call plans, calls, boxing.

This one file is both engines.  Imported as Python it is the pure-Python
engine; compiled by Cython with ``core.pxd`` beside it (pure-Python mode) it
is the compiled one, with C types for the fields and locals the ``.pxd``
declares.  The few places that must differ test ``cython.compiled``, which
the compiler folds to a constant: its dead branch is not compiled, and in
Python the compiled branch never runs.  ``csrc/_fastcall.pyx`` adds what
cannot be written in Python at all: the vectorcall entry points (see Note
[Vectorcall fast path] there).

The engine is a leaf.  It imports only the ground floor (keys, bit layout,
tags) and reads only what registration publishes: a ``CallPlan`` per
operator (see Note [One plan per operator]) and a ``Boxer`` per schema,
both plain data.  It never sees a FunctionSchema or the registry.

The annotations are for type checkers only: the ``annotation_typing=False``
directive above keeps Cython from turning them into C types or argument
checks (the C types are the ``.pxd``'s).
"""
from __future__ import annotations

import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any

try:
    import cython
except ImportError:  # the pure-Python engine runs without Cython installed
    from dispatcher._engine import _cython_shim as cython
if not cython.compiled:
    # Run as Python, the engine always uses the shim, not Cython's own
    # stand-ins: the same pure engine with or without Cython installed, and
    # a cython.cast() that allocates nothing (Cython's makes a dict, which
    # can start a GC in the middle of reading a stack).
    from dispatcher._engine import _cython_shim as cython

from dispatcher import _layout
from dispatcher._env import env_flag
from dispatcher._numbers_as_tensors import NUMBER_TYPES, allows_numbers_as_tensors
from dispatcher.errors import DispatcherTypeError
from dispatcher._ivalue_tag import CONTAINER_TAGS, Mismatch, IValueTag
from dispatcher._kernel_kind import DUMP_STATE, KernelKind
from dispatcher.operator_tags import Tag as OperatorTag
from dispatcher.keys import NUM_BACKENDS as _NUM_BACKENDS
from dispatcher.keys import (
    BackendComponent,
    DispatchKey,
    as_dispatch_key,
    is_per_backend_functionality_key,
    to_runtime_per_backend_functionality_key,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Literal, TypeAlias, TypeVar

    from dispatcher.keys import KeyLike

    # What DispatchKeySet() and the guards take: one of these, or an iterable of them.
    KeySetItem: TypeAlias = "KeyLike | BackendComponent | DispatchKeySet"
    KeySetArg: TypeAlias = "KeySetItem | Iterable[KeySetItem]"
    _Guard = TypeVar("_Guard", bound="_TLSGuard")

    # C globals of core.pxd, read and written only by the compiled branches.
    tls_included_delta: int
    tls_excluded_delta: int
    op_vectorcall_impl: object
    redispatch_vectorcall_impl: object
    packet_vectorcall_impl: object

    # C functions of core.pxd, called only by the compiled branches.
    _type_lookup: Callable[[type, str], bool]
    _set_disabled_handler: Callable[[Any], None]
    _call_tensor_handler: Callable[..., Any]
    _python_state_get: Callable[[], Any]
    _python_state_set: Callable[[str, Any], None]

__all__ = [
    "AutoDispatchBelowADInplaceOrView",
    "AutoDispatchBelowAutograd",
    "Boxer",
    "CallPlan",
    "CallShape",
    "DEFAULT_EXCLUDED_SET",
    "DEFAULT_INCLUDED_SET",
    "DispatchKeySet",
    "ExcludeDispatchKeyGuard",
    "IValue",
    "IncludeDispatchKeyGuard",
    "KernelFunction",
    "KernelKind",
    "OperatorHandle",
    "OverloadPacket",
    "PendingOverloadPacket",
    "Stack",
    "TensorBase",
    "compute_dispatch_key_set",
    "disabled_torch_dispatch_impl",
    "dispatch_mode_stack",
    "filled_table",
    "forget_overload_choices",
    "resolve_overload",
    "set_packet_argument_rules",
    "settle_packet",
    "pop_dispatch_mode",
    "push_dispatch_mode",
    "python_key_fallback",
    "python_tls_snapshot",
    "python_tls_snapshot_fallback",
    "register_tensor_type",
    "set_dispatch_observer",
    "set_python_tls_snapshot",
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
    "unregister_tensor_type",
]

if cython.compiled:
    from cython.cimports.cpython.mem import PyMem_Free, PyMem_Malloc
    from cython.cimports.cpython.ref import Py_INCREF
    from cython.cimports.cpython.tuple import PyTuple_New, PyTuple_SET_ITEM

COMPILED = cython.compiled

# -- the bit layout, as tables the arithmetic indexes ---------------------------------
# See Note [DispatchKeySet bit layout] and Note [Runtime table index] in
# dispatcher/_layout.py: the layout is described there, once; here it is
# only loaded into arrays (C arrays when compiled).
NUM_BACKENDS = _NUM_BACKENDS
FULL_BACKEND_MASK = _layout.FULL_BACKEND_MASK
FULL_REPR = _layout.FULL_REPR
NUM_KEY_VALUES = len(_layout.KEYS_BY_VALUE)
KEYS_BY_VALUE = _layout.KEYS_BY_VALUE
BACKENDS_BY_VALUE = tuple(BackendComponent)
_UINT64_MAX = (1 << 64) - 1
# FULL_REPR as a Python int (compiled, FULL_REPR is a C one): the valid
# reprs are exactly 0 ..= this, since the layout's bits are the low ones.
_LARGEST_REPR = _layout.FULL_REPR
assert _LARGEST_REPR & (_LARGEST_REPR + 1) == 0, "the layout's bits are not the low ones"

if not cython.compiled:
    OFFSETS = [0] * 64
    MASKS = [0] * 64
    PER_BACKEND_START = [0] * 64
    KEY_REPRS = [0] * 256

    def index_of_highest_bit(x):
        """64 - clz(x); see Note [Highest bit by count-leading-zeros] in csrc/dispatcher_bits.h."""
        return x.bit_length()

    def popcount(x):
        return bin(x).count("1")


def _load_tables():
    # PER_BACKEND_START[f]: for a per-backend functionality f, the value of
    # its StartOf<f>Backends sentinel, so that START + backend is the
    # runtime key; else 0.
    global PER_BACKEND_FUNCTIONALITY_BITS
    assert len(_layout.OFFSETS) <= 64 and NUM_KEY_VALUES <= 256
    bits = 0
    for f in range(len(_layout.OFFSETS)):
        per_backend = is_per_backend_functionality_key(f)
        if per_backend:
            bits |= 1 << (f - 1)
        OFFSETS[f] = _layout.OFFSETS[f]
        MASKS[f] = _layout.MASKS[f]
        PER_BACKEND_START[f] = (
            to_runtime_per_backend_functionality_key(f, BackendComponent.CPUBit) - 1 if per_backend else 0
        )
    for v in range(NUM_KEY_VALUES):
        KEY_REPRS[v] = _layout.KEY_REPRS[v]
    # Functionality bits (shifted down by NUM_BACKENDS) of the per-backend functionalities.
    PER_BACKEND_FUNCTIONALITY_BITS = bits


PER_BACKEND_FUNCTIONALITY_BITS = 0
_load_tables()


def _table_index(r):
    """See Note [Runtime table index] in dispatcher/_layout.py."""
    f = index_of_highest_bit(r >> NUM_BACKENDS)
    return OFFSETS[f] + index_of_highest_bit((r & MASKS[f]) >> 1)


def _highest_priority_value(r):
    # The value of the key a set dispatches to; for a per-backend
    # functionality without a backend bit, its StartOf sentinel (no key).
    f = index_of_highest_bit(r >> NUM_BACKENDS)
    if PER_BACKEND_START[f]:
        return PER_BACKEND_START[f] + index_of_highest_bit(r & FULL_BACKEND_MASK)
    return f


def _backend_mask_index(r):
    """Which per-backend fallthrough mask a keyset uses: that of its highest
    backend (see Note [Per-backend fallthrough masks] in
    dispatcher/operator_entry.py); a set with no backend uses CPU's."""
    return index_of_highest_bit((r & FULL_BACKEND_MASK) >> 1)


# Note [Removing keys keeps the backend bits]
# c10's DispatchKeySet::operator- and remove() clear only functionality bits:
# removing CPU from {CPU, CUDA} must not drop the CPU bit that CUDA's
# functionality (Dense) still uses.  Set difference, remove(), the TLS setters
# and guards, and redispatch's "below this key" all go through _minus, and
# the fallthrough masks never clear a backend bit for the same reason.
def _minus(r, removed):
    """``r`` without ``removed``'s functionality bits, keeping every backend
    bit: see Note [Removing keys keeps the backend bits]."""
    return r & (FULL_BACKEND_MASK | ~removed)


def _key_at(value):
    key = KEYS_BY_VALUE[value]
    # A StartOf<F>Backends sentinel is no key: see to_runtime_per_backend_functionality_key.
    return DispatchKey.Undefined if key is None else key


# -- DispatchKeySet ----------------------------------------------------------------------
def _check_repr(x):
    # Only an exact int: a subclass could override the comparisons this relies on.
    if type(x) is not int:
        raise TypeError(f"a raw DispatchKeySet repr must be an int, not {type(x).__name__}")
    if 0 <= x <= _LARGEST_REPR:
        return x
    if x < 0 or x > _UINT64_MAX:
        raise ValueError(f"raw DispatchKeySet repr {x} is not a 64-bit unsigned integer")
    raise ValueError(
        f"raw DispatchKeySet repr {x:#x} sets bits above the {_LARGEST_REPR.bit_length()} "
        "bits that name backends and functionalities"
    )


def _key_bits(key):
    return KEY_REPRS[int(as_dispatch_key(key))]


def _backend_bits(backend):
    b = int(BackendComponent(backend))
    return 0 if b == 0 else 1 << (b - 1)


def _bits_of(item):
    """The bits of one constructor item: a key, a key name, a backend or a set."""
    if isinstance(item, DispatchKeySet):
        return _repr_of(item)
    if isinstance(item, BackendComponent):
        return _backend_bits(item)
    return _key_bits(item)


def _keyset_arg(ks, what):
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(f"{what} expects a DispatchKeySet, got {type(ks).__name__}")
    return _repr_of(ks)


def _make(bits):
    ks = DispatchKeySet.__new__(DispatchKeySet)
    _freeze(ks, bits)
    return ks


def _repr_of(ks):
    return ks.repr_


def _freeze(ks, bits):
    if cython.compiled:
        ks.repr_ = bits
        ks.frozen = True
    else:
        object.__setattr__(ks, "repr_", bits)


def _is_frozen(ks):
    if cython.compiled:
        return ks.frozen
    return hasattr(ks, "repr_")


# Note [Freelists for per-call objects]
# A call may allocate a DispatchKeySet (the keyset a with-keyset or boxed
# kernel gets, ``keyset & AFTER_AUTOGRAD_KEYSET``, a new tensor's keyset
# with the Python keys added) and IValues (boxing): compiled, each class
# keeps a few freed instances for reuse, which skips the allocator and the
# zeroing of a new object.  Cython takes @cython.freelist only here, on the
# class: in core.pxd it is silently ignored.  Run as Python, the shim's
# decorators do nothing.
@cython.freelist(32)
@cython.cclass
class DispatchKeySet:
    """An immutable set of dispatch keys in c10's 64-bit representation.

    ``DispatchKeySet()`` is empty; ``DispatchKeySet(key)`` takes a DispatchKey,
    a key name, a BackendComponent or another set; ``DispatchKeySet([k1, k2])``
    is their union.  See Note [DispatchKeySet bit layout] in dispatcher/_layout.py.
    """

    repr_: int

    if not cython.compiled:
        __slots__ = ("repr_",)

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(f"DispatchKeySet is immutable: cannot set '{name}'")

    def __init__(self, keys: KeySetArg | None = None) -> None:
        # A set is hashed and shared: initialising it again would change it
        # under every dict and tensor that holds it.
        if _is_frozen(self):
            raise TypeError("DispatchKeySet is immutable: __init__ cannot be called again")
        bits = 0
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
        _freeze(self, bits)

    @classmethod
    def from_raw_repr(cls, x: int) -> DispatchKeySet:
        return _make(_check_repr(x))

    @classmethod
    def full(cls) -> DispatchKeySet:
        return _make(FULL_REPR)

    @classmethod
    def full_after(cls, key: KeyLike) -> DispatchKeySet:
        """Every key of lower priority than ``key``, plus PythonDispatcher."""
        return _make(_layout.full_after_repr(as_dispatch_key(key)))

    def __reduce__(self) -> tuple[Callable[[int], DispatchKeySet], tuple[int]]:
        return (DispatchKeySet.from_raw_repr, (_repr_of(self),))

    def raw_repr(self) -> int:
        return _repr_of(self)

    # -- set algebra ------------------------------------------------------
    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make(_repr_of(self) | _repr_of(other))

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make(_repr_of(self) & _repr_of(other))

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        # See Note [Removing keys keeps the backend bits].
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make(_minus(_repr_of(self), _repr_of(other)))

    def __xor__(self, other: DispatchKeySet) -> DispatchKeySet:
        if not isinstance(self, DispatchKeySet) or not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _make(_repr_of(self) ^ _repr_of(other))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _repr_of(self) == _repr_of(other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _repr_of(self) != _repr_of(other)

    def __hash__(self) -> int:
        return hash(_repr_of(self))

    def __bool__(self) -> bool:
        return _repr_of(self) != 0

    def empty(self) -> bool:
        return _repr_of(self) == 0

    def has(self, key: KeyLike) -> bool:
        bits = _key_bits(key)
        return _repr_of(self) & bits == bits

    def __contains__(self, key: KeyLike) -> bool:
        return self.has(key)

    def has_backend(self, backend: int) -> bool:
        bits = _backend_bits(backend)
        return _repr_of(self) & bits == bits

    def has_all(self, ks: DispatchKeySet) -> bool:
        bits = _keyset_arg(ks, "has_all")
        return _repr_of(self) & bits == bits

    def is_superset_of(self, ks: DispatchKeySet) -> bool:
        return self.has_all(ks)

    def has_any(self, ks: DispatchKeySet) -> bool:
        return _repr_of(self) & _keyset_arg(ks, "has_any") != 0

    def add(self, key: KeySetItem) -> DispatchKeySet:
        return _make(_repr_of(self) | _bits_of(key))

    def remove(self, key: KeyLike) -> DispatchKeySet:
        return _make(_minus(_repr_of(self), _key_bits(key)))

    def remove_backend(self, backend: int) -> DispatchKeySet:
        return _make(_repr_of(self) & ~_backend_bits(backend))

    # -- priority -----------------------------------------------------------
    def highest_functionality_key(self) -> DispatchKey:
        return KEYS_BY_VALUE[index_of_highest_bit(_repr_of(self) >> NUM_BACKENDS)]

    def highest_backend(self) -> BackendComponent:
        return BACKENDS_BY_VALUE[index_of_highest_bit(_repr_of(self) & FULL_BACKEND_MASK)]

    def highest_priority_key(self) -> DispatchKey:
        """c10's highestPriorityTypeId: the key this set dispatches to
        (Undefined for a per-backend functionality without a backend bit)."""
        return _key_at(_highest_priority_value(_repr_of(self)))

    def dispatch_table_index(self) -> int:
        """See Note [Runtime table index] in dispatcher/_layout.py."""
        return _table_index(_repr_of(self))

    # -- iteration ------------------------------------------------------------
    def __iter__(self) -> Iterator[DispatchKey]:
        """Keys in c10's order: functionalities from lowest to highest
        priority, each per-backend functionality expanded over the set's
        backends from lowest to highest bit.  Backend bits on their own
        yield nothing."""
        return iter(_keys_of(_repr_of(self)))

    def __len__(self) -> int:
        # Each per-backend functionality counts once per backend bit.
        r = _repr_of(self)
        functionalities = r >> NUM_BACKENDS
        per_backend = functionalities & PER_BACKEND_FUNCTIONALITY_BITS
        return popcount(functionalities ^ per_backend) + popcount(per_backend) * popcount(r & FULL_BACKEND_MASK)

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join([k.name for k in _keys_of(_repr_of(self))]) + ")"


def _keys_of(r):
    keys = []
    backends = r & FULL_BACKEND_MASK
    functionalities = r >> NUM_BACKENDS
    f = 0
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
                    keys.append(KEYS_BY_VALUE[PER_BACKEND_START[f] + b])
                bits >>= 1
        else:
            keys.append(KEYS_BY_VALUE[f])
    return keys


EMPTY_SET = _make(0)

# -- thread-local include / exclude sets ------------------------------------------------
# See Note [TLS stored as a difference from the defaults] in csrc/dispatcher_bits.h:
# compiled, two C thread-locals; in Python, a threading.local.
DEFAULT_INCLUDED_SET = DispatchKeySet([DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView])
DEFAULT_EXCLUDED_SET = DispatchKeySet(
    [
        DispatchKey.AutocastCPU, DispatchKey.AutocastMPS, DispatchKey.AutocastCUDA,
        DispatchKey.AutocastXPU, DispatchKey.AutocastIPU, DispatchKey.AutocastHPU,
        DispatchKey.AutocastXLA, DispatchKey.AutocastPrivateUse1,
        DispatchKey.AutocastMTIA, DispatchKey.AutocastMAIA,
    ]
)
DEFAULT_INCLUDED = _repr_of(DEFAULT_INCLUDED_SET)
DEFAULT_EXCLUDED = _repr_of(DEFAULT_EXCLUDED_SET)

if not cython.compiled:

    class _TLSDeltas(threading.local):
        included = 0
        excluded = 0

    _tls = _TLSDeltas()


def tls_included_bits():
    if cython.compiled:
        return tls_included_delta ^ DEFAULT_INCLUDED
    return _tls.included ^ DEFAULT_INCLUDED


def tls_excluded_bits():
    if cython.compiled:
        return tls_excluded_delta ^ DEFAULT_EXCLUDED
    return _tls.excluded ^ DEFAULT_EXCLUDED


def _set_tls_included(bits):
    global tls_included_delta
    if cython.compiled:
        tls_included_delta = bits ^ DEFAULT_INCLUDED
    else:
        _tls.included = bits ^ DEFAULT_INCLUDED


def _set_tls_excluded(bits):
    global tls_excluded_delta
    if cython.compiled:
        tls_excluded_delta = bits ^ DEFAULT_EXCLUDED
    else:
        _tls.excluded = bits ^ DEFAULT_EXCLUDED


def apply_tls(bits):
    """c10's computeDispatchKeySet without the mask: ``(bits | included) - excluded``."""
    return _minus(bits | tls_included_bits(), tls_excluded_bits())


def tls_local_include_set() -> DispatchKeySet:
    return _make(tls_included_bits())


def tls_local_exclude_set() -> DispatchKeySet:
    return _make(tls_excluded_bits())


def tls_set_local_include_set(ks: DispatchKeySet) -> None:
    _set_tls_included(_keyset_arg(ks, "tls_set_local_include_set"))


def tls_set_local_exclude_set(ks: DispatchKeySet) -> None:
    _set_tls_excluded(_keyset_arg(ks, "tls_set_local_exclude_set"))


def compute_dispatch_key_set(keyset: DispatchKeySet, mask: DispatchKeySet | None = None) -> DispatchKeySet:
    """c10's computeDispatchKeySet: ``((keyset | included) - excluded) & mask``
    with this thread's include/exclude sets, as a call computes its keyset."""
    bits = apply_tls(_keyset_arg(keyset, "compute_dispatch_key_set"))
    if mask is not None:
        bits &= _keyset_arg(mask, "compute_dispatch_key_set")
    return _make(bits)


def tls_is_dispatch_key_included(key: KeyLike) -> bool:
    bits = _key_bits(key)
    return tls_included_bits() & bits == bits


def tls_is_dispatch_key_excluded(key: KeyLike) -> bool:
    bits = _key_bits(key)
    return tls_excluded_bits() & bits == bits


def tls_set_dispatch_key_included(key: KeyLike, state: bool) -> None:
    bits = _key_bits(key)
    current = tls_included_bits()
    _set_tls_included(current | bits if state else _minus(current, bits))


def tls_set_dispatch_key_excluded(key: KeyLike, state: bool) -> None:
    bits = _key_bits(key)
    current = tls_excluded_bits()
    _set_tls_excluded(current | bits if state else _minus(current, bits))


# -- thread-local guards ----------------------------------------------------------------
AUTOGRAD_KEYS = _repr_of(
    DispatchKeySet([DispatchKey.AutogradFunctionality, DispatchKey.AutogradOther, DispatchKey.AutogradNestedTensor])
)
AUTOGRAD_AND_INPLACE_KEYS = AUTOGRAD_KEYS | _key_bits(DispatchKey.ADInplaceOrView)


def _guard_bits(keys):
    if isinstance(keys, DispatchKeySet):
        return _repr_of(keys)
    return _repr_of(DispatchKeySet(keys))


class _TLSGuard:
    """Shared by the four guards: c10's Include/ExcludeDispatchKeyGuard.

    On entry the keys are added to the set; on exit the set is put back as it
    was on entry, bit for bit, as torch 2.13's guards do: a backend bit the
    guard set goes (so excluding CPU and leaving leaves the set unchanged),
    and so does whatever the block changed in that set.
    """

    keys: int
    saved: int
    is_include: bool
    active: bool

    def __enter__(self: _Guard) -> _Guard:
        if self.active:
            raise RuntimeError(f"{type(self).__name__} is already active; use a new guard to nest")
        self.active = True
        self.saved = tls_included_bits() if self.is_include else tls_excluded_bits()
        self._store(self.saved | self.keys)
        return self

    # Three named parameters, as the with statement passes them: a ``*exc_info``
    # made a tuple on every exit.
    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> Literal[False]:
        if not self.active:
            raise RuntimeError(f"{type(self).__name__} was exited without being entered")
        self.active = False
        self._store(self.saved)
        return False

    def _store(self, bits):
        # A C method when compiled (core.pxd): no bound method or Python int
        # per call (a guard is entered on every recorded autograd call).
        if self.is_include:
            _set_tls_included(bits)
        else:
            _set_tls_excluded(bits)


class IncludeDispatchKeyGuard(_TLSGuard):
    """``with IncludeDispatchKeyGuard(keys):`` adds keys to this thread's included set."""

    def __init__(self, keys: KeySetArg) -> None:
        self.keys = _guard_bits(keys)
        self.is_include = True
        self.active = False


class ExcludeDispatchKeyGuard(_TLSGuard):
    """``with ExcludeDispatchKeyGuard(keys):`` adds keys to this thread's excluded set."""

    def __init__(self, keys: KeySetArg) -> None:
        self.keys = _guard_bits(keys)
        self.is_include = False
        self.active = False


class AutoDispatchBelowAutograd(_TLSGuard):
    """Exclude the autograd keys: calls inside go straight below autograd."""

    def __init__(self) -> None:
        self.keys = AUTOGRAD_KEYS
        self.is_include = False
        self.active = False


class AutoDispatchBelowADInplaceOrView(_TLSGuard):
    """Exclude the autograd keys and ADInplaceOrView."""

    def __init__(self) -> None:
        self.keys = AUTOGRAD_AND_INPLACE_KEYS
        self.is_include = False
        self.active = False


# -- tensors ------------------------------------------------------------------------------
# Note [Weak references to tensors]
# Tracers, loggers and caches keep tensors in weak tables (torch's
# WeakIdKeyDictionary, WeakIdRef), so a TensorBase can be weakly referenced,
# as torch's tensors can: the compiled TensorBase has a __weakref__ slot
# (core.pxd), the pure one has it as any class without __slots__ does.  The
# slot costs a pointer per tensor and nothing on the call path, which never
# reads it; a subclass with __slots__ inherits it.
class TensorBase:
    """Base for tensor types: carries the DispatchKeySet the dispatcher reads."""

    _key_set: DispatchKeySet | None
    _bits: int

    def __init__(self, key_set: DispatchKeySet | None = None) -> None:
        _init_tensor(self, key_set)

    @property
    def key_set(self) -> DispatchKeySet:
        return _tensor_key_set_of(self)

    @key_set.setter
    def key_set(self, ks: DispatchKeySet) -> None:
        _set_tensor_key_set(self, ks)


if not cython.compiled:
    # A subclass that never calls TensorBase.__init__ still has an (empty)
    # keyset, as the compiled TensorBase's zeroed fields give it.
    TensorBase._key_set = EMPTY_SET
    TensorBase._bits = 0


def _init_tensor(tensor, key_set):
    """TensorBase.__init__; compiled, also called by the fast one (see Note
    [TensorBase.__init__ without an argument tuple] in csrc/_fastcall.pyx)."""
    _set_tensor_key_set(tensor, EMPTY_SET if key_set is None else key_set)


def _set_tensor_key_set(tensor, ks):
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(f"key_set must be a DispatchKeySet, not {type(ks).__name__}")
    if _defines_torch_dispatch(type(tensor)):  # see Note [Tensor types with __torch_dispatch__]
        ks = _make(_repr_of(ks) | PYTHON_KEYS)
    tensor._key_set = ks
    # The bits, kept beside the set: the call path reads them with one
    # load fewer (a DispatchKeySet is immutable, so they cannot drift apart).
    tensor._bits = _repr_of(ks)


def _defines_torch_dispatch(tp):
    """Whether ``tp`` has a ``__torch_dispatch__`` handler: one that is not
    None nor disabled_torch_dispatch_impl (which a base tensor class has so
    that its subclasses' handlers can reach it by super(), as torch.Tensor's)."""
    if cython.compiled:
        # The interpreter's type attribute cache (_type_lookup: a C function of core.pxd).
        return _type_lookup(tp, "__torch_dispatch__")  # noqa: F821
    handler = getattr(tp, "__torch_dispatch__", None)
    return handler is not None and handler is not disabled_torch_dispatch_impl


def _tensor_key_set_of(tensor):
    ks = tensor._key_set
    return EMPTY_SET if ks is None else ks


# Note [Tensor type cache]
# Besides TensorBase, any type can dispatch as a tensor: registered with
# register_tensor_type (a keyset, or a function from an instance to one),
# or by having a ``__dispatch_keys__`` attribute.  Which of these applies is
# decided once per type and cached by the type's id, with whether the type
# defines __torch_dispatch__ (Note [Tensor types with __torch_dispatch__]);
# each entry holds the type weakly and is dropped when the type dies, so
# classes made on the fly are not kept alive.  Registration empties the cache.
#
# Note [Tensor types with __torch_dispatch__]
# As in PyTorch, a tensor whose type defines ``__torch_dispatch__`` carries
# the Python and PythonTLSSnapshot keys besides its own: a TensorBase
# subclass gets them added to the keyset it is given (the type is asked each
# time a keyset is set, as torch asks when it makes a tensor), any other
# tensor type to the keyset it reports (the type is asked once, with the
# rest of its cache entry).
_BY_ATTRIBUTE = object()
_registered_types: dict[type, DispatchKeySet | Callable[[Any], DispatchKeySet]] = {}
_type_cache: dict[int, tuple[weakref.ref[type] | None, object, bool]] = {}
_Py_TPFLAGS_IMMUTABLETYPE = 1 << 8
PYTHON_KEYS = _key_bits(DispatchKey.Python) | _key_bits(DispatchKey.PythonTLSSnapshot)


def register_tensor_type(cls: type, key_set_or_function: DispatchKeySet | Callable[[Any], DispatchKeySet]) -> None:
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


def _classify(tp):
    for base in tp.__mro__:
        how = _registered_types.get(base)
        if how is not None:
            return how
    if hasattr(tp, "__dispatch_keys__") or not tp.__flags__ & _Py_TPFLAGS_IMMUTABLETYPE:
        return _BY_ATTRIBUTE
    return None


def _forget_type(key):
    _type_cache.pop(key, None)


def _type_forgetter(key):
    """The weak reference callback that drops ``key``'s cache entry."""
    return lambda _: _forget_type(key)


def _type_facts(tp):
    """``(weak reference, how tp dispatches, whether it defines __torch_dispatch__)``, cached."""
    key = id(tp)
    entry = _type_cache.get(key)
    if entry is not None and entry[0] is not None and entry[0]() is tp:
        return entry
    how = _classify(tp)
    python = _defines_torch_dispatch(tp)
    try:
        ref = weakref.ref(tp, _type_forgetter(key))
    except TypeError:  # a type that cannot be weakly referenced is not cached
        return (None, how, python)
    entry = (ref, how, python)
    _type_cache[key] = entry
    return entry


def _checked(ks, obj):
    if not isinstance(ks, DispatchKeySet):
        raise TypeError(
            f"the dispatch keys of a {type(obj).__name__} must be a DispatchKeySet, got {type(ks).__name__}"
        )
    return ks


def tensor_key_set(obj: object) -> DispatchKeySet | None:
    """The DispatchKeySet of ``obj`` if the dispatcher treats it as a tensor, else None."""
    if isinstance(obj, TensorBase):
        return _tensor_key_set_of(obj)
    facts = _type_facts(type(obj))
    how = facts[1]
    if how is None:
        return None
    if how is _BY_ATTRIBUTE:
        ks = getattr(obj, "__dispatch_keys__", None)
        if ks is None:
            return None
        ks = _checked(ks, obj)
    elif isinstance(how, DispatchKeySet):
        ks = how
    else:
        ks = _checked(how(obj), obj)
    if facts[2]:  # see Note [Tensor types with __torch_dispatch__]
        return _make(_repr_of(ks) | PYTHON_KEYS)
    return ks


def _tensor_bits(obj):
    """The key bits of a tensor argument; -1 if ``obj`` is not a tensor."""
    if isinstance(obj, TensorBase):
        return cython.cast(TensorBase, obj)._bits
    ks = tensor_key_set(obj)
    if ks is None:
        return -1
    return _repr_of(ks)


# -- kernels -----------------------------------------------------------------------------
# The kinds as ints, for the call path (KernelKind's values; checked below).
# Compiled, this module's int constants (KIND_*, TAG_*, STEP_*, ARG_*,
# MAX_REPLANS) are C ints, not module attributes the call path looks up.
KIND_UNBOXED = cython.declare(cython.int, 0)
KIND_WITH_KEYSET = cython.declare(cython.int, 1)
KIND_BOXED = cython.declare(cython.int, 2)
KIND_FALLTHROUGH = cython.declare(cython.int, 3)
KIND_MISSING = cython.declare(cython.int, 4)
KIND_AMBIGUOUS_AUTOGRAD_OTHER = cython.declare(cython.int, 5)
KIND_WITH_OPERATOR = cython.declare(cython.int, 6)
assert [int(k) for k in KernelKind] == [
    KIND_UNBOXED, KIND_WITH_KEYSET, KIND_BOXED, KIND_FALLTHROUGH, KIND_MISSING, KIND_AMBIGUOUS_AUTOGRAD_OTHER,
    KIND_WITH_OPERATOR,
]


class KernelFunction:
    """How to call one kernel: its kind (a KernelKind) and its callable."""

    _kind: int
    fn: Callable[..., Any] | None

    def __init__(self, kind: int, fn: Callable[..., Any] | None, cell: bool = False) -> None:
        if _kernel_is_frozen(self):
            raise TypeError("KernelFunction is immutable: __init__ cannot be called again")
        if type(kind) is not KernelKind:  # registration passes members: no enum lookup then
            kind = KernelKind(kind)
        code = int(kind)
        if (code <= KIND_BOXED or code == KIND_WITH_OPERATOR) and not callable(fn):
            raise TypeError(f"a {KernelKind(code).name} kernel must be callable, got {type(fn).__name__}")
        self.cell = bool(cell)
        self._builtin = _builtin_kernel(fn) if code == KIND_WITH_OPERATOR else BUILTIN_NONE
        self._kind = code
        self.fn = fn
        if cython.compiled:
            self.frozen = True

    # Note [Fallback cells]
    # A registry's tables hold, in every slot that takes its backend
    # fallback, the registry's one entry for that slot: a cell, made with
    # cell=True, the only kind of KernelFunction whose kernel can change.
    # Registering or removing a fallback puts the new kernel in the cell
    # (_hold), so every operator's plan calls it from then on without a new
    # plan: with the whole aten catalog defined, a fallback costs one
    # assignment, not a plan per operator.  Calls read the cell's kind and
    # kernel when they run, as they read any entry's, so the call path is
    # the same.  (A fallback that makes a slot fallthrough or not changes the
    # operators' masks, which are in their plans: registration then
    # republishes them.)  The three fields change together: compiled, in one
    # C function holding the GIL; run as Python, in one dict update; and in
    # both, the previous function is released only after (see _hold).
    def _hold(self, other: "KernelFunction") -> None:
        """Make this fallback cell call what ``other`` calls (Note [Fallback cells])."""
        if not self.cell:
            raise TypeError("only a fallback cell's kernel can be replaced: KernelFunction is immutable")
        if not isinstance(other, KernelFunction):
            raise TypeError(f"a fallback cell takes a KernelFunction, not {type(other).__name__}")
        source = cython.cast(KernelFunction, other)
        # The previous function is released only once the cell is whole again:
        # its release may run Python code (a __del__, a weakref callback), and
        # another thread calling through the cell then must neither read a
        # freed function (Cython releases an attribute's old value before it
        # stores the new one) nor a kind that is not its function's.
        previous = self.fn
        if cython.compiled:
            self._builtin = source._builtin
            self._kind = source._kind
            self.fn = source.fn
        else:
            self.__dict__.update(_builtin=source._builtin, _kind=source._kind, fn=source.fn)
        del previous

    @property
    def kind(self) -> KernelKind:
        return KernelKind(self._kind)

    def is_fallthrough(self) -> bool:
        return self._kind == KIND_FALLTHROUGH

    def is_valid(self) -> bool:
        return self._kind != KIND_MISSING

    def dump_state(self) -> str:
        return DUMP_STATE[KernelKind(self._kind)]

    def __repr__(self) -> str:
        return f"KernelFunction({self.kind.name}, {self.fn!r})"


def _kernel_is_frozen(kernel):
    if cython.compiled:
        return kernel.frozen
    return hasattr(kernel, "_kind")


# -- boxing: IValue, Stack, Boxer --------------------------------------------------------
# A boxed kernel sees a call as a stack of IValues.  What runs per value is
# here; what is slow and rare -- a converter per schema type, error texts --
# is made by dispatcher.ivalue, which hands each Boxer its converters.
TAGS = tuple(IValueTag)
assert all(int(tag) == i for i, tag in enumerate(TAGS))
TAG_NONE = cython.declare(cython.int, 0)
TAG_TENSOR = cython.declare(cython.int, 1)
TAG_DOUBLE = cython.declare(cython.int, 2)
TAG_INT = cython.declare(cython.int, 3)
TAG_BOOL = cython.declare(cython.int, 4)
TAG_STRING = cython.declare(cython.int, 5)
TAG_COMPLEX = cython.declare(cython.int, 6)
TAG_INT_LIST = cython.declare(cython.int, 12)
TAG_DOUBLE_LIST = cython.declare(cython.int, 13)
TAG_BOOL_LIST = cython.declare(cython.int, 14)
TAG_TENSOR_LIST = cython.declare(cython.int, 15)
TAG_GENERIC_LIST = cython.declare(cython.int, 16)
TAG_TUPLE = cython.declare(cython.int, 17)
TAG_OBJECT = cython.declare(cython.int, 18)
assert (TAG_NONE, TAG_TENSOR, TAG_DOUBLE, TAG_INT, TAG_BOOL, TAG_STRING, TAG_COMPLEX, TAG_INT_LIST,
        TAG_DOUBLE_LIST, TAG_BOOL_LIST, TAG_TENSOR_LIST, TAG_GENERIC_LIST, TAG_TUPLE, TAG_OBJECT) == (
    IValueTag.NONE, IValueTag.TENSOR, IValueTag.DOUBLE, IValueTag.INT, IValueTag.BOOL, IValueTag.STRING, IValueTag.COMPLEX, IValueTag.INT_LIST,
    IValueTag.DOUBLE_LIST, IValueTag.BOOL_LIST, IValueTag.TENSOR_LIST, IValueTag.GENERIC_LIST, IValueTag.TUPLE, IValueTag.OBJECT)
assert set(CONTAINER_TAGS) == set(TAGS[TAG_INT_LIST:TAG_TUPLE + 1])

if not cython.compiled:

    def Py_EnterRecursiveCall(where):
        """Python code gets the interpreter's own recursion check."""
        return 0

    def Py_LeaveRecursiveCall():
        pass


def _is_container(code):
    # Payloads that to_python() rebuilds (dispatcher._ivalue_tag.CONTAINER_TAGS).
    return TAG_INT_LIST <= code <= TAG_TUPLE


@cython.freelist(32)  # see Note [Freelists for per-call objects]
@cython.cclass
class IValue:
    """A tagged value: ``IValue(IValueTag.INT, 3)``; immutable.

    Payloads are plain Python values; typed lists (IntList, ..., TensorList)
    hold a tuple of plain elements, generic lists and tuples a tuple of
    IValues, as in c10 (``c10::List<int64_t>`` vs ``c10::List<IValue>``).
    """

    tag: IValueTag
    payload: Any
    code: int

    if not cython.compiled:
        __slots__ = ("tag", "payload", "code")

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(f"IValue is immutable: cannot set '{name}'")

    def __init__(self, tag: IValueTag, payload: object) -> None:
        if type(tag) is not IValueTag:
            raise TypeError(f"an IValue's tag must be an IValueTag, got {tag!r}")
        if _ivalue_is_frozen(self):
            raise TypeError("IValue is immutable: __init__ cannot be called again")
        _fill_ivalue(self, int(tag), payload)

    def __eq__(self, other: object) -> bool:
        if type(other) is not IValue:
            return NotImplemented
        # Identity first, as tuples compare items: a tensor payload equals itself.
        return _code_of(self) == _code_of(other) and (
            self.payload is other.payload or bool(self.payload == other.payload)
        )

    def __hash__(self) -> int:
        Py_EnterRecursiveCall(" while hashing an IValue")
        try:
            return hash((self.tag, self.payload))
        finally:
            Py_LeaveRecursiveCall()

    def __reduce__(self) -> tuple[type[IValue], tuple[IValueTag, Any]]:
        return IValue, (self.tag, self.payload)

    def __repr__(self) -> str:
        return f"IValue(IValueTag.{self.tag.name}, {self.payload!r})"

    def to_python(self) -> Any:
        """The plain Python value: lists come back as fresh lists, tuples as tuples."""
        return _to_python(self)

    @staticmethod
    def from_python(value: object) -> IValue:
        """Box ``value`` with the tag its Python type suggests (for ``Any``, ``t``, ``...``)."""
        return _from_python(value)


def _fill_ivalue(iv, code, payload):
    if cython.compiled:
        iv.tag = TAGS[code]
        iv.code = code
        iv.payload = payload
        iv.frozen = True
    else:
        object.__setattr__(iv, "tag", TAGS[code])
        object.__setattr__(iv, "code", code)
        object.__setattr__(iv, "payload", payload)


def _code_of(iv):
    return iv.code


def _ivalue_is_frozen(iv):
    if cython.compiled:
        return iv.frozen
    return hasattr(iv, "code")


def _new_ivalue(code, payload):
    # An IValue for a tag known to be good: no check, no Python code.
    iv = IValue.__new__(IValue)
    _fill_ivalue(iv, code, payload)
    return iv


NONE_IVALUE = _new_ivalue(TAG_NONE, None)


def _element(x):
    if type(x) is not IValue:
        raise TypeError(f"a generic list or tuple IValue holds IValues, not {type(x).__name__}")
    return x


def _to_python(iv):
    code = _code_of(iv)
    if TAG_INT_LIST <= code <= TAG_TENSOR_LIST:
        return list(iv.payload)
    if code != TAG_GENERIC_LIST and code != TAG_TUPLE:
        return iv.payload
    Py_EnterRecursiveCall(" while unboxing an IValue")
    try:
        items = [_to_python(_element(x)) for x in iv.payload]
    finally:
        Py_LeaveRecursiveCall()
    return items if code == TAG_GENERIC_LIST else tuple(items)


# A non-empty list whose elements all have one of these exact types is a typed list.
_LIST_INFERENCE = ((TAG_BOOL_LIST, bool), (TAG_INT_LIST, int), (TAG_DOUBLE_LIST, float))


def _from_python(value):
    if value is None:
        return NONE_IVALUE
    cls = type(value)
    if cls is bool:
        return _new_ivalue(TAG_BOOL, value)
    if cls is int:
        return _new_ivalue(TAG_INT, value)
    if cls is float:
        return _new_ivalue(TAG_DOUBLE, value)
    if cls is str:
        return _new_ivalue(TAG_STRING, value)
    if cls is complex:
        return _new_ivalue(TAG_COMPLEX, value)
    if tensor_key_set(value) is not None:
        return _new_ivalue(TAG_TENSOR, value)
    if cls is not list and cls is not tuple:
        return _new_ivalue(TAG_OBJECT, value)
    items = tuple(value)  # a snapshot: boxing an element may run code that changes the list
    if cls is list and items:
        for code, element_type in _LIST_INFERENCE:
            if all([type(x) is element_type for x in items]):
                return _new_ivalue(code, items)
        if all([tensor_key_set(x) is not None for x in items]):
            return _new_ivalue(TAG_TENSOR_LIST, items)
    Py_EnterRecursiveCall(" while boxing a list or tuple")
    try:
        boxed = tuple([_from_python(x) for x in items])
    finally:
        Py_LeaveRecursiveCall()
    return _new_ivalue(TAG_GENERIC_LIST if cls is list else TAG_TUPLE, boxed)


class Stack(list):
    """A list of IValues with the stack helpers of ``ATen/core/stack.h``.

    The top of the stack is the end of the list; ``pop()`` is list's.
    ``push`` checks that it is given IValues; the list methods themselves stay
    the raw, unchecked vector interface (as ``std::vector<IValue>`` is in
    PyTorch) for hot code.
    """

    if not cython.compiled:
        __slots__ = ()

    def push(self, *values: IValue) -> None:
        for v in values:
            if type(v) is not IValue:
                raise TypeError(f"a Stack holds IValues, not {type(v).__name__}")
        self.extend(values)

    def peek(self, i: int, n: int) -> IValue:
        """Item ``i`` of the top ``n`` items (torch::jit::peek(stack, i, N))."""
        if not 0 <= i < n <= len(self):
            raise IndexError(f"cannot peek at item {i} of the top {n} of a stack of {len(self)}")
        return self[len(self) - n + i]

    def pop_n(self, n: int) -> list[IValue]:
        """Remove and return the top ``n`` items, deepest first (torch::jit::pop(stack, N))."""
        _check_depth(self, n, "pop")
        items = self[len(self) - n:]
        del self[len(self) - n:]
        return items

    def drop(self, n: int) -> None:
        """Remove the top ``n`` items (torch::jit::drop(stack, n))."""
        _check_depth(self, n, "drop")
        del self[len(self) - n:]

    def __reduce__(self) -> tuple[type[Stack], tuple[list[IValue]]]:
        return Stack, (list(self),)


def _check_depth(stack, n, what):
    if type(n) is not int or n < 0:
        raise ValueError(f"cannot {what} {n!r} items: expected a non-negative int")
    if n > len(stack):
        raise IndexError(f"cannot {what} {n} items from a stack of {len(stack)}")


def _check_stack(stack):
    if not isinstance(stack, Stack):
        got = type(stack)
        # Each engine has its own Stack: say which, when the names agree.
        if got.__name__ == "Stack":
            raise TypeError(f"expected a Stack of {Stack.__module__}, got one of {got.__module__}")
        raise TypeError(f"expected a Stack, got {got.__name__}")


def _peek_values(stack, n, name, what):
    """The top ``n`` items of ``stack`` (all if n < 0) as Python values, left in place.

    Everything is read from a copy of those items, checked before anything
    is converted: converting may run Python code (a GC, a destructor) that
    changes the stack.
    """
    _check_stack(stack)
    # Checked to be a Stack (a list): compiled code reads it as a list directly.
    entries = cython.cast(list, stack)
    size = len(entries)
    if n < 0:
        n = size
    elif n > size:
        raise RuntimeError(f"{name}: expected {n} {what} on the stack, found {size}")
    items = entries[size - n:]
    for i in range(n):
        _checked_ivalue(items[i], name)
    for i in range(n):
        # The copy is ours alone: it is converted in place.
        items[i] = _to_python(cython.cast(IValue, items[i]))
    return tuple(items)


def _checked_ivalue(item, name):
    if type(item) is not IValue:
        raise TypeError(f"{name}: the stack holds a {type(item).__name__}, not an IValue")
    return item


if not cython.compiled:
    def _truncate(entries, size):
        """Cut ``entries`` to its first ``size`` items (compiled: PyList_SetSlice,
        without the slice object that ``del entries[size:]`` builds)."""
        del entries[size:]


def _drop(stack, n):
    """Remove the top ``n`` items (fewer if the stack has fewer)."""
    entries = cython.cast(list, stack)
    _truncate(entries, max(len(entries) - n, 0))


def _take(stack, n, name, what):
    """The top ``n`` items of ``stack`` (all if n < 0), removed, as Python values."""
    values = _peek_values(stack, n, name, what)
    _drop(stack, len(values))
    return values


# How one value boxes: (kind, exact type, tag code, converter).
STEP_CONVERT = cython.declare(cython.int, 0)  # call the converter
STEP_TENSOR = cython.declare(cython.int, 1)  # a tensor boxes as it is, anything else is converted
STEP_EXACT = cython.declare(cython.int, 2)  # a value of exactly the step's type boxes as it is, ...


def _make_steps(converters, fast_paths):
    if type(converters) is not tuple or type(fast_paths) is not tuple or len(converters) != len(fast_paths):
        raise ValueError("a Boxer takes a tuple of converters and a tuple of as many fast paths")
    steps: list[tuple[int, type | None, int, Any]] = []
    for convert, fast in zip(converters, fast_paths):
        if not callable(convert):
            raise TypeError(f"a converter must be callable, not {type(convert).__name__}")
        if fast is None:
            steps.append((STEP_CONVERT, None, 0, convert))
            continue
        if (type(fast) is not tuple or len(fast) != 2 or type(fast[1]) is not IValueTag
                or not (fast[0] is None or isinstance(fast[0], type))):
            raise TypeError(f"a fast path is None or (exact type or None, IValueTag), not {fast!r}")
        steps.append((STEP_TENSOR if fast[0] is None else STEP_EXACT, fast[0], int(fast[1]), convert))
    return tuple(steps)


def _takes_as_is(step, value):
    """Whether ``value`` boxes by ``step``'s fast path, as it is."""
    kind = cython.cast(int, step[0])
    if kind == STEP_EXACT:
        return type(value) is step[1]
    if kind == STEP_TENSOR:
        return isinstance(value, TensorBase) or tensor_key_set(value) is not None
    return False


def _box_value(step, value):
    if _takes_as_is(step, value):
        return _new_ivalue(step[2], value)
    iv = step[3](value)
    if type(iv) is not IValue:
        raise TypeError(f"a converter returned {type(iv).__name__}, not an IValue")
    return iv


def _check_value(step, value):
    """Raise Mismatch, as _box_value would, if ``value`` does not box by
    ``step``; without boxing it when the fast path takes it."""
    if not _takes_as_is(step, value):
        _box_value(step, value)


class Boxer:
    """How the calls of one schema box and unbox, from plain data.

    ``dispatcher.ivalue.make_boxer`` builds one per schema: a converter per
    argument and per return, each with its fast path (``(exact type, IValueTag)``
    for values that box as they are, the type None standing for "a tensor";
    or None: always convert), what the schema says about its arguments
    (``positional``: a call passing exactly the declared arguments
    positionally needs no binding; ``vararg`` / ``varret``: ``...``), its
    ``bind`` function, and the functions that word a mismatch as a
    TypeError: ``argument_error(values)``, ``return_error(i, mismatch)``.
    """

    name: str | None

    def __init__(self, name, argument_converters, argument_fast_paths, return_converters, return_fast_paths,
                 positional, vararg, varret, bind, argument_error, return_error):
        if self.name is not None:
            raise TypeError("a Boxer is initialised once")
        if not isinstance(name, str):
            raise TypeError(f"a Boxer's name is a str, not {type(name).__name__}")
        for what, fn in (("bind", bind), ("argument_error", argument_error), ("return_error", return_error)):
            if not callable(fn):
                raise TypeError(f"a Boxer's {what} must be callable, not {type(fn).__name__}")
        self.argument_steps = _make_steps(argument_converters, argument_fast_paths)
        self.return_steps = _make_steps(return_converters, return_fast_paths)
        self.n_arguments = len(self.argument_steps)
        self.n_returns = len(self.return_steps)
        self.positional = bool(positional)
        self.vararg = bool(vararg)
        self.varret = bool(varret)
        self.bind = bind
        self.argument_error = argument_error
        self.return_error = return_error
        self.name = name

    def box(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Stack:
        """The stack a boxed kernel gets for ``op(*args, **kwargs)``."""
        _check_ready(self)
        return _box_call(self, args, kwargs)

    def unbox_arguments(self, stack: Stack) -> tuple[Any, ...]:
        """Pop the arguments ``box`` pushed; a ``...`` schema's arguments are the whole stack."""
        _check_ready(self)
        return _take(stack, -1 if self.vararg else self.n_arguments, self.name, "arguments")

    def box_returns(self, result: object, stack: Stack) -> None:
        """Push a kernel's ``result`` (None, a value, or a tuple) as IValues;
        a bad result leaves the stack as it was."""
        _check_ready(self)
        _box_returns(self, result, stack)

    def unbox_returns(self, stack: Stack) -> Any:
        """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

        A ``-> ...`` schema's results are the whole stack (always a tuple).
        """
        _check_ready(self)
        if self.varret:
            return _take(stack, -1, self.name, "return values")
        return _as_result(self, _take(stack, self.n_returns, self.name, "return values"))


if not cython.compiled:
    Boxer.name = None  # an uninitialised Boxer (compiled: the C field starts as None)


def _check_ready(boxer):
    if boxer.name is None:
        raise TypeError("this Boxer was never initialised")


def _box_call(boxer, args, kwargs):
    if boxer.positional and not kwargs and type(args) is tuple and len(args) == boxer.n_arguments:
        values = args
    else:
        values = boxer.bind(args, kwargs)  # exactly the declared arguments, plus a "..."'s extras
        if type(values) is not tuple or len(values) < boxer.n_arguments:
            raise RuntimeError(f"{boxer.name}: bind() returned {values!r}, not the bound arguments")
    return _box_values(boxer, values)


def _new_stack():
    # Stack.__new__ skips list.__init__'s argument parsing: a third of an
    # empty Stack's cost when called as Stack().
    return Stack.__new__(Stack)


def _box_values(boxer, values):
    stack = _new_stack()
    steps = boxer.argument_steps
    try:
        for i in range(boxer.n_arguments):
            cython.cast(list, stack).append(_box_value(steps[i], values[i]))
    except Mismatch:
        raise boxer.argument_error(values) from None
    for i in range(boxer.n_arguments, len(values)):
        cython.cast(list, stack).append(_from_python(values[i]))
    return stack


def _returned_values(boxer, result):
    """``result`` as the tuple of values the schema's returns describe."""
    n = boxer.n_returns
    if boxer.varret:
        # "-> ..." (or "-> (Tensor, ...)"): the kernel returns a tuple of all its values.
        if type(result) is not tuple or len(result) < n:
            raise DispatcherTypeError(
                f"{boxer.name}() returns a tuple of at least {n} values, but the kernel returned {_described(result)}"
            )
        return result
    if n == 0:
        if result is not None:
            raise DispatcherTypeError(f"{boxer.name}() returns nothing, but the kernel returned {_type_name(result)}")
        return ()
    if n == 1:
        return (result,)
    if type(result) is not tuple or len(result) != n:
        raise DispatcherTypeError(f"{boxer.name}() returns a tuple of {n}, but the kernel returned {_described(result)}")
    return result


def _box_returns(boxer, result, stack):
    _check_stack(stack)
    if boxer.n_returns == 1 and not boxer.varret:
        # The common case, without the tuple and list of the general one.
        try:
            iv = _box_value(boxer.return_steps[0], result)
        except Mismatch as exc:
            raise boxer.return_error(0, exc) from None
        cython.cast(list, stack).append(iv)
        return
    values = _returned_values(boxer, result)
    steps = boxer.return_steps
    boxed = []
    for i in range(boxer.n_returns):
        try:
            boxed.append(_box_value(steps[i], values[i]))
        except Mismatch as exc:
            raise boxer.return_error(i, exc) from None
    for i in range(boxer.n_returns, len(values)):
        boxed.append(_from_python(values[i]))
    cython.cast(list, stack).extend(boxed)  # all or nothing: a bad return leaves the stack as it was


def _as_result(boxer, values):
    if boxer.n_returns == 0:
        return None
    return values[0] if boxer.n_returns == 1 else values


def _kernel_results(boxer, stack, name):
    """What a boxed kernel, called for an unboxed call, left on the stack it
    was given: exactly the returns, each of its declared type (c10 asserts
    the count too).  Checked, then unboxed."""
    if boxer.varret:
        return _peek_values(stack, -1, name, "return values")
    if len(stack) != boxer.n_returns:
        raise RuntimeError(
            f"{name}: a boxed kernel must leave exactly its {boxer.n_returns} return value(s) on the stack, "
            f"but left {len(stack)} item(s)"
        )
    # Read, not popped: the stack is the call's own and is dropped after this.
    if boxer.n_returns == 1:
        # The common case, without _peek_values' copy and tuple.
        value = _to_python(_checked_ivalue(cython.cast(list, stack)[0], name))
        try:
            _check_value(boxer.return_steps[0], value)
        except Mismatch as exc:
            raise boxer.return_error(0, exc) from None
        return value
    values = _peek_values(stack, boxer.n_returns, name, "return values")
    steps = boxer.return_steps
    for i in range(boxer.n_returns):
        try:
            _check_value(steps[i], values[i])
        except Mismatch as exc:
            raise boxer.return_error(i, exc) from None
    return _as_result(boxer, values)


def _type_name(value):
    return "None" if value is None else type(value).__name__


def _described(result):
    return f"a tuple of {len(result)}" if type(result) is tuple else _type_name(result)


# -- call plans ---------------------------------------------------------------------------
# Note [One plan per operator]
# Registration compiles everything a call needs into one CallPlan and
# publishes it to the operator's handle in one assignment: the runtime
# table, the per-backend fallthrough masks, where the dispatch arguments are
# and of what kind, the schema's Boxer and binding functions, and the error
# reporter.  A call reads the handle's plan once and holds it to the end, so
# a registration during the call (from a kernel, a GC callback, a key-set
# function) never changes what the call is reading; it only swaps the
# handle's reference.  A plan is never changed after it is built, except for
# its last-dispatch memo (see Note [Last dispatch cache]), which is a pure
# function of the plan.
#
# Key extraction may run Python code (a tensor type's key-set function, a
# keyword's __hash__), which may register.  A call therefore re-reads the
# handle's plan after extraction and uses the newest one; if that one has
# another schema (the operator was removed or re-defined), the keys are
# extracted again with it, a bounded number of times.
ARG_TENSOR = cython.declare(cython.int, 0)
ARG_OPTIONAL_TENSOR = cython.declare(cython.int, 1)
ARG_TENSOR_LIST = cython.declare(cython.int, 2)
ARG_OPTIONAL_TENSOR_LIST = cython.declare(cython.int, 3)
MAX_REPLANS = cython.declare(cython.int, 8)
# What csrc/_fastcall.pyx numbers too; it checks them against this at import.
FASTCALL_CONSTANTS = (KIND_UNBOXED, KIND_WITH_KEYSET, KIND_BOXED, KIND_WITH_OPERATOR, ARG_TENSOR, MAX_REPLANS)
NUM_RUNTIME_ENTRIES = len(_layout.RUNTIME_SLOT_KEYS)
_NOT_GIVEN = object()


class CallShape:
    """What every call plan of one def shares: checked and derived once, when
    the operator is defined, so that a registration, which builds a new plan
    (Note [One plan per operator]), only checks its table and masks.

    ``schema`` is only held, for ``OperatorHandle.schema``; None is the shape
    of an operator that is not defined (its plans only raise).
    ``dispatch_args``: ``(position, name, kind, required)`` of each
    dispatch-relevant argument (kind: 0 Tensor, 1 Tensor?, 2 Tensor[],
    3 Tensor?[]).  ``positional_span``: when every dispatch argument is a
    required, positional Tensor, how many positional arguments a call must
    pass to pass them all (-1 otherwise).  ``boxer`` (or ``make_boxer``,
    which makes it when first needed: Note [Boxers made on first use]),
    ``bind`` and ``split_call`` come from the schema.  ``handler_arity`` and
    ``handler_call`` put a call in the form a Python-key handler gets it
    (Note [Handler arguments]).  ``dispatch_argument_error(i, value)``, if
    given, makes the exception a call raises when the value of dispatch
    argument ``i`` is not a tensor, or a list of them, as it must be (else
    the engine words it).  ``tags``: the operator's tag names.
    """

    dispatch_args: tuple | None
    # C arrays, compiled only (see _store_shape_arrays).
    c_positions: Any
    c_kinds: Any

    def __init__(self, *, schema, dispatch_args, positional_span, boxer, bind, split_call, handler_arity, handler_call,
                 tags=(), dispatch_argument_error=None, make_boxer=None):
        if self.dispatch_args is not None:
            raise TypeError("a CallShape is built once")
        if boxer is not None and not isinstance(boxer, Boxer):
            raise TypeError(f"a CallShape's boxer is a Boxer or None, not {type(boxer).__name__}")
        if make_boxer is not None and (boxer is not None or not callable(make_boxer)):
            raise TypeError("a CallShape's make_boxer is a callable given instead of a boxer, or None")
        if schema is not None:
            for what, fn in (("bind", bind), ("split_call", split_call), ("handler_call", handler_call)):
                if not callable(fn):
                    raise TypeError(f"a CallShape's {what} must be callable, not {type(fn).__name__}")
        if dispatch_argument_error is not None and not callable(dispatch_argument_error):
            raise TypeError("a CallShape's dispatch_argument_error must be callable or None")
        if type(positional_span) is not int or type(handler_arity) is not int:
            raise TypeError("a CallShape's positional_span and handler_arity are ints")
        arguments = _check_dispatch_args(dispatch_args)
        if type(tags) is not tuple or not all([type(t) is str for t in tags]):
            raise TypeError("a CallShape's tags are a tuple of tag names")
        self.tags = tags
        self.schema = schema
        self._boxer = boxer
        self._make_boxer = make_boxer
        self.bind = bind
        self.split_call = split_call
        self.handler_arity = handler_arity
        self.handler_call = handler_call
        self.dispatch_argument_error = dispatch_argument_error
        self.n_args = len(arguments)
        self.arg_positions = tuple([a[0] for a in arguments])
        self.arg_names = tuple([a[1] for a in arguments])
        self.arg_kinds = tuple([a[2] for a in arguments])
        self.arg_required = tuple([a[3] for a in arguments])
        self.positional_span = positional_span
        self.min_positional, self.max_positional = _positional_bounds(schema)
        _store_shape_arrays(self, len(arguments))
        self.dispatch_args = arguments

    @property
    def boxer(self):
        """The schema's Boxer (None for an undefined operator's shape)."""
        return _shape_boxer(self)

    def __dealloc__(self):
        if cython.compiled:
            PyMem_Free(self.c_positions)
            PyMem_Free(self.c_kinds)


# Note [Boxers made on first use]
# A Boxer (a converter and fast path per argument and return, the error
# wording) is only read by boxed calls: a boxed kernel or fallback, the
# Python key, a packet choosing an overload, callBoxed.  Most defs never
# see one (a catalog operator's first use defines every overload of its
# name), and building it was about half of a define's own work, so a shape
# may be given ``make_boxer`` instead, which the first reader calls.  Two
# threads may both call it; each gets an equivalent Boxer and one is kept.
def _shape_boxer(shape):
    boxer = shape._boxer
    if boxer is None and shape._make_boxer is not None:
        made = shape._make_boxer()
        if not isinstance(made, Boxer):
            raise TypeError(f"a CallShape's make_boxer returned {type(made).__name__}, not a Boxer")
        boxer = shape._boxer = made
    return boxer


if not cython.compiled:
    CallShape.dispatch_args = None  # an unbuilt CallShape (compiled: the C field starts as None)


# Note [Argument count check]
# A call whose number of positional arguments no schema call could have
# (more than the schema has positional arguments, or, without keywords,
# fewer than its last argument without a default needs) stops at key
# extraction with torch's text, naming the operator and its schema, instead
# of reaching the kernel (whose own TypeError names neither).  The check is
# two comparisons with the shape's bounds, folded into the test that picks
# extraction's fast path; it is not the checked call (dispatcher/call_checks.py),
# which also checks types and keywords.
def _positional_bounds(schema):
    """``(min, max)`` positional arguments a call of ``schema`` may pass (no schema: any number)."""
    if schema is None:
        return 0, sys.maxsize
    positional = [a for a in schema.arguments if not a.kwarg_only]
    minimum = 0
    for i, argument in enumerate(positional):  # no negative indexing: compiled, the engine does not wrap around
        if not argument.has_default:
            minimum = i + 1
    return minimum, (sys.maxsize if schema.is_vararg else len(positional))


def _wrong_argument_count(plan, args, kwargs):
    """Raise torch's error for a call whose positional arguments cannot fit (Note [Argument count check])."""
    schema = plan.shape.schema
    who = f"{schema.name.qualified_name}()"
    arguments = schema.arguments
    given = len(args) + (len(kwargs) if kwargs else 0)
    if given > len(arguments):
        raise DispatcherTypeError(f"{who} expected at most {len(arguments)} argument(s) but received {given} "
                                  f"argument(s). Declaration: {schema}")
    if len(args) > plan.shape.max_positional:
        raise DispatcherTypeError(f"{who} takes {plan.shape.max_positional} positional argument(s) but {len(args)} "
                                  f"was/were given.  Declaration: {schema}")
    for argument in arguments[len(args):]:
        if not argument.has_default and not (kwargs and argument.name in kwargs):
            raise DispatcherTypeError(f"{who} is missing value for argument '{argument.name}'. Declaration: {schema}")
    raise AssertionError(f"{plan.name}: _wrong_argument_count called for a call that fits its schema")


def _check_dispatch_args(dispatch_args):
    if type(dispatch_args) is not tuple:
        raise TypeError("a CallShape's dispatch_args is a tuple of (position, name, kind, required)")
    checked = []
    for arg in dispatch_args:
        if (type(arg) is not tuple or len(arg) != 4 or type(arg[0]) is not int or arg[0] < 0
                or type(arg[1]) is not str or arg[2] not in (0, 1, 2, 3) or type(arg[3]) is not bool):
            raise TypeError(f"a dispatch argument is (position >= 0, name, kind 0-3, required), not {arg!r}")
        checked.append((arg[0], arg[1], int(arg[2]), arg[3]))
    return tuple(checked)


def _store_shape_arrays(shape, n_args):
    if cython.compiled:
        # Freed first: an __init__ that failed after this may be called again.
        PyMem_Free(shape.c_positions)
        PyMem_Free(shape.c_kinds)
        shape.c_positions = cython.NULL
        shape.c_kinds = cython.NULL
        n = max(n_args, 1)
        shape.c_positions = cython.cast(cython.p_Py_ssize_t, PyMem_Malloc(n * cython.sizeof(cython.Py_ssize_t)))
        shape.c_kinds = cython.cast(cython.p_int, PyMem_Malloc(n * cython.sizeof(cython.int)))
        if shape.c_positions == cython.NULL or shape.c_kinds == cython.NULL:
            raise MemoryError()
        for i in range(n_args):
            shape.c_positions[i] = shape.arg_positions[i]
            shape.c_kinds[i] = shape.arg_kinds[i]


class CallPlan:
    """Everything the call path reads for one operator; see Note [One plan per operator].

    ``table``: one KernelFunction per runtime slot.  ``masks``: the
    non-fallthrough keys per backend.  ``shape``: what the plan takes from
    the def (a CallShape), shared by every plan of the def.
    ``report_error(kind, key)`` raises the error of a missing or ambiguous
    entry.  A plan whose shape has no schema is the plan of an operator that
    is not defined: calling it says so.
    """

    # Set by _fill_plan (and the name, last, by __init__).
    name: str | None
    shape: CallShape
    table: tuple
    report_error: Any
    cache_valid: bool
    last_entry: KernelFunction

    def __init__(self, name, shape, table, masks, report_error):
        if self.name is not None:
            raise TypeError("a CallPlan is built once")
        if not isinstance(name, str):
            raise TypeError(f"a CallPlan's name is a str, not {type(name).__name__}")
        if not isinstance(shape, CallShape) or shape.dispatch_args is None:
            raise TypeError(f"a CallPlan's shape is a built CallShape, not {type(shape).__name__}")
        if type(table) is not tuple or len(table) != NUM_RUNTIME_ENTRIES:
            raise ValueError(f"a CallPlan's table is a tuple of {NUM_RUNTIME_ENTRIES} KernelFunctions")
        if type(masks) is not tuple or len(masks) != NUM_BACKENDS:
            raise ValueError(f"a CallPlan has one fallthrough mask per backend ({NUM_BACKENDS})")
        if not callable(report_error):
            raise TypeError("a CallPlan's report_error must be callable")
        # Typed from here on (compiled: C reads of the tuples and the shape).
        _fill_plan(self, shape, table, masks)
        self.report_error = report_error
        self.name = name

    def __repr__(self):
        return f"<CallPlan of {self.name}{'' if self.shape.schema is not None else ' (not defined)'}>"


if not cython.compiled:
    CallPlan.name = None  # an unbuilt CallPlan (compiled: the C field starts as None)


def _fill_plan(plan, shape, table, masks):
    for i in range(NUM_RUNTIME_ENTRIES):
        if not isinstance(table[i], KernelFunction):
            raise TypeError(f"a CallPlan's table holds KernelFunctions, not {type(table[i]).__name__}")
    _store_masks(plan, masks)
    plan.shape = shape
    plan.table = table
    plan.cache_valid = False


def _store_masks(plan, masks):
    if cython.compiled:
        for i in range(NUM_BACKENDS):
            mask = masks[i]
            # Converted to C and compared there; _check_repr words what is wrong with a bad mask (and raises).
            bits = 0
            if type(mask) is not int or mask < 0:
                _check_repr(mask)
            try:
                bits = mask
            except OverflowError:
                _check_repr(mask)
            if bits > FULL_REPR:
                _check_repr(mask)
            plan.masks[i] = bits
    else:
        plan.masks = tuple([_check_repr(m) for m in masks])


def filled_table(cells, runs, entries):
    """A new table: the tuple ``cells`` with, for each run ``(start, stop, n)``
    of ``runs`` (in slot order, none overlapping), slots start..stop-1
    holding ``entries[n]``.  Registration's table from a layout (Note [Table
    layouts] in dispatcher/operator_entry.py), made in one pass when
    compiled: a list filled and then copied into a tuple writes every slot's
    reference count twice more and frees the list, which for 137 slots was
    a quarter of an impl's time."""
    size = len(cells)
    i = 0
    for run in runs:
        start = run[0]
        stop = run[1]
        if start < i or stop < start or stop > size:
            raise ValueError(f"a table's runs are in slot order, within its {size} slots: got {runs!r}")
        i = stop
    if not cython.compiled:
        table = list(cells)
        for start, stop, n in runs:
            table[start:stop] = (entries[n],) * (stop - start)
        return tuple(table)
    filled = PyTuple_New(size)
    i = 0
    for run in runs:
        start = run[0]
        stop = run[1]
        entry = entries[run[2]]
        while i < start:
            item = cells[i]
            Py_INCREF(item)
            PyTuple_SET_ITEM(filled, i, item)
            i += 1
        while i < stop:
            Py_INCREF(entry)
            PyTuple_SET_ITEM(filled, i, entry)
            i += 1
    while i < size:
        item = cells[i]
        Py_INCREF(item)
        PyTuple_SET_ITEM(filled, i, item)
        i += 1
    return filled


def _raise_not_defined(handle):
    # Named by the handle: the plans of undefined operators are one shared
    # plan (see Note [One plan while undefined] in dispatcher/operator_entry.py).
    raise RuntimeError(
        f"operator {handle._name} is not defined: it was never defined, or the library that defined it "
        "was closed; define it again to call it"
    )


# Note [Last dispatch cache]
# Most call sites call an operator with the same kinds of tensors again and
# again.  Between the keyset a call computes (arguments | TLS include, minus
# TLS exclude) and its kernel lie the fallthrough mask and the table index:
# a chain of dependent loads.  Each plan remembers the last keyset it saw
# (last_key), the keyset the mask left (last_bits) and that slot's entry
# (last_entry), so a repeated call goes straight to its kernel.  A plan is
# replaced whole on registration, so the memo is never stale.  Whatever
# _masked returns, the memo then holds with its entry: the compiled call
# path (csrc/_fastcall.pyx) reads the entry there, not through the table.
def _masked(plan, bits):
    """The call's keyset after TLS (already applied) and the fallthrough mask."""
    if plan.cache_valid and bits == plan.last_key:
        return plan.last_bits
    masked = bits & plan.masks[_backend_mask_index(bits)]
    plan.last_key = bits
    plan.last_bits = masked
    plan.last_entry = plan.table[_table_index(masked)]
    plan.cache_valid = True
    return masked


def _call_bits(plan, bits):
    """A call's keyset: its arguments' bits with this thread's TLS applied,
    then the operator's fallthrough mask (its entry is then plan.last_entry:
    see Note [Last dispatch cache])."""
    return _masked(plan, apply_tls(bits))


def _entry_at(plan, bits):
    return plan.table[_table_index(bits)]


def _value_bits(plan, value, kind, i):
    """The key bits of one dispatch argument's value, of any kind."""
    if kind == ARG_TENSOR:
        return _required_tensor_bits(plan, value, i, "a tensor", value)
    if kind == ARG_OPTIONAL_TENSOR:
        return 0 if value is None else _required_tensor_bits(plan, value, i, "a tensor or None", value)
    if not isinstance(value, (list, tuple)):
        _wrong_type(plan, value, i, "a list of tensors", value)
    bits = 0
    for item in tuple(value):
        if item is None and kind == ARG_OPTIONAL_TENSOR_LIST:
            continue
        bits |= _required_tensor_bits(plan, item, i, "a tensor", value)
    return bits


def _required_tensor_bits(plan, value, i, expected, argument):
    bits = _tensor_bits(value)
    if bits < 0:
        if isinstance(value, NUMBER_TYPES) and allows_numbers_as_tensors(plan.name):
            return 0  # torch's wrapped-number tensor: the kernel gets the number (dispatcher/_numbers_as_tensors.py)
        _wrong_type(plan, value, i, expected, argument)
    return bits


def _wrong_type(plan, value, i, expected, argument):
    """Dispatch argument ``i`` holds ``value``, which is not ``expected``;
    ``argument`` is the argument's whole value (a list that ``value`` is in)."""
    if plan.shape.dispatch_argument_error is not None:
        raise plan.shape.dispatch_argument_error(i, argument)
    if value is None and argument is None:
        # A Tensor argument given None: torch's undefined tensor, which its kernels refuse with this text.
        raise RuntimeError(
            f"Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument "
            f"#{plan.shape.arg_positions[i]} '{plan.shape.arg_names[i]}'"
        )
    raise DispatcherTypeError(
        f"{plan.name}: argument '{plan.shape.arg_names[i]}' (position {plan.shape.arg_positions[i] + 1}) must be {expected}, "
        f"not {type(value).__name__}"
    )


def _missing_argument(plan, args, kwargs, name):
    _wrong_argument_count(plan, args, kwargs)  # torch's text (Note [Argument count check])


def _extract_bits(plan, args, kwargs):
    """The union of the dispatch arguments' key bits, for a packed call."""
    bits = 0
    nargs = len(args)
    if nargs > plan.shape.max_positional or (nargs < plan.shape.min_positional and not kwargs):
        _wrong_argument_count(plan, args, kwargs)  # see Note [Argument count check]
    for i in range(plan.shape.n_args):
        position = plan.shape.arg_positions[i]
        if position < nargs:
            value = args[position]
        else:
            value = kwargs.get(plan.shape.arg_names[i], _NOT_GIVEN) if kwargs else _NOT_GIVEN
            if value is _NOT_GIVEN:
                if plan.shape.arg_required[i]:
                    _missing_argument(plan, args, kwargs, plan.shape.arg_names[i])
                continue  # an omitted argument: its default is no tensor
        bits |= _value_bits(plan, value, plan.shape.arg_kinds[i], i)
    return bits


def _settled_plan(handle, plan):
    """After extraction with ``plan``: the handle's newest plan if it has the
    same schema (the keys still apply), else None (extract again)."""
    current = handle._plan
    if current is plan or current.shape.schema is plan.shape.schema:
        return current
    return None


def _too_many_replans(handle):
    raise RuntimeError(
        f"{handle._name}: the operator was re-defined during key extraction {MAX_REPLANS} times in a row; "
        "a tensor's key-set function should not register operators"
    )


def _plan_and_keys(handle, args, kwargs):
    """See Note [One plan per operator]: the plan to call and the arguments'
    key bits, extracted with that plan's argument layout."""
    for _ in range(MAX_REPLANS):
        plan = handle._plan
        if plan.shape.schema is None:
            _raise_not_defined(handle)
        bits = _extract_bits(plan, args, kwargs)
        settled = _settled_plan(handle, plan)
        if settled is not None:
            return settled, bits
    _too_many_replans(handle)


def _skip_fallthroughs(plan, bits, name):
    """Calls never reach a fallthrough entry (the mask removed its key), but
    a redispatch with a keyset that still holds one does: skip its key, as
    the mask would have.  A fallthrough in a slot whose key has no bit of
    its own (Undefined, a per-backend functionality without a backend) has
    nothing to skip to, and is an error rather than an endless loop."""
    entry = plan.table[_table_index(bits)]
    while entry._kind == KIND_FALLTHROUGH:
        value = _highest_priority_value(bits)
        without = _minus(bits, KEY_REPRS[value])
        if without == bits:
            raise RuntimeError(
                f"{name}: the kernel for key {_key_at(value).name} is a fallthrough, "
                "but there is no lower key to fall through to"
            )
        bits = without
        entry = plan.table[_table_index(bits)]
    return bits


def _run_kernel(handle, plan, bits, args, kwargs):
    """Call the entry of ``bits`` (fallthroughs already skipped) for a packed call."""
    entry = plan.table[_table_index(bits)]
    kind = entry._kind
    if kind == KIND_UNBOXED:
        return entry.fn(*args, **kwargs)
    if kind == KIND_WITH_KEYSET:
        return entry.fn(_make(bits), *args, **kwargs)
    if kind == KIND_WITH_OPERATOR:
        return _run_with_operator(handle, plan, bits, entry, args, kwargs, ANY_ARGUMENT_BITS)
    if kind == KIND_BOXED:
        boxer = _shape_boxer(plan.shape)
        stack = _box_call(boxer, args, kwargs)
        entry.fn(handle, _make(bits), stack)
        return _kernel_results(boxer, stack, plan.name)
    _report(plan, entry, bits)


def _run_with_operator(handle, plan, bits, entry, args, kwargs, argument_bits):
    """Call ``entry``, a WITH_OPERATOR kernel (csrc/_fastcall.pyx comes here
    directly).  ``argument_bits``: the union of the arguments' keys if the
    caller has it, else ANY_ARGUMENT_BITS (see _call_handlers)."""
    # See Note [The engine's own fallbacks are called directly].
    if entry._builtin == BUILTIN_PYTHON_TLS_SNAPSHOT:
        return _snapshot_and_redispatch(handle, plan, bits, args, kwargs, argument_bits)
    if entry._builtin == BUILTIN_PYTHON_KEY:
        return _above_python_excluded(handle, plan, bits, args, kwargs, _python_state(), argument_bits)
    return entry.fn(handle, _make(bits), args, kwargs)


def _report(plan, entry, bits):
    plan.report_error(KernelKind(entry._kind), _key_at(_highest_priority_value(bits)))
    raise AssertionError(f"{plan.name}: the error reporter returned instead of raising")


def dispatch(handle, what, plan, bits, args, kwargs):
    """Run the kernel for ``bits`` (a call's masked keyset, or a redispatch's)."""
    bits = _skip_fallthroughs(plan, bits, plan.name)
    if not _trace_enabled():
        return _run_kernel(handle, plan, bits, args, kwargs)
    _print_trace(what, plan.name, bits)
    _trace.depth += 1
    try:
        return _run_kernel(handle, plan, bits, args, kwargs)
    finally:
        _trace.depth -= 1


def _dispatch_boxed(handle, what, plan, bits, stack):
    bits = _skip_fallthroughs(plan, bits, plan.name)
    entry = plan.table[_table_index(bits)]
    if entry._kind == KIND_BOXED:
        if _trace_enabled():
            _print_trace(what, plan.name, bits)
        entry.fn(handle, _make(bits), stack)
        return
    if entry._kind != KIND_UNBOXED and entry._kind != KIND_WITH_KEYSET and entry._kind != KIND_WITH_OPERATOR:
        _report(plan, entry, bits)
    # A kernel that takes the call unboxed: unbox the arguments, call, box the results.
    boxer = _shape_boxer(plan.shape)
    args, kwargs = plan.shape.split_call(_take(stack, -1 if boxer.vararg else boxer.n_arguments, plan.name, "arguments"))
    _box_returns(boxer, dispatch(handle, what, plan, bits, args, kwargs), stack)


# -- the dispatch trace: DISPATCHER_SHOW_DISPATCH_TRACE=1, or set_show_dispatch_trace() ----
class _TraceState(threading.local):
    depth = 0
    observer: Callable[[str, str, DispatchKey, int], object] | None = None


_trace = _TraceState()
_show_trace = env_flag("DISPATCHER_SHOW_DISPATCH_TRACE")
# Note [Dispatch observers]
# A thread may ask to be told of every kernel its calls run, as the trace
# prints them (dispatcher.explain(run=True) does): set_dispatch_observer.
# The call path tests one C flag for both the trace and observers,
# _tracing, so it pays nothing while neither is on: the count of threads
# with an observer (_observing), plus one while the trace is shown.  (A
# thread that ends with its observer set leaves the count up: later calls
# then look for an observer in vain, which only costs.)  The compiled call
# path (csrc/_fastcall.pyx) reads the flag where it lives.
_observing = cython.declare(cython.int, 0)
_tracing = cython.declare(cython.int, 0)
_tracing = _show_trace


def set_show_dispatch_trace(enabled: bool) -> None:
    global _show_trace, _tracing
    _show_trace = bool(enabled)
    _tracing = _show_trace + _observing


def show_dispatch_trace() -> bool:
    return _show_trace


def set_dispatch_observer(observer: Callable[[str, str, DispatchKey, int], object] | None) -> Any:
    """Have ``observer(what, operator, key, depth)`` called before each kernel
    this thread's calls run (``what``: "call" or "redispatch"; ``depth``: how
    many dispatches it is nested in; see Note [Dispatch observers]); None
    removes it.  Returns the previous observer."""
    global _observing, _tracing
    if observer is not None and not callable(observer):
        raise TypeError(f"a dispatch observer must be callable or None, not {type(observer).__name__}")
    previous = _trace.observer
    _trace.observer = observer
    _observing += (observer is not None) - (previous is not None)
    _tracing = _show_trace + _observing
    return previous


def _trace_enabled():
    return _tracing != 0


def _print_trace(what, name, bits):
    key = _key_at(_highest_priority_value(bits))
    observer = _trace.observer
    if observer is not None:
        observer(what[1:len(what) - 1], name, key, _trace.depth)  # "[call]" -> "call"
    if _show_trace:
        print(f"{' ' * _trace.depth}{what} op=[{name}], key=[{key.name}]", file=sys.stderr)


# -- operator handles -----------------------------------------------------------------------
def _handle_names(name):
    """torch's ``__name__``, ``__qualname__`` and ``__module__`` of the
    OpOverload of ``ns::op.overload``: ``op.overload`` (``op.default``),
    ``ns::op.overload`` (the name as given) and ``torch._ops.ns``: torch's
    own module name, as code written for torch prints and compares it
    (``f"{func.__module__}.{func.__name__}"`` in torch's LoggingTensor logs)."""
    namespace, _, rest = name.partition("::")
    return (rest if "." in rest else f"{rest}.default"), name, f"torch._ops.{namespace}"


class _NameOfHandle:
    """One of torch's names of an OpOverload (see _handle_names), read on a
    compiled handle, which has no instance dict to keep it in.  On the class
    it is Python's own (a class's ``__module__`` is its module)."""

    def __init__(self, which: int) -> None:
        self.which = which

    def __get__(self, handle: Any, owner: Any = None) -> Any:
        if handle is None:
            return self
        name = handle._name
        return None if name is None else _handle_names(name)[self.which]


class OperatorHandle:
    """The call side of one operator: calls it with the plan registration published.

    ``op(*args, **kwargs)`` dispatches on the arguments' keys;
    ``op.redispatch(keyset, *args, **kwargs)`` runs the kernel for
    ``keyset`` as given, with no extraction, TLS or mask (c10's
    Dispatcher::redispatch); ``op.call_boxed(stack)`` and
    ``op.redispatch_boxed(keyset, stack)`` take a Stack.

    It has torch's OpOverload attributes (``name()``, ``_schema``,
    ``_overloadname``, ``overloadpacket``, ``namespace``, ``tags``, ...).
    """

    _name: str  # None until __init__ (see _check_handle)
    _plan: CallPlan
    redispatch: _Redispatch
    # Set by registration: the packet that published this handle, and the
    # object that answers has_kernel_for_dispatch_key (the operator's entry).
    _packet: Any
    _owner: Any

    def __init__(self, name: str, plan: CallPlan) -> None:
        if self._name is not None:
            raise TypeError("an OperatorHandle is initialised once")
        if not isinstance(name, str):
            raise TypeError(f"an operator's name is a str, not {type(name).__name__}")
        self._publish(plan)
        self._name = name
        bound = cython.declare(_Redispatch, _Redispatch())
        bound.handle = self
        self.redispatch = bound
        _enable_fast_calls(self, bound)
        if not cython.compiled:
            # torch keeps these in the OpOverload's instance dict; so does the
            # pure engine (compiled: _NameOfHandle below, no instance dict).
            self.__name__, self.__qualname__, self.__module__ = _handle_names(name)

    # -- torch's OpOverload ----------------------------------------------------------
    if cython.compiled:
        __name__ = _NameOfHandle(0)
        __qualname__ = _NameOfHandle(1)
        __module__ = _NameOfHandle(2)

    # Class attributes of torch's (OpOverload's is typing's flag, False).
    _is_protocol = False
    def __repr__(self) -> str:
        packet, _, overload = self._name.partition(".")
        return f"<OpOverload(op='{packet.replace('::', '.')}', overload='{overload or 'default'}')>"

    def __str__(self) -> str:
        return f"{self._name.replace('::', '.', 1)}{'' if '.' in self._name else '.default'}"

    def name(self) -> str:
        """``ns::name.overload`` (``ns::name`` for the default overload)."""
        return self._name

    @property
    def _overloadname(self) -> str:
        return self._name.partition(".")[2] or "default"

    @property
    def _opname(self) -> str:
        return self._name.partition("::")[2].partition(".")[0]

    @property
    def namespace(self) -> str:
        return self._name.partition("::")[0]

    @property
    def _schema(self) -> Any:
        return self._plan.shape.schema

    @property
    def overloadpacket(self) -> Any:
        """The packet (``ops.ns.name``) this overload belongs to."""
        return self._packet

    @property
    def tags(self) -> list[OperatorTag]:
        return [OperatorTag[name] for name in self._plan.shape.tags]

    @property
    def _namespace(self) -> str:
        return self.namespace

    @property
    def _overloadpacket(self) -> Any:
        return self._packet

    @property
    def _tags(self) -> list[OperatorTag]:
        return self.tags

    @property
    def op(self) -> OperatorHandle:
        """What torch's ``op`` is, the callable that runs the overload: the handle itself."""
        return self

    @property
    def _op(self) -> OperatorHandle:
        return self

    @property
    def _handle(self) -> OperatorHandle:
        """torch's OpOverload._handle, its C++ operator handle: this handle itself."""
        return self

    @property
    def is_view(self) -> bool:
        """Whether an argument is aliased without being written (torch's OpOverload.is_view)."""
        schema = self._plan.shape.schema
        return schema is not None and any(
            a.alias_info is not None and not a.alias_info.is_write for a in schema.arguments
        )

    @property
    def _defined_in_python(self) -> bool:
        """torch's: whether a Library.define made this operator (not the aten
        catalog, nor a def through compat.torch_C's C++-style library)."""
        from .._library import _defs  # on first use: the engine does not import the registration layer

        return self._name in _defs

    @property
    def _nondeterministic_seeded(self) -> bool:
        return "nondeterministic_seeded" in self._plan.shape.tags

    def has_kernel_for_dispatch_key(self, key: Any) -> bool:
        return self._owner is not None and self._owner.has_kernel_for_dispatch_key(key)

    def has_kernel_for_any_dispatch_key(self, keyset: DispatchKeySet) -> bool:
        return self._owner is not None and self._owner.has_kernel_for_any_dispatch_key(keyset)

    def _set_owner(self, owner: Any) -> None:
        """Registration's: what answers has_kernel_for_dispatch_key."""
        self._owner = owner

    @property
    def schema(self) -> Any:
        return self._plan.shape.schema

    @property
    def boxer(self) -> Boxer | None:
        """The schema's Boxer (None while the operator is not defined)."""
        return _shape_boxer(self._plan.shape)

    @property
    def plan(self) -> CallPlan:
        return self._plan

    def _publish(self, plan: CallPlan) -> None:
        """Registration's one write: see Note [One plan per operator]."""
        if not isinstance(plan, CallPlan):
            raise TypeError(f"an operator publishes a CallPlan, not {type(plan).__name__}")
        if plan.name is None:
            raise TypeError("this CallPlan was never built")
        self._plan = plan

    # (``self`` positional-only, here and in the other calls below: an
    # operator's first argument is usually called self, and ``op(self=x)`` is
    # a call torch accepts.)
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        _check_handle(self)
        plan, bits = _plan_and_keys(self, args, kwargs)
        return dispatch(self, "[call]", plan, _call_bits(plan, bits), args, kwargs)

    def call_boxed(self, stack: Stack) -> None:
        """Dispatch a call whose arguments are on ``stack``; the results replace
        them, as in c10's callBoxed.  The arguments are checked before any is
        removed: a call that fails before its kernel runs leaves the stack as it was."""
        _check_handle(self)
        for _ in range(MAX_REPLANS):
            plan = self._plan
            if plan.shape.schema is None:
                _raise_not_defined(self)
            boxer = _shape_boxer(plan.shape)  # a Boxer: the plan has a schema
            values = _peek_values(stack, -1 if boxer.vararg else boxer.n_arguments, plan.name, "arguments")
            args, kwargs = plan.shape.split_call(values)
            bits = _extract_bits(plan, args, kwargs)
            settled = _settled_plan(self, plan)
            if settled is not None:
                _dispatch_boxed(self, "[call]", settled, _call_bits(settled, bits), stack)
                return
        _too_many_replans(self)

    def redispatch_boxed(self, keyset: DispatchKeySet, stack: Stack) -> None:
        _check_handle(self)
        plan = self._plan
        if plan.shape.schema is None:
            _raise_not_defined(self)
        _check_stack(stack)
        _dispatch_boxed(self, "[redispatch]", plan, _keyset_arg(keyset, "redispatch_boxed"), stack)


if not cython.compiled:
    # An uninitialised handle (compiled: the C fields start as None).
    OperatorHandle._name = OperatorHandle._packet = OperatorHandle._owner = None  # type: ignore[assignment]


def _check_handle(handle):
    if handle._name is None:
        raise TypeError("this OperatorHandle was never initialised (handles come from registration)")


class _Redispatch:
    """``op.redispatch``: bound to its operator once, so that
    ``op.redispatch(keyset, x, y)`` makes no bound-method object (and,
    compiled, no argument tuple: see Note [Vectorcall fast path] in
    csrc/_fastcall.pyx)."""

    handle: OperatorHandle | None

    def __call__(self, keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        return redispatch(self.handle, keyset, args, kwargs)

    def __repr__(self) -> str:
        if self.handle is None:
            return "<redispatch of no operator>"
        return f"<redispatch of {self.handle._name}>"


if not cython.compiled:
    _Redispatch.handle = None


def redispatch(handle, keyset, args, kwargs):
    if handle is None:
        raise TypeError("this redispatch is bound to no operator (use op.redispatch)")
    plan = handle._plan
    if plan.shape.schema is None:
        _raise_not_defined(handle)
    return dispatch(handle, "[redispatch]", plan, _keyset_arg(keyset, "redispatch"), args, kwargs)


def _enable_fast_calls(handle, bound):
    if cython.compiled:
        handle.vectorcall = op_vectorcall_impl
        bound.vectorcall = redispatch_vectorcall_impl


def _enable_fast_packet_calls(packet):
    if cython.compiled:
        packet.vectorcall = packet_vectorcall_impl


def install_fast_calls(op_impl, redispatch_impl, packet_impl):
    """Called once by csrc/_fastcall.pyx, compiled only: the vectorcall entry
    points every new handle and packet gets (those made before keep ``__call__``)."""
    global op_vectorcall_impl, redispatch_vectorcall_impl, packet_vectorcall_impl
    op_vectorcall_impl = op_impl
    redispatch_vectorcall_impl = redispatch_impl
    packet_vectorcall_impl = packet_impl


# -- the Python key: __torch_dispatch__ subclasses and dispatch modes ----------------------
# Note [The Python key]
# PyTorch reaches Python handlers through two keys.  PythonTLSSnapshot, near
# the top, records this thread's include/exclude sets as they are when a
# call enters the dispatcher, unless a call further out already recorded
# them (the snapshot belongs to the outermost call), and redispatches below
# itself.  Python, below autograd, excludes every key above it for as long
# as the handlers run, so that what they call starts below autograd
# (autograd has already run), and calls them: first the top dispatch mode
# of this thread's stack, popped off it while its handler runs (its calls
# go to the next mode, or to the kernels); then, if it returned
# NotImplemented or no mode is active, the ``__torch_dispatch__`` of each
# type of tensor argument carrying the Python key, subclasses before their
# bases, until one returns something else.  A tensor type carries both keys
# when it defines __torch_dispatch__ (Note [Tensor types with
# __torch_dispatch__]); pushing the first mode on a thread's stack adds both
# to its included set, popping the last takes them out again.
#
# Both fallbacks are WITH_OPERATOR kernels: they take the call unboxed, as it
# was made, so a handler runs without the arguments going through IValues
# (PyTorch's fallbacks are boxed, which costs little in C++ and a lot here).
#
# Note [Handler arguments]
# A handler gets the call in the form torch's Python fallback gives it
# (parseIValuesToPyArgsKwargs): the positional arguments up to the last one
# that is not its default, then the keyword-only ones that are not their
# defaults, by name, in a dict of its own.  A call passing exactly the
# arguments before the first default, positionally, is in that form already
# (the plan's handler_arity); any other is put in it by the plan's
# handler_call, from the schema.  The values are the caller's: torch's pass
# through IValues, so an int given for a float argument reaches its handler
# as a float, and ours as the int.
PYTHON_BIT = _key_bits(DispatchKey.Python)
# c10's after_Python_keyset (FULL ^ (FULL_AFTER(Python) | Python)): the keys
# above Python, which a handler's calls skip.
ABOVE_PYTHON = FULL_REPR ^ (_layout.full_after_repr(DispatchKey.Python) | PYTHON_BIT)
BELOW_SNAPSHOT = _layout.full_after_repr(DispatchKey.PythonTLSSnapshot)


def disabled_torch_dispatch_impl(func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
    """torch's ``_disabled_torch_dispatch_impl``, the ``__torch_dispatch__`` of a
    base tensor class: what a subclass's handler reaches with ``super()``.

    It runs ``func(*args, **kwargs)`` with the Python key and every key above
    it excluded, so the call goes on below Python, as a redispatch would
    (torch's approximation: it stays below Python for every call it makes).
    The keys are torch's ``FULL - FULL_AFTER(Python)``, backend bits
    included, and the set is put back as it was afterwards (torch leaves no
    backend bit behind here, unlike a guard: tests/golden/subclass_examples_golden.json).
    A type whose handler is this one has no handler (_defines_torch_dispatch).
    """
    if isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        raise TypeError(f"expected a tuple or list of arguments, got {type(args).__name__}")
    excluded = tls_excluded_bits()
    _set_tls_excluded(excluded | ABOVE_PYTHON | PYTHON_BIT | FULL_BACKEND_MASK)
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _set_tls_excluded(excluded)


_DISABLED_HANDLER = disabled_torch_dispatch_impl  # compiled: a C global keeping the pointer below alive
if cython.compiled:
    _set_disabled_handler(_DISABLED_HANDLER)  # noqa: F821


class PythonKeyState:
    """One thread's Python-key state: its dispatch modes, ``modes[:depth]``
    (the top one last), and the snapshot of its sets taken by the outermost
    call under way.  The list only grows: popping a mode lowers ``depth``, so
    that popping a mode around each handler and pushing it back reallocates
    nothing."""

    modes: list[Any]
    depth: int
    has_snapshot: bool
    snapshot_included: int
    snapshot_excluded: int

    if not cython.compiled:
        __slots__ = ("modes", "depth", "has_snapshot", "snapshot_included", "snapshot_excluded")

    def __init__(self) -> None:
        self.modes = []
        self.depth = 0
        self.has_snapshot = False
        self.snapshot_included = 0
        self.snapshot_excluded = 0


if not cython.compiled:

    _python_tls = threading.local()

# Compiled, each thread's state lives in its thread-state dict under this
# key: see Note [The Python-key state of a thread] in core.pxd.
_STATE_KEY = "dispatcher._engine.core.PythonKeyState"


def _python_state():
    if cython.compiled:
        state = _python_state_get()  # noqa: F821  (C functions of core.pxd)
        if state is None:
            state = PythonKeyState()
            _python_state_set(_STATE_KEY, state)  # noqa: F821
        return state
    # As the compiled one's, a state any thread may have dropped (Note [The
    # Python-key state of a thread] in core.pxd) is made again.
    state = getattr(_python_tls, "state", None)
    if state is None:
        state = _python_tls.state = PythonKeyState()
    return state


def _push_mode(state, mode):
    if state.depth == 0:
        _set_tls_included(tls_included_bits() | PYTHON_KEYS)
    if state.depth == len(state.modes):
        state.modes.append(mode)
    else:
        state.modes[state.depth] = mode
    state.depth += 1


def _pop_mode(state):
    state.depth -= 1
    if state.depth == 0:
        _set_tls_included(_minus(tls_included_bits(), PYTHON_KEYS))
    return state.modes[state.depth]


def push_dispatch_mode(mode: object) -> None:
    """Push ``mode`` on this thread's dispatch-mode stack (torch's
    ``_push_on_torch_dispatch_stack``): from now on every call reaches its
    ``__torch_dispatch__`` first.  A handler that is not a plain method is
    refused here (torch refuses it when a call reaches it)."""
    handler = getattr(mode, "__torch_dispatch__", None)
    if handler is None:
        raise TypeError(f"a dispatch mode needs a __torch_dispatch__ method; {type(mode).__name__} has none")
    if getattr(handler, "__self__", None) is not mode:
        raise RuntimeError(
            "Defining your mode's `__torch_dispatch__` as a classmethod is not supported, please make it a plain method"
        )
    _push_mode(_python_state(), mode)


def pop_dispatch_mode() -> Any:
    """Pop this thread's top dispatch mode and return it (torch's ``_pop_torch_dispatch_stack``)."""
    state = _python_state()
    if state.depth == 0:
        raise RuntimeError("trying to pop from empty mode stack")
    mode = _pop_mode(state)
    state.modes[state.depth] = None  # the stack no longer keeps it alive
    return mode


def dispatch_mode_stack() -> list[Any]:
    """This thread's dispatch modes, the one a call reaches first last (a copy)."""
    state = _python_state()
    return state.modes[:state.depth]


def python_tls_snapshot() -> tuple[DispatchKeySet, DispatchKeySet] | None:
    """The (included, excluded) sets the outermost call under way on this
    thread recorded at PythonTLSSnapshot, or None."""
    state = _python_state()
    if not state.has_snapshot:
        return None
    return _make(state.snapshot_included), _make(state.snapshot_excluded)


def set_python_tls_snapshot(snapshot: tuple[DispatchKeySet, DispatchKeySet] | None) -> None:
    """Replace this thread's snapshot (None: no snapshot), as torch's
    RestorePythonTLSSnapshot guard does around the code it runs."""
    state = _python_state()
    if snapshot is None:
        state.has_snapshot = False
        return
    if type(snapshot) is not tuple or len(snapshot) != 2:
        raise TypeError("a TLS snapshot is None or an (included, excluded) tuple of DispatchKeySets")
    included = _keyset_arg(snapshot[0], "set_python_tls_snapshot")
    excluded = _keyset_arg(snapshot[1], "set_python_tls_snapshot")
    state.snapshot_included = included
    state.snapshot_excluded = excluded
    state.has_snapshot = True


# Note [The engine's own fallbacks are called directly]
# The two fallbacks above are Python-callable functions, registered like any
# WITH_OPERATOR kernel, and a call reaching them through a table goes
# straight to their C implementation instead: no Python call, no keyset
# object, no checks of what the engine passes.  KernelFunction notes which
# of them it holds when it is made.
# What a caller that does not have the union of the arguments' keys passes
# for it: every key, so the arguments are looked at.
ANY_ARGUMENT_BITS = _UINT64_MAX
BUILTIN_NONE = cython.declare(cython.int, 0)
BUILTIN_PYTHON_KEY = cython.declare(cython.int, 1)
BUILTIN_PYTHON_TLS_SNAPSHOT = cython.declare(cython.int, 2)


def _builtin_kernel(fn):
    if fn is python_key_fallback:
        return BUILTIN_PYTHON_KEY
    if fn is python_tls_snapshot_fallback:
        return BUILTIN_PYTHON_TLS_SNAPSHOT
    return BUILTIN_NONE


def _fallback_plan(op, keyset, args, kwargs):
    """The plan of a WITH_OPERATOR fallback's operator, after checking what it was given."""
    if not isinstance(op, OperatorHandle):
        raise TypeError(f"a Python-key fallback takes an OperatorHandle, not {type(op).__name__}")
    _keyset_arg(keyset, "a Python-key fallback")
    if type(args) is not tuple or type(kwargs) is not dict:
        raise TypeError("a Python-key fallback takes the call's arguments as a tuple and a dict")
    handle = cython.cast(OperatorHandle, op)
    _check_handle(handle)
    plan = handle._plan
    if plan.shape.schema is None:
        _raise_not_defined(handle)
    return plan


def python_tls_snapshot_fallback(op: OperatorHandle, keyset: DispatchKeySet, args: tuple[Any, ...],
                                 kwargs: dict[str, Any]) -> Any:
    """The PythonTLSSnapshot fallback (a WITH_OPERATOR kernel): see Note [The Python key]."""
    plan = _fallback_plan(op, keyset, args, kwargs)
    return _snapshot_and_redispatch(cython.cast(OperatorHandle, op), plan, _repr_of(keyset), args, dict(kwargs),
                                    ANY_ARGUMENT_BITS)


def _snapshot_and_redispatch(handle, plan, bits, args, kwargs, argument_bits):
    bits &= BELOW_SNAPSHOT
    state = _python_state()
    if state.has_snapshot:
        return _below_snapshot(handle, plan, bits, args, kwargs, state, argument_bits)
    state.snapshot_included = tls_included_bits()
    state.snapshot_excluded = tls_excluded_bits()
    state.has_snapshot = True
    try:
        return _below_snapshot(handle, plan, bits, args, kwargs, state, argument_bits)
    finally:
        state.has_snapshot = False


def _below_snapshot(handle, plan, bits, args, kwargs, state, argument_bits):
    # The redispatch below PythonTLSSnapshot; straight to the Python
    # fallback when that is what comes next (the usual case: nothing
    # between the two has a kernel).
    entry = _entry_at(plan, bits)
    if entry._builtin != BUILTIN_PYTHON_KEY or _trace_enabled():
        return dispatch(handle, "[redispatch]", plan, bits, args, kwargs)
    return _above_python_excluded(handle, plan, bits, args, kwargs, state, argument_bits)


def python_key_fallback(op: OperatorHandle, keyset: DispatchKeySet, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> Any:
    """The Python fallback (a WITH_OPERATOR kernel): calls the handlers, see Note [The Python key]."""
    plan = _fallback_plan(op, keyset, args, kwargs)
    # A copy: handlers may change the dict they get (see _call_handlers).
    return _above_python_excluded(cython.cast(OperatorHandle, op), plan, _repr_of(keyset), args, dict(kwargs),
                                  _python_state(), ANY_ARGUMENT_BITS)


def _above_python_excluded(handle, plan, bits, args, kwargs, state, argument_bits):
    excluded = tls_excluded_bits()
    added = ABOVE_PYTHON & ~excluded
    _set_tls_excluded(excluded | added)
    try:
        return _call_handlers(handle, plan, bits, args, kwargs, state, argument_bits)
    finally:
        _set_tls_excluded(_minus(tls_excluded_bits(), added))


# Note [torch_dispatch rules]
# torch.library.register_torch_dispatch gives one operator its own handler for
# one tensor type or mode type (exactly that type, not its subclasses): where
# the call would reach that mode's or tensor's ``__torch_dispatch__``, it runs
# ``rule(mode or type, handle, types, args, kwargs)`` instead.  Operator name
# -> {type: rule}; written by Library._register_torch_dispatch_rule only (Note [torch_dispatch rules] in dispatcher/_library.py).
TORCH_DISPATCH_RULES: dict = {}


# Note [Calling a tensor's handler]
# A tensor's handler is ``tensor.__torch_dispatch__``, looked up on the
# instance as torch does, and is nearly always a classmethod on a type whose
# instances have no __dict__ (__slots__, or TensorBase's own layout).  Looked
# up, such a classmethod makes a bound method, called once and dropped;
# compiled, core.pxd's dispatcher_call_tensor_handler calls its function with
# the type in front instead, which is what the bound method would do.  It does
# so only where the generic lookup could find nothing else: the type's
# attribute lookup is the generic one, its instances have no __dict__, the
# attribute is exactly a classmethod (not a subclass, whose __get__ may
# differ) of exactly a Python function; anything else is looked up and
# called as in Python.
def _call_handlers(handle, plan, bits, args, kwargs, state, argument_bits):
    mode_active = state.depth > 0 and not tls_excluded_bits() & PYTHON_BIT
    # A call whose arguments' keys are known (csrc/_fastcall.pyx extracted
    # them) and lack Python has no tensor with a handler: no need to look.
    overloaded = _python_tensors(plan, args, kwargs) if argument_bits & PYTHON_BIT else None
    types: tuple[type, ...]
    if overloaded is None:
        types = ()
        if not mode_active:
            return _without_python_key(handle, plan, bits, args, kwargs)
    elif len(overloaded) == 1:
        types = (type(overloaded[0]),)
    else:
        types = tuple([type(t) for t in overloaded])
    # The call's own kwargs dict, made for it by the call path (or copied by
    # python_key_fallback), goes to the handlers when it is already in their form.
    if kwargs or len(args) != plan.shape.handler_arity:
        args, kwargs = plan.shape.handler_call(args, kwargs)
    mode = None
    rules = TORCH_DISPATCH_RULES.get(handle._name) if TORCH_DISPATCH_RULES else None
    if mode_active:
        mode = _pop_mode(state)
        try:
            rule = rules.get(type(mode)) if rules else None
            if rule is None:
                result = mode.__torch_dispatch__(handle, types, args, kwargs)
            else:
                result = rule(mode, handle, types, args, kwargs)
        finally:
            _push_mode(state, mode)
        if result is not NotImplemented:
            # (a tensor, the usual result, without the call: see _handler_result)
            return result if isinstance(result, TensorBase) else _handler_result(plan, result)
    if overloaded is not None:
        for tensor in overloaded:
            rule = rules.get(type(tensor)) if rules else None
            if rule is not None:
                result = rule(type(tensor), handle, types, args, kwargs)
            elif cython.compiled:  # see Note [Calling a tensor's handler]
                result = _call_tensor_handler(tensor, "__torch_dispatch__", handle, types, args, kwargs)  # noqa: F821
            else:
                result = tensor.__torch_dispatch__(handle, types, args, kwargs)
            if result is not NotImplemented:
                return result if isinstance(result, TensorBase) else _handler_result(plan, result)
    _all_returned_not_implemented(handle, mode, types)


def _handler_result(plan, result):
    """A handler's result, as torch takes it back: torch casts it to the
    operator's returns, so where the schema returns one Tensor anything but
    a tensor raises (torch's cast error), but None, which torch takes as an
    undefined tensor (given back to Python as None).  Its callers return a
    TensorBase without calling it: a call costs about a hundred instructions
    on a mode's every operator."""
    if result is None or isinstance(result, TensorBase) or _tensor_bits(result) >= 0:
        return result
    returns = plan.shape.schema.returns
    if len(returns) == 1 and getattr(getattr(returns[0].type, "name", None), "value", None) == "Tensor":
        raise RuntimeError(f"Unable to cast {result} to Tensor")
    return result


def _python_tensors(plan, args, kwargs):
    """The first tensor argument of each type carrying the Python key, in
    PyTorch's order; None if there is none."""
    overloaded = None
    nargs = len(args)
    for i in range(plan.shape.n_args):
        position = _arg_position(plan, i)
        if position < nargs:
            value = args[position]
        elif kwargs:
            value = kwargs.get(plan.shape.arg_names[i])
        else:
            continue
        if value is None:
            continue
        kind = _arg_kind(plan, i)
        if kind == ARG_TENSOR or kind == ARG_OPTIONAL_TENSOR:
            if _has_python_key(value):
                overloaded = _add_overloaded(overloaded, value)
        elif isinstance(value, (list, tuple)):
            for item in tuple(value):
                if item is not None and _has_python_key(item):
                    overloaded = _add_overloaded(overloaded, item)
    return overloaded


def _arg_position(plan, i):
    if cython.compiled:
        return plan.shape.c_positions[i]  # the shape's C copy of arg_positions
    return plan.shape.arg_positions[i]


def _arg_kind(plan, i):
    if cython.compiled:
        return plan.shape.c_kinds[i]
    return plan.shape.arg_kinds[i]


def _has_python_key(value):
    """Whether ``value`` is a tensor whose handler the Python key calls: it
    carries the key and its type defines __torch_dispatch__ (a tensor given
    the key by hand has no handler, as torch skips a disabled one)."""
    if isinstance(value, TensorBase):
        if not cython.cast(TensorBase, value)._bits & PYTHON_BIT:
            return False
    else:
        bits = _tensor_bits(value)
        if bits < 0 or not bits & PYTHON_BIT:
            return False
    return _defines_torch_dispatch(type(value))


def _add_overloaded(overloaded, tensor):
    # torch's append_overloaded_arg: one tensor per type, a subclass before
    # the first of its bases already there, any other type at the end.  A
    # tuple, not a list: one object to make and free for the usual single
    # type, where a list takes two; a second type makes a new tuple.
    if overloaded is None:
        return (tensor,)
    tp = type(tensor)
    n = len(overloaded)
    for j in range(n):
        if type(overloaded[j]) is tp:
            return overloaded
    for j in range(n):
        if issubclass(tp, type(overloaded[j])):
            return overloaded[:j] + (tensor,) + overloaded[j:]
    return overloaded + (tensor,)


def _without_python_key(handle, plan, bits, args, kwargs):
    # No mode and no tensor with a handler (the key was included by hand, or
    # given to a tensor whose type has no __torch_dispatch__): run the
    # operator without it, as torch does (its issue 136565).
    # torch needs a tensor argument for this (it asserts there is one); so
    # do we, to match.
    if not _has_tensor(plan, args, kwargs):
        raise RuntimeError(
            f"{plan.name}: the call reached the Python key with no dispatch mode active and no tensor argument"
        )
    included = tls_included_bits()
    excluded = tls_excluded_bits()
    _set_tls_included(_minus(included, PYTHON_BIT))
    try:
        return dispatch(handle, "[redispatch]", plan, _minus(bits, PYTHON_BIT), args, kwargs)
    finally:
        _set_tls_included(included)
        _set_tls_excluded(excluded)


def _has_tensor(plan, args, kwargs):
    nargs = len(args)
    for i in range(plan.shape.n_args):
        position = plan.shape.arg_positions[i]
        value = args[position] if position < nargs else kwargs.get(plan.shape.arg_names[i]) if kwargs else None
        if value is None:
            continue
        if plan.shape.arg_kinds[i] == ARG_TENSOR or plan.shape.arg_kinds[i] == ARG_OPTIONAL_TENSOR:
            if _tensor_bits(value) >= 0:
                return True
        elif isinstance(value, (list, tuple)):
            for item in tuple(value):
                if item is not None and _tensor_bits(item) >= 0:
                    return True
    return False


def _all_returned_not_implemented(handle, mode, types):
    lines = [f"Multiple dispatch failed for 'dispatcher.ops.{handle}'; all __torch_dispatch__ handlers returned "
             "NotImplemented:", ""]
    if mode is not None:
        lines.append(f"  - mode object {mode!r}")
    for tp in types:
        lines.append(f"  - tensor subclass {tp!r}")
    raise TypeError("\n".join(lines))


# -- overload packets: ops.ns.name(...) ----------------------------------------------------
# Note [Overload choice by argument types]
# A packet call runs the first overload, in definition order, whose schema
# accepts the arguments: binding and boxing them (Boxer.box) is the test, as
# PyTorch's JIT matching does.  That test's answer depends only on the
# arguments' types when each is of a type whose acceptance no value changes:
# None, bool, int, float, complex, str, and tensors by class (TensorBase and
# its subclasses).  So for such calls the choice is remembered per pattern:
# (keyword names or None, the types of the values in call order).  A call
# with any other value (a list, whose elements decide; an object that may
# carry __dispatch_keys__) is tested every time.  Publishing new overloads
# forgets every choice; so does register_value_type, through the epoch,
# since it can make an int or str acceptable where it was not.  A packet with
# no remembered choice and one overload still tests its arguments: an
# unboxed kernel would otherwise get values of the wrong type.
# Compiled, the last two positional choices are also kept, each one tuple
# (handle, type, type, ...) compared by pointer, so a call site that repeats
# itself, or alternates two patterns, does no dict lookup (csrc/_fastcall.pyx).
_choice_epoch = 0


# Note [Packet argument rules]
# A packet call tests each overload by boxing the arguments, but torch's
# packet (the JIT's toIValue) takes more than a boxed call does: a number
# where a bool, float or complex goes, a bool where an int goes, a Python
# number where a Tensor goes for its allow-listed arithmetic operators, ...
# and less in places (a single int for a SymInt[N]).  Those rules live above
# the engine (dispatcher/packet_matching.py, installed by dispatcher.ops):
# ``rules(qualified_name, schema, args, kwargs)`` returns the arguments as
# the boxed test should see them, or raises TypeError for an overload torch's
# packet refuses them for.  They read types only, so remembered choices
# stay valid.  Without rules installed, the boxed test alone decides.
_packet_argument_rules = None


def set_packet_argument_rules(rules):
    """Install the packet argument rules (see Note [Packet argument rules])."""
    global _packet_argument_rules
    if rules is not None and not callable(rules):
        raise TypeError(f"packet argument rules must be callable, not {type(rules).__name__}")
    _packet_argument_rules = rules
    forget_overload_choices()


def _choice_epoch_now():
    return _choice_epoch


def forget_overload_choices():
    """Make every packet test its arguments again (see Note [Overload choice by argument types])."""
    global _choice_epoch
    _choice_epoch += 1


def _type_decides(tp):
    """Whether a value's type alone decides whether an overload accepts it."""
    return (tp is int or tp is float or tp is bool or tp is str or tp is complex or tp is type(None)
            or issubclass(tp, TensorBase))


def _call_pattern(args, kwargs):
    """The pattern of a call (see Note [Overload choice by argument types]), or None."""
    kwnames = tuple(kwargs) if kwargs else None
    types: list[Any] = [kwnames]
    for value in args:
        tp = type(value)
        if not _type_decides(tp):
            return None
        types.append(tp)
    if kwargs:
        for value in kwargs.values():
            tp = type(value)
            if not _type_decides(tp):
                return None
            types.append(tp)
    return tuple(types)


class _OverloadPacketBase:
    """The C part of OverloadPacket: its overloads, choices and call."""

    qualified_name: str
    _overloads: tuple[tuple[str, OperatorHandle], ...]
    _choices: dict[tuple[Any, ...], tuple[Any, ...]]  # pattern -> (handle, positional types...)
    _epoch: int
    _memo: tuple[Any, ...] | None
    _memo2: tuple[Any, ...] | None

    if not cython.compiled:
        # Slots, so an overload's attribute never shadows the packet's own.
        __slots__ = ("qualified_name", "_overloads", "_choices", "_epoch", "_memo", "_memo2")

    def __init__(self, qualified_name: str) -> None:
        if not isinstance(qualified_name, str):
            raise TypeError(f"a packet's name is a str, not {type(qualified_name).__name__}")
        self.qualified_name = qualified_name
        self._overloads = ()
        self._choices = {}
        self._epoch = _choice_epoch
        self._memo = self._memo2 = None
        _enable_fast_packet_calls(self)

    # -- torch's OpOverloadPacket ----------------------------------------------------
    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.qualified_name.replace('::', '.')}')>"

    def __str__(self) -> str:
        return self.qualified_name.replace("::", ".")

    def overloads(self) -> list[str]:
        """Overload names in definition order, ``default`` for the unnamed one."""
        return [name for name, _handle in self._overloads]

    @property
    def _qualified_op_name(self) -> str:
        return self.qualified_name

    @property
    def _overload_names(self) -> list[str]:
        return self.overloads()

    @property
    def _schemas(self) -> dict[str, Any]:
        return {name: handle.schema for name, handle in self._overloads}

    @property
    def op(self) -> Any:
        """What torch's ``op`` is, the callable that chooses and runs an overload: the packet itself."""
        return self

    @property
    def _op(self) -> Any:
        return self

    @property
    def _has_torchbind_op_overload(self) -> bool:
        """Whether an overload takes a TorchScript class object: never here (no torchbind classes)."""
        return False

    @property
    def _dir(self) -> list[str]:
        return self.overloads()

    def op_overloads(self) -> list[OperatorHandle]:
        """The overloads' handles, in definition order."""
        return [handle for _name, handle in self._overloads]

    def _publish(self, overloads: tuple[tuple[str, OperatorHandle], ...]) -> None:
        """Registration's write: the overloads now defined, as (name, handle) pairs."""
        for name, handle in overloads:
            if not isinstance(name, str) or type(handle) is not OperatorHandle:
                raise TypeError(f"a packet publishes (str, OperatorHandle) pairs, not ({name!r}, {handle!r})")
        # An overload named like one of the packet's own attributes
        # (``overloads``) is reached through calls and overloads() only.
        # Readers on other threads take no lock: an overload that stays is
        # never missing meanwhile (set first, the gone ones deleted last).
        for name, handle in overloads:
            if name not in _PACKET_ATTRIBUTES:
                setattr(self, name, handle)
            cython.cast(OperatorHandle, handle)._packet = self
        gone = [name for name, _handle in self._overloads
                if name not in _PACKET_ATTRIBUTES and all(name != kept for kept, _h in overloads)]
        self._overloads = tuple(overloads)
        self._choices = {}
        self._memo = self._memo2 = None
        # The class that says "not defined" comes before the overloads go, so
        # that a reader never finds an empty packet without it.
        if isinstance(self, OverloadPacket):  # (not a bare _OverloadPacketBase)
            _name_packet_class(self, bool(overloads))
        for name in gone:
            delattr(self, name)

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return _chosen_overload(self, _call_pattern(args, kwargs), args, kwargs)[0](*args, **kwargs)


class OverloadPacket(_OverloadPacketBase):
    """``ops.ns.name``: every overload of one operator name.

    ``packet.overload`` is that overload's OperatorHandle (``packet.default``
    the unnamed one); calling the packet calls the first overload that
    accepts the arguments (see Note [Overload choice by argument types]).
    Registration publishes the overloads; a packet held after the last of
    them is gone says the operator is not defined, and a new def of the name
    makes a new packet (Note [An entry goes with its last registration] in
    dispatcher/registry.py).

    A Python class even when compiled, over the C ``_OverloadPacketBase``:
    its instances keep the overloads in a plain instance dict, which Python
    reads at attribute speed (see Note [ops at attribute speed] in
    dispatcher/ops.py); compiled, csrc/_fastcall.pyx gives it vectorcall.
    A live packet's class is a subclass of its own (Note [A packet's class
    names it]).
    """

    def __init__(self, qualified_name: str) -> None:
        super().__init__(qualified_name)
        namespace, _, name = qualified_name.partition("::")
        # torch's OpOverloadPacket attributes, in the instance dict as torch's
        # are (torch's __qualname__ is its C function's; here the qualified name,
        # as an overload's is ns::name.overload).
        self.__name__ = name
        self.__qualname__ = qualified_name
        self.__module__ = f"torch._ops.{namespace}"  # torch's (see _handle_names)

    _is_protocol = False



class _UndefinedOverloadPacket(OverloadPacket):
    """An OverloadPacket whose last overload is gone: it says so when asked
    for one.  A packet takes this class while it has no overloads (see
    _publish), so that live packets keep Python's fastest attribute reads,
    which a ``__getattr__`` would cost them (a sixth of an inline call)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"no operator named {self.qualified_name} is defined (asked for its overload {name!r})")


# Note [Packets of operators not defined yet]
# Reading ``ops.aten.<name>`` is a catalog operator's first use, and
# defining its overload set (every overload's schema, entry, plan and
# handle, and the packet's class of its own) cost about three times torch's
# first ``torch.ops.aten.<name>``.  So that read gets a packet of a
# PendingOverloadPacket class, which the registry makes without defining
# anything (Dispatcher.catalog_packet).  Reading one of its overloads
# (``__getattr__``: it is not an attribute yet) defines that overload alone,
# as torch builds an OpOverload on its first read; anything that needs the
# whole set -- a call of the packet, overloads(), ``dir()``, choosing an
# overload, a name that is no overload, the registry being asked for the
# operator (find_op, a def, an impl, a dump) -- defines the rest.  Each
# definition publishes its overloads on this same packet; once all are
# defined the registry gives it its class of its own (settle_packet; Note
# [A packet's class names it]), without ``__getattr__``: from then on it is
# any defined packet.  Until then a read of a defined overload takes
# Python's generic path (26 ns against 21 here), as a read of torch's
# cached OpOverload does.  Each registry has a subclass of its own (made by
# dispatcher/publish.py) whose ``_define_pending`` defines in that registry,
# under its lock, so that threads define an overload once.  Pending classes
# have no vectorcall: a pending packet's call goes through ``__call__``, once.
class PendingOverloadPacket(OverloadPacket):
    """``ops.ns.name`` of a catalog operator not wholly defined yet (see Note
    [Packets of operators not defined yet]): reading an overload defines it,
    anything that needs them all defines them all."""

    # Set on each registry's subclass: ``(ns::name, overload=None)`` defines
    # that overload (its attribute name), or all of them, in that registry.
    _define_pending: Any = None

    def _defined(self) -> Any:
        """Define all the packet's overloads; the packet, no longer pending."""
        type(self)._define_pending(self.qualified_name)
        if isinstance(self, PendingOverloadPacket):
            # Asked for while its own definition runs on this thread (or it failed).
            raise AttributeError(f"{self.qualified_name} is being defined: its overloads are not published yet")
        return self

    def __getattr__(self, name: str) -> Any:
        # Only for a name the packet does not have: an overload not defined
        # yet, which is defined now (all of them if it is none).
        type(self)._define_pending(self.qualified_name, name)
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            if isinstance(self, PendingOverloadPacket):  # its definition runs on this thread
                raise AttributeError(f"{self.qualified_name} is being defined: its overloads are not published "
                                     f"yet (asked for {name!r})") from None
            raise

    def __dir__(self) -> Any:
        return dir(self._defined())

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return self._defined()(*args, **kwargs)

    def overloads(self) -> list[str]:
        return self._defined().overloads()

    @property
    def _overload_names(self) -> list[str]:
        return self._defined().overloads()

    @property
    def _schemas(self) -> dict[str, Any]:
        return self._defined()._schemas

    @property
    def _dir(self) -> list[str]:
        return self._defined().overloads()

    def op_overloads(self) -> list[OperatorHandle]:
        return self._defined().op_overloads()


def settle_packet(packet: Any) -> None:
    """Registration's, under its lock, once every overload of ``packet`` (a
    PendingOverloadPacket) is defined and published: it takes its class of
    its own (see Note [Packets of operators not defined yet])."""
    if not isinstance(packet, PendingOverloadPacket):
        raise TypeError(f"settle_packet takes a pending packet, not {type(packet).__name__}")
    _name_packet_class(packet, True, True)


# Note [A packet's class names it]
# ``ops.aten.add.Tensr`` should say which packet has no such overload, and
# which names it has.  A ``__getattr__`` on live packets could say so, but it
# makes every attribute read of the class unspecialisable (CPython 3.11
# specialises LOAD_ATTR only for the generic getattr): it cost a sixth of an
# inline call.  Python's own miss has no hook, but its message names the
# object's type and its traceback adds the nearest of ``dir(obj)``, which lists
# the overloads (instance attributes).  So a live packet is the one instance
# of a subclass named ``ops.<ns>.<name>``: the miss reads "AttributeError:
# 'ops.aten.add' object has no attribute 'Tensr'. Did you mean: 'Tensor'?",
# and hits stay at attribute speed.  Making a class costs about 90,000
# instructions (20 µs), a quarter of a define, so a packet that loses its last
# overload hands its class back (it takes _UndefinedOverloadPacket, whose
# __getattr__ says the operator is not defined: nothing is called through it)
# and the next packet to come alive renames that class instead of making one:
# a program that defines and destroys operators (tests, the registration
# benchmark) makes as many classes as it has live packets at once.
_free_packet_classes: list[type] = []
# Compiled: csrc/_fastcall.pyx's install() sets this to what gives a packet
# class made later the vectorcall that OverloadPacket has (a heap type does
# not inherit it in 3.11; without it a packet call costs several times more).
_packet_class_made: Any = None


def _name_packet_class(packet, live, settle=False):
    """Give ``packet`` the class it takes as it comes alive or loses its last
    overload (see Note [A packet's class names it]), or, ``settle``, as it
    stops being pending; registration's, under its lock."""
    cls = type(packet)
    if not live:
        if cls is not _UndefinedOverloadPacket:
            packet.__class__ = _UndefinedOverloadPacket
            if cls is not OverloadPacket and not issubclass(cls, PendingOverloadPacket):
                _free_packet_classes.append(cls)
        return
    if cls is not OverloadPacket and cls is not _UndefinedOverloadPacket and not settle:
        return  # alive already, in its own class, or pending until settle_packet
    namespace, _, name = packet.qualified_name.partition("::")
    title = f"ops.{namespace}.{name}"
    try:
        named = _free_packet_classes.pop()
    except IndexError:
        named = type(title, (OverloadPacket,), {"__slots__": (), "__module__": __name__})
        if _packet_class_made is not None:
            _packet_class_made(named)
    else:
        named.__name__ = named.__qualname__ = title
    packet.__class__ = named


# The packet's own attribute names, which no overload attribute replaces.
_PACKET_ATTRIBUTES = frozenset(dir(OverloadPacket)) | frozenset(dir(_UndefinedOverloadPacket)) | frozenset(dir(PendingOverloadPacket))


def _define_pending_packet(packet):
    packet._defined()


def resolve_overload(packet, args, kwargs=None):
    """The overload a call of ``packet`` with these arguments runs, chosen as
    the call chooses it (torch's ``_jit_resolve_packet``), without running it."""
    if not isinstance(packet, _OverloadPacketBase):
        raise TypeError(f"resolve_overload takes an operator packet (ops.ns.name), not {type(packet).__name__}")
    return _chosen_overload(packet, None, tuple(args), dict(kwargs) if kwargs else None)[0]


def _chosen_overload(packet, pattern, args, kwargs):
    """The overload a call runs, as a choice ``(handle, type, ...)``: the one
    remembered for ``pattern``, or found by testing each overload and then
    remembered (``pattern`` None: neither)."""
    if packet._epoch != _choice_epoch_now():
        packet._choices = {}
        packet._memo = packet._memo2 = None
        packet._epoch = _choice_epoch_now()
    choices = packet._choices
    if pattern is not None:
        choice = choices.get(pattern)
        if choice is not None:
            return choice
    if isinstance(packet, PendingOverloadPacket):  # Note [Packets of operators not defined yet]
        _define_pending_packet(packet)
    overloads = packet._overloads
    if not overloads:
        raise AttributeError(f"no operator named {packet.qualified_name} is defined")
    errors = []
    rules = _packet_argument_rules
    for _name, handle in overloads:
        plan = handle._plan
        if plan.shape.schema is None:  # undefined since this tuple was published
            continue
        try:
            if rules is None:
                _box_call(_shape_boxer(plan.shape), args, kwargs)
            else:
                as_boxed = rules(packet.qualified_name, plan.shape.schema, args, kwargs)
                _box_call(_shape_boxer(plan.shape), as_boxed[0], as_boxed[1])
        except TypeError as exc:
            errors.append(f"  {plan.shape.schema}: {exc}")
            continue
        if pattern is None:
            return (handle,)
        # The positional types after the handle: compiled, the memo compares them.
        choice = (handle,) + pattern[1:]
        choices[pattern] = choice
        return choice
    raise DispatcherTypeError(f"no overload of {packet.qualified_name} accepts these arguments:\n" + "\n".join(errors))
