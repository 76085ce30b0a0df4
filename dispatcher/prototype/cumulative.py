"""``cumprod``, as torch 2.13 has it: CPU and Meta kernels.

The result's dtype is torch's: the ``dtype`` asked for (the input is cast to
it first), else int64 for an integer or bool input, else the input's.  Its
derivative is torch's formula, ``cumprod_backward(grad.to(self.dtype), self,
dim, result)`` (CumprodBackward0).  torch's cumprod_backward is a
composition of operators (flip, cumsum, masks for the zeros) the prototype
does not have; here it has CPU and Meta kernels instead, computing the
exact gradient, zeros in the input included, in one pass along ``dim``.
Being no composition, it has no derivative of its own: a second
derivative through it raises NotImplementedError saying so.

``Tensor.cumprod(dim, dtype=None)`` calls it.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from dispatcher import Library

from .autograd import Context, differentiable
from .dtypes import DType, optional_dtype, to_numpy_dtype
from .index_put import no_derivative_autograd_kernel
from .meta import meta_tensor
from .operators import aten
from .shapes import wrap_dim
from .tensor import Tensor, TensorMethods, convert, cpu_tensor

__all__ = ["cumulative_dtype"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_autograd = Library("aten", "IMPL", "Autograd")


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


def _cumprod_backward_cpu(grad: Tensor, input: Tensor, dim: int, output: Tensor) -> Tensor:
    """d(sum(grad * cumprod(input)))/d(input).  Along ``dim``, element i's is
    (the product of the elements before i) * S_i, where S_i = grad_i + x_{i+1} * S_{i+1}
    (the sum over k >= i of grad_k times the product of x_{i+1} .. x_k): no
    division, so exact where the input has zeros."""
    if input.ndim == 0:
        return cpu_tensor(grad._data.astype(to_numpy_dtype(input.dtype)), input.dtype)
    dim = wrap_dim(dim, input.ndim)
    x = np.moveaxis(input._data.astype(np.float64), dim, 0)
    g = np.moveaxis(np.broadcast_to(grad._data, input.shape).astype(np.float64), dim, 0)
    n = x.shape[0]
    sums = np.empty_like(g)
    if n:
        sums[n - 1] = g[n - 1]
    for i in range(n - 2, -1, -1):
        sums[i] = g[i] + x[i + 1] * sums[i + 1]
    before = np.ones_like(x)
    if n > 1:
        before[1:] = np.cumprod(x[:-1], axis=0)
    result = np.moveaxis(before * sums, 0, dim)
    return cpu_tensor(np.ascontiguousarray(result, dtype=to_numpy_dtype(input.dtype)), input.dtype)


def _cumprod_backward_meta(grad: Tensor, input: Tensor, dim: int, output: Tensor) -> Tensor:
    wrap_dim(dim, input.ndim)
    return meta_tensor(input.shape, input.dtype)


_cpu.impl("cumprod", _cumprod_cpu)
_meta.impl("cumprod", _cumprod_meta)
_cpu.impl("cumprod_backward", _cumprod_backward_cpu)
_meta.impl("cumprod_backward", _cumprod_backward_meta)
_autograd.impl("cumprod_backward", no_derivative_autograd_kernel("cumprod_backward"), with_keyset=True)


@differentiable("cumprod", saves=("self", "result"))
def _cumprod_derivative(ctx: Context, grad: Tensor) -> tuple:
    if grad.dtype is not ctx.self.dtype:
        grad = convert(grad, dtype=ctx.self.dtype)
    return (aten.cumprod_backward.default(grad, ctx.self, ctx.dim, ctx.result),)


def _cumprod_method(self: Any, dim: int, *, dtype: Optional[DType] = None) -> Any:
    return aten.cumprod.default(self, dim, dtype=optional_dtype(dtype))


TensorMethods.cumprod = _cumprod_method  # type: ignore[attr-defined]
