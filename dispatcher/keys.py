"""Dispatch keys and backend components, with PyTorch 2.13's names and values.

This mirrors ``c10/core/DispatchKey.h``.  A key is one of:

* a *functionality* key (``Undefined`` .. ``PythonDispatcher``, values 0..46);
  six of them are *per-backend* functionalities (Dense, Quantized, Sparse,
  SparseCsr, NestedTensor, AutogradFunctionality) that are never dispatched to
  directly but only together with a backend;
* a *per-backend runtime* key, one per (per-backend functionality, backend)
  pair: ``CPU`` is (Dense, CPUBit), ``AutogradXLA`` is
  (AutogradFunctionality, XLABit), ...;
* an *alias* key (``Autograd``, ``CompositeImplicitAutograd``, ...) that only
  exists at registration time and expands to a set of runtime keys
  (see ``dispatcher.keysets``).

Everything here works on single keys; sets of keys live in the core
(``DispatchKeySet``) and ``dispatcher.keysets``.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Callable, ClassVar, Union

from .errors import DispatcherValueError

__all__ = [
    "BackendComponent",
    "DispatchKey",
    "NUM_BACKENDS",
    "NUM_FUNCTIONALITY_KEYS",
    "NUM_RUNTIME_ENTRIES",
    "PER_BACKEND_FUNCTIONALITY_KEYS",
    "get_autograd_key_from_backend",
    "is_alias_key",
        "is_per_backend_functionality_key",
    "is_per_backend_runtime_key",
    "is_runtime_key",
    "parse_dispatch_key",
    "to_backend_component",
    "to_functionality_key",
    "to_runtime_per_backend_functionality_key",
]

# C10_FORALL_BACKEND_COMPONENTS, in bit order: CPU is the lowest backend bit.
_BACKENDS = (
    "CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU",
    "VE", "Lazy", "MTIA", "MAIA", "PrivateUse1", "PrivateUse2", "PrivateUse3",
    "Meta",
)

# The functionality keys in priority order (a higher value is a higher
# priority); index == value.  Undefined is 0 and has no bit in a keyset.
_FUNCTIONALITY_KEYS = (
    "Undefined", "Dense", "FPGA", "Vulkan", "Metal", "Quantized",
    "CustomRNGKeyId", "MkldnnCPU", "Sparse", "SparseCsr", "NestedTensor",
    "BackendSelect", "Fake", "Python", "FuncTorchDynamicLayerBackMode",
    "Functionalize", "Conjugate", "Negative", "ZeroTensor", "ADInplaceOrView",
    "AutogradOther", "AutogradFunctionality", "AutogradNestedTensor", "Tracer",
    "AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU",
    "AutocastIPU", "AutocastHPU", "AutocastXLA", "AutocastMPS", "AutocastCUDA",
    "AutocastPrivateUse1", "FuncTorchBatched", "BatchedNestedTensor",
    "FuncTorchVmapMode", "Batched", "VmapMode", "FuncTorchGradWrapper",
    "DeferredInit", "PythonTLSSnapshot", "FuncTorchDynamicLayerFrontMode",
    "TESTING_ONLY_GenericWrapper", "TESTING_ONLY_GenericMode", "PreDispatch",
    "PythonDispatcher",
)

# C10_FORALL_FUNCTIONALITY_KEYS: (functionality, prefix of its runtime keys),
# in the order their runtime-key blocks follow EndOfFunctionalityKeys.
_PER_BACKEND_FUNCTIONALITIES = (
    ("Dense", ""),
    ("Quantized", "Quantized"),
    ("Sparse", "Sparse"),
    ("SparseCsr", "SparseCsr"),
    ("NestedTensor", "NestedTensor"),
    ("AutogradFunctionality", "Autograd"),
)

_ALIAS_KEYS = (
    "Autograd",
    "CompositeImplicitAutograd",
    "FuncTorchBatchedDecomposition",
    "CompositeImplicitAutogradNestedTensor",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)

NUM_BACKENDS = len(_BACKENDS)  # 16
NUM_FUNCTIONALITY_KEYS = len(_FUNCTIONALITY_KEYS)  # 47, Undefined included
_END_OF_FUNCTIONALITY_KEYS = NUM_FUNCTIONALITY_KEYS

# Note [Per-backend key blocks]
# After EndOfFunctionalityKeys (47) the C++ enum lays out one block per
# per-backend functionality: a StartOf<F>Backends sentinel followed by the 16
# runtime keys of F, so that `key - StartOf<F>Backends` is the backend's
# BackendComponent value (CPUBit == 1).  The sentinels are not keys and have
# no member here; the block starts are kept for the arithmetic.
_BLOCK_SIZE = NUM_BACKENDS + 1
_BLOCK_START = {
    func: _END_OF_FUNCTIONALITY_KEYS + 1 + i * _BLOCK_SIZE
    for i, (func, _prefix) in enumerate(_PER_BACKEND_FUNCTIONALITIES)
}
_END_OF_RUNTIME_BACKEND_KEYS = (
    _BLOCK_START["AutogradFunctionality"] + NUM_BACKENDS
)  # AutogradMeta == 149
_BLOCK_SENTINELS = frozenset(_BLOCK_START.values())
_START_OF_ALIAS_KEYS = _END_OF_RUNTIME_BACKEND_KEYS + 1  # Autograd == 150
_END_OF_ALIAS_KEYS = _START_OF_ALIAS_KEYS + len(_ALIAS_KEYS) - 1

# num_runtime_entries in DispatchKey.h: every functionality key gets one slot,
# and each per-backend functionality gets NUM_BACKENDS - 1 more.
NUM_RUNTIME_ENTRIES = NUM_FUNCTIONALITY_KEYS + len(_PER_BACKEND_FUNCTIONALITIES) * (
    NUM_BACKENDS - 1
)  # 137


class _NamedIntEnum(IntEnum):
    """IntEnum whose str() is the bare name, as c10's toString() prints it."""

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)


class DispatchKey(_NamedIntEnum):
    """Every dispatch key of PyTorch 2.13, with its C++ enum value."""

    # Functionality keys, in priority order: index == value.
    Undefined = 0
    Dense = 1
    FPGA = 2
    Vulkan = 3
    Metal = 4
    Quantized = 5
    CustomRNGKeyId = 6
    MkldnnCPU = 7
    Sparse = 8
    SparseCsr = 9
    NestedTensor = 10
    BackendSelect = 11
    Fake = 12
    Python = 13
    FuncTorchDynamicLayerBackMode = 14
    Functionalize = 15
    Conjugate = 16
    Negative = 17
    ZeroTensor = 18
    ADInplaceOrView = 19
    AutogradOther = 20
    AutogradFunctionality = 21
    AutogradNestedTensor = 22
    Tracer = 23
    AutocastCPU = 24
    AutocastMTIA = 25
    AutocastMAIA = 26
    AutocastXPU = 27
    AutocastIPU = 28
    AutocastHPU = 29
    AutocastXLA = 30
    AutocastMPS = 31
    AutocastCUDA = 32
    AutocastPrivateUse1 = 33
    FuncTorchBatched = 34
    BatchedNestedTensor = 35
    FuncTorchVmapMode = 36
    Batched = 37
    VmapMode = 38
    FuncTorchGradWrapper = 39
    DeferredInit = 40
    PythonTLSSnapshot = 41
    FuncTorchDynamicLayerFrontMode = 42
    TESTING_ONLY_GenericWrapper = 43
    TESTING_ONLY_GenericMode = 44
    PreDispatch = 45
    PythonDispatcher = 46
    # Dense's runtime keys; 48 is StartOfDenseBackends.
    CPU = 49
    CUDA = 50
    HIP = 51
    XLA = 52
    MPS = 53
    IPU = 54
    XPU = 55
    HPU = 56
    VE = 57
    Lazy = 58
    MTIA = 59
    MAIA = 60
    PrivateUse1 = 61
    PrivateUse2 = 62
    PrivateUse3 = 63
    Meta = 64
    # Quantized's runtime keys; 65 is StartOfQuantizedBackends.
    QuantizedCPU = 66
    QuantizedCUDA = 67
    QuantizedHIP = 68
    QuantizedXLA = 69
    QuantizedMPS = 70
    QuantizedIPU = 71
    QuantizedXPU = 72
    QuantizedHPU = 73
    QuantizedVE = 74
    QuantizedLazy = 75
    QuantizedMTIA = 76
    QuantizedMAIA = 77
    QuantizedPrivateUse1 = 78
    QuantizedPrivateUse2 = 79
    QuantizedPrivateUse3 = 80
    QuantizedMeta = 81
    # Sparse's runtime keys; 82 is StartOfSparseBackends.
    SparseCPU = 83
    SparseCUDA = 84
    SparseHIP = 85
    SparseXLA = 86
    SparseMPS = 87
    SparseIPU = 88
    SparseXPU = 89
    SparseHPU = 90
    SparseVE = 91
    SparseLazy = 92
    SparseMTIA = 93
    SparseMAIA = 94
    SparsePrivateUse1 = 95
    SparsePrivateUse2 = 96
    SparsePrivateUse3 = 97
    SparseMeta = 98
    # SparseCsr's runtime keys; 99 is StartOfSparseCsrBackends.
    SparseCsrCPU = 100
    SparseCsrCUDA = 101
    SparseCsrHIP = 102
    SparseCsrXLA = 103
    SparseCsrMPS = 104
    SparseCsrIPU = 105
    SparseCsrXPU = 106
    SparseCsrHPU = 107
    SparseCsrVE = 108
    SparseCsrLazy = 109
    SparseCsrMTIA = 110
    SparseCsrMAIA = 111
    SparseCsrPrivateUse1 = 112
    SparseCsrPrivateUse2 = 113
    SparseCsrPrivateUse3 = 114
    SparseCsrMeta = 115
    # NestedTensor's runtime keys; 116 is StartOfNestedTensorBackends.
    NestedTensorCPU = 117
    NestedTensorCUDA = 118
    NestedTensorHIP = 119
    NestedTensorXLA = 120
    NestedTensorMPS = 121
    NestedTensorIPU = 122
    NestedTensorXPU = 123
    NestedTensorHPU = 124
    NestedTensorVE = 125
    NestedTensorLazy = 126
    NestedTensorMTIA = 127
    NestedTensorMAIA = 128
    NestedTensorPrivateUse1 = 129
    NestedTensorPrivateUse2 = 130
    NestedTensorPrivateUse3 = 131
    NestedTensorMeta = 132
    # AutogradFunctionality's runtime keys; 133 is StartOfAutogradFunctionalityBackends.
    AutogradCPU = 134
    AutogradCUDA = 135
    AutogradHIP = 136
    AutogradXLA = 137
    AutogradMPS = 138
    AutogradIPU = 139
    AutogradXPU = 140
    AutogradHPU = 141
    AutogradVE = 142
    AutogradLazy = 143
    AutogradMTIA = 144
    AutogradMAIA = 145
    AutogradPrivateUse1 = 146
    AutogradPrivateUse2 = 147
    AutogradPrivateUse3 = 148
    AutogradMeta = 149
    # Alias keys.
    Autograd = 150
    CompositeImplicitAutograd = 151
    FuncTorchBatchedDecomposition = 152
    CompositeImplicitAutogradNestedTensor = 153
    CompositeExplicitAutograd = 154
    CompositeExplicitAutogradNonFunctional = 155

    # ``parse_dispatch_key``, set below.
    parse: ClassVar[Callable[[str], DispatchKey]]


def _dispatch_key_members() -> list[tuple[str, int]]:
    """DispatchKey's (name, value) pairs as the tables above lay them out."""
    members = list(zip(_FUNCTIONALITY_KEYS, range(NUM_FUNCTIONALITY_KEYS)))
    for func, prefix in _PER_BACKEND_FUNCTIONALITIES:
        for bit, backend in enumerate(_BACKENDS, start=1):
            members.append((prefix + backend, _BLOCK_START[func] + bit))
    members.extend(zip(_ALIAS_KEYS, range(_START_OF_ALIAS_KEYS, _END_OF_ALIAS_KEYS + 1)))
    return members


# The members are written out (so that type checkers see them) and must be
# exactly the layout the tables describe, with no two sharing a value.
assert [(k.name, k.value) for k in DispatchKey] == _dispatch_key_members()


class BackendComponent(_NamedIntEnum):
    """The backend bits of a DispatchKeySet (InvalidBit = no backend), as in c10."""

    InvalidBit = 0
    CPUBit = 1
    CUDABit = 2
    HIPBit = 3
    XLABit = 4
    MPSBit = 5
    IPUBit = 6
    XPUBit = 7
    HPUBit = 8
    VEBit = 9
    LazyBit = 10
    MTIABit = 11
    MAIABit = 12
    PrivateUse1Bit = 13
    PrivateUse2Bit = 14
    PrivateUse3Bit = 15
    MetaBit = 16

    def __str__(self) -> str:
        # c10's toString(BackendComponent) spells these two without "Bit".
        return _BACKEND_COMPONENT_STRINGS.get(self.name, self.name)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


_BACKEND_COMPONENT_STRINGS = {"MTIABit": "MTIA", "MAIABit": "MAIA"}

assert [(b.name, b.value) for b in BackendComponent] == [("InvalidBit", 0)] + [
    (b + "Bit", i) for i, b in enumerate(_BACKENDS, start=1)
]

PER_BACKEND_FUNCTIONALITY_KEYS = frozenset(
    DispatchKey[func] for func, _prefix in _PER_BACKEND_FUNCTIONALITIES
)

KeyLike = Union["DispatchKey", str]

# DispatchKey.__members__, as a dict: that property makes a new mapping
# proxy each time, and registration parses a key name per kernel.
_KEYS_BY_NAME: dict[str, DispatchKey] = dict(DispatchKey.__members__)
# Legacy spellings that PyTorch's key parser still accepts.
_LEGACY_SPELLINGS = {
    "Math": DispatchKey.CompositeImplicitAutograd,
    "DefaultBackend": DispatchKey.CompositeExplicitAutograd,
    "CatchAll": DispatchKey.Undefined,
}


def parse_dispatch_key(name: str) -> DispatchKey:
    """Parse a key name (canonical, or a legacy spelling such as ``Math``).

    Raises ValueError naming the input and the closest known names.
    """
    if not isinstance(name, str):
        raise TypeError(f"dispatch key name must be a str, not {type(name).__name__}")
    member = _KEYS_BY_NAME.get(name)
    if member is not None:
        return member
    legacy = _LEGACY_SPELLINGS.get(name)
    if legacy is not None:
        return legacy
    from ._suggest import closest_names  # only for this error

    close = closest_names(name, list(DispatchKey.__members__) + list(_LEGACY_SPELLINGS))
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise DispatcherValueError(f"could not parse dispatch key: {name}{hint}")


def as_dispatch_key(key: KeyLike) -> DispatchKey:
    """Accept a DispatchKey, its name, or its integer value; return the key."""
    if isinstance(key, DispatchKey):
        return key
    if isinstance(key, str):
        return parse_dispatch_key(key)
    if isinstance(key, int) and not isinstance(key, (bool, BackendComponent)):
        try:
            return DispatchKey(key)
        except ValueError:
            raise ValueError(f"{key} is not the value of any DispatchKey") from None
    raise TypeError(f"expected a DispatchKey or a key name, got {type(key).__name__}")


DispatchKey.parse = staticmethod(parse_dispatch_key)


def is_alias_key(k: int) -> bool:
    return _START_OF_ALIAS_KEYS <= k <= _END_OF_ALIAS_KEYS


def is_per_backend_functionality_key(k: int) -> bool:
    return k in PER_BACKEND_FUNCTIONALITY_KEYS


def is_per_backend_runtime_key(k: int) -> bool:
    """True for the runtime keys that pair a functionality with a backend (CPU, SparseCUDA, AutogradXLA, ...)."""
    return _END_OF_FUNCTIONALITY_KEYS < k <= _END_OF_RUNTIME_BACKEND_KEYS and k not in _BLOCK_SENTINELS


def is_runtime_key(k: int) -> bool:
    """True for keys that have a slot in the runtime table (Undefined included)."""
    if k < NUM_FUNCTIONALITY_KEYS:
        return k not in PER_BACKEND_FUNCTIONALITY_KEYS
    return is_per_backend_runtime_key(k)


def _block_of(k: int) -> str | None:
    """The per-backend functionality whose runtime-key block holds value k."""
    if not _END_OF_FUNCTIONALITY_KEYS < k <= _END_OF_RUNTIME_BACKEND_KEYS:
        return None
    return _PER_BACKEND_FUNCTIONALITIES[(k - _END_OF_FUNCTIONALITY_KEYS - 1) // _BLOCK_SIZE][0]


def to_functionality_key(k: int) -> DispatchKey:
    """c10::toFunctionalityKey: CPU -> Dense, AutogradCUDA -> AutogradFunctionality."""
    if k <= _END_OF_FUNCTIONALITY_KEYS:
        return DispatchKey(k)
    func = _block_of(k)
    return DispatchKey[func] if func is not None else DispatchKey.Undefined


def to_backend_component(k: int) -> BackendComponent:
    """c10::toBackendComponent: the backend of a per-backend runtime key, else InvalidBit."""
    func = _block_of(k)
    if func is None:
        return BackendComponent.InvalidBit
    return BackendComponent(k - _BLOCK_START[func])


def to_runtime_per_backend_functionality_key(functionality: int, backend: int) -> DispatchKey:
    """c10::toRuntimePerBackendFunctionalityKey: (Dense, CPUBit) -> CPU.

    Like c10, a functionality that is not per-backend gives Undefined.  So
    does InvalidBit, where c10 returns its StartOf<F>Backends sentinel, which
    is not a key (c10 prints the one of Dense as "Undefined").
    """
    functionality = DispatchKey(functionality)
    backend = BackendComponent(backend)
    if functionality not in PER_BACKEND_FUNCTIONALITY_KEYS or backend == BackendComponent.InvalidBit:
        return DispatchKey.Undefined
    return DispatchKey(_BLOCK_START[functionality.name] + backend)


# getAutogradRelatedKeySetFromBackend's table, reduced to its autograd key:
# backends without an Autograd<backend> key of their own use AutogradOther.
_AUTOGRAD_KEY_OF_BACKEND = {
    BackendComponent[b + "Bit"]: DispatchKey["Autograd" + b]
    for b in (
        "CPU", "CUDA", "XLA", "MPS", "IPU", "XPU", "HPU", "Lazy", "MTIA", "MAIA",
        "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta",
    )
}


def get_autograd_key_from_backend(backend: int) -> DispatchKey:
    """c10::getAutogradKeyFromBackend: CPUBit -> AutogradCPU, HIPBit -> AutogradOther."""
    return _AUTOGRAD_KEY_OF_BACKEND.get(BackendComponent(backend), DispatchKey.AutogradOther)
