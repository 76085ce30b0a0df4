"""``copy.deepcopy`` of a tensor, as torch's ``Tensor.__deepcopy__``.

A plain tensor, or a subclass's tensor with values of its own, is copied
into a tensor from ``new_empty`` (so a subclass's copy is of its class only
if its ``new_empty`` says so: torch's check), with a copy of the values;
a tensor without values of its own (a wrapper subclass's, a meta tensor)
is copied by ``clone``, which a wrapper's handler answers (again: the copy
must be of the same class).  Then, as torch: requires_grad, a deep copy of
``.grad`` and of the attributes the object carries beyond a tensor's own.
Only graph leaves can be copied.
"""
from __future__ import annotations

import copy
import copyreg
from typing import Any

import numpy as np

from dispatcher import AutoDispatchBelowAutograd

from .tensor import Tensor

__all__ = ["deepcopy_tensor"]

# Tensor's own fields that live in an instance's __dict__ once set (see
# Tensor's class attributes): the copy has its own, made above; what else
# the dict holds is the object's (a subclass's ``elem``, user attributes).
_TENSOR_FIELDS = frozenset({"_grad", "_output_nr", "_base", "_grad_accumulator", "_wrapped_number", "_strides",
                            "_storage_offset"})

_TENSOR_SLOTS = frozenset(copyreg._slotnames(Tensor))  # type: ignore[attr-defined]

_NON_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
             "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
             "see https://github.com/pytorch/pytorch/pull/103001")
_WRAPPER = ("The default implementation of __deepcopy__() for wrapper subclasses only works for subclass types that "
            "implement clone() and for which cloning returns another instance of the same subclass. You should either "
            "properly implement clone() for your subclass or override __deepcopy__() if it is intended behavior for "
            "clone() to return an instance of a different type.")
_NON_WRAPPER = ("The default implementation of __deepcopy__() for non-wrapper subclasses only works for subclass types "
                "that implement new_empty() and for which that function returns another instance of the same "
                "subclass. You should either properly implement new_empty() for your subclass or override "
                "__deepcopy__() if it is intended behavior for new_empty() to return an instance of a different type.")


def deepcopy_tensor(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """``Tensor.__deepcopy__`` (see the module's docstring)."""
    if not self.is_leaf:
        raise RuntimeError(_NON_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    with AutoDispatchBelowAutograd():  # torch.no_grad
        if self._data is None:  # a wrapper subclass's tensor, or a meta tensor: no values to copy
            new_tensor = self.clone()
            if type(new_tensor) is not type(self):
                raise RuntimeError(_WRAPPER)
        else:
            new_tensor = self.new_empty([])
            if type(new_tensor) is not type(self):
                raise RuntimeError(_NON_WRAPPER)
            # torch sets the copy to a copy of the storage (set_); here the values, row-major.
            new_tensor._data = np.array(self._data, copy=True)
            new_tensor.shape, new_tensor.dtype, new_tensor._strides = self.shape, self.dtype, None
        if self.requires_grad:
            new_tensor.requires_grad_()
        if self.grad is not None:
            new_tensor.grad = copy.deepcopy(self.grad, memo)
        if type(self) is not Tensor:  # a subclass's own slots (torch: "Plain Tensors don't have slots")
            for slot in copyreg._slotnames(type(self)):  # type: ignore[attr-defined]
                if slot not in _TENSOR_SLOTS and hasattr(self, slot):
                    setattr(new_tensor, slot, copy.deepcopy(getattr(self, slot), memo))
        for name, value in self.__dict__.items():
            if name not in _TENSOR_FIELDS:
                setattr(new_tensor, name, copy.deepcopy(value, memo))
    memo[id(self)] = new_tensor
    return new_tensor


# Tensor's own attribute (Note [Methods set by the modules above] in tensor.py).
Tensor.__deepcopy__ = deepcopy_tensor  # type: ignore[attr-defined]
