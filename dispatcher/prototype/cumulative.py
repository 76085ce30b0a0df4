"""``cumprod``, as torch 2.13 has it: CPU and Meta kernels.

The result's dtype is torch's: the ``dtype`` asked for (the input is cast to
it first), else int64 for an integer or bool input, else the input's.  Its
derivative is torch's formula, ``cumprod_backward(grad.to(self.dtype), self,
dim, result)`` (CumprodBackward0), whose CompositeImplicitAutograd kernel,
as torch's, is made of operators, so differentiable again.  torch's uses
flip, cumsum and masks for the zeros, which the prototype does not have;
this one computes the same gradient with slices, products and cat.

``Tensor.cumprod(dim, dtype=None)`` calls it.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from dispatcher import Library

from .autograd import Context, differentiable
from .dtypes import DType, optional_dtype, to_numpy_dtype
from .meta import meta_tensor
from .operators import aten
from .shapes import wrap_dim
from .tensor import Tensor, TensorMethods, convert, cpu_tensor

__all__ = ["cumulative_dtype"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")


def cumulative_dtype(self: Any, dtype: Optional[DType]) -> DType:
    """The dtype of cumprod's (and cumsum's) result."""
    given = optional_dtype(dtype)
    if given is not None:
        return given
    return self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else DType.int64


def _cumprod_cpu(self: Tensor, dim: int, *, dtype: Optional[DType] = None) -> Tensor:
    dim = wrap_dim(dim, self.ndim)
    dt = cumulative_dtype(self, dtype)
    values = self._data.astype(to_numpy_dtype(dt), copy=False)
    if self.ndim == 0:
        return cpu_tensor(values.copy(), dt)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and nan, silently, as torch
        return cpu_tensor(np.cumprod(values, axis=dim, dtype=to_numpy_dtype(dt)), dt)


def _cumprod_meta(self: Tensor, dim: int, *, dtype: Optional[DType] = None) -> Tensor:
    wrap_dim(dim, self.ndim)
    return meta_tensor(self.shape, cumulative_dtype(self, dtype))


def _cumprod_backward(grad: Any, input: Any, dim: int, output: Any) -> Any:
    """d(sum(grad * cumprod(input)))/d(input), from operators (torch's is
    CompositeImplicitAutograd too, so differentiable again).  Along ``dim``,
    element i's is (the product of the elements before i) * S_i, where
    S_i = grad_i + x_{i+1} * S_{i+1} (the sum over k >= i of grad_k times the
    product of x_{i+1} .. x_k): no division, so exact where the input has
    zeros; one slice, multiply and add per position along ``dim``."""
    if input.numel() <= 1:
        return grad
    dim = wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    if n == 1:
        return grad

    def at(t: Any, i: int) -> Any:
        return aten.slice.Tensor(t, dim, i, i + 1)

    sums = [at(grad, n - 1)]
    for i in range(n - 2, -1, -1):
        sums.append(aten.add.Tensor(at(grad, i), aten.mul.Tensor(at(input, i + 1), sums[-1])))
    sums.reverse()
    first = list(input.shape)
    first[dim] = 1
    shifted = aten.cat.default([aten.new_ones.default(input, first), aten.slice.Tensor(input, dim, 0, n - 1)], dim)
    return aten.mul.Tensor(aten.cumprod.default(shifted, dim), aten.cat.default(sums, dim))


_cpu.impl("cumprod", _cumprod_cpu)
_meta.impl("cumprod", _cumprod_meta)
_implicit.impl("cumprod_backward", _cumprod_backward)


@differentiable("cumprod", saves=("self", "result"))
def _cumprod_derivative(ctx: Context, grad: Tensor) -> tuple:
    if grad.dtype is not ctx.self.dtype:
        grad = convert(grad, dtype=ctx.self.dtype)
    return (aten.cumprod_backward.default(grad, ctx.self, ctx.dim, ctx.result),)


def _cumprod_method(self: Any, dim: int, *, dtype: Optional[DType] = None) -> Any:
    return aten.cumprod.default(self, dim, dtype=optional_dtype(dtype))


TensorMethods.cumprod = _cumprod_method  # type: ignore[attr-defined]
