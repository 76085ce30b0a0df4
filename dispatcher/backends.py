"""Device types and the keys they dispatch to; naming the PrivateUse1 backend.

A tensor library says where a tensor lives with a device (``"cpu"``,
``"meta"``, ``"cuda:1"``, or a ``dispatcher.device``); the dispatcher needs
the ``BackendComponent`` behind it to build the tensor's DispatchKeySet, and
the dispatch key of a device type to register kernels for it.  This module
is c10's ``Device`` string grammar, its ``DeviceType`` <-> ``BackendComponent``
mapping (``toBackendComponent``), ``computeDispatchKey`` (the key a factory
function's ``dtype``/``layout``/``device`` arguments select), and
``rename_privateuse1_backend``: an out-of-tree backend registers its kernels
on the PrivateUse1 keys and gives the device a name of its own, as with
``torch.utils.rename_privateuse1_backend("foo")``.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

from .errors import DispatcherTypeError, DispatcherValueError
from .keys import BackendComponent, DispatchKey, to_runtime_per_backend_functionality_key

__all__ = [
    "DEVICE_TYPES",
    "PRIVATEUSE1_DEVICE_TYPE",
    "backend_component",
    "device_type",
    "dispatch_key_for_device",
    "dispatch_key_for_options",
    "get_privateuse1_backend_name",
    "parse_device",
    "parse_device_type",
    "rename_privateuse1_backend",
    "split_device_string",
]

# PrivateUse1's own name, which parses whatever its current name (as in c10).
PRIVATEUSE1_DEVICE_TYPE = "privateuseone"
_DEFAULT_PRIVATEUSE1_NAME = PRIVATEUSE1_DEVICE_TYPE

# c10's DeviceType names in the order its parser lists them (c10/core/Device.cpp).
DEVICE_TYPES: tuple[str, ...] = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
    "lazy", "vulkan", "mps", "meta", "hpu", "mtia", _DEFAULT_PRIVATEUSE1_NAME,
)

# The device types with a backend component (c10's toBackendComponent);
# PrivateUse1's, under whatever name it has, is the renamable one.
_BACKENDS = {
    "cpu": BackendComponent.CPUBit,
    "cuda": BackendComponent.CUDABit,
    "hip": BackendComponent.HIPBit,
    "xla": BackendComponent.XLABit,
    "mps": BackendComponent.MPSBit,
    "ipu": BackendComponent.IPUBit,
    "xpu": BackendComponent.XPUBit,
    "hpu": BackendComponent.HPUBit,
    "ve": BackendComponent.VEBit,
    "lazy": BackendComponent.LazyBit,
    "mtia": BackendComponent.MTIABit,
    "maia": BackendComponent.MAIABit,
    "meta": BackendComponent.MetaBit,
    _DEFAULT_PRIVATEUSE1_NAME: BackendComponent.PrivateUse1Bit,
}
# Device types c10 maps to a key of their own, not a backend's Dense key.
_NON_BACKEND_KEYS = {"fpga": DispatchKey.FPGA, "vulkan": DispatchKey.Vulkan}
# Caffe2's device types: names the parser knows, which no key serves.
_CAFFE2_TYPES = frozenset({"mkldnn", "opengl", "opencl", "ideep"})
# C10_FORALL_BACKEND_DEVICE_TYPES: the device types with Quantized, Sparse
# and SparseCsr keys (MAIA has a backend bit but is not among them).
_LAYOUT_DEVICE_TYPES = frozenset(_BACKENDS) - {"maia"}
# c10's Layout numbers, and its names for them.
_LAYOUTS = ("Strided", "Sparse", "SparseCsr", "Mkldnn", "SparseCsc", "SparseBsr", "SparseBsc", "Jagged")
# isQIntType: QInt8, QUInt8, QInt32, QUInt4x2, QUInt2x4 (c10's ScalarType numbers).
_QUANTIZED_DTYPES = frozenset({12, 13, 14, 16, 17})
# c10::DeviceIndex is an int8_t.
MAX_DEVICE_INDEX = 127

_lock = threading.Lock()
_privateuse1_name = _DEFAULT_PRIVATEUSE1_NAME
_privateuse1_renamed = False


def rename_privateuse1_backend(backend_name: str) -> None:
    """Name the PrivateUse1 backend's device type, once per process.

    Afterwards ``device(backend_name)`` and ``backend_component(backend_name)``
    mean PrivateUse1 (so does ``"privateuseone"``, as in torch).  Renaming
    again to the same name is a no-op, to another name a RuntimeError.
    PyTorch refuses six in-tree names (cpu, cuda, hip, mps, xpu, mtia); this
    refuses every name its device parser knows, since a device string must
    name one device type, and names its parser could not read (letters and
    underscores only).
    """
    global _privateuse1_name, _privateuse1_renamed
    if not isinstance(backend_name, str):
        raise TypeError(f"a backend name must be a str, got {type(backend_name).__name__}")
    if not backend_name or not all(_is_name_char(ch) for ch in backend_name):
        raise DispatcherValueError(
            f"a backend name must be ASCII letters and underscores (what a device string's type may be), "
            f"got {backend_name!r}"
        )
    with _lock:
        if _privateuse1_renamed and backend_name != _privateuse1_name:
            raise RuntimeError(
                f"the PrivateUse1 backend is already named {_privateuse1_name!r}, and is named once per process "
                f"(rename_privateuse1_backend); it cannot also be named {backend_name!r}"
            )
        if backend_name in DEVICE_TYPES and backend_name != _DEFAULT_PRIVATEUSE1_NAME:
            raise RuntimeError(f"Cannot register privateuse1 backend with in-tree device name: {backend_name}")
        _privateuse1_name = backend_name
        _privateuse1_renamed = True


def get_privateuse1_backend_name() -> str:
    """The PrivateUse1 device type's name: ``"privateuseone"`` until renamed."""
    return _privateuse1_name


# -- device strings ------------------------------------------------------------------------
def _is_name_char(ch: str) -> bool:
    # std::isalpha in the C locale: ASCII letters only.
    return ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def split_device_string(text: str) -> tuple[str, str]:
    """c10::Device's parse of ``type[:index]`` (the regex ``([a-zA-Z_]+)(?::([1-9]\\d*|0))?``):
    the type and the index's digits ("" if none), with c10's errors."""
    if not text:
        raise DispatcherValueError("Device string must not be empty")
    name, sep, index = text.partition(":")
    valid = (
        name != "" and all(_is_name_char(ch) for ch in name)
        and (not sep or (index != "" and index.isascii() and index.isdigit() and (index == "0" or index[0] != "0")))
    )
    if not valid:
        raise DispatcherValueError(f"Invalid device string: '{text}'")
    return name, index


def parse_device_type(name: str) -> str:
    """A device type name as c10's parser reads it: one of DEVICE_TYPES
    ("privateuseone" for PrivateUse1 under either of its names)."""
    if name in DEVICE_TYPES:
        return name
    if name == _privateuse1_name:
        return _DEFAULT_PRIVATEUSE1_NAME
    raise DispatcherValueError(
        f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: {name}"
    )


def parse_device(text: str) -> tuple[str, Optional[int]]:
    """A device string as (device type as parse_device_type gives it, index or None)."""
    name, digits = split_device_string(text)
    index: Optional[int] = None
    if digits:
        if len(digits) > 10 or int(digits) > 2**31 - 1:  # std::stoi
            raise DispatcherValueError(f"Could not parse device index '{digits}' in device string '{text}'")
        index = int(digits)
        if index > MAX_DEVICE_INDEX:
            # torch keeps the index's low byte (cuda:300 is cuda:44).
            raise DispatcherValueError(
                f"Device index {index} in device string '{text}' is out of range: a device index is at most "
                f"{MAX_DEVICE_INDEX}"
            )
    return parse_device_type(name), index


def _device_type_of(device: Any) -> tuple[str, Optional[int]]:
    """(device type, index) of a device string or a ``dispatcher.device``."""
    if isinstance(device, str):
        return parse_device(device)
    parsed = getattr(device, "_parsed", None)  # a dispatcher.device (value_types imports this module)
    if parsed is None:
        raise DispatcherTypeError(f"a device must be a str such as 'cpu' or a dispatcher.device, got {type(device).__name__}")
    return parsed  # type: ignore[no-any-return]


def backend_component(device: Any) -> BackendComponent:
    """The backend of a device: ``"cpu"`` -> CPUBit, ``"cuda:1"`` -> CUDABit,
    ``device("npu")`` -> PrivateUse1Bit once PrivateUse1 is named ``npu``."""
    kind, _ = _device_type_of(device)
    component = _BACKENDS.get(kind)
    if component is None:
        raise DispatcherValueError(
            f"the device type {kind!r} of {str(device)!r} has no backend component (only "
            f"{', '.join(device_type(b) for b in _BACKENDS.values())} do), so no tensor can live there"
        )
    return component


def device_type(backend: BackendComponent) -> str:
    """The device type name of a backend: CPUBit -> ``"cpu"``, PrivateUse1Bit -> its name."""
    backend = BackendComponent(backend)
    if backend == BackendComponent.PrivateUse1Bit:
        return _privateuse1_name
    for name, component in _BACKENDS.items():
        if component == backend:
            return name
    raise DispatcherValueError(f"backend {backend.name} has no device type")


# -- the keys of device types ----------------------------------------------------------------
def dispatch_key_for_device(device_type: str) -> DispatchKey:
    """The dispatch key of a device type's kernels (torch._C._dispatch_key_for_device):
    "cpu" -> CPU, "cuda" -> CUDA, "meta" -> Meta, the PrivateUse1 backend's name -> PrivateUse1."""
    if not isinstance(device_type, str):
        raise DispatcherTypeError(f"a device type must be a str such as 'cpu', got {type(device_type).__name__}")
    kind, index = parse_device(device_type)
    if index is not None:
        raise DispatcherValueError(f"Expected device_type string to not have a device index; got {device_type}")
    return dispatch_key_for_options(None, None, kind)


def _layout_number(layout: Any) -> int:
    if layout is None:
        return 0  # kStrided
    if isinstance(layout, bool) or not isinstance(layout, int):
        raise DispatcherTypeError(f"a layout is c10's Layout number (an int), got {type(layout).__name__}")
    if not 0 <= layout < len(_LAYOUTS):
        raise DispatcherValueError(f"Unsupported layout: {int(layout)}")
    return int(layout)


def dispatch_key_for_options(dtype: Any, layout: Any, device: Any) -> DispatchKey:
    """The backend key a factory function's TensorOptions select (c10's
    ``computeDispatchKey``): ``device`` (a string or ``dispatcher.device``;
    None: cpu), ``layout`` (c10's Layout number; None: strided) and
    ``dtype`` (a ScalarType number; quantized ones select the Quantized key).
    """
    kind, _ = ("cpu", None) if device is None else _device_type_of(device)
    number = _layout_number(layout)
    name = _LAYOUTS[number]
    component = _BACKENDS.get(kind)
    if name in ("Strided", "Jagged"):
        if kind in _NON_BACKEND_KEYS:
            return _NON_BACKEND_KEYS[kind]
        if kind in _CAFFE2_TYPES:
            # torch fails an internal assertion here.
            raise NotImplementedError(
                f"the device type {kind} is one of Caffe2's (mkldnn, opengl, opencl, ideep); no dispatch key serves it"
            )
        assert component is not None, kind
        quantized = dtype is not None and not isinstance(dtype, bool) and isinstance(dtype, int) \
            and int(dtype) in _QUANTIZED_DTYPES
        if quantized and kind in _LAYOUT_DEVICE_TYPES:
            return to_runtime_per_backend_functionality_key(DispatchKey.Quantized, component)
        return to_runtime_per_backend_functionality_key(DispatchKey.Dense, component)
    if name == "Mkldnn":
        if kind != "cpu":
            raise NotImplementedError(f"Unsupported device type for mkldnn layout: {kind}")
        return DispatchKey.MkldnnCPU
    if component is None or kind not in _LAYOUT_DEVICE_TYPES:
        what = "sparse" if name == "Sparse" else name
        raise NotImplementedError(f"Unsupported device type for {what} layout: {kind}")
    functionality = DispatchKey.Sparse if name == "Sparse" else DispatchKey.SparseCsr
    return to_runtime_per_backend_functionality_key(functionality, component)
