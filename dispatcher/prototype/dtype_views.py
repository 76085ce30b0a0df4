"""``view(dtype)`` (``aten::view.dtype``), as torch 2.13 has it.

The same memory read as another dtype: of the same shape when the element
sizes are equal, else with the last dimension scaled by the ratio of the
sizes, which torch allows only when that dimension is contiguous and
divides evenly (its checks and texts are torch's).  The result is a new
tensor that shares the version counter of ``self`` but is no view of it for
autograd: torch's output is not differentiable (no grad_fn, no ``_base``).

torch's kernel is CompositeExplicitAutograd; here, as for the other views
that need strides (composite.py), it is a CPU kernel over numpy memory and a
Meta kernel.  ``Tensor.view(dtype)`` calls it.
"""
from __future__ import annotations

from typing import Any

from dispatcher import AutoDispatchBelowADInplaceOrView, DispatchKeySet, Library
from dispatcher.keysets import AFTER_ADINPLACEORVIEW_KEYSET

from .dtypes import DType, to_numpy_dtype
from .meta import meta_tensor
from .operators import overload
from .shapes import Shape
from .tensor import Tensor, cpu_tensor

__all__ = ["dtype_view_shape"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")


def dtype_view_shape(self: Any, dtype: DType) -> Shape:
    """The shape of ``self`` viewed as ``dtype``, with torch's checks in its order."""
    old, new = to_numpy_dtype(self.dtype).itemsize, to_numpy_dtype(dtype).itemsize
    if old == new:
        return tuple(self.shape)
    names = f"{self.dtype.scalar_type_name} as {dtype.scalar_type_name}"
    if self.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {names} (different element sizes)")
    if self.stride()[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {names} (different element sizes), but got "
                           f"{self.stride()[-1]}")
    last = self.shape[-1]
    if new > old:
        ratio = new // old
        if last % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names} (different element "
                               f"sizes), but got {last}")
        if self.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view {names} (different "
                               f"element sizes), but got {self.storage_offset()}")
        return tuple(self.shape[:-1]) + (last // ratio,)
    return tuple(self.shape[:-1]) + (last * (old // new),)


def _view_dtype_cpu(self: Tensor, dtype: DType) -> Tensor:
    dtype_view_shape(self, dtype)
    return cpu_tensor(self._data.view(to_numpy_dtype(dtype)), dtype)


def _view_dtype_meta(self: Tensor, dtype: DType) -> Tensor:
    return meta_tensor(dtype_view_shape(self, dtype), dtype)


def _shares_version(keyset: DispatchKeySet, self: Any, dtype: DType) -> Any:
    """view.dtype's ADInplaceOrView kernel: the result counts the writes of ``self``'s memory."""
    with AutoDispatchBelowADInplaceOrView():
        out = _VIEW_DTYPE.redispatch(keyset & AFTER_ADINPLACEORVIEW_KEYSET, self, dtype)
    if isinstance(self, Tensor) and isinstance(out, Tensor):
        out._version_counter = self._version_counter
    return out


_VIEW_DTYPE = overload("view.dtype")
_cpu.impl("view.dtype", _view_dtype_cpu)
_meta.impl("view.dtype", _view_dtype_meta)
_inplace_or_view.impl("view.dtype", _shares_version, with_keyset=True)
