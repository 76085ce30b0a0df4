"""``cumprod``, as torch 2.13 has it: CPU and Meta kernels.

The result's dtype is torch's: the ``dtype`` asked for (the input is cast to
it first), else int64 for an integer or bool input, else the input's.  Its
derivative (torch's cumprod_backward) is not written here: a call on a
tensor that requires grad raises NotImplementedError saying so, rather than
leaving the call out of the graph.

``Tensor.cumprod(dim, dtype=None)`` calls it.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from dispatcher import Library

from .dtypes import DType, optional_dtype, to_numpy_dtype
from .index_put import no_derivative_autograd_kernel
from .meta import meta_tensor
from .operators import aten
from .shapes import wrap_dim
from .tensor import Tensor, TensorMethods, cpu_tensor

__all__ = ["cumulative_dtype"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_autograd = Library("aten", "IMPL", "Autograd")


def cumulative_dtype(self: Any, dtype: Optional[DType]) -> DType:
    """The dtype of cumprod's (and cumsum's) result."""
    given = optional_dtype(dtype)
    if given is not None:
        return given
    return self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else DType.int64


def _cumprod_cpu(self: Tensor, dim: int, *, dtype: Optional[DType] = None) -> Tensor:
    dim = wrap_dim(dim, self.ndim)
    dt = cumulative_dtype(self, dtype)
    values = self._data.astype(to_numpy_dtype(dt), copy=False)
    if self.ndim == 0:
        return cpu_tensor(values.copy(), dt)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and nan, silently, as torch
        return cpu_tensor(np.cumprod(values, axis=dim, dtype=to_numpy_dtype(dt)), dt)


def _cumprod_meta(self: Tensor, dim: int, *, dtype: Optional[DType] = None) -> Tensor:
    wrap_dim(dim, self.ndim)
    return meta_tensor(self.shape, cumulative_dtype(self, dtype))


_cpu.impl("cumprod", _cumprod_cpu)
_meta.impl("cumprod", _cumprod_meta)
_autograd.impl("cumprod", no_derivative_autograd_kernel("cumprod"), with_keyset=True)


def _cumprod_method(self: Any, dim: int, *, dtype: Optional[DType] = None) -> Any:
    return aten.cumprod.default(self, dim, dtype=optional_dtype(dtype))


TensorMethods.cumprod = _cumprod_method  # type: ignore[attr-defined]
