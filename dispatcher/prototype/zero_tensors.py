"""ZeroTensors: torch's ``_efficientzerotensor``, a tensor of zeros that stores none
and carries the ZeroTensor dispatch key (torch 2.13's, for autograd's zero gradients).

* ``_efficientzerotensor(size, dtype=..., device=...)``: CPU and Meta
  kernels (its BackendSelect kernel is the catalog's); the values read as
  zeros (a read-only broadcast of one zero).
* ``_is_zerotensor``: CompositeImplicitAutograd, whether the tensor has the key.
* ``mul.Tensor`` has a ZeroTensor kernel, as torch's ``mul_zerotensor``: a
  ZeroTensor of the broadcast shape and promoted dtype, whatever the other
  operand holds.
* Every other operator reaches the ZeroTensor backend fallback (torch's
  zeroTensorFallback), which ``install()`` registers with the prototype's
  other fallbacks (backend_fallbacks.py): the call runs below the key with
  each ZeroTensor argument materialized as zeros, a view operator runs as
  it is, and writing to a ZeroTensor is refused.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import DispatchKey, DispatchKeySet, Library, OperatorHandle

from .dtypes import DType, default_float, optional_dtype, result_type, to_numpy_dtype
from .inplace_or_view import aliases_without_writes
from .operators import aten
from .shapes import broadcast_shapes
from .tensor import Tensor, TensorMethods, key_set_for_device, tensor_device, tensor_operand
from .tensor_options import check_options

__all__ = ["zero_tensor_fallback"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")
_zero_tensor = Library("aten", "IMPL", "ZeroTensor")

_ZERO_TENSOR = DispatchKeySet(DispatchKey.ZeroTensor)
_BELOW_ZERO_TENSOR = DispatchKeySet.full_after(DispatchKey.ZeroTensor)


def _zero_tensor_of(size: Sequence[int], dtype: DType, device: Any) -> Tensor:
    shape = tuple(size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    where = tensor_device(device)
    data = None if where.type == "meta" else np.broadcast_to(np.zeros((), dtype=to_numpy_dtype(dtype)), shape)
    out = Tensor(data, shape, dtype, where)
    out.key_set = key_set_for_device(where) | _ZERO_TENSOR
    return out


def _efficientzerotensor(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None,
                         device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    check_options(pin_memory)
    return _zero_tensor_of(size, optional_dtype(dtype) or default_float, "cpu" if device is None else device)


def _efficientzerotensor_meta(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None,
                              device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    check_options(pin_memory)
    return _zero_tensor_of(size, optional_dtype(dtype) or default_float, "meta")


def _is_zerotensor(self: Any) -> bool:
    return bool(self.key_set.has(DispatchKey.ZeroTensor))


def _mul_zerotensor(self: Any, other: Any) -> Tensor:
    a, b = tensor_operand(self), tensor_operand(other)
    shape = broadcast_shapes(a.shape, b.shape)
    # torch's correct_out_device: a CPU 0-d operand follows the other's device.
    device = a.device if a.device.type != "cpu" or not a.shape else b.device
    return _zero_tensor_of(shape, result_type(a, b), device)


_cpu.impl("_efficientzerotensor", _efficientzerotensor)
_meta.impl("_efficientzerotensor", _efficientzerotensor_meta)
_implicit.impl("_is_zerotensor", _is_zerotensor)
_zero_tensor.impl("mul.Tensor", _mul_zerotensor)


# -- the fallback (registered by install(): backend_fallbacks.py) ---------------------------
_IMMUTABLE = ("ZeroTensors are immutable. Please use the materialized zero tensor obtained using .clone() if you want "
              "a mutable tensor.")


def _materialized(value: Any, mutable: bool) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_materialized(v, mutable) for v in value)
    if isinstance(value, Tensor) and value.key_set.has(DispatchKey.ZeroTensor):
        if mutable:
            raise RuntimeError(_IMMUTABLE)
        return aten.expand.default(aten.zeros.default([], dtype=value.dtype, device=value.device), list(value.shape))
    return value


def zero_tensor_fallback(keyset: DispatchKeySet, op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
    """torch's zeroTensorFallback, in torch's Python fallback convention (with the keyset)."""
    schema = op._schema
    arguments = schema.arguments
    below = keyset & _BELOW_ZERO_TENSOR
    if aliases_without_writes(schema):
        # A view: it runs as it is (torch trusts views to carry the key along).
        return op.redispatch(below, *args, **kwargs)
    values = schema.bind(args, kwargs)
    values = tuple(_materialized(v, a.type.alias is not None and a.type.alias.is_write) for a, v in zip(arguments, values))
    call_args, call_kwargs = schema.split_call(values)
    return op.redispatch(below, *call_args, **call_kwargs)


def _is_zerotensor_method(self: Any) -> bool:
    return bool(aten._is_zerotensor.default(self))


TensorMethods._is_zerotensor = _is_zerotensor_method  # type: ignore[attr-defined]


def efficientzerotensor(*size: Any, dtype: Optional[DType] = None, device: Optional[str] = None) -> Any:
    """torch._efficientzerotensor: ``_efficientzerotensor(2, 3)`` or ``((2, 3))``."""
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else list(size)
    return aten._efficientzerotensor.default(shape, dtype=optional_dtype(dtype), device=device)
