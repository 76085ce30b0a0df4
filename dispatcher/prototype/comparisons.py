"""``==`` on tensors and ``all()``: aten::eq.Scalar, eq.Tensor and all, for the CPU and Meta keys.

As torch's, ``t == x`` is elementwise (a bool tensor); a tensor still
hashes by its identity.  The comparison runs in the promoted dtype
(dtypes.result_type), so a uint64 tensor compared with a Python int beyond
int64's range compares as uint64, as torch's does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dispatcher import Library, TensorBase

from . import shapes
from .dtypes import NUMPY_DTYPES, DType, result_type
from .meta import meta_tensor
from .operators import aten
from .tensor import Tensor, cpu_tensor

__all__: list[str] = []

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")


def _bools(array: Any) -> Tensor:
    return cpu_tensor(np.asarray(array, dtype=np.bool_), DType.bool)


def eq_scalar(self: Tensor, other: Any) -> Tensor:
    dt = result_type(self, other)
    return _bools(self._data.astype(NUMPY_DTYPES[dt], copy=False) == np.asarray(other, dtype=NUMPY_DTYPES[dt]))


def eq_tensor(self: Tensor, other: Tensor) -> Tensor:
    shapes.broadcast_shapes(self.shape, other.shape)
    dt = result_type(self, other)
    return _bools(self._data.astype(NUMPY_DTYPES[dt], copy=False) == other._data.astype(NUMPY_DTYPES[dt], copy=False))


def all_(self: Tensor) -> Tensor:
    return _bools(np.all(self._data))


_cpu.impl("eq.Scalar", eq_scalar)
_cpu.impl("eq.Tensor", eq_tensor)
_cpu.impl("all", all_)
_meta.impl("eq.Scalar", lambda self, other: meta_tensor(self.shape, DType.bool))
_meta.impl("eq.Tensor", lambda self, other: meta_tensor(shapes.broadcast_shapes(self.shape, other.shape), DType.bool))
_meta.impl("all", lambda self: meta_tensor((), DType.bool))


def _eq_method(self: Tensor, other: Any) -> Any:
    """``t == x`` and ``t.eq(x)``: elementwise, as torch's."""
    return aten.eq.Tensor(self, other) if isinstance(other, TensorBase) else aten.eq.Scalar(self, other)


def _all_method(self: Tensor) -> Any:
    return aten.all.default(self)


# Tensor's own methods (Note [Methods set by the modules above] in tensor.py);
# __eq__ set on the class leaves its __hash__ (by identity) as it is.
Tensor.__eq__ = _eq_method  # type: ignore[assignment,method-assign]
Tensor.eq = _eq_method  # type: ignore[attr-defined]
Tensor.all = _all_method  # type: ignore[attr-defined]
