"""Pure-Python twin of the compiled core ``dispatcher._C``.

Same names, same behaviour, slower.  It is used when the extension is not
built or ``DISPATCHER_NO_EXTENSIONS=1`` is set, and every test of the core
runs against both (see tests/conftest.py).  Keep the two files in step:
a change to one is a change to the other.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Iterator, Optional, Union

from . import _layout
from ._boxing_py import Boxer, IValue, Stack, _boxer_for, box, box_returns, unbox_arguments, unbox_returns
from ._boxing_py import _forget_boxers  # noqa: F401  (part of the core's API, as in _C: ivalue calls it)
from ._kernel_kind import DUMP_STATE, KernelKind
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


def compute_dispatch_key_set(keyset: DispatchKeySet, mask: Optional[DispatchKeySet] = None) -> DispatchKeySet:
    """c10's computeDispatchKeySet: ``((keyset | included) - excluded) & mask``
    with this thread's include/exclude sets, as a call computes its keyset."""
    bits = (_keyset_arg(keyset, "compute_dispatch_key_set") | _tls_included_bits()) & (
        FULL_BACKEND_MASK | ~_tls_excluded_bits()
    )
    if mask is not None:
        bits &= _keyset_arg(mask, "compute_dispatch_key_set")
    return DispatchKeySet._from_bits(bits)


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


# -- thread-local guards -----------------------------------------------------------
_AUTOGRAD_KEYS = DispatchKeySet(
    [DispatchKey.AutogradFunctionality, DispatchKey.AutogradOther, DispatchKey.AutogradNestedTensor]
)._repr
_AUTOGRAD_AND_INPLACE_KEYS = _AUTOGRAD_KEYS | DispatchKeySet(DispatchKey.ADInplaceOrView)._repr


def _guard_bits(keys: Any) -> int:
    return keys._repr if isinstance(keys, DispatchKeySet) else DispatchKeySet(keys)._repr


class _TLSGuard:
    # Shared by the four guards: c10's Include/ExcludeDispatchKeyGuard.  On
    # entry only the keys not already in the set are added (``keys - set``,
    # which keeps backend bits, as c10 does), and exactly those are taken
    # out on exit, so nesting and exceptions restore the previous state.
    _keys = 0
    _is_include = False

    def __init__(self) -> None:
        self._added = 0
        self._active = False

    def _get(self) -> int:
        return _tls_included_bits() if self._is_include else _tls_excluded_bits()

    def _set(self, bits: int) -> None:
        if self._is_include:
            _tls.included_delta = bits ^ _DEFAULT_INCLUDED
        else:
            _tls.excluded_delta = bits ^ _DEFAULT_EXCLUDED

    def __enter__(self) -> "_TLSGuard":
        if self._active:
            raise RuntimeError(f"{type(self).__name__} is already active; use a new guard to nest")
        self._active = True
        current = self._get()
        self._added = self._keys & (FULL_BACKEND_MASK | ~current)
        self._set(current | self._added)
        return self

    def __exit__(self, *exc_info: object) -> bool:
        self._active = False
        self._set(self._get() & (FULL_BACKEND_MASK | ~self._added))
        return False


class IncludeDispatchKeyGuard(_TLSGuard):
    """``with IncludeDispatchKeyGuard(keys):`` adds keys to this thread's included set."""

    _is_include = True

    def __init__(self, keys: Any) -> None:
        super().__init__()
        self._keys = _guard_bits(keys)


class ExcludeDispatchKeyGuard(_TLSGuard):
    """``with ExcludeDispatchKeyGuard(keys):`` adds keys to this thread's excluded set."""

    def __init__(self, keys: Any) -> None:
        super().__init__()
        self._keys = _guard_bits(keys)


class AutoDispatchBelowAutograd(_TLSGuard):
    """Exclude the autograd keys: calls inside go straight below autograd."""

    _keys = _AUTOGRAD_KEYS


class AutoDispatchBelowADInplaceOrView(_TLSGuard):
    """Exclude the autograd keys and ADInplaceOrView."""

    _keys = _AUTOGRAD_AND_INPLACE_KEYS


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


# -- kernels -----------------------------------------------------------------------


class KernelFunction:
    """How to call one kernel: its kind (a KernelKind) and its callable."""

    __slots__ = ("kind", "fn")

    def __init__(self, kind: int, fn: Optional[Callable]) -> None:
        object.__setattr__(self, "kind", KernelKind(kind))
        object.__setattr__(self, "fn", fn)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("KernelFunction is immutable")

    def is_fallthrough(self) -> bool:
        return self.kind == KernelKind.FALLTHROUGH

    def is_valid(self) -> bool:
        return self.kind != KernelKind.MISSING

    def dump_state(self) -> str:
        return DUMP_STATE[self.kind]

    def __repr__(self) -> str:
        return f"KernelFunction({self.kind.name}, {self.fn!r})"


# -- the call path ---------------------------------------------------------------------
# The dispatch trace: DISPATCHER_SHOW_DISPATCH_TRACE=1, or set_show_dispatch_trace().
class _Trace(threading.local):
    depth = 0


_trace_state = _Trace()
_show_trace = [os.environ.get("DISPATCHER_SHOW_DISPATCH_TRACE", "") not in ("", "0")]


def set_show_dispatch_trace(enabled: bool) -> None:
    _show_trace[0] = bool(enabled)


def show_dispatch_trace() -> bool:
    return _show_trace[0]


def _print_trace(what: str, name: str, bits: int) -> None:
    key = DispatchKeySet._from_bits(bits).highest_priority_key()
    print(f"{' ' * _trace_state.depth}{what} op=[{name}], key=[{key.name}]", file=sys.stderr)


_TENSOR, _OPTIONAL_TENSOR, _TENSOR_LIST, _OPTIONAL_TENSOR_LIST = range(4)
_MISSING_ARG = object()


class OperatorHandle:
    """The call side of one operator: what registration publishes, and calls.

    Registration (dispatcher.operator.OperatorEntry) hands it the schema, the
    runtime table and the per-backend fallthrough masks; a call reads only
    these.  Each is replaced whole, so a call racing a registration sees the
    old state or the new one.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.schema = None
        self._table: tuple = ()
        self._masks: tuple = ()
        self._dispatch_args: tuple = ()
        self._report_error: Optional[Callable] = None

    def __repr__(self) -> str:
        return f"OperatorHandle({self.name})"

    # -- published by registration ---------------------------------------------
    def _set_dispatch_state(self, table: tuple, masks: tuple) -> None:
        self._table, self._masks = table, masks

    def _set_schema(self, schema: Any) -> None:
        self.schema = schema
        # (position, name, kind, required): a required tensor argument that is
        # missing is the caller's mistake, reported as Python would.
        self._dispatch_args = () if schema is None else tuple(
            (a.position, a.name, int(a.kind), not schema.arguments[a.position].has_default)
            for a in schema.dispatch_args
        )

    def _set_error_reporter(self, report: Callable) -> None:
        self._report_error = report

    # -- key extraction ------------------------------------------------------------
    def _extract(self, args: tuple, kwargs: dict) -> int:
        bits = 0
        for position, name, kind, required in self._dispatch_args:
            if position < len(args):
                value = args[position]
            elif name in kwargs:
                value = kwargs[name]
            elif required:
                self._missing_argument(args, kwargs, name)
            else:
                continue  # an omitted argument: its default is no tensor
            if kind == _TENSOR or kind == _OPTIONAL_TENSOR:
                if value is None and kind == _OPTIONAL_TENSOR:
                    continue
                bits |= self._tensor_bits(value, name, position)
            else:
                if not isinstance(value, (list, tuple)):
                    self._wrong_type(value, name, position, "a list of tensors")
                for item in value:
                    if item is None and kind == _OPTIONAL_TENSOR_LIST:
                        continue
                    bits |= self._tensor_bits(item, name, position)
        return bits

    def _missing_argument(self, args: tuple, kwargs: dict, name: str) -> None:
        self.schema.bind(args, kwargs)  # raises Python's own TypeError wording
        raise TypeError(f"{self.name}() missing required argument: '{name}'")

    def _tensor_bits(self, value: object, name: str, position: int) -> int:
        ks = tensor_key_set(value)
        if ks is None:
            self._wrong_type(value, name, position, "a tensor")
        return ks._repr  # type: ignore[union-attr]

    def _wrong_type(self, value: object, name: str, position: int, expected: str) -> None:
        raise TypeError(
            f"{self.name}: argument '{name}' (position {position + 1}) must be {expected}, "
            f"not {type(value).__name__}"
        )

    # -- calling ---------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bits = self._extract(args, kwargs) | _tls_included_bits()
        bits &= FULL_BACKEND_MASK | ~_tls_excluded_bits()
        masks = self._masks
        if not masks:
            raise RuntimeError(f"operator {self.name} has been removed")
        bits &= masks[(bits & FULL_BACKEND_MASK).bit_length() - 1 if bits & FULL_BACKEND_MASK else 0]
        return self._dispatch("[call]", bits, args, kwargs)

    def redispatch(self, keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        """Call the kernel for ``keyset`` as given: no extraction, no TLS, no mask."""
        return self._dispatch("[redispatch]", _keyset_arg(keyset, "redispatch"), args, kwargs)

    def _dispatch(self, what: str, bits: int, args: tuple, kwargs: dict) -> Any:
        table = self._table
        while True:
            entry = table[_layout.table_index(bits)]
            if entry.kind != KernelKind.FALLTHROUGH or not bits:
                break
            # Only a call racing a registration (or a redispatch with a keyset
            # that still holds a fallthrough key) gets here: skip the key.
            bits = DispatchKeySet._from_bits(bits).remove(DispatchKeySet._from_bits(bits).highest_priority_key())._repr
        if _show_trace[0]:
            _print_trace(what, self.name, bits)
            _trace_state.depth += 1
            try:
                return self._run(entry, bits, args, kwargs)
            finally:
                _trace_state.depth -= 1
        return self._run(entry, bits, args, kwargs)

    def _run(self, entry: KernelFunction, bits: int, args: tuple, kwargs: dict) -> Any:
        kind = entry.kind
        if kind == KernelKind.UNBOXED:
            return entry.fn(*args, **kwargs)
        if kind == KernelKind.WITH_KEYSET:
            return entry.fn(DispatchKeySet._from_bits(bits), *args, **kwargs)
        if kind == KernelKind.BOXED:
            boxer = _boxer_for(self.schema)
            stack = boxer.box(args, kwargs)
            entry.fn(self, DispatchKeySet._from_bits(bits), stack)
            return boxer.unbox_returns(stack)
        return self._raise_for(entry, bits)

    def _raise_for(self, entry: KernelFunction, bits: int) -> Any:
        if self._report_error is None:
            raise RuntimeError(f"operator {self.name} has no kernels")
        self._report_error(entry.kind, DispatchKeySet._from_bits(bits).highest_priority_key())
        raise AssertionError("the error reporter returned")  # it always raises

    def call_boxed(self, stack: Any) -> None:
        """Dispatch a call whose arguments are on ``stack`` (a dispatcher.ivalue.Stack);
        the results replace them, as in c10's callBoxed."""
        boxer = _boxer_for(self.schema)
        args, kwargs = self._unbox_call(boxer, stack)
        bits = self._extract(args, kwargs) | _tls_included_bits()
        bits &= FULL_BACKEND_MASK | ~_tls_excluded_bits()
        bits &= self._masks[(bits & FULL_BACKEND_MASK).bit_length() - 1 if bits & FULL_BACKEND_MASK else 0]
        stack.extend(boxer.box(args, kwargs))
        self._dispatch_boxed("[call]", bits, stack)

    def _unbox_call(self, boxer: Boxer, stack: Stack) -> tuple:
        """Pop the arguments off ``stack`` as a Python call: (args, kwargs)."""
        return self.schema.split_call(boxer.unbox_arguments(stack))

    def redispatch_boxed(self, keyset: DispatchKeySet, stack: Any) -> None:
        self._dispatch_boxed("[redispatch]", _keyset_arg(keyset, "redispatch_boxed"), stack)

    def _dispatch_boxed(self, what: str, bits: int, stack: Any) -> None:
        entry = self._table[_layout.table_index(bits)]
        if entry.kind == KernelKind.BOXED:
            if _show_trace[0]:
                _print_trace(what, self.name, bits)
            entry.fn(self, DispatchKeySet._from_bits(bits), stack)
            return
        # Any other entry: unbox the arguments, call, box the results.
        boxer = _boxer_for(self.schema)
        args, kwargs = self._unbox_call(boxer, stack)
        boxer.box_returns(self._dispatch(what, bits, args, kwargs), stack)
