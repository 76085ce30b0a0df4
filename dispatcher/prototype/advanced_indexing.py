"""``index.Tensor``: indexing by tensors (advanced indexing), as torch 2.13 has it.

``self[indices]`` for a list of optional tensors: None takes a whole
dimension; an int64 or int32 tensor picks positions along one dimension; a
bool mask covers as many dimensions as it has and picks where it is true.
The index tensors broadcast together; the picked dimensions go where the
first index is when the indices are adjacent, else in front (numpy's rule,
which is torch's).  CPU and Meta kernels share ``index_shape`` (torch's
checks and texts); a Meta kernel needs a mask's values, so a meta mask is
refused as torch's nonzero on meta is.  The derivative is torch's
index_backward: the gradient accumulated into zeros of the input's shape by
``_index_put_impl_`` (IndexBackward0).

indexing.py's ``Tensor.__getitem__`` calls it for tensors and lists.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import AutoDispatchBelowADInplaceOrView, DispatchKeySet, Library
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET

from .autograd import TensorMeta, _edge, _GraphNode
from .index_put import check_index_tensors, numpy_index
from .indexing import nonzero_meta_refusal
from .meta import meta_tensor
from .operators import aten, overload
from .shapes import Shape
from .tensor import Tensor, cpu_tensor

__all__ = ["IndexNode", "index_shape"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_autograd = Library("aten", "IMPL", "Autograd")

_MASK_DTYPES = ("bool", "uint8")


def _covered_shapes(self: Any, indices: Sequence[Optional[Any]]) -> list[Optional[Shape]]:
    """Per dimension of ``self`` an index covers: None (the whole dimension) or
    the shape of the positions it picks there (a mask's: one per true element)."""
    covered: list[Optional[Shape]] = []
    for index in indices:
        if index is None:
            covered.append(None)
            continue
        if index.dtype.name not in _MASK_DTYPES:
            covered.append(tuple(index.shape))
            continue
        first = len(covered)
        for k, size in enumerate(index.shape):
            if size != self.shape[first + k]:
                raise IndexError(f"The shape of the mask {list(index.shape)} at index {k} does not match the shape of "
                                 f"the indexed tensor {list(self.shape)} at index {first + k}")
        data = getattr(index, "_data", None)
        if type(data) is not np.ndarray:  # a meta mask: how many are true is not known
            raise nonzero_meta_refusal()
        count = int(np.count_nonzero(data))
        covered.extend([(count,)] * index.dim())
    return covered


def index_shape(self: Any, indices: Sequence[Optional[Any]]) -> Shape:
    """The shape of ``self[indices]`` (aten::index.Tensor), with torch's checks."""
    if not indices:
        raise IndexError("at least one index must be provided")
    check_index_tensors(self, indices)
    covered = _covered_shapes(self, indices)
    picked = [shape for shape in covered if shape is not None]
    try:
        broadcast = tuple(np.broadcast_shapes(*picked)) if picked else ()
    except ValueError:
        shapes = ", ".join(str(list(shape)) for shape in picked)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}") from None
    positions = [d for d, shape in enumerate(covered) if shape is not None]
    rest = tuple(self.shape[len(covered):])
    whole = [self.shape[d] for d, shape in enumerate(covered) if shape is None]
    if not positions:
        return tuple(whole) + rest
    if positions == list(range(positions[0], positions[-1] + 1)):  # adjacent: the picked dimensions in their place
        before = tuple(self.shape[d] for d in range(positions[0]))
        after = tuple(self.shape[d] for d in range(positions[-1] + 1, len(covered)))
        return before + broadcast + after + rest
    return broadcast + tuple(whole) + rest


def _index_cpu(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    index_shape(self, indices)
    # (a copy, always: numpy's advanced indexing makes one, as torch's index does)
    return cpu_tensor(np.ascontiguousarray(self._data[numpy_index(self, indices)]), self.dtype)


def _index_meta(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    return meta_tensor(index_shape(self, indices), self.dtype)


class IndexNode(_GraphNode):
    """The node of one index call (torch's IndexBackward0): the gradient put, adding
    where an index repeats, into zeros of the input's shape."""

    __slots__ = ("_name", "edges", "metadata", "indices", "input")

    def __init__(self, edge: Any, self_: Tensor, indices: Sequence[Optional[Tensor]], result: Tensor) -> None:
        self._name = "IndexBackward0"
        self.edges = (edge,)
        self.metadata = (TensorMeta(result),)
        self.indices = list(indices)
        self.input = TensorMeta(self_)

    def release_saved(self) -> None:
        pass  # (the indices are kept: they are not differentiable, and backward may run again)

    def apply(self, grads: Sequence[Optional[Tensor]], create_graph: bool = False) -> list[Optional[Tensor]]:
        grad = grads[0]
        zeros = aten.new_zeros.default(grad, list(self.input.shape), dtype=self.input.dtype, device=self.input.device)
        return [aten._index_put_impl_.default(zeros, self.indices, grad, True, True)]


def _index_autograd(keyset: DispatchKeySet, self: Any, indices: Sequence[Optional[Any]]) -> Any:
    with AutoDispatchBelowADInplaceOrView():
        result = _INDEX.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, self, indices)
    if getattr(self, "requires_grad", False) and result.dtype.is_floating_point:
        result.grad_fn, result.requires_grad = IndexNode(_edge(self), self, indices, result), True
    return result


_INDEX = overload("index.Tensor")
_cpu.impl("index.Tensor", _index_cpu)
_meta.impl("index.Tensor", _index_meta)
_autograd.impl("index.Tensor", _index_autograd, with_keyset=True)
