"""Meta kernels: the shape and dtype of every result, and no data.

A meta tensor costs nothing however large, so a model can be checked
(shapes, dtypes, errors) before any memory is spent.  PyTorch's meta tensors
also track strides; these do not, so they count as contiguous.  The
operators with composite kernels (composite.py) need no Meta kernel: their
composite runs on meta tensors too.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from dispatcher import Library

from . import shapes
from .dtypes import DType, default_float, float_result_type, optional_dtype, reduction_dtype, result_type
from .tensor import Tensor, tensor_operand
from .tensor_options import check_options

__all__ = ["meta_tensor"]

_library = Library("aten", "IMPL", "Meta")


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
    self, other = tensor_operand(self), tensor_operand(other)  # Note [Numbers where an operator takes a tensor]
    return meta_tensor(shapes.broadcast_shapes(self.shape, other.shape), result_type(self, other))


@_kernel("sub.Tensor")
def sub(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    self, other = tensor_operand(self), tensor_operand(other)  # Note [Numbers where an operator takes a tensor]
    shape = shapes.broadcast_shapes(self.shape, other.shape)
    shapes.check_sub_operands(self, other)
    return meta_tensor(shape, result_type(self, other))


@_kernel("div.Tensor")
def div(self: Tensor, other: Tensor) -> Tensor:
    self, other = tensor_operand(self), tensor_operand(other)  # Note [Numbers where an operator takes a tensor]
    return meta_tensor(shapes.broadcast_shapes(self.shape, other.shape), float_result_type(self, other))


@_kernel("set_.source_Tensor")
def set_(self: Tensor, source: Tensor) -> Tensor:
    shapes.check_set_source(self, source)
    self.shape, self._strides = source.shape, source._strides
    return self


@_kernel("sgn")
def sgn(self: Tensor) -> Tensor:
    return meta_tensor(self.shape, self.dtype)


@_kernel("neg")
def neg(self: Tensor) -> Tensor:
    shapes.check_neg_input(self)
    return meta_tensor(self.shape, self.dtype)


@_kernel("relu")
def relu(self: Tensor) -> Tensor:
    shapes.check_relu_input(self)
    return meta_tensor(self.shape, self.dtype)


@_kernel("threshold_backward")
def threshold_backward(grad_output: Tensor, self: Tensor, threshold: float) -> Tensor:
    return meta_tensor(shapes.broadcast_shapes(grad_output.shape, self.shape), result_type(grad_output, self))


@_kernel("exp", "log", "reciprocal", "sin", "cos", "acos", "rsqrt")
def float_unary(self: Tensor) -> Tensor:
    return meta_tensor(self.shape, float_result_type(self))


@_kernel("gt.Scalar", "ne.Scalar")
def compare_scalar(self: Tensor, other: float) -> Tensor:
    return meta_tensor(self.shape, DType.bool)


@_kernel("ne.Tensor")
def compare_tensor(self: Tensor, other: Tensor) -> Tensor:
    return meta_tensor(shapes.broadcast_shapes(self.shape, other.shape), DType.bool)


@_kernel("any")
def any_(self: Tensor) -> Tensor:
    return meta_tensor((), DType.bool)


@_kernel("sum.dim_IntList")
def sum_dim(self: Tensor, dim: Optional[Sequence[int]], keepdim: bool = False, *,
            dtype: Optional[DType] = None) -> Tensor:
    return meta_tensor(shapes.reduce_shape(self.shape, dim, keepdim), reduction_dtype(self.dtype, dtype))


@_kernel("mm")
def mm(self: Tensor, mat2: Tensor) -> Tensor:
    return meta_tensor(shapes.mm_shape(self, mat2), self.dtype)


@_kernel("bmm")
def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    return meta_tensor(shapes.bmm_shape(self, mat2), self.dtype)


@_kernel("mv")
def mv(self: Tensor, vec: Tensor) -> Tensor:
    return meta_tensor(shapes.mv_shape(self, vec), self.dtype)


@_kernel("addmv")
def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    shape = shapes.mv_shape(mat, vec)
    shapes.broadcast_shapes(self.shape, shape)
    return meta_tensor(shape, mat.dtype)


@_kernel("abs.out")
def abs_out(self: Tensor, *, out: Tensor) -> Tensor:
    out.shape = tuple(self.shape)  # torch resizes an out= tensor to the result
    return out


@_kernel("_foobar")
def foobar(self: Tensor, arg1: bool = True, arg2: bool = True, *, arg3: bool = True) -> Tensor:
    return meta_tensor(self.shape, self.dtype)


@_kernel("_local_scalar_dense")
def local_scalar_dense(self: Tensor) -> Any:
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


@_kernel("pow.Tensor_Scalar")
def pow_tensor_scalar(self: Tensor, exponent: float) -> Tensor:
    return meta_tensor(self.shape, result_type(self, exponent))


@_kernel("dot")
def dot(self: Tensor, tensor: Tensor) -> Tensor:
    return meta_tensor(shapes.dot_shape(self, tensor), self.dtype)


@_kernel("permute")
def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    return meta_tensor(shapes.permute_shape(self.shape, dims), self.dtype)


@_kernel("sin_")
def sin_(self: Tensor) -> Tensor:
    dt = float_result_type(self)
    if dt is not self.dtype:
        shapes.check_inplace(self.shape, self.dtype, self.shape, dt)
    return self


@_kernel("view")
def view(self: Tensor, size: Sequence[int]) -> Tensor:
    return meta_tensor(shapes.view_shape(self.shape, size), self.dtype)


@_kernel("expand")
def expand(self: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
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
    self, other = tensor_operand(self), tensor_operand(other)  # Note [Numbers where an operator takes a tensor]
    shapes.check_inplace(self.shape, self.dtype, other.shape, result_type(self, other))
    return self


@_kernel("fill_.Scalar", "normal_")
def fill_(self: Tensor, *args: object, **kwargs: object) -> Tensor:
    return self


@_kernel("empty.memory_format")
def empty(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
          pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    check_options(pin_memory, memory_format)
    return meta_tensor(size, optional_dtype(dtype) or default_float)
