"""Composite kernels: operators written in terms of other operators.

CompositeImplicitAutograd kernels (``DECOMPOSITIONS``) serve every backend
*and* autograd: autograd differentiates the operators they call, so they
need no derivative of their own.  vmap reuses them as batching
decompositions.  CompositeExplicitAutograd kernels serve every backend but
not autograd (which has its own formula, or nothing to do, for them): the
factories are "allocate, then fill", so a new device needs only ``empty``
and ``copy_`` to get them all.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from dispatcher import Library

from .dtypes import DType, default_float, float_result_type, optional_dtype, result_type
from .operators import OP
from .shapes import wrap_dim
from .tensor import Tensor, normalize_device

__all__ = ["DECOMPOSITIONS"]

_implicit = Library("proto", "IMPL", "CompositeImplicitAutograd")
_explicit = Library("proto", "IMPL", "CompositeExplicitAutograd")

# Operator name -> its CompositeImplicitAutograd kernel.
DECOMPOSITIONS: dict[str, Callable] = {}


def _decomposition(name: str):
    def register(fn: Callable) -> Callable:
        _implicit.impl(name, fn)
        DECOMPOSITIONS[name] = fn
        return fn

    return register


def _explicit_kernel(name: str):
    def register(fn: Callable) -> Callable:
        _explicit.impl(name, fn)
        return fn

    return register


# -- CompositeImplicitAutograd ------------------------------------------------------------
@_decomposition("sub.Tensor")
def sub(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    return OP["add.Tensor"](self, other, alpha=-alpha)


@_decomposition("sub.Scalar")
def sub_scalar(self: Tensor, other: float, alpha: float = 1) -> Tensor:
    return OP["add.Scalar"](self, other, -alpha)


@_decomposition("div.Scalar")
def div_scalar(self: Tensor, other: float) -> Tensor:
    # A true division by the scalar as a 0-d tensor of the result dtype, as
    # PyTorch divides: multiplying by 1.0 / other is an ulp off (5 / 3) and
    # raises ZeroDivisionError for 0 where PyTorch gives inf and nan.
    divisor = OP["full"]([], other, dtype=float_result_type(self, other), device=self.device)
    return OP["div.Tensor"](self, divisor)


@_decomposition("relu")
def relu(self: Tensor) -> Tensor:
    return OP["mul.Tensor"](self, OP["gt.Scalar"](self, 0))


@_decomposition("mean")
def mean(self: Tensor, *, dtype: Optional[DType] = None) -> Tensor:
    dtype = optional_dtype(dtype)
    if not (dtype or self.dtype).is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
            f"dtype. Got: {self.dtype.name}"
        )
    return OP["div.Scalar"](OP["sum"](self, dtype=dtype), self.numel())


@_decomposition("t")
def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return OP["permute"](self, list(reversed(range(self.ndim))))


@_decomposition("transpose.int")
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    dims = list(range(self.ndim))
    dim0, dim1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
    dims[dim0], dims[dim1] = dim1, dim0
    return OP["permute"](self, dims)


@_decomposition("reshape")
def reshape(self: Tensor, shape: Sequence[int]) -> Tensor:
    # A view when the memory allows it, else a copy: PyTorch's rule, with
    # "contiguous" standing in for its exact stride check.
    return OP["view"](self if self.is_contiguous() else OP["clone"](self), shape)


@_decomposition("to")
def to(self: Tensor, *, dtype: Optional[DType] = None, device: Optional[str] = None,
       copy: bool = False) -> Tensor:
    dtype = optional_dtype(dtype)
    same_dtype = dtype is None or dtype == self.dtype
    same_device = device is None or normalize_device(device) == self.device
    if same_dtype and same_device and not copy:
        return self
    return OP["_to_copy"](self, dtype=dtype, device=device)


# -- CompositeExplicitAutograd ------------------------------------------------------------
@_explicit_kernel("_to_copy")
def to_copy(self: Tensor, *, dtype: Optional[DType] = None, device: Optional[str] = None) -> Tensor:
    out = OP["empty"](list(self.shape), dtype=dtype or self.dtype, device=device or self.device)
    return OP["copy_"](out, self)


@_explicit_kernel("full")
def full(size: Sequence[int], fill_value: float, *, dtype: Optional[DType] = None,
         device: Optional[str] = None) -> Tensor:
    # As torch.full: without a dtype, the fill value's type decides.
    out = OP["empty"](size, dtype=dtype or result_type(fill_value), device=device)
    return OP["fill_.Scalar"](out, fill_value)


@_explicit_kernel("zeros")
def zeros(size: Sequence[int], *, dtype: Optional[DType] = None, device: Optional[str] = None) -> Tensor:
    return OP["fill_.Scalar"](OP["empty"](size, dtype=dtype or default_float, device=device), 0)


@_explicit_kernel("ones")
def ones(size: Sequence[int], *, dtype: Optional[DType] = None, device: Optional[str] = None) -> Tensor:
    return OP["fill_.Scalar"](OP["empty"](size, dtype=dtype or default_float, device=device), 1)


@_explicit_kernel("randn")
def randn(size: Sequence[int], *, generator: Optional[np.random.Generator] = None,
          dtype: Optional[DType] = None, device: Optional[str] = None) -> Tensor:
    return OP["normal_"](OP["empty"](size, dtype=dtype or default_float, device=device), generator=generator)
