"""Device types and the backends they dispatch to; naming the PrivateUse1 backend.

A tensor library says where a tensor lives with a device string (``"cpu"``,
``"meta"``, ``"cuda:1"``); the dispatcher needs the ``BackendComponent``
behind it to build the tensor's DispatchKeySet.  This module is that mapping,
c10's ``DeviceType`` <-> ``BackendComponent`` (``toBackendComponent``), plus
``rename_privateuse1_backend``: an out-of-tree backend registers its kernels
on the PrivateUse1 keys and gives the device a name of its own, as with
``torch.utils.rename_privateuse1_backend("foo")``.
"""
from __future__ import annotations

import threading

from .keys import BackendComponent

__all__ = [
    "backend_component",
    "device_type",
    "get_privateuse1_backend_name",
    "rename_privateuse1_backend",
]

# c10's lower-case DeviceTypeName of every device type that has a backend
# component; PrivateUse1's name is the renamable one below.
_IN_TREE_DEVICE_TYPES = {
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
}
_DEFAULT_PRIVATEUSE1_NAME = "privateuseone"

_lock = threading.Lock()
_privateuse1_name = _DEFAULT_PRIVATEUSE1_NAME
_privateuse1_renamed = False


def rename_privateuse1_backend(backend_name: str) -> None:
    """Name the PrivateUse1 backend's device type, once per process.

    Afterwards ``backend_component(backend_name)`` is ``PrivateUse1Bit``.  As
    in PyTorch, renaming again to the same name is a no-op and to another
    name a RuntimeError.  PyTorch refuses six in-tree names (cpu, cuda, hip,
    mps, xpu, mtia); this refuses every in-tree device type, since a device
    string must name one backend.
    """
    global _privateuse1_name, _privateuse1_renamed
    if not isinstance(backend_name, str):
        raise TypeError(f"a backend name must be a str, got {type(backend_name).__name__}")
    if not backend_name.isidentifier():
        raise ValueError(f"a backend name must be an identifier (letters, digits, _), got {backend_name!r}")
    with _lock:
        if _privateuse1_renamed and backend_name != _privateuse1_name:
            raise RuntimeError(
                "torch.register_privateuse1_backend() has already been set! "
                f"Current backend: {_privateuse1_name}"
            )
        if backend_name in _IN_TREE_DEVICE_TYPES:
            raise RuntimeError(f"Cannot register privateuse1 backend with in-tree device name: {backend_name}")
        _privateuse1_name = backend_name
        _privateuse1_renamed = True


def get_privateuse1_backend_name() -> str:
    """The PrivateUse1 device type's name: ``"privateuseone"`` until renamed."""
    return _privateuse1_name


def backend_component(device: str) -> BackendComponent:
    """The backend of a device string: ``"cpu"`` -> CPUBit, ``"cuda:1"`` -> CUDABit."""
    if not isinstance(device, str):
        raise TypeError(f"a device must be a str such as 'cpu', got {type(device).__name__}")
    kind, _, index = device.partition(":")
    if index and not index.isdigit():
        raise ValueError(f"invalid device {device!r}: the index after ':' must be a non-negative integer")
    if kind == _privateuse1_name:
        return BackendComponent.PrivateUse1Bit
    try:
        return _IN_TREE_DEVICE_TYPES[kind]
    except KeyError:
        known = ", ".join([*_IN_TREE_DEVICE_TYPES, _privateuse1_name])
        raise ValueError(f"unknown device type {kind!r} in {device!r}; known device types: {known}") from None


def device_type(backend: BackendComponent) -> str:
    """The device type name of a backend: CPUBit -> ``"cpu"``, PrivateUse1Bit -> its name."""
    backend = BackendComponent(backend)
    if backend == BackendComponent.PrivateUse1Bit:
        return _privateuse1_name
    for name, component in _IN_TREE_DEVICE_TYPES.items():
        if component == backend:
            return name
    raise ValueError(f"backend {backend.name} has no device type")
