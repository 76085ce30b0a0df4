"""Where a tensor's elements sit in its memory: ``storage_offset()``,
``data_ptr()``, and the views that choose it, ``as_strided`` and ``diagonal``.

A CPU tensor's memory is a numpy array; its *storage* is the array that owns
that memory (the root of the chain of numpy views leading to it), and its
storage offset is how many elements past the storage's start its first
element is, as in torch.  A wrapper subclass has no memory: it keeps the
offset it was made with (subclassing.py).  Meta tensors, and the toy
device's buffers, start at their storage.

``as_strided`` is a CPU kernel (a numpy view of the storage: numpy checks
nothing, so torch's bounds checks come first) and a Meta kernel (meta
tensors are row-major here: it checks the sizes and keeps them);
``diagonal`` is torch's CompositeExplicitAutograd kernel, an ``as_strided``
of its input.  Both are views (inplace_or_view.py).  diagonal's derivative
is torch's (the gradient written into the diagonal of zeros); as_strided's
is torch's as_strided_backward computed with numpy on the storage's
positions, so it is a CPU one and autograd cannot differentiate it again.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import Library

from . import shapes
from .autograd import Context, differentiable
from .meta import meta_tensor
from .operators import aten
from .tensor import Tensor, convert, cpu_tensor

__all__ = ["data_ptr", "storage_array", "tensor_storage_offset"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")


def storage_array(array: np.ndarray) -> np.ndarray:
    """The numpy array that owns ``array``'s memory (``array`` itself if it does).

    numpy's view chain runs through ``.base``; a view made by
    ``np.lib.stride_tricks.as_strided`` has a helper object there whose own
    ``.base`` is the array it viewed."""
    root, link = array, array.base
    while link is not None:
        if isinstance(link, np.ndarray):
            root = link
        link = getattr(link, "base", None)
    return root


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def tensor_storage_offset(self: Tensor) -> int:
    """torch's ``t.storage_offset()``: elements between its storage's start and its first element."""
    data = self._data
    if not isinstance(data, np.ndarray):
        return self._storage_offset  # a wrapper's (0 unless it was made with one), or a buffer's start
    return (_address(data) - _address(storage_array(data))) // data.itemsize


def data_ptr(self: Tensor) -> int:
    """torch's ``t.data_ptr()``: the address of its first element (0 for a tensor without memory)."""
    data = self._data
    if data is None:
        return 0
    if isinstance(data, np.ndarray):
        return _address(data)
    return _address(np.frombuffer(data, dtype=np.uint8))  # a device's bytes (toy_device.py)


def as_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int] = None) -> Tensor:
    """A view of ``self``'s storage with these sizes, strides and offset (torch's
    as_strided_tensorimpl, with its checks)."""
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {stride}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {size}")
    offset = tensor_storage_offset(self) if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root = storage_array(self._data)
    itemsize = self._data.itemsize
    if math.prod(size) != 0:
        needed = (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * itemsize
        if needed > root.nbytes:
            raise RuntimeError(
                f"setStorage: sizes {size}, strides {stride}, storage offset {offset}, and itemsize {itemsize} "
                f"requiring a storage size of {needed} are out of bounds for storage of size {root.nbytes}")
    view = np.ndarray(tuple(size), dtype=self._data.dtype, buffer=root, offset=offset * itemsize,
                      strides=tuple(s * itemsize for s in stride))
    return cpu_tensor(view, self.dtype)


def diagonal(self: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """The elements ``self[..., i, ..., i + offset, ...]`` along a new last dimension:
    an as_strided view (torch's at::native::diagonal)."""
    ndim = len(self.shape)
    d1, d2 = shapes.wrap_dim(dim1, ndim), shapes.wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    sizes, strides = list(self.shape), list(self.stride())
    if offset >= 0:
        length = max(min(sizes[d1], sizes[d2] - offset), 0)
    else:
        length = max(min(sizes[d1] + offset, sizes[d2]), 0)
    start = self.storage_offset()
    if length > 0:
        start += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
    step = strides[d1] + strides[d2]
    for d in sorted((d1, d2), reverse=True):
        del sizes[d], strides[d]
    return aten.as_strided.default(self, [*sizes, length], [*strides, step], start)


def _diagonal_method(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return aten.diagonal.default(self, offset, dim1, dim2)


def _as_strided_method(self: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: Optional[int] = None) -> Tensor:
    return aten.as_strided.default(self, list(size), list(stride), storage_offset)


def as_strided_meta(self: Tensor, size: Sequence[int], stride: Sequence[int],
                    storage_offset: Optional[int] = None) -> Tensor:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    return meta_tensor([int(s) for s in size], self.dtype)


def _positions(sizes: Sequence[int], strides: Sequence[int], offset: int) -> np.ndarray:
    """The storage position of each element of a tensor of this geometry."""
    index = np.full(tuple(sizes), offset, dtype=np.int64)
    for d, (n, step) in enumerate(zip(sizes, strides)):
        index += (np.arange(n, dtype=np.int64) * step).reshape((n,) + (1,) * (len(sizes) - d - 1))
    return index


@differentiable("as_strided", saves=("self",))
def _as_strided_backward(ctx: Context, grad: Tensor) -> tuple:
    """torch's as_strided_backward: the output's gradient summed into the storage
    positions it viewed, read back at the input's positions (divided by how many
    of the input's elements share a position, if they overlap)."""
    source = ctx.self
    offset = source.storage_offset() if ctx.storage_offset is None else ctx.storage_offset
    read = _positions(source.shape, source.stride(), source.storage_offset())
    written = _positions(ctx.size, ctx.stride, offset)
    extent = int(max(read.max(initial=-1), written.max(initial=-1))) + 1
    values = grad.numpy()
    storage = np.zeros(extent, dtype=values.dtype)
    np.add.at(storage, written.ravel(), values.ravel())
    counts = np.zeros(extent, dtype=np.int64)
    np.add.at(counts, read.ravel(), 1)
    result = storage[read] / np.maximum(counts[read], 1) if counts.max(initial=0) > 1 else storage[read]
    out = Tensor.from_numpy(np.ascontiguousarray(result, dtype=values.dtype))
    return (out if grad.device.type == "cpu" else convert(out, device=grad.device),)


@differentiable("diagonal")
def _diagonal_backward(ctx: Context, grad: Tensor) -> tuple:
    """torch's diagonal_backward: the gradient in the diagonal of zeros of the input's shape."""
    out = aten.new_zeros.default(grad, list(ctx.self.shape))
    aten.copy_.default(aten.diagonal.default(out, ctx.offset, ctx.dim1, ctx.dim2), grad)
    return (out,)


_cpu.impl("as_strided", as_strided)
_meta.impl("as_strided", as_strided_meta)
_explicit.impl("diagonal", diagonal)

# Tensor's own methods (Note [Methods set by the modules above] in tensor.py).
Tensor.storage_offset = tensor_storage_offset  # type: ignore[method-assign]
Tensor.data_ptr = data_ptr  # type: ignore[method-assign]
Tensor.diagonal = _diagonal_method  # type: ignore[method-assign]
Tensor.as_strided = _as_strided_method  # type: ignore[method-assign]
