"""``copy.deepcopy`` and ``pickle`` of tensors and tensor subclasses, as torch 2.13's
``Tensor.__deepcopy__`` and ``Tensor.__reduce_ex__`` do them (torch/_tensor.py).

* A tensor with data is copied with its values, shape, strides, dtype,
  device and ``requires_grad`` (and its ``.grad``, deep-copied); only leaves
  can be deep-copied.  A subclass instance with data is made by its
  ``new_empty`` (which must return the same subclass) and given the copied
  memory, as torch's ``set_``.
* A wrapper subclass (no data of its own) is copied by its ``clone()``,
  which must return the same subclass; pickled, it is rebuilt by
  ``_make_wrapper_subclass`` with its size, strides, dtype, device and
  requires_grad, as torch's ``_rebuild_wrapper_subclass``.
* A subclass's own state (its ``__dict__`` and its ``__slots__``) is
  deep-copied or pickled with it; the prototype's fields (data, version
  counter, autograd links) are not state: a copy is a new leaf.
"""
from __future__ import annotations

import copyreg
from copy import deepcopy
from typing import Any, Optional

import numpy as np

from dispatcher import AutoDispatchBelowAutograd

from .dtypes import DType
from .tensor import Tensor

__all__: list[str] = []

# The prototype's own fields of a tensor: Tensor's slots, the class attributes
# a tensor overrides in its __dict__ (_base, _grad, _strides, ...; and, on the
# pure-Python engine, TensorBase's _key_set and _bits), and a wrapper's
# storage object (storage.wrapper_storage: a copy has its own).
_TENSOR_FIELDS = (frozenset(Tensor.__slots__).union(*(vars(cls) for cls in Tensor.__mro__ if cls is not object))
                  | {"_wrapper_storage"})

_NOT_A_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001"
)
_WRAPPER_CLONE = (
    "The default implementation of __deepcopy__() for wrapper subclasses only works for subclass types that "
    "implement clone() and for which cloning returns another instance of the same subclass. You should either "
    "properly implement clone() for your subclass or override __deepcopy__() if it is intended behavior for "
    "clone() to return an instance of a different type."
)
_NEW_EMPTY = (
    "The default implementation of __deepcopy__() for non-wrapper subclasses only works for subclass types that "
    "implement new_empty() and for which that function returns another instance of the same subclass. You should "
    "either properly implement new_empty() for your subclass or override __deepcopy__() if it is intended behavior "
    "for new_empty() to return an instance of a different type."
)


def _has_data(t: Tensor) -> bool:
    return t._data is not None


def _subclass_state(t: Tensor) -> tuple[dict[str, Any], dict[str, Any]]:
    """A subclass instance's own state: its __dict__ and __slots__ less the prototype's fields."""
    own = {name: value for name, value in getattr(t, "__dict__", {}).items() if name not in _TENSOR_FIELDS}
    slots = {name: getattr(t, name) for name in copyreg._slotnames(type(t))  # type: ignore[attr-defined]
             if name not in _TENSOR_FIELDS and hasattr(t, name)}
    return own, slots


def _set_state(t: Tensor, state: tuple[dict[str, Any], dict[str, Any]]) -> None:
    own, slots = state
    for name, value in {**own, **slots}.items():
        setattr(t, name, value)


def _take_memory(target: Tensor, data: Optional[np.ndarray], source: Tensor) -> None:
    """torch's ``set_``: ``target`` views ``data`` with ``source``'s shape, dtype and device."""
    target._data, target.shape, target.dtype, target.device = data, source.shape, source.dtype, source.device
    if source._strides is not None:
        target._strides = source._strides


def tensor_deepcopy(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """torch's Tensor.__deepcopy__."""
    if not self.is_leaf:
        raise RuntimeError(_NOT_A_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    with AutoDispatchBelowAutograd():  # torch.no_grad()
        if (type(self) is not Tensor and not _has_data(self)) or self.device.type != "cpu":
            # torch clones where there is no storage to copy: a wrapper subclass, a meta or PrivateUse1 tensor.
            new_tensor = self.clone()
            if type(new_tensor) is not type(self):
                raise RuntimeError(_WRAPPER_CLONE)
        else:
            data = np.array(self._data, copy=True)
            if type(self) is Tensor:
                new_tensor = Tensor(data, self.shape, self.dtype, self.device)
                new_tensor._strides = self._strides
            else:
                new_tensor = self.new_empty([])
                if type(new_tensor) is not type(self):
                    raise RuntimeError(_NEW_EMPTY)
                _take_memory(new_tensor, data, self)
        new_tensor.requires_grad = self.requires_grad
        if self.grad is not None:
            new_tensor.grad = deepcopy(self.grad, memo)
        if type(self) is not Tensor:
            own, slots = _subclass_state(self)
            _set_state(new_tensor, (deepcopy(own, memo), deepcopy(slots, memo)))
    memo[id(self)] = new_tensor
    return new_tensor


def rebuild_tensor(data: Optional[np.ndarray], shape: tuple[int, ...], strides: Optional[tuple[int, ...]], dtype: DType,
                   device: str, requires_grad: bool) -> Tensor:
    """A pickled tensor (torch's _rebuild_tensor_v2, and _rebuild_meta_tensor_no_storage for a meta one)."""
    t = Tensor(data, shape, dtype, "meta" if data is None else "cpu")
    t._strides = strides
    if device not in ("cpu", "meta"):
        t = t.to(device)
    t.requires_grad = requires_grad
    return t


def rebuild_wrapper_subclass(cls: type, dtype: DType, size: tuple[int, ...], strides: Optional[tuple[int, ...]],
                             device: str, requires_grad: bool) -> Tensor:
    """A pickled wrapper subclass instance (torch's _rebuild_wrapper_subclass)."""
    return Tensor._make_wrapper_subclass(cls, size, strides=strides, dtype=dtype, device=device,
                                         requires_grad=requires_grad)


def rebuild_from_type(func: Any, new_type: type, args: tuple, state: tuple[dict[str, Any], dict[str, Any]]) -> Tensor:
    """torch's _rebuild_from_type_v2: ``func(*args)`` as a ``new_type``, with its state."""
    out = func(*args)
    if type(out) is not new_type:
        out = out.as_subclass(new_type)
    if getattr(new_type, "__setstate__", None) is not getattr(Tensor, "__setstate__", None):
        out.__setstate__(state)
    else:
        _set_state(out, state)
    return out


def tensor_reduce_ex(self: Tensor, protocol: Any) -> tuple:
    """torch's Tensor.__reduce_ex__: the function and arguments that rebuild the tensor."""
    if type(self) is not Tensor and not _has_data(self):
        args: tuple = (type(self), self.dtype, tuple(self.shape), self._strides, str(self.device), self.requires_grad)
        func: Any = rebuild_wrapper_subclass
    else:
        # (np.array, not np.ascontiguousarray, which makes a 0-d array 1-d)
        data = None if self.device.type == "meta" else np.array(self.numpy(), order="C")
        func, args = rebuild_tensor, (data, tuple(self.shape), None, self.dtype, self.device.type, self.requires_grad)
    if type(self) is Tensor:
        return func, args
    return rebuild_from_type, (func, type(self), args, _subclass_state(self))


Tensor.__deepcopy__ = tensor_deepcopy  # type: ignore[attr-defined]
Tensor.__reduce_ex__ = tensor_reduce_ex  # type: ignore[assignment,method-assign]
