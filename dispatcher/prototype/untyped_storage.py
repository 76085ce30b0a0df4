"""``Tensor.untyped_storage()``: the memory a tensor views, as torch's UntypedStorage
describes it (its size in bytes, where it starts, its device).

A CPU tensor's is the numpy array at the root of its views; a meta tensor's
has a size and no memory; a wrapper subclass's tensor has none (it holds no
data), and asking where it starts raises torch's error.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .tensor import Tensor

__all__ = ["UntypedStorage"]


class UntypedStorage:
    """The bytes under a tensor (see the module's docstring)."""

    def __init__(self, root: Optional[np.ndarray], nbytes: int, device: object) -> None:
        self._root = root
        self._nbytes = nbytes
        self.device = device

    def nbytes(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        """The address of the first byte (0 for a meta tensor's, which has no memory)."""
        if self._root is None:
            if self.device.type == "meta":  # type: ignore[attr-defined]
                return 0
            raise RuntimeError("Attempted to access the data pointer on an invalid python storage.")
        address: int = self._root.__array_interface__["data"][0]
        return address

    def __repr__(self) -> str:
        return f"<UntypedStorage of {self._nbytes} bytes on {self.device}>"


def untyped_storage(t: Tensor) -> UntypedStorage:
    """``t.untyped_storage()``."""
    kind = t.device.type
    if kind == "meta":
        return UntypedStorage(None, (t.storage_offset() + t.numel()) * t.element_size(), t.device)
    if kind != "cpu":
        raise NotImplementedError(f"untyped_storage() of a {kind} tensor: only CPU and meta tensors describe theirs")
    if t._data is None:  # a wrapper subclass's tensor: no memory of its own
        return UntypedStorage(None, 0, t.device)
    root = t._data
    while isinstance(root.base, np.ndarray):
        root = root.base
    return UntypedStorage(root, root.nbytes, t.device)


# Tensor's own attribute (Note [Methods set by the modules above] in tensor.py).
Tensor.untyped_storage = untyped_storage  # type: ignore[attr-defined]
