"""Basic indexing and the operators it needs: ``t[i]``, ``t[a:b:c]``, ``t[None]``,
``t[...]`` and tuples of them, as torch's ``Tensor.__getitem__`` runs them
(its applySlicing) through aten's select.int, slice.Tensor, unsqueeze and
alias, each a view of ``t``.

This module registers slice.Tensor's kernels (CPU and Meta views,
slice_backward) and nonzero's: its result's shape depends on the values, so
its Meta kernel raises NotImplementedError with torch's text (alias's are in
alias_op.py).  Indexing by tensors and lists (advanced indexing) ends in
aten::index.Tensor (advanced_indexing.py), as torch's: the integers,
slices, None and Ellipsis of the index apply first, then one index call
takes the tensors, with None for the dimensions between them.  An index
holding a tensor whose type overrides ``__torch_function__`` goes to that
handler instead, as torch's indexing does (the prototype's other methods do
not call ``__torch_function__``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import warnings

import numpy as np

from dispatcher import Library

from .dtypes import DType
from .meta import meta_tensor
from .operators import aten
from .shapes import Shape, wrap_dim
from .subclassing import default_torch_function, disabled_torch_function_impl
from .tensor import Tensor, cpu_tensor, tensor

__all__ = ["getitem", "nonzero_meta_refusal", "slice_shape"]

_INT64_MAX = 2**63 - 1
_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")


def slice_shape(shape: Sequence[int], dim: int, start: Optional[int], end: Optional[int],
                step: int) -> tuple[Shape, int, int, int]:
    """slice.Tensor's (result shape, wrapped dim, start, end), start and end
    clamped to the dimension as torch clamps them (a negative one counts from
    the end; end before start gives an empty slice)."""
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, 0), size)
    end = max(end, start)
    length = (end - start + step - 1) // step
    return tuple(shape[:dim]) + (length,) + tuple(shape[dim + 1:]), dim, start, end


def _slice_key(dim: int, start: int, end: int, step: int) -> tuple[Any, ...]:
    # The trailing Ellipsis keeps a numpy view whatever the dimensions after ``dim``.
    return (slice(None),) * dim + (slice(start, end, step), Ellipsis)


def _slice_cpu(self: Tensor, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
               step: int = 1) -> Tensor:
    _, dim, start, end = slice_shape(self.shape, dim, start, end, step)
    return cpu_tensor(self._data[_slice_key(dim, start, end, step)], self.dtype)


def _slice_meta(self: Tensor, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
                step: int = 1) -> Tensor:
    return meta_tensor(slice_shape(self.shape, dim, start, end, step)[0], self.dtype)


def _slice_backward_cpu(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int,
                        step: int) -> Tensor:
    """slice.Tensor's gradient: zeros of the input's shape, ``grad_output`` in the slice."""
    _, dim, start, end = slice_shape(input_sizes, dim, start, end, step)
    out = np.zeros(input_sizes, dtype=grad_output._data.dtype)
    out[_slice_key(dim, start, end, step)] = grad_output._data
    return cpu_tensor(out, grad_output.dtype)


def _slice_backward_meta(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int,
                         step: int) -> Tensor:
    slice_shape(input_sizes, dim, start, end, step)
    return meta_tensor(input_sizes, grad_output.dtype)


def _nonzero_cpu(self: Tensor) -> Tensor:
    """The indices of the elements that are not zero, one row each ([n, ndim], int64)."""
    return cpu_tensor(np.argwhere(self._data).astype(np.int64, copy=False), DType.int64)


def _nonzero_meta(self: Tensor) -> Tensor:
    raise nonzero_meta_refusal()


def nonzero_meta_refusal() -> NotImplementedError:
    """torch's refusal of an operator whose result's shape needs a meta tensor's values."""
    return NotImplementedError(
        "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
        "data-independent implementation does not exist. This implementation returns a fake value, assuming all "
        "elements of the tensor are non-zero. To enable this registration, please set "
        "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True."
    )


_cpu.impl("slice.Tensor", _slice_cpu)
_meta.impl("slice.Tensor", _slice_meta)
_cpu.impl("slice_backward", _slice_backward_cpu)
_meta.impl("slice_backward", _slice_backward_meta)
_cpu.impl("nonzero", _nonzero_cpu)
_meta.impl("nonzero", _nonzero_meta)


# -- Tensor.__getitem__ -------------------------------------------------------------------
def _sliced(self: Tensor, dim: int, index: slice) -> Tensor:
    """slice.Tensor as torch calls it: no start is 0, no end is INT64_MAX, the step at its default left out."""
    if index.step is not None and index.step <= 0:  # Python's slice unpacking, then torch's indexing
        raise ValueError("slice step cannot be zero" if index.step == 0 else "step must be greater than zero")
    start = 0 if index.start is None else index.start
    end = _INT64_MAX if index.stop is None else index.stop
    if index.step is None or index.step == 1:
        return aten.slice.Tensor(self, dim, start, end)
    return aten.slice.Tensor(self, dim, start, end, index.step)


def _is_full(index: slice, size: int) -> bool:
    """Whether ``index`` takes a whole dimension of ``size`` (torch then calls nothing)."""
    if index.step not in (None, 1):
        return False
    _, _, start, end = slice_shape((size,), 0, index.start, index.stop, 1)
    return start == 0 and end == size


def getitem(self: Tensor, index: Any) -> Tensor:
    """``self[index]`` (torch's applySlicing, then index.Tensor): an integer
    selects (removing the dimension), a slice slices, None inserts a
    dimension of size 1, Ellipsis stands for the dimensions not named; a
    tensor or a list (of integers or bools) indexes its dimension, all of
    them in one index.Tensor call at the end.  One slice alone is always a
    slice.Tensor call; in a tuple a full slice (``:``) calls nothing, and an
    index that calls nothing gives an alias, as torch's.  A bad index raises
    what torch's indexing raises, with its texts."""
    if isinstance(index, slice):
        return _sliced(self, 0, index)
    if self.ndim == 0 and isinstance(index, int) and not isinstance(index, bool):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    items = tuple(_as_index_tensor(item) for item in _index_items(index))
    overriding = _overriding_types(items)
    if overriding:
        return overriding[0].__torch_function__(type(self).__getitem__, tuple(overriding), (self, index), {})
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, (int, slice, Tensor))) or isinstance(item, bool):
            raise NotImplementedError(
                f"indexing a tensor with {type(item).__name__} is not in the prototype: it takes integers, slices, "
                "None, Ellipsis, tensors and lists"
            )
    named = sum(_dims_named(item) for item in items)
    if named > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    # ``dim``: the dimension of the result the next index applies to.  Each
    # Ellipsis stands for the dimensions not named (torch takes several, each
    # standing for them).  A message names an index by its position (torch's real_dim).
    result, dim = self, 0
    # The tensors of the index, by the dimension of ``result`` each indexes (torch's outIndices).
    advanced: list[Optional[Tensor]] = []
    for position, item in enumerate(items):
        if isinstance(item, Tensor) and item.ndim == 0 and not item.dtype.is_floating_point and item.dtype.name != "bool":
            item = item.item()  # a 0-d integer tensor selects, as an integer does
        if isinstance(item, Tensor):
            advanced.extend([None] * (dim + 1 - len(advanced)))
            advanced[dim] = item
            dim += 1
        elif item is Ellipsis:
            dim += self.ndim - named
        elif item is None:
            result = aten.unsqueeze.default(result, dim)
            dim += 1
        elif isinstance(item, int):
            size = result.shape[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {position} with size {size}")
            result = aten.select.int(result, dim, item)
        else:
            if not _is_full(item, result.shape[dim]):
                result = _sliced(result, dim, item)
            dim += 1
    if advanced:
        return aten.index.Tensor(result, advanced)
    return aten.alias.default(result) if result is self else result


# torch's treatSequenceAsTuple: a list this long or longer is one tensor index.
_LONGEST_LIST_AS_TUPLE = 32


def _index_items(index: Any) -> tuple:
    """The items of an index, as torch reads them: a tuple's; a list's when it
    holds a tensor, a sequence, a slice, None or Ellipsis (deprecated: torch
    warns); else the index alone (a list of numbers: one tensor index)."""
    if isinstance(index, tuple):
        return index
    if (isinstance(index, list) and len(index) < _LONGEST_LIST_AS_TUPLE
            and any(item is None or item is Ellipsis or isinstance(item, (Tensor, list, tuple, slice)) for item in index)):
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch "
            "2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
            "x[torch.tensor(seq)], which will result either in an error or a different result", UserWarning,
            stacklevel=4)
        return tuple(index)
    return (index,)


def _as_index_tensor(item: Any) -> Any:
    """A sequence in an index as the tensor torch makes of it (int64, or bool for bools)."""
    return tensor(list(item)) if isinstance(item, (list, tuple)) else item


def _dims_named(item: Any) -> int:
    """How many dimensions of the tensor an index item uses (torch's count_specified_dimensions)."""
    if isinstance(item, Tensor):
        return item.ndim if item.dtype.name == "bool" else 1
    return int(isinstance(item, (int, slice)) and not isinstance(item, bool))


def _overriding_types(items: Sequence[Any]) -> list[type[Tensor]]:
    """The types of the index's tensors whose ``__torch_function__`` is their own,
    a subclass before its bases (torch's order of overloaded arguments)."""
    found: list[type[Tensor]] = []
    for item in items:
        if not isinstance(item, Tensor) or type(item) in found:
            continue
        cls = type(item)
        handler = getattr(cls.__torch_function__, "__func__", cls.__torch_function__)
        if handler in (default_torch_function, disabled_torch_function_impl):
            continue
        position = next((i for i, seen in enumerate(found) if issubclass(cls, seen)), len(found))
        found.insert(position, cls)
    return found
