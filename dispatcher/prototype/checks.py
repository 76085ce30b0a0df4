"""What ``dispatcher.optests.opcheck`` asks about prototype tensors (dispatcher.tensor_protocols.TensorChecks).

Copies are clones made under no_grad, then given the original's
``requires_grad`` (leaves, as torch's ``clone_input`` makes them); values
are compared through numpy; the random generator is seeded for opcheck's
repeated calls (``seeded``), whose gradients the autograd engine computes
(``gradients``), and compared as torch.testing.assert_close compares
(``mismatch``, closeness.py); a meta tensor of the same shape and dtype
stands for a FakeTensor; memory is shared between CPU tensors whose numpy
arrays may overlap, and between tensors of another device that hold the
same buffer.
"""
from __future__ import annotations

import functools
from typing import Any, ContextManager, Optional, Sequence

import numpy as np

from dispatcher.tensor_protocols import register_tensor_checks

from .autograd import grad, no_grad
from .closeness import mismatch
from .inplace_or_view import META_VIEWS
from .dtypes import DType
from .generator import seeded
from .meta import meta_tensor
from .operators import aten
from .tensor import Tensor

__all__ = ["PrototypeTensorChecks"]


class PrototypeTensorChecks:
    """TensorChecks for dispatcher.prototype's Tensor."""

    def copy(self, tensor: Tensor) -> Tensor:
        with no_grad():
            copy = aten.clone.default(tensor)
        copy.requires_grad = tensor.requires_grad
        return copy

    def snapshot(self, tensor: Tensor) -> Optional[np.ndarray]:
        return None if tensor.device.type == "meta" else tensor.numpy().copy()

    def changed(self, tensor: Tensor, snapshot: Optional[np.ndarray]) -> bool:
        if snapshot is None:
            return False  # a meta tensor has no values to change
        now = tensor.numpy()
        return now.shape != snapshot.shape or not np.array_equal(now, snapshot, equal_nan=now.dtype.kind == "f")

    def to_meta(self, tensor: Tensor) -> Tensor:
        meta = meta_tensor(tensor.shape, tensor.dtype)
        meta.requires_grad = tensor.requires_grad
        return meta

    def is_meta(self, tensor: Tensor) -> bool:
        return tensor.device.type == "meta"

    def metadata(self, tensor: Tensor) -> tuple[tuple[int, ...], DType]:
        return tuple(tensor.shape), tensor.dtype

    def mismatch(self, actual: Tensor, expected: Tensor, rtol: Optional[float], atol: Optional[float]) -> Optional[str]:
        return mismatch(actual, expected, rtol, atol)

    def layout(self, tensor: Tensor) -> tuple[tuple[int, ...], int]:
        return tuple(tensor.stride()), tensor.storage_offset()

    def meta_views_made(self) -> int:
        return META_VIEWS.made

    def seeded(self) -> ContextManager[None]:
        return seeded()

    def gradients(self, outputs: Sequence[Tensor], inputs: Sequence[Tensor]) -> tuple[Optional[Tensor], ...]:
        total = functools.reduce(aten.add.Tensor, [aten.sum.default(o) for o in outputs])
        return grad([total], list(inputs), allow_unused=True)

    def shares_memory(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if a.device != b.device or a.device.type == "meta":
            return False
        if a.device.type == "cpu":
            return bool(np.may_share_memory(a._data, b._data))
        return a._data is b._data


register_tensor_checks(Tensor, PrototypeTensorChecks())
