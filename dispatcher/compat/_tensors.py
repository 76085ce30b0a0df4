"""``torch._C``'s dispatch keys of tensors and devices.

A tensor here is whatever the dispatcher reads a DispatchKeySet from (a
``TensorBase``, a registered tensor type, an object with ``__dispatch_keys__``:
see ``tensor_key_set``), on the shim registry's engine.
"""
from __future__ import annotations

from typing import Any, Optional

from .._layout import KEY_REPRS
from ..backends import parse_device_type, split_device_string
from ..keys import BackendComponent, DispatchKey
from ..tensor_protocols import tensor_checks_for
from ._common import shim_registry, str_arg

K = DispatchKey


def _key_set_of(tensor: object, function: str) -> Any:
    key_set = shim_registry().engine.tensor_key_set(tensor)
    if key_set is None:
        raise TypeError(
            f"{function}(): expected a tensor (an object the dispatcher reads a DispatchKeySet from), "
            f"got {type(tensor).__name__}"
        )
    return key_set


def _dispatch_keys(tensor: object) -> Any:
    """The tensor's DispatchKeySet."""
    return _key_set_of(tensor, "_dispatch_keys")


def _dispatch_key_set(tensor: object) -> str:
    """The tensor's DispatchKeySet, printed."""
    return repr(_key_set_of(tensor, "_dispatch_key_set"))


# at::kTensorSubclassLike (ATen/TensorSubclassLikeUtils.h, torch 2.13): the
# functorch wrappers, Batched, Sparse, SparseCsr and Python functionalities
# (without backend bits, so that they match on any backend) and the Meta
# backend bit.  Raw bits: the test is c10's `!(key_set & set).empty()`.
_TENSOR_SUBCLASS_LIKE_BITS = 0
for _key in (K.FuncTorchGradWrapper, K.FuncTorchBatched, K.Functionalize, K.Batched, K.Sparse, K.SparseCsr, K.Python):
    _TENSOR_SUBCLASS_LIKE_BITS |= KEY_REPRS[_key]
_TENSOR_SUBCLASS_LIKE_BITS |= 1 << (int(BackendComponent.MetaBit) - 1)
del _key


def _dispatch_isTensorSubclassLike(tensor: object) -> bool:
    """Whether the tensor is one that kernels must not treat as a plain dense
    tensor (a subclass, a wrapper, sparse, meta): True for every tensor while
    a dispatch mode is active on this thread (and the Python key is not
    excluded), as in torch; else the keyset decides."""
    key_set = _key_set_of(tensor, "_dispatch_isTensorSubclassLike")
    engine = shim_registry().engine
    if engine.dispatch_mode_stack() and not engine.tls_is_dispatch_key_excluded(K.Python):
        return True
    return bool(key_set.raw_repr() & _TENSOR_SUBCLASS_LIKE_BITS)


# -- devices ------------------------------------------------------------------------------
# c10's DeviceType names in parse order (c10/core/Device.cpp), with the key
# computeDispatchKey gives a strided tensor on that device; None for the
# Caffe2 types that have no key.
_DEVICE_KEYS: dict[str, Optional[str]] = {
    "cpu": "CPU", "cuda": "CUDA", "ipu": "IPU", "xpu": "XPU", "mkldnn": None, "opengl": None, "opencl": None,
    "ideep": None, "hip": "HIP", "ve": "VE", "fpga": "FPGA", "maia": "MAIA", "xla": "XLA", "lazy": "Lazy",
    "vulkan": "Vulkan", "mps": "MPS", "meta": "Meta", "hpu": "HPU", "mtia": "MTIA", "privateuseone": "PrivateUse1",
}
_INT32_MAX = 2**31 - 1


def _dispatch_key_for_device(device_type: str) -> str:
    """The name of the dispatch key of a (strided) tensor on ``device_type``
    (a device string without an index: "cpu", "cuda", "meta", ...)."""
    device = str_arg(device_type, "_dispatch_key_for_device", "device_type")
    name, index = split_device_string(device)
    if index and int(index) > _INT32_MAX:  # std::stoi
        raise RuntimeError(f"Could not parse device index '{index}' in device string '{device}'")
    name = parse_device_type(name)  # the renamed PrivateUse1 backend's name is "privateuseone"
    # c10::DeviceIndex is an int8_t: the index is truncated to its low byte,
    # and one that becomes -1 (255, 65535, ...) reads as "no index", as in torch.
    if index and (int(index) & 0xFF) != 0xFF:
        raise RuntimeError(f"Expected device_type string to not have a device index; got {device}")
    key = _DEVICE_KEYS[name]
    if key is None:
        # torch fails an internal assertion here.
        raise RuntimeError(f"This is a grandfathered Caffe2 device type {name}, it shouldn't ever convert to a DispatchKey.")
    return key


def _any_requires_grad(*args: Any, **kwargs: Any) -> bool:
    """``torch._C._any_requires_grad``: whether an argument (positional or
    keyword) is a tensor that requires grad, or a list made only of tensors
    one of which does.  As torch 2.13: a tuple, a nested list and a list
    holding anything but tensors are not looked into."""
    engine = shim_registry().engine

    def is_tensor(value: object) -> bool:
        return engine.tensor_key_set(value) is not None

    def requires_grad(value: object) -> bool:
        return is_tensor(value) and bool(getattr(value, "requires_grad", False))

    for value in (*args, *kwargs.values()):
        if requires_grad(value):
            return True
        if type(value) is list and all(is_tensor(x) for x in value) and any(requires_grad(x) for x in value):
            return True
    return False


def _any_output_is_alias_to_input_or_output(args: Any, kwargs: Any, outputs: Any) -> bool:
    """``torch._C._any_output_is_alias_to_input_or_output``: whether a tensor of
    ``outputs`` is, or shares memory with, a tensor of ``args``/``kwargs``'
    values or another output.  As torch 2.13, lists are looked into at any
    depth and tuples inside them are not; ``kwargs`` may be None.  Sharing is
    the tensor type's ``shares_memory`` (TensorChecks): for the prototype,
    overlapping memory, where torch compares storages (an empty view at the
    end of a tensor shares its storage but no memory)."""
    engine = shim_registry().engine

    def tensors(values: Any) -> list[Any]:
        found: list[Any] = []
        for value in values:
            if type(value) is list:
                found.extend(tensors(value))
            elif engine.tensor_key_set(value) is not None:
                found.append(value)
        return found

    def aliases(a: Any, b: Any) -> bool:
        checks = tensor_checks_for(a)
        return a is b or (checks is not None and checks is tensor_checks_for(b) and checks.shares_memory(a, b))

    seen = tensors((*args, *(kwargs or {}).values()))
    for output in tensors(outputs):
        if any(aliases(output, other) for other in seen):
            return True
        seen.append(output)
    return False
