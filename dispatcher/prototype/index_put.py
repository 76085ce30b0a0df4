"""``index_put_``, as torch 2.13 has it.

* ``index_put_`` is CompositeExplicitAutograd, a call of
  ``_index_put_impl_(..., unsafe=False)``, which has the CPU and Meta
  kernels; both have torch's ADInplaceOrView bookkeeping.  Their derivative
  is not written here: a call on a tensor that requires grad raises
  NotImplementedError saying so, rather than leaving the write out of the
  graph.  The indices are torch's: a list of int64/int32 tensors, bool or
  uint8 masks, and None for a whole dimension; the checks and their texts
  are torch's.

``Tensor.index_put_()`` calls it.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import AutoDispatchBelowADInplaceOrView, DispatchKeySet, Library
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET

from .bfloat16_rounding import round_in_place
from .dtypes import DType
from .inference_mode import check_inference_write
from .inplace_or_view import written_version_kernel
from .operators import aten, overload
from .tensor import Tensor, TensorMethods

__all__ = ["check_index_tensors", "no_derivative_autograd_kernel", "numpy_index"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")
_autograd = Library("aten", "IMPL", "Autograd")

_INDEX_DTYPES = {"int64", "int32", "bool", "uint8"}


# -- index_put_ --------------------------------------------------------------------------------
def _check_indices(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor) -> None:
    """torch's checks before a write, in its order (index_put_ and its meta function)."""
    if values.dtype != self.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {self.dtype.scalar_type_name} for the "
            f"destination and {values.dtype.scalar_type_name} for the source."
        )
    check_index_tensors(self, indices)


def check_index_tensors(self: Any, indices: Sequence[Optional[Any]]) -> None:
    """torch's checks of the indices of ``self[indices]`` (index and index_put_): their dtypes, their number."""
    dims = 0
    for index in indices:
        if index is None:
            dims += 1
            continue
        if index.dtype.name not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        # A mask covers as many dimensions as it has.
        dims += index.dim() if index.dtype.name in ("bool", "uint8") else 1
    if dims > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {dims})")


def numpy_index(self: Tensor, indices: Sequence[Optional[Tensor]]) -> tuple:
    """The numpy index that selects what ``self[indices]`` selects, with torch's
    checks of masks' shapes and of indices' bounds."""
    index: list[Any] = []
    dim = 0
    for entry in indices:
        if entry is None:
            index.append(slice(None))
            dim += 1
            continue
        data = entry._data
        if entry.dtype.name in ("bool", "uint8"):
            for k, size in enumerate(entry.shape):
                if size != self.shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(entry.shape)} at index {k} does not match the shape of the "
                        f"indexed tensor {list(self.shape)} at index {dim + k}"
                    )
            index.append(data.astype(bool, copy=False))
            dim += entry.dim()
            continue
        size = self.shape[dim]
        outside = (data >= size) | (data < -size)
        if outside.any():
            raise IndexError(f"index {int(data[outside].flat[0])} is out of bounds for dimension {dim} with size {size}")
        index.append(data)
        dim += 1
    return tuple(index)


def _index_put_impl_cpu(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False,
                        unsafe: bool = False) -> Tensor:
    _check_indices(self, indices, values)
    index = numpy_index(self, indices)
    target_shape = self._data[index].shape
    try:
        source = np.broadcast_to(values._data, target_shape)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to indexing result of "
            f"shape {list(target_shape)}"
        ) from None
    check_inference_write(self)
    if not self._data.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    if accumulate:
        np.add.at(self._data, index, source)  # a repeated index adds each of its values
    else:
        self._data[index] = source
    if self.dtype is DType.bfloat16:
        round_in_place(self._data)
    return self


def _index_put_impl_meta(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False,
                         unsafe: bool = False) -> Tensor:
    _check_indices(self, indices, values)
    return self


def _index_put_(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False) -> Tensor:
    return aten._index_put_impl_.default(self, indices, values, accumulate, False)


def no_derivative_autograd_kernel(name: str) -> Any:
    """The Autograd kernel of an operator whose derivative the prototype lacks:
    the call below when nothing requires grad, else a clear refusal."""
    op = overload(name)
    schema = op.schema

    def kernel(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        for value in schema.bind(args, kwargs):
            values = value if isinstance(value, (list, tuple)) else [value]
            if any(getattr(v, "requires_grad", False) for v in values):
                raise NotImplementedError(
                    f"aten::{name}: dispatcher.prototype has no derivative for it; it cannot be called on tensors "
                    "that require grad (call it under no_grad(), or on detached tensors)"
                )
        with AutoDispatchBelowADInplaceOrView():  # as torch's autograd kernels: calls below are not seen twice
            return op.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, *args, **kwargs)

    return kernel


_cpu.impl("_index_put_impl_", _index_put_impl_cpu)
_meta.impl("_index_put_impl_", _index_put_impl_meta)
_explicit.impl("index_put_", _index_put_)
for _name in ("index_put_", "_index_put_impl_"):
    _inplace_or_view.impl(_name, written_version_kernel(overload(_name)), with_keyset=True)
    _autograd.impl(_name, no_derivative_autograd_kernel(_name), with_keyset=True)


# -- the methods ---------------------------------------------------------------------------------
def _index_put__method(self: Any, indices: Sequence[Any], values: Any, accumulate: bool = False) -> Any:
    # torch's Tensor.index_put_ takes a sequence of tensors (None is refused here, unlike the operator's Tensor?[]).
    for i, index in enumerate(indices):
        if not isinstance(index, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(index).__name__}")
    return aten.index_put_.default(self, list(indices), values, accumulate)


TensorMethods.index_put_ = _index_put__method  # type: ignore[attr-defined]
