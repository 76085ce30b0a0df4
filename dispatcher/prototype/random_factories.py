"""Uniform random tensors and random permutations: ``rand`` and ``randperm``, as torch 2.13 has them.

The kernels sit where torch's do: ``rand`` and ``randperm`` are
CompositeExplicitAutograd ("allocate, then fill": ``uniform_`` on an
``empty``, ``randperm.generator_out`` into an ``empty``); ``uniform_`` and
``randperm.generator_out`` have CPU and Meta kernels, and ``uniform_`` the
ADInplaceOrView bookkeeping and a derivative (no gradient flows to the
values it overwrites).  The checks and their texts are torch's.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import Library

from .autograd import Context, differentiable
from .bfloat16_rounding import round_in_place
from .dtypes import BAREBONES_UNSIGNED, DType, default_float, optional_dtype, to_numpy_dtype
from .inference_mode import check_inference_write
from .generator import default_generator
from .inplace_or_view import written_version_kernel
from .operators import aten, overload
from .tensor import Tensor

__all__ = ["rand", "randperm"]

_UNIFORM = overload("uniform_").schema
_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")

# How torch's check_uniform_bounds names each floating dtype.
_FLOAT_NAMES = {DType.float16: "c10::Half", DType.float32: "float", DType.float64: "double",
                DType.bfloat16: "c10::BFloat16"}
# bfloat16's largest finite value (its array is float32's, whose largest is larger).
_BFLOAT16_MAX = (2 - 2 ** -7) * 2.0 ** 127
# torch's randperm: n must fit the dtype's exactly representable integers (check_supported_max_int_with_precision).
_MAX_PERMUTATION = {DType.float16: 2049, DType.float32: 2 ** 24 + 1, DType.float64: 2 ** 53 + 1}


def _check_uniform_bounds(self: Tensor, low: float, high: float) -> None:
    """torch's uniform_ checks (aten/src/ATen/native/DistributionTemplates.h)."""
    value_type = DType.float32 if self.dtype.is_complex else self.dtype  # a complex dtype's parts
    name = _FLOAT_NAMES.get(value_type)
    if name is None:
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for \'{self.dtype.scalar_type_name}\'')
    limit = _BFLOAT16_MAX if value_type is DType.bfloat16 else float(np.finfo(to_numpy_dtype(value_type)).max)
    if not -limit <= low <= limit:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not -limit <= high <= limit:
        raise RuntimeError(f"to is out of bounds for {name}")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low:g} > to={high:g}")


def _uniform_arguments(self: Tensor, args: tuple, kwargs: dict) -> tuple[float, float, Optional[np.random.Generator]]:
    """uniform_'s ``from``, ``to`` and ``generator``, however passed (``from`` is a
    Python keyword: a kernel cannot name it as a parameter)."""
    _, low, high, generator = _UNIFORM.bind((self, *args), kwargs)
    _check_uniform_bounds(self, low, high)
    return low, high, generator


def _uniform_cpu(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    low, high, generator = _uniform_arguments(self, args, kwargs)
    rng = generator if generator is not None else default_generator()
    values = rng.uniform(low, high, self.shape)
    if self.dtype.is_complex:  # torch draws the real and the imaginary parts each from [from, to)
        values = values + 1j * rng.uniform(low, high, self.shape)
    if not self._data.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    check_inference_write(self)
    self._data[...] = values
    if self.dtype is DType.bfloat16:
        round_in_place(self._data)
    return self


def _uniform_meta(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    _uniform_arguments(self, args, kwargs)
    return self


def _empty(size: Sequence[int], dtype: Optional[DType], layout: Any, device: Any, pin_memory: Any) -> Tensor:
    return aten.empty.memory_format(list(size), dtype=optional_dtype(dtype) or default_float, layout=layout,
                                    device=device, pin_memory=pin_memory)


def _rand(size: Sequence[int], *, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = None,
          layout: Any = None, device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    return aten.uniform_.default(_empty(size, dtype, layout, device, pin_memory), 0, 1, generator=generator)


def _check_permutation(n: int, out: Tensor) -> None:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if out.dtype is DType.bool or out.dtype in BAREBONES_UNSIGNED:
        raise NotImplementedError(f"\"randperm\" not implemented for '{out.dtype.scalar_type_name}'")
    if out.dtype in (DType.uint8, DType.int8) and n > 0 and n - 1 > np.iinfo(to_numpy_dtype(out.dtype)).max:
        raise RuntimeError(f"value cannot be converted to type {out.dtype.name}_t without overflow")
    limit = _MAX_PERMUTATION.get(out.dtype)
    if limit is not None and n > limit:
        raise RuntimeError(f"n cannot be greater than {limit} for {out.dtype.scalar_type_name} type.")


def _resized(out: Tensor, n: int) -> np.ndarray:
    """out's memory as a vector of n elements: torch's out= kernels resize a tensor of another size."""
    if out.shape != (n,):
        out._data = np.empty((n,), dtype=to_numpy_dtype(out.dtype))
        out.shape = (n,)
    return out._data


def _randperm_out_cpu(n: int, *, generator: Optional[np.random.Generator] = None, out: Tensor) -> Tensor:
    _check_permutation(n, out)
    rng = generator if generator is not None else default_generator()
    check_inference_write(out)
    _resized(out, n)[...] = rng.permutation(n)
    if out.dtype is DType.bfloat16:
        round_in_place(out._data)
    return out


def _randperm_out_meta(n: int, *, generator: Optional[np.random.Generator] = None, out: Tensor) -> Tensor:
    _check_permutation(n, out)
    out.shape = (n,)
    return out


def _randperm(n: int, *, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = DType.int64,
              layout: Any = None, device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    if n < 0:  # at::empty({n}) refuses it first
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    out = aten.empty.memory_format([n], dtype=optional_dtype(dtype) or DType.int64, layout=layout, device=device,
                                   pin_memory=pin_memory)
    return aten.randperm.generator_out(n, generator=generator, out=out)


def _randperm_out(n: int, *, out: Tensor) -> Tensor:
    return aten.randperm.generator_out(n, generator=None, out=out)


_cpu.impl("uniform_", _uniform_cpu)
_meta.impl("uniform_", _uniform_meta)
_inplace_or_view.impl("uniform_", written_version_kernel(overload("uniform_")), with_keyset=True)
_explicit.impl("rand", _rand)
_explicit.impl("rand.generator", _rand)
_cpu.impl("randperm.generator_out", _randperm_out_cpu)
_meta.impl("randperm.generator_out", _randperm_out_meta)
_inplace_or_view.impl("randperm.generator_out", written_version_kernel(overload("randperm.generator_out")),
                      with_keyset=True)
_explicit.impl("randperm", _randperm)
_explicit.impl("randperm.generator", _randperm)
_explicit.impl("randperm.out", _randperm_out)
_inplace_or_view.impl("randperm.out", written_version_kernel(overload("randperm.out")), with_keyset=True)


@differentiable("uniform_")
def _uniform_derivative(ctx: Context, grad: Tensor) -> tuple:
    return (None,)  # the values it overwrote get no gradient


def _finish(out: Tensor, requires_grad: bool) -> Tensor:
    return out.requires_grad_() if requires_grad else out


def rand(*size: Any, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = None,
         device: Optional[str] = None, requires_grad: bool = False) -> Tensor:
    """torch.rand: values drawn uniformly from [0, 1); ``rand(2, 3)`` or ``rand((2, 3))``."""
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else list(size)
    if generator is None:
        out = aten.rand.default(shape, dtype=optional_dtype(dtype), device=device)
    else:
        out = aten.rand.generator(shape, generator=generator, dtype=optional_dtype(dtype), device=device)
    return _finish(out, requires_grad)


def randperm(n: int, *, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = DType.int64,
             device: Optional[str] = None, requires_grad: bool = False) -> Tensor:
    """torch.randperm: a random permutation of 0 .. n-1 (int64 unless ``dtype`` says otherwise)."""
    if generator is None:
        out = aten.randperm.default(n, dtype=optional_dtype(dtype), device=device)
    else:
        out = aten.randperm.generator(n, generator=generator, dtype=optional_dtype(dtype), device=device)
    return _finish(out, requires_grad)
