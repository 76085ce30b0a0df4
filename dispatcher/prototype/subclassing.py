"""Tensor subclasses as torch makes them: wrapper subclasses, ``_make_subclass``, ``as_subclass``.

A *wrapper subclass* (``Tensor._make_wrapper_subclass(cls, size, ...)``, in
the subclass's ``__new__``) is a Tensor with a shape, strides, dtype, device
and requires_grad but no data: what its operators compute is its
``__torch_dispatch__``'s business (usually: unwrap an inner tensor, call the
operator on it, wrap the result).  It carries the keys of its device, the
autograd keys, and the Python keys its handler needs, so autograd records
the wrapper (it is the leaf, not its inner tensor) and then the handler
runs below autograd, where calls on inner tensors are not recorded: as in
torch.

``Tensor._make_subclass(cls, data, require_grad)`` is an instance of
``cls`` sharing ``data``'s memory and version counter, without its history
(torch's: ``data.detach()`` as a ``cls``).

``Tensor.__torch_function__`` is torch's default: the call, with results
given the subclass's type (torch's ``_convert``); torch_function_methods.py
says where the prototype calls it.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from dispatcher import DispatchKeySet, disabled_torch_dispatch_impl
from dispatcher.torch_function import DisableTorchFunctionSubclass, disabled_torch_function_impl

from .dtypes import DType, check_dtype, default_float
from .python_metadata import apply_policy, policy_from
from .tensor import Tensor, check_not_owned_by_handler
from .tensor_options import check_options, strided

__all__ = ["as_subclass", "default_torch_function", "disabled_torch_function_impl", "make_subclass",
           "make_wrapper_subclass"]

def _check_subclass(cls: Any, factory: str) -> None:
    if not isinstance(cls, type) or not issubclass(cls, Tensor):
        raise TypeError(f"{factory}: cls must be a subclass of dispatcher.prototype.Tensor, got {cls!r}")


def make_wrapper_subclass(cls: type, size: Sequence[int], strides: Optional[Sequence[int]] = None,
                          storage_offset: Optional[int] = None, memory_format: Any = None,
                          dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
                          pin_memory: bool = False, requires_grad: bool = False,
                          dispatch_sizes_strides_policy: Optional[str] = None, dispatch_device: bool = False,
                          dispatch_layout: bool = False, _extra_dispatch_keys: Optional[DispatchKeySet] = None,
                          storage_size: Optional[int] = None) -> Any:
    """A ``cls`` of these sizes, strides, storage offset, dtype and device, with no
    data (torch's ``Tensor._make_wrapper_subclass``, whose arguments may be given
    by position too); ``cls`` must define ``__torch_dispatch__``.

    The ``dispatch_*`` arguments make the handler answer for metadata
    (python_metadata.py); ``_extra_dispatch_keys`` are added to its keys."""
    _check_subclass(cls, "_make_wrapper_subclass")
    if getattr(cls, "__torch_dispatch__", None) in (None, disabled_torch_dispatch_impl):
        raise TypeError(f"{cls.__name__} must define __torch_dispatch__")
    policy = policy_from(dispatch_sizes_strides_policy, dispatch_device, dispatch_layout)
    if storage_size is not None:
        raise NotImplementedError("_make_wrapper_subclass: storage_size is not supported: a prototype wrapper has "
                                  "no storage")
    if _extra_dispatch_keys is not None and not isinstance(_extra_dispatch_keys, DispatchKeySet):
        raise TypeError(f"_make_wrapper_subclass: _extra_dispatch_keys must be a DispatchKeySet, not "
                        f"{type(_extra_dispatch_keys).__name__}")
    if pin_memory or memory_format is not None:
        check_options(pin_memory, memory_format)
    if layout not in (None, strided):
        raise NotImplementedError(f"_make_wrapper_subclass: layout {layout!r} is not supported; prototype tensors are strided")
    shape = _int_tuple(size, "size")
    if strides is not None:
        strides = _int_tuple(strides, "strides")
        if len(strides) != len(shape):
            raise RuntimeError(f"_make_wrapper_subclass: {len(shape)} sizes but {len(strides)} strides")
    if storage_offset is not None and (not isinstance(storage_offset, int) or storage_offset < 0):
        raise RuntimeError(f"_make_wrapper_subclass: storage_offset must be a non-negative int, got {storage_offset!r}")
    dtype = default_float if dtype is None else check_dtype(dtype)
    out: Any = Tensor.__new__(cls)
    Tensor.__init__(out, None, shape, dtype, "cpu" if device is None else device)
    out._strides = strides  # None: row-major (Tensor.stride)
    if storage_offset:
        out._storage_offset = storage_offset
    if _extra_dispatch_keys is not None:
        out.key_set = out.key_set | _extra_dispatch_keys
    if requires_grad:
        out.requires_grad_()
    apply_policy(out, policy)
    return out


def make_subclass(cls: type, data: Tensor, require_grad: bool = False, *,
                  dispatch_sizes_strides_policy: Optional[str] = None, dispatch_device: bool = False,
                  dispatch_layout: bool = False, device_for_backend_keys: Any = None) -> Any:
    """A ``cls`` sharing ``data``'s memory and version counter, without its
    autograd history (torch's ``Tensor._make_subclass``); the ``dispatch_*``
    arguments as _make_wrapper_subclass's."""
    _check_subclass(cls, "_make_subclass")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass: data must be a Tensor, not {type(data).__name__}")
    policy = policy_from(dispatch_sizes_strides_policy, dispatch_device, dispatch_layout)
    check_not_owned_by_handler(data, cls)
    out = _same_data(data, cls)
    if require_grad:
        out.requires_grad_()
    apply_policy(out, policy)
    return out


def as_subclass(t: Tensor, cls: type) -> Any:
    """``t`` as a ``cls``: the same data, and the same place in the autograd graph (torch's ``as_subclass``)."""
    _check_subclass(cls, "as_subclass")
    check_not_owned_by_handler(t, cls)
    out = _same_data(t, cls)
    out.requires_grad, out.grad_fn, out._output_nr = t.requires_grad, t.grad_fn, t._output_nr
    return out


def _same_data(t: Tensor, cls: type) -> Any:
    out: Any = Tensor.__new__(cls)
    Tensor.__init__(out, t._data, t.shape, t.dtype, t.device)
    out._version_counter = t._version_counter  # one memory, one version counter
    out._strides = t._strides
    if t._storage_offset:
        out._storage_offset = t._storage_offset
    return out


def _int_tuple(values: Any, what: str) -> tuple[int, ...]:
    try:
        result = tuple(values)
    except TypeError:
        raise TypeError(f"_make_wrapper_subclass: {what} must be a sequence of ints, not {type(values).__name__}") from None
    if not all([type(v) is int for v in result]) and not all(isinstance(v, int) and not isinstance(v, bool) for v in result):
        raise TypeError(f"_make_wrapper_subclass: {what} must be a sequence of ints, got {list(result)!r}")
    return result


def default_torch_function(cls: type, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
    """torch.Tensor.__torch_function__: run ``func`` with the subclasses' handlers
    off, and give tensor results the type ``cls``."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        return _convert(func(*args, **(kwargs or {})), cls)


def _convert(value: Any, cls: type) -> Any:
    if cls is Tensor:
        return value
    if isinstance(value, Tensor) and not isinstance(value, cls):
        return as_subclass(value, cls)
    if isinstance(value, (tuple, list)):
        return type(value)(_convert(v, cls) for v in value)
    return value


# Tensor's own attributes (Note [Methods set by the modules above] in tensor.py).
Tensor._make_wrapper_subclass = staticmethod(make_wrapper_subclass)  # type: ignore[method-assign]
Tensor._make_subclass = staticmethod(make_subclass)  # type: ignore[method-assign]
Tensor.as_subclass = as_subclass  # type: ignore[method-assign,assignment]
Tensor.__torch_function__ = classmethod(default_torch_function)  # type: ignore[method-assign,assignment]
