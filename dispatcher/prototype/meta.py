"""Meta kernels: the shape and dtype of every result, and no data.

A meta tensor costs nothing however large, so a model can be checked
(shapes, dtypes, errors) before any memory is spent.  PyTorch's meta tensors
also track strides; these do not, so they count as contiguous.
"""
from __future__ import annotations

from typing import Optional, Sequence

from dispatcher import Library

from . import shapes
from .dtypes import DType, default_float, float_result_type, reduction_dtype, result_type
from .tensor import Tensor

__all__ = ["meta_tensor"]

_library = Library("proto", "IMPL", "Meta")


def meta_tensor(shape: Sequence[int], dtype: DType) -> Tensor:
    return Tensor(None, shape, dtype, "meta")


def _kernel(*names: str):
    def register(fn):
        for name in names:
            _library.impl(name, fn)
        return fn

    return register


@_kernel("add.Tensor", "mul.Tensor")
def binary(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    return meta_tensor(shapes.broadcast_shapes(self.shape, other.shape), result_type(self, other))


@_kernel("add.Scalar", "mul.Scalar")
def binary_scalar(self: Tensor, other: float, alpha: float = 1) -> Tensor:
    return meta_tensor(self.shape, result_type(self, other))


@_kernel("div.Tensor")
def div(self: Tensor, other: Tensor) -> Tensor:
    return meta_tensor(shapes.broadcast_shapes(self.shape, other.shape), float_result_type(self, other))


@_kernel("neg")
def neg(self: Tensor) -> Tensor:
    if self.dtype == DType.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported.")
    return meta_tensor(self.shape, self.dtype)


@_kernel("exp", "log")
def float_unary(self: Tensor) -> Tensor:
    return meta_tensor(self.shape, float_result_type(self))


@_kernel("gt.Scalar")
def gt(self: Tensor, other: float) -> Tensor:
    return meta_tensor(self.shape, DType.bool)


@_kernel("sum")
def sum_(self: Tensor, *, dtype: Optional[DType] = None) -> Tensor:
    return meta_tensor((), reduction_dtype(self.dtype, dtype))


@_kernel("sum.dim_IntList")
def sum_dim(self: Tensor, dim: Optional[Sequence[int]], keepdim: bool = False, *,
            dtype: Optional[DType] = None) -> Tensor:
    return meta_tensor(shapes.reduce_shape(self.shape, dim, keepdim), reduction_dtype(self.dtype, dtype))


@_kernel("matmul")
def matmul(self: Tensor, other: Tensor) -> Tensor:
    return meta_tensor(shapes.matmul_shape(self.shape, other.shape), result_type(self, other))


@_kernel("permute")
def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    return meta_tensor(shapes.permute_shape(self.shape, dims), self.dtype)


@_kernel("view")
def view(self: Tensor, size: Sequence[int]) -> Tensor:
    return meta_tensor(shapes.view_shape(self.shape, size), self.dtype)


@_kernel("expand")
def expand(self: Tensor, size: Sequence[int]) -> Tensor:
    return meta_tensor(shapes.expand_shape(self.shape, size), self.dtype)


@_kernel("select.int")
def select(self: Tensor, dim: int, index: int) -> Tensor:
    return meta_tensor(shapes.select_shape(self.shape, dim, index)[0], self.dtype)


@_kernel("select_backward")
def select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    shapes.select_shape(input_sizes, dim, index)
    return meta_tensor(input_sizes, grad_output.dtype)


@_kernel("stack")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return meta_tensor(shapes.stack_shape([t.shape for t in tensors], dim)[0], result_type(*tensors))


@_kernel("add_.Tensor")
def add_(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    shapes.check_inplace(self.shape, self.dtype, other.shape, result_type(self, other))
    return self


@_kernel("fill_.Scalar", "normal_")
def fill_(self: Tensor, *args: object, **kwargs: object) -> Tensor:
    return self


@_kernel("copy_")
def copy_(self: Tensor, src: Tensor) -> Tensor:
    # Meta is the highest backend, so copies from any device to meta come here too.
    if self.device != "meta":
        raise RuntimeError("Cannot copy out of meta tensor; no data!")
    shapes.expand_shape(src.shape, self.shape)
    return self


@_kernel("clone")
def clone(self: Tensor) -> Tensor:
    return meta_tensor(self.shape, self.dtype)


@_kernel("empty")
def empty(size: Sequence[int], *, dtype: Optional[DType] = None, device: Optional[str] = None) -> Tensor:
    return meta_tensor(size, dtype or default_float)
