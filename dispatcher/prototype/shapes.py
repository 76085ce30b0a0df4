"""Shape inference: what an operator's result looks like, without computing it.

These are PyTorch's "meta functions": the Meta kernels are made of them, and
the CPU kernels call them first so that both backends accept the same inputs
and raise the same errors (of shapes, and of the dtypes an operator refuses).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from .dtypes import DType, can_cast

__all__ = [
    "bmm_shape", "broadcast_shapes", "check_inplace", "check_neg_input", "check_relu_input", "check_set_source",
    "check_sub_operands",
    "compute_stride", "dot_shape", "expand_shape", "mm_shape", "mv_shape", "permute_shape", "reduce_shape",
    "select_shape", "squeeze_shape", "stack_shape", "unsqueeze_shape", "view_shape", "wrap_dim",
]

Shape = tuple[int, ...]


def wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in [0, ndim), from a possibly negative one."""
    if 0 <= dim < ndim:  # most calls: nothing to wrap or check
        return dim
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim % max(ndim, 1)


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> Shape:
    if a == b:  # most binary operations: nothing to broadcast
        return a if type(a) is tuple else tuple(a)
    if type(a) is tuple and type(b) is tuple and len(b) < len(a) and a[len(a) - len(b):] == b:
        return a  # b is a's trailing dimensions (a bias added to a batch): broadcasts to a
    # Right-aligned: pad the shorter shape with leading 1s, then match dimension by dimension.
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = [0] * n
    for dim in range(n - 1, -1, -1):  # from the last dimension, as torch's infer_size (which one it blames)
        x, y = a[dim], b[dim]
        if x == y or y == 1:
            out[dim] = x
        elif x == 1:
            out[dim] = y
        else:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {dim}"
            )
    return tuple(out)


def reduce_shape(shape: Sequence[int], dims: Optional[Sequence[int]], keepdim: bool) -> Shape:
    """The result of reducing ``dims`` (None or [] means all, as in sum.dim_IntList)."""
    ndim = len(shape)
    if keepdim and dims and len(dims) == 1 and 0 <= dims[0] < ndim:  # one dimension kept (sum_to's): no set
        kept = list(shape)
        kept[dims[0]] = 1
        return tuple(kept)
    reduced = set(range(ndim)) if not dims else {wrap_dim(d, ndim) for d in dims}
    if keepdim:
        return tuple(1 if i in reduced else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in reduced)


def mm_shape(self: Any, mat2: Any) -> Shape:
    """mm's result, from two matrices (anything with ``shape`` and ``dtype``) of one dtype."""
    if len(self.shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(mat2.shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {self.dtype.c_type_name} != "
                           f"{mat2.dtype.c_type_name}")
    return self.shape[0], mat2.shape[1]


def bmm_shape(self: Any, mat2: Any) -> Shape:
    """bmm's result, from two batches of matrices of one dtype."""
    for name, t in (("batch1", self), ("batch2", mat2)):
        if len(t.shape) != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    batch, rows, contraction = self.shape
    if tuple(mat2.shape[:2]) != (batch, contraction):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {contraction}] "
                           f"but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype.scalar_type_name} but found "
                           f"{mat2.dtype.scalar_type_name}")
    return batch, rows, mat2.shape[2]


def mv_shape(self: Any, vec: Any) -> Shape:
    """mv's result, from a matrix and a vector of one dtype (torch checks them as addmv's)."""
    if len(self.shape) != 2 or len(vec.shape) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(self.shape)}, {len(vec.shape)}")
    rows, columns = self.shape
    if columns != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{columns}), vec ({vec.shape[0]})")
    if self.dtype != vec.dtype:
        # addmv's input, the result, takes the vector's dtype.
        names = vec.dtype.scalar_type_name, self.dtype.scalar_type_name, vec.dtype.scalar_type_name
        raise RuntimeError("addmv input tensors must have the same dtype, but got {}, {}, and {}".format(*names))
    return (rows,)


def dot_shape(self: Any, tensor: Any) -> Shape:
    """dot's result (a 0-d tensor), from two vectors of one size and dtype."""
    if len(self.shape) != 1 or len(tensor.shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(self.shape)}D and {len(tensor.shape)}D tensors")
    if self.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{self.dtype.scalar_type_name} and {tensor.dtype.scalar_type_name}")
    if self.shape != tensor.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{tensor.shape[0]}] "
                           f"to have the same number of elements, but got {self.shape[0]} and {tensor.shape[0]} "
                           "elements respectively")
    return ()


def permute_shape(shape: Sequence[int], dims: Sequence[int]) -> Shape:
    ndim = len(shape)
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [wrap_dim(d, ndim) for d in dims]
    if len(set(wrapped)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return tuple(shape[d] for d in wrapped)


def view_shape(shape: Sequence[int], size: Sequence[int]) -> Shape:
    """``size`` with its one -1 inferred, checked against the element count."""
    numel = math.prod(shape)
    if -1 not in size:  # nothing to infer (most calls): only the count to check
        given = tuple(size)
        if math.prod(given) == numel and min(given, default=0) >= 0:
            return given
    infer = [i for i, s in enumerate(size) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in size if s != -1)
    out = list(size)
    if infer and known and numel % known == 0:
        out[infer[0]] = numel // known
    if any(s < 0 for s in out) or math.prod(out) != numel:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return tuple(out)


def compute_stride(shape: Sequence[int], stride: Sequence[int], new_shape: Sequence[int]) -> Optional[Shape]:
    """The strides a view of ``shape``/``stride`` in ``new_shape`` has (same number of
    elements), or None if no view can have that shape (c10's computeStride).

    The dimensions go in chunks that are contiguous with each other; a view
    may split or merge dimensions within a chunk, never across two.
    """
    if not shape:
        return (1,) * len(new_shape)
    if math.prod(shape) == 0:
        return tuple(stride) if tuple(shape) == tuple(new_shape) else _resize_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = stride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        chunk_ends = tensor_d == 0 or (shape[tensor_d - 1] != 1 and stride[tensor_d - 1] != tensor_numel * chunk_base_stride)
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
            new_stride[view_d] = view_numel * chunk_base_stride
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if tensor_d > 0:
            chunk_base_stride, tensor_numel, view_numel = stride[tensor_d - 1], 1, 1
    return tuple(new_stride) if view_d == -1 else None


def _resize_strides(shape: Sequence[int]) -> Shape:
    """The strides computeStride gives an empty tensor: row-major, a size 0 counting as 1."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def unsqueeze_shape(shape: Sequence[int], dim: int) -> Shape:
    dim = wrap_dim(dim, len(shape) + 1)
    return tuple(shape[:dim]) + (1,) + tuple(shape[dim:])


def squeeze_shape(shape: Sequence[int], dim: int) -> Shape:
    """``shape`` without dimension ``dim`` if its size is 1, else unchanged."""
    dim = wrap_dim(dim, len(shape))
    if not shape or shape[dim] != 1:
        return tuple(shape)
    return tuple(shape[:dim]) + tuple(shape[dim + 1:])


def expand_shape(shape: Sequence[int], size: Sequence[int]) -> Shape:
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    lead = len(size) - len(shape)
    out = list(size[:lead])
    for i, (have, want) in enumerate(zip(shape, size[lead:])):
        if want == -1:
            want = have
        elif have != want and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: {list(size)}.  Tensor sizes: {list(shape)}"
            )
        out.append(want)
    return tuple(out)


def select_shape(shape: Sequence[int], dim: int, index: int) -> tuple[Shape, int, int]:
    """(result shape, wrapped dim, wrapped index)."""
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at dimension {dim}"
        )
    return tuple(shape[:dim]) + tuple(shape[dim + 1:]), dim, index % shape[dim]


def stack_shape(shapes: Sequence[Sequence[int]], dim: int) -> tuple[Shape, int]:
    """(result shape, wrapped dim)."""
    if not shapes:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(shapes[0])
    for i, s in enumerate(shapes):
        if tuple(s) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(s)} at entry {i}"
            )
    dim = wrap_dim(dim, len(first) + 1)
    return first[:dim] + (len(shapes),) + first[dim:], dim


def check_sub_operands(self: Any, other: Any) -> None:
    """torch refuses ``-`` of bools."""
    if DType.bool in (self.dtype, other.dtype):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead."
        )


def check_relu_input(self: Any) -> None:
    if self.dtype == DType.bool:
        raise RuntimeError("Boolean inputs not supported for relu")


def check_neg_input(self: Any) -> None:
    if self.dtype == DType.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported.")


def check_inplace(self_shape: Sequence[int], self_dtype: DType, other_shape: Sequence[int],
                  result: DType) -> None:
    """An in-place op keeps its output's shape and dtype: the other operand must fit both."""
    if broadcast_shapes(self_shape, other_shape) != tuple(self_shape):
        raise RuntimeError(
            f"output with shape {list(self_shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(self_shape, other_shape))}"
        )
    if not can_cast(result, self_dtype):
        raise RuntimeError(f"result type {result.scalar_type_name} can't be cast to the desired output type "
                           f"{self_dtype.scalar_type_name}")


def check_set_source(self: Any, source: Any) -> None:
    """set_'s check: self takes source's memory only if they hold one dtype."""
    if source.dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {source.dtype.c_type_name} to a tensor of type "
                           f"{self.dtype.c_type_name}")
