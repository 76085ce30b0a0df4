"""``cat`` and ``split``, as torch 2.13 has them.

* ``cat`` has CPU and Meta kernels (one shape function, ``cat_shape``, with
  torch's checks and texts), the promoted dtype of its inputs, and torch's
  legacy rule: a 1-d tensor of size 0 takes no part in the shape checks.
  As torch's, it has a CompositeExplicitAutogradNonFunctional kernel too,
  for the other backends (through copies on the CPU) and for a call without
  tensors (an empty list: torch's ValueError).
  Its derivative is torch's cat_tensors_backward: a slice of the gradient
  per input.
* ``split.Tensor`` is CompositeExplicitAutograd, as torch's: slices of
  ``split_size`` along ``dim`` (the last one shorter).  Its outputs are views
  of ``self`` (its ADInplaceOrView kernel records the base and shares the
  version counter) and have one node, SplitBackward0, whose formula (torch's
  split_backward) puts the gradients back together with ``cat``, zeros for
  an output that got none.

``Tensor.split(split_size, dim)`` calls it (``split_with_sizes``, for a list
of sizes, is not in the prototype).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import AutoDispatchBelowADInplaceOrView, DispatchKeySet, Library
from dispatcher.keysets import AFTER_ADINPLACEORVIEW_KEYSET, AFTER_AUTOGRAD_KEYSET

from .autograd import Context, TensorMeta, _edge, _GraphNode, differentiable
from .dtypes import DType, result_type, to_numpy_dtype
from .meta import meta_tensor
from .operators import aten, overload
from .shapes import Shape, wrap_dim
from .tensor import Tensor, TensorMethods, cpu_tensor
from .view_history import mark_multiple_output_views

__all__ = ["SplitNode", "cat_shape", "split_shapes"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_non_functional = Library("aten", "IMPL", "CompositeExplicitAutogradNonFunctional")
_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")
_autograd = Library("aten", "IMPL", "Autograd")


# -- cat ------------------------------------------------------------------------------------------
def _is_legacy_empty(shape: Sequence[int]) -> bool:
    """torch's legacy rule: a 1-d tensor of size 0 concatenates with tensors of any shape."""
    return len(shape) == 1 and shape[0] == 0


def _wrapped_cat_dim(shapes: Sequence[Sequence[int]], dim: int) -> int:
    """torch's legacy_cat_wrap_dim: ``dim`` wrapped by the first tensor that is not legacy-empty."""
    for shape in shapes:
        if not _is_legacy_empty(shape):
            return wrap_dim(dim, len(shape))
    return dim


def cat_shape(tensors: Sequence[Any], dim: int) -> tuple[Shape, int, DType]:
    """(result shape, wrapped dim, result dtype) of cat(tensors, dim), with torch's checks in its order."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t.shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    device = tensors[0].device
    for t in tensors:
        if t.device != device:
            raise RuntimeError(f"Tensor on device {t.device} is not on the expected device {device}!")
    shapes = [tuple(t.shape) for t in tensors]
    dim = _wrapped_cat_dim(shapes, dim)
    kept = [(i, s) for i, s in enumerate(shapes) if not _is_legacy_empty(s)]
    dtype = result_type(*tensors)
    if not kept:
        return shapes[0], dim, dtype
    first_index, first = kept[0]
    length = 0
    for i, shape in kept:
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}")
        for d, (want, got) in enumerate(zip(first, shape)):
            if d != dim and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size {want} but "
                                   f"got size {got} for tensor number {i} in the list.")
        length += shape[dim]
    return first[:dim] + (length,) + first[dim + 1:], dim, dtype


def _cat_cpu(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    shape, dim, dtype = cat_shape(tensors, dim)
    parts = [t._data for t in tensors if not _is_legacy_empty(t.shape)]
    if not parts:
        return cpu_tensor(np.empty(shape, dtype=to_numpy_dtype(dtype)), dtype)
    out = np.empty(shape, dtype=to_numpy_dtype(dtype))
    np.concatenate(parts, axis=dim, out=out, casting="unsafe")
    return cpu_tensor(out, dtype)


def _cat_meta(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    shape, _, dtype = cat_shape(tensors, dim)
    return meta_tensor(shape, dtype)


def _cat_composite(tensors: Sequence[Any], dim: int = 0) -> Any:
    """cat for every other backend (torch's CompositeExplicitAutogradNonFunctional
    kernel, which also serves a call with no tensor at all): checked, then
    computed by the CPU kernel on copies and copied back to the tensors'
    device (a prototype device may have no views to copy into)."""
    cat_shape(tensors, dim)
    device = tensors[0].device
    on_cpu = [aten._to_copy.default(t, device="cpu") for t in tensors]
    return aten._to_copy.default(aten.cat.default(on_cpu, dim), device=device)


_cpu.impl("cat", _cat_cpu)
_meta.impl("cat", _cat_meta)
_non_functional.impl("cat", _cat_composite)


@differentiable("cat")
def _cat_backward(ctx: Context, grad: Tensor) -> tuple:
    """torch's cat_tensors_backward: each input's slice of the gradient (a legacy-empty input's is empty)."""
    shapes = [tuple(t.shape) for t in ctx.tensors]
    dim = _wrapped_cat_dim(shapes, ctx.dim)
    grads: list[Optional[Tensor]] = []
    offset = 0
    for t, shape in zip(ctx.tensors, shapes):
        if _is_legacy_empty(shape):
            grads.append(aten.zeros.default([0], dtype=grad.dtype, device=grad.device))
            continue
        size = shape[dim]
        grads.append(aten.slice.Tensor(grad, dim, offset, offset + size))
        offset += size
    return (grads,)


# -- split --------------------------------------------------------------------------------------------
def split_shapes(shape: Sequence[int], split_size: int, dim: int) -> tuple[list[tuple[int, int]], int]:
    """The (start, end) of each piece of split(shape, split_size, dim), and the wrapped dim."""
    if not shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    count = max((size + split_size - 1) // split_size, 1) if split_size else 1
    return [(i * split_size, min((i + 1) * split_size, size)) for i in range(count)], dim


def _split(self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    pieces, dim = split_shapes(self.shape, split_size, dim)
    return [aten.slice.Tensor(self, dim, start, end) for start, end in pieces]


_explicit.impl("split.Tensor", _split)


def _split_views(keyset: DispatchKeySet, self: Any, *args: Any, **kwargs: Any) -> Any:
    """split's ADInplaceOrView kernel: each output a view of ``self``."""
    with AutoDispatchBelowADInplaceOrView():
        outputs = _SPLIT.redispatch(keyset & AFTER_ADINPLACEORVIEW_KEYSET, self, *args, **kwargs)
    if isinstance(self, Tensor):
        base = self._base if self._base is not None else self
        for out in outputs:
            if isinstance(out, Tensor):
                out._base, out._version_counter = base, self._version_counter
        mark_multiple_output_views(outputs)
    return outputs


class SplitNode(_GraphNode):
    """The node of one split call (torch's SplitBackward0): its outputs' gradients, zeros
    for those that got none, concatenated along the split dimension."""

    __slots__ = ("_name", "edges", "metadata", "dim")

    def __init__(self, edge: Any, outputs: Sequence[Tensor], dim: int) -> None:
        self._name = "SplitBackward0"
        self.edges = (edge,)
        self.metadata = tuple(TensorMeta(t) for t in outputs)
        self.dim = dim

    def release_saved(self) -> None:
        pass  # it saved no tensor

    def apply(self, grads: Sequence[Optional[Tensor]], create_graph: bool = False) -> list[Optional[Tensor]]:
        filled = [aten.zeros.default(list(m.shape), dtype=m.dtype, device=m.device) if g is None else g
                  for g, m in zip(grads, self.metadata)]
        return [aten.cat.default(filled, self.dim)]


def _split_autograd(keyset: DispatchKeySet, self: Any, split_size: int, dim: int = 0) -> Any:
    with AutoDispatchBelowADInplaceOrView():
        outputs = _SPLIT.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, self, split_size, dim)
    if getattr(self, "requires_grad", False) and self.dtype.is_floating_point:
        node = SplitNode(_edge(self), outputs, wrap_dim(dim, self.ndim))
        for i, out in enumerate(outputs):
            out.grad_fn, out._output_nr, out.requires_grad = node, i, True
    return outputs


_SPLIT = overload("split.Tensor")
_inplace_or_view.impl("split.Tensor", _split_views, with_keyset=True)
_autograd.impl("split.Tensor", _split_autograd, with_keyset=True)


def _split_method(self: Any, split_size: int, dim: int = 0) -> Any:
    """Tensor.split(split_size, dim): the pieces as a tuple, as torch's."""
    if not isinstance(split_size, int):
        raise NotImplementedError("Tensor.split with a list of sizes (aten::split_with_sizes) is not in the prototype")
    return tuple(aten.split.Tensor(self, split_size, dim))


TensorMethods.split = _split_method  # type: ignore[attr-defined]
