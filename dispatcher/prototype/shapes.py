"""Shape inference: what an operator's result looks like, without computing it.

These are PyTorch's "meta functions": the Meta kernels are made of them, and
the CPU kernels call them first so that both backends accept the same inputs
and raise the same errors.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

from .dtypes import DType, can_cast

__all__ = [
    "broadcast_shapes", "check_inplace", "expand_shape", "matmul_shape", "permute_shape", "reduce_shape",
    "select_shape", "stack_shape", "view_shape", "wrap_dim",
]

Shape = tuple[int, ...]


def wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in [0, ndim), from a possibly negative one."""
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim % max(ndim, 1)


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> Shape:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                f"at non-singleton dimension {max(len(a), len(b)) - i}"
            )
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def reduce_shape(shape: Sequence[int], dims: Optional[Sequence[int]], keepdim: bool) -> Shape:
    """The result of reducing ``dims`` (None or [] means all, as in sum.dim_IntList)."""
    ndim = len(shape)
    reduced = set(range(ndim)) if not dims else {wrap_dim(d, ndim) for d in dims}
    if keepdim:
        return tuple(1 if i in reduced else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in reduced)


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> Shape:
    """torch.matmul's result: vector-vector, matrix-vector, (batched) matrix products."""
    if not a or not b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and {len(b)}D"
        )
    a2 = (1, *a) if len(a) == 1 else tuple(a)
    b2 = (*b, 1) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({math.prod(a2[:-1])}x{a2[-1]} and {b2[-2]}x{b2[-1]})"
        )
    out = broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    # Drop the dimensions the 1-D promotions added.
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


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


def check_inplace(self_shape: Sequence[int], self_dtype: DType, other_shape: Sequence[int],
                  result: DType) -> None:
    """An in-place op keeps its output's shape and dtype: the other operand must fit both."""
    if broadcast_shapes(self_shape, other_shape) != tuple(self_shape):
        raise RuntimeError(
            f"output with shape {list(self_shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(self_shape, other_shape))}"
        )
    if not can_cast(result, self_dtype):
        raise RuntimeError(f"result type {result.name} can't be cast to the desired output type {self_dtype.name}")
