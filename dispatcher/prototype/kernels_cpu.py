"""CPU kernels: numpy does the arithmetic.

These are the aten operators torch gives CPU kernels (pointwise ops,
reductions, products, ``view``, in-place fills, ``empty``), and the views
torch writes once for every strided backend, which the prototype can only
write for numpy memory (see composite.py).

Each kernel checks its inputs with the shape functions the Meta kernels use
(so both backends accept and refuse the same calls), computes with numpy,
and casts to the dtype PyTorch's promotion gives, which numpy's own rules
do not always match (int64 + float32 is float32 here, float64 in numpy).
As PyTorch's TensorIterator does, the inputs are cast to that dtype first and
the arithmetic runs in it: numpy left alone would compute exp of a bool in
float16 and int64 + float32 in float64, and round the result a second time.
Transcendental functions (exp, log) then run in float64 and are rounded once
to the result dtype: numpy's float32 exp is an ulp or more off (exp(1) gives
2.7182820), PyTorch's is not (2.7182817, the float32 nearest e).
"""
from __future__ import annotations

import cmath
from typing import Any, Callable, Optional, Sequence

import numpy as np

from dispatcher import Library

from . import shapes
from .dtypes import (
    NUMPY_DTYPES as _NUMPY, DType, can_cast, default_float, float_result_type, optional_dtype, reduction_dtype, result_type,
    to_numpy_dtype,
)
from .bfloat16_rounding import round_in_place
from .generator import default_generator
from .inference_mode import INFERENCE_VERSION_COUNTER, check_inference_write_allowed
from .tensor import Tensor, contiguous_strides, cpu_tensor, tensor_operand
from .tensor_options import check_options

__all__ = ["copy_between_cpu_tensors"]

_library = Library("aten", "IMPL", "CPU")


def _kernel(name: str):
    def register(fn):
        _library.impl(name, fn)
        return fn

    return register


_INT64, _FLOAT64 = _NUMPY[DType.int64], _NUMPY[DType.float64]  # a Python number's wrapped-number dtypes


def _wrap(array: object, dt: DType) -> Tensor:
    """The tensor of a kernel's result: ``array`` (an ndarray, or a numpy scalar
    of a reduction) as an array of ``dt``."""
    if type(array) is not np.ndarray or array.dtype is not _NUMPY[dt]:  # numpy's dtypes are singletons
        array = np.asarray(array, dtype=to_numpy_dtype(dt))
    return cpu_tensor(array, dt)


def _written(t: Tensor) -> None:
    """After an in-place kernel wrote ``t``'s values: a bfloat16 tensor's are rounded
    to bfloat16 (computed in its float32 array, as torch computes them in float32)."""
    if t.dtype is DType.bfloat16:
        round_in_place(t._data)


def _operand(t: Tensor, dt: DType) -> np.ndarray:
    """``t``'s values in the dtype the computation runs in (no copy if they already are)."""
    return t._data if t.dtype is dt else t._data.astype(_NUMPY[dt], copy=False)


def _binary(self: Any, other: Any, promote: Any = result_type,
            check: Optional[Callable[[Tensor, Tensor], None]] = None) -> tuple[np.ndarray, np.ndarray, DType]:
    """The operands of a binary pointwise kernel, checked to broadcast (and by
    ``check``, given both as tensors), in the dtype the computation runs in
    (``promote``'s), and that dtype.

    Either may be a Python number (Note [Numbers where an operator takes a
    tensor]), which takes part as the wrapped number torch makes of it.
    """
    if type(other) is not Tensor or type(self) is not Tensor:
        if type(self) is Tensor and (type(other) is float or type(other) is int):
            dt = self.dtype
            if dt.is_floating_point and not self._wrapped_number:
                # A floating tensor and a number (``x / n``, ``x * 0.5``): the number
                # only lifts the category, so the tensor's dtype is the result (any
                # ``promote``'s), and bool cannot be involved (``check`` refuses only
                # bools).  The number's values are those of its wrapped number, a
                # 0-d int64 or float64 array cast to ``dt``, made without a tensor.
                wrapped = np.array(other, _INT64 if type(other) is int else _FLOAT64)
                return self._data, wrapped.astype(_NUMPY[dt]), dt
        self, other = tensor_operand(self), tensor_operand(other)
    if self.shape != other.shape:
        shapes.broadcast_shapes(self.shape, other.shape)
    if check is not None:
        check(self, other)
    dt = self.dtype
    if other.dtype is not dt or self._wrapped_number or other._wrapped_number or promote is not result_type:
        dt = promote(self, other)
    a = self._data if self.dtype is dt else self._data.astype(_NUMPY[dt], copy=False)
    b = other._data if other.dtype is dt else other._data.astype(_NUMPY[dt], copy=False)
    return a, b, dt


def _writable(t: Tensor) -> np.ndarray:
    if t._version_counter is INFERENCE_VERSION_COUNTER:  # (inline: every in-place write asks)
        check_inference_write_allowed()
    if not t._data.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation."
        )
    return t._data


# -- pointwise --------------------------------------------------------------------------
@_kernel("add.Tensor")
def add(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    a, b, dt = _binary(self, other)
    return _wrap(a + (b if alpha == 1 else alpha * b), dt)


@_kernel("sub.Tensor")
def sub(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    a, b, dt = _binary(self, other, check=shapes.check_sub_operands)
    return _wrap(a - (b if alpha == 1 else alpha * b), dt)


@_kernel("mul.Tensor")
def mul(self: Tensor, other: Tensor) -> Tensor:
    a, b, dt = _binary(self, other)
    return _wrap(a * b, dt)


@_kernel("div.Tensor")
def div(self: Tensor, other: Tensor) -> Tensor:
    a, b, dt = _binary(self, other, float_result_type)
    if b.ndim == 0 and cmath.isfinite(divisor := b.item()) and divisor != 0:  # (cmath: complex divisors too)
        # A finite divisor other than 0 (mean's count, a wrapped number) raises
        # neither division by zero nor an invalid operation: no errstate needed.
        return _wrap(np.true_divide(a, b), dt)
    with np.errstate(divide="ignore", invalid="ignore"):  # inf and nan, silently, as PyTorch
        return _wrap(np.true_divide(a, b), dt)


@_kernel("neg")
def neg(self: Tensor) -> Tensor:
    shapes.check_neg_input(self)
    return _wrap(np.negative(self._data), self.dtype)


@_kernel("sgn")
def sgn(self: Tensor) -> Tensor:
    return _wrap(np.sign(self._data), self.dtype)


@_kernel("reciprocal")
def reciprocal(self: Tensor) -> Tensor:
    dt = float_result_type(self)
    with np.errstate(divide="ignore"):  # 1 / 0 is inf, as in PyTorch
        return _wrap(np.reciprocal(_operand(self, dt)), dt)


@_kernel("relu")
def relu(self: Tensor) -> Tensor:
    shapes.check_relu_input(self)
    return _wrap(np.maximum(self._data, 0), self.dtype)


@_kernel("threshold_backward")
def threshold_backward(grad_output: Tensor, self: Tensor, threshold: float) -> Tensor:
    """relu's gradient: ``grad_output`` where ``self`` is above ``threshold``, else 0
    (c10's ``self <= threshold ? 0 : grad``: a NaN ``self`` keeps its gradient)."""
    grad, values, dt = _binary(grad_output, self)
    zeroed = values <= threshold
    bits = _SAME_SIZE_INT.get(grad.dtype)
    if bits is None or zeroed.shape != grad.shape:
        return _wrap(np.where(zeroed, 0, grad), dt)
    # The gradient's bits ANDed with a mask of all ones where kept and zeros
    # where zeroed: where's values bit for bit (+0.0 where zeroed; a kept
    # -0.0, inf or NaN unchanged), in a third of np.where's time (16 against
    # 56-71 µs at 64 x 256 in the training step).  (Not ``grad * keep``: a
    # zeroed inf or NaN would give NaN, a zeroed negative -0.0.)
    mask = zeroed.view(np.int8).astype(bits)  # 1 where zeroed, 0 where kept
    mask -= 1  # 0 where zeroed, -1 (all ones) where kept
    return _wrap(np.bitwise_and(grad.view(bits), mask, out=mask).view(grad.dtype), dt)


# A floating dtype's integer of the same size, to mask its values' bits with.
_SAME_SIZE_INT = {np.dtype(f): np.dtype(i) for f, i in ((np.float16, np.int16), (np.float32, np.int32),
                                                        (np.float64, np.int64))}


def _float_unary(fn: Callable[[np.ndarray], Any], self: Tensor) -> Tensor:
    dt = float_result_type(self)  # bool and int64 in: the default float out
    x = _operand(self, dt).astype(np.complex128 if dt.is_complex else np.float64, copy=False)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):  # inf and nan, as PyTorch
        return _wrap(fn(x), dt)


@_kernel("exp")
def exp(self: Tensor) -> Tensor:
    return _float_unary(np.exp, self)


@_kernel("log")
def log(self: Tensor) -> Tensor:
    return _float_unary(np.log, self)


@_kernel("sin")
def sin(self: Tensor) -> Tensor:
    return _float_unary(np.sin, self)


@_kernel("cos")
def cos(self: Tensor) -> Tensor:
    return _float_unary(np.cos, self)


@_kernel("acos")
def acos(self: Tensor) -> Tensor:
    return _float_unary(np.arccos, self)


def _reciprocal_sqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


@_kernel("rsqrt")
def rsqrt(self: Tensor) -> Tensor:
    return _float_unary(_reciprocal_sqrt, self)


@_kernel("sin_")
def sin_(self: Tensor) -> Tensor:
    dt = float_result_type(self)
    if dt is not self.dtype:  # an integer tensor cannot hold its sines
        shapes.check_inplace(self.shape, self.dtype, self.shape, dt)
    out = _writable(self)
    with np.errstate(invalid="ignore"):  # sin(inf) is nan, silently, as PyTorch
        # In float64, rounded once to the tensor's dtype (see the module's docstring).
        out[...] = np.sin(out.astype(np.float64, copy=False))
    return self


@_kernel("pow.Tensor_Scalar")
def pow_tensor_scalar(self: Tensor, exponent: float) -> Tensor:
    dt = result_type(self, exponent)
    if not dt.is_floating_point and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    base = _operand(self, dt)
    if dt.is_floating_point:  # in float64, rounded once (see the module's docstring)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return _wrap(np.power(base.astype(np.float64, copy=False), exponent), dt)
    return _wrap(np.power(base, int(exponent)), dt)


@_kernel("gt.Scalar")
def gt(self: Tensor, other: float) -> Tensor:
    return _wrap(self._data > other, DType.bool)


@_kernel("ne.Scalar")
def ne_scalar(self: Tensor, other: float) -> Tensor:
    return _wrap(self._data != other, DType.bool)


@_kernel("ne.Tensor")
def ne_tensor(self: Tensor, other: Tensor) -> Tensor:
    shapes.broadcast_shapes(self.shape, other.shape)
    dt = result_type(self, other)  # compared in the promoted dtype, as torch
    return _wrap(_operand(self, dt) != _operand(other, dt), DType.bool)


@_kernel("any")
def any_(self: Tensor) -> Tensor:
    return _wrap(np.any(self._data), DType.bool)


# -- reductions and products ------------------------------------------------------------
@_kernel("sum.dim_IntList")
def sum_dim(self: Tensor, dim: Optional[Sequence[int]], keepdim: bool = False, *,
            dtype: Optional[DType] = None) -> Tensor:
    shapes.reduce_shape(self.shape, dim, keepdim)  # validates dim
    axes = None if not dim else tuple(shapes.wrap_dim(d, self.ndim) for d in dim)
    dt = reduction_dtype(self.dtype, dtype)
    # np.sum's own reduction, called without its Python wrapper (numpy's stubs
    # type keepdims as a literal, hence the ignore).
    total = np.add.reduce(self._data, axis=axes, keepdims=keepdim, dtype=to_numpy_dtype(dt))  # type: ignore[call-overload]
    return _wrap(total, dt)


@_kernel("mm")
def mm(self: Tensor, mat2: Tensor) -> Tensor:
    shapes.mm_shape(self, mat2)
    a, b = self._data, mat2._data
    if a.dtype in _BLAS_DTYPES:
        # np.dot, not np.matmul: both call BLAS's gemm on two matrices, but
        # matmul takes a loop of its own for a transposed operand of one
        # column (a weight's gradient at batch 1, ``input.t() @ grad``: 227
        # against 33 µs at 784 x 256), and dot's way in is shorter.
        return _wrap(np.dot(a, b), self.dtype)
    return _wrap(np.matmul(a, b), self.dtype)


# The dtypes whose matrix products numpy hands to BLAS (other dtypes keep
# np.matmul's own loops, whose accumulation np.dot's would not match).
_BLAS_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


@_kernel("bmm")
def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    shapes.bmm_shape(self, mat2)
    return _wrap(np.matmul(self._data, mat2._data), self.dtype)


@_kernel("mv")
def mv(self: Tensor, vec: Tensor) -> Tensor:
    shapes.mv_shape(self, vec)
    return _wrap(np.matmul(self._data, vec._data), self.dtype)


@_kernel("dot")
def dot(self: Tensor, tensor: Tensor) -> Tensor:
    shapes.dot_shape(self, tensor)
    return _wrap(np.dot(self._data, tensor._data), self.dtype)


@_kernel("addmv")
def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """beta * self + alpha * (mat @ vec); as torch, beta=0 ignores self's values (NaN included)."""
    shapes.mv_shape(mat, vec)
    product = np.matmul(mat._data, vec._data)
    shapes.broadcast_shapes(self.shape, product.shape)
    scaled = product if alpha == 1 else alpha * product
    total = scaled if beta == 0 else (self._data if beta == 1 else beta * self._data) + scaled
    return _wrap(np.broadcast_to(total, product.shape), mat.dtype)


@_kernel("abs.out")
def abs_out(self: Tensor, *, out: Tensor) -> Tensor:
    if not can_cast(self.dtype, out.dtype):
        raise RuntimeError(f"result type {self.dtype.scalar_type_name} can't be cast to the desired output type "
                           f"{out.dtype.scalar_type_name}")
    values = np.abs(self._data)
    if out.shape != self.shape:
        out._data = np.empty(self.shape, dtype=_NUMPY[out.dtype])  # torch resizes an out= tensor to the result
        out.shape = self.shape
    np.copyto(_writable(out), values, casting="unsafe")
    _written(out)
    return out


@_kernel("_foobar")
def foobar(self: Tensor, arg1: bool = True, arg2: bool = True, *, arg3: bool = True) -> Tensor:
    """aten::_foobar, torch's operator for testing how calls pass defaulted arguments: a copy of self."""
    return _wrap(self._data.copy(), self.dtype)


@_kernel("_local_scalar_dense")
def local_scalar_dense(self: Tensor) -> Any:
    """Tensor.item()'s operator: the first element as a Python number (item()
    checks there is one; the operator, as torch's, reads the first)."""
    if self.numel() == 0:
        raise RuntimeError("_local_scalar_dense: the tensor has no elements")
    return self._data.flat[0].item()




# -- views: numpy views share memory, as PyTorch views do --------------------------------
@_kernel("permute")
def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    shapes.permute_shape(self.shape, dims)
    ndim = len(self.shape)
    # ndarray.transpose, not np.transpose: the same view without numpy's Python wrapper.
    return cpu_tensor(self._data.transpose([shapes.wrap_dim(d, ndim) for d in dims]), self.dtype)


@_kernel("view")
def view(self: Tensor, size: Sequence[int]) -> Tensor:
    shape = shapes.view_shape(self.shape, size)
    data = self._data
    if data.flags.c_contiguous and data.size:
        # A contiguous tensor's view is contiguous (c10's computeStride gives
        # the row-major strides of the new shape): numpy's reshape is that
        # view, unless it strides a dimension of size 1 otherwise.
        out = data.reshape(shape)
        if out.strides == tuple(s * data.itemsize for s in contiguous_strides(shape)):
            return cpu_tensor(out, self.dtype)
    stride = shapes.compute_stride(self.shape, self.stride(), shape)
    if stride is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans "
            "across two contiguous subspaces). Use .reshape(...) instead."
        )
    itemsize = data.itemsize
    return cpu_tensor(np.lib.stride_tricks.as_strided(
        data, shape, [s * itemsize for s in stride], writeable=data.flags.writeable), self.dtype)


@_kernel("expand")
def expand(self: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    return cpu_tensor(np.broadcast_to(self._data, shapes.expand_shape(self.shape, size)), self.dtype)


@_kernel("select.int")
def select(self: Tensor, dim: int, index: int) -> Tensor:
    _, dim, index = shapes.select_shape(self.shape, dim, index)
    # The trailing Ellipsis keeps a 0-d result an array view rather than a numpy scalar.
    return cpu_tensor(self._data[(slice(None),) * dim + (index, Ellipsis)], self.dtype)


@_kernel("select_backward")
def select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    _, dim, index = shapes.select_shape(input_sizes, dim, index)
    out = np.zeros(input_sizes, dtype=grad_output._data.dtype)
    out[(slice(None),) * dim + (index, Ellipsis)] = grad_output._data
    return cpu_tensor(out, grad_output.dtype)


@_kernel("stack")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    _, dim = shapes.stack_shape([t.shape for t in tensors], dim)
    dt = result_type(*tensors)
    return _wrap(np.stack([_operand(t, dt) for t in tensors], axis=dim), dt)


# -- in-place, and allocation ------------------------------------------------------------
@_kernel("add_.Tensor")
def add_(self: Tensor, other: Tensor, *, alpha: float = 1) -> Tensor:
    dt = self.dtype
    if type(other) is Tensor and other.shape == self.shape and other.dtype is dt and not other._wrapped_number:
        # An operand of the output's shape and dtype (an optimizer's ``p.add_(p.grad,
        # alpha=-lr)``): it fits, whatever promotion would say, and is used as it is.
        b = other._data
    else:
        other = tensor_operand(other)  # a number (Note [Numbers where an operator takes a tensor])
        dt = result_type(self, other)
        if self.shape != other.shape or dt is not self.dtype:
            shapes.check_inplace(self.shape, self.dtype, other.shape, dt)
        b = _operand(other, dt)
    out = _writable(self)
    np.add(out, b if alpha == 1 else alpha * b, out=out, casting="unsafe")
    _written(self)
    return self


@_kernel("set_.source_Tensor")
def set_(self: Tensor, source: Tensor) -> Tensor:
    """self views source's memory from now on, in source's shape and strides."""
    shapes.check_set_source(self, source)
    self._data, self.shape, self._strides = source._data, source.shape, source._strides
    return self


@_kernel("fill_.Scalar")
def fill_(self: Tensor, value: float) -> Tensor:
    _writable(self).fill(value)
    _written(self)
    return self


@_kernel("normal_")
def normal_(self: Tensor, mean: float = 0, std: float = 1, *,
            generator: Optional[np.random.Generator] = None) -> Tensor:
    rng = generator if generator is not None else default_generator()
    _writable(self)[...] = rng.standard_normal(self.shape) * std + mean
    _written(self)
    return self


def copy_between_cpu_tensors(dst: Tensor, src: Tensor) -> None:
    """copy_'s work when both tensors are on the CPU (copy_ itself is composite: composite.py)."""
    np.copyto(_writable(dst), src._data, casting="unsafe")
    _written(dst)


@_kernel("empty.memory_format")
def empty(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
          pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    check_options(pin_memory, memory_format)
    dt = optional_dtype(dtype) or default_float
    return cpu_tensor(np.empty(size, dtype=_NUMPY[dt]), dt)
