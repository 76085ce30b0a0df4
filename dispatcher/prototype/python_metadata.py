"""Metadata a tensor subclass's ``__torch_dispatch__`` answers for: torch's
"slow paths" of ``_make_wrapper_subclass`` / ``_make_subclass``.

Made with ``dispatch_sizes_strides_policy="strides"``, a subclass instance's
strides queries (``stride()``, ``is_contiguous()``, and the operators
is_strides_like_format and is_non_overlapping_and_dense) are asked of its
handler; with ``"sizes"``, its sizes queries too (``dim()``, ``size()``,
``shape``, ``numel()``, ``storage_offset()``, and the numel ``data_ptr()``
reads); with ``dispatch_device=True`` its ``device``; with
``dispatch_layout=True`` its ``layout``.  Each query calls the handler, as
torch does, with the aten (or prim) operator torch names, the tensor and the
query's argument: ``aten.dim.default``, ``aten.sym_size.default``,
``aten.sym_stride.default``, ``aten.sym_numel.default``,
``aten.sym_storage_offset.default``, ``aten.numel.default``,
``aten.is_contiguous.default`` / ``.memory_format``,
``aten.is_strides_like_format.default``,
``aten.is_non_overlapping_and_dense.default``, ``prim.device.default``,
``prim.layout.default``.  A dispatch mode, if one is active, is asked first.
An answer of None means "the tensor's own" for all but dim, device and
layout, which must be answered; NotImplemented from every handler raises
torch's TypeError (torch names the operator ``torch.ops.<ns>.<name>``).

The queries are methods and properties of the subclass: the first instance
made with a policy gives its class (once) versions of them that consult the
instance's policy, so plain tensors, and instances made without one, keep
their fields.  Kernels inside the prototype read the fields (``t.shape``
and ``t.device`` of the tensors they get), as torch's read a TensorImpl's;
a wrapper's handler unwraps before they run.

The operators themselves are CompositeImplicitAutograd kernels here that
ask the tensor (torch's are that or JIT operators over TensorImpl's
methods): ``ops.aten.dim.default(t)`` is ``t.dim()``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from dispatcher import Library, disabled_torch_dispatch_impl, ops
from dispatcher.dispatch_modes import _get_current_dispatch_mode, _pop_mode_temporarily
from dispatcher.value_types import device as Device

from . import contiguity, shapes
from .tensor import Tensor, contiguous_strides, tensor_device
from .tensor_options import Layout, channels_last, channels_last_3d, contiguous_format

__all__ = ["MetadataPolicy", "apply_policy", "is_non_overlapping_and_dense", "is_strides_like_format", "policy_from"]


@dataclass(frozen=True)
class MetadataPolicy:
    """Which of a tensor's metadata its handler answers for."""

    sizes: bool = False  # dim, sizes, numel, storage offset (and strides)
    strides: bool = False  # strides and the layout predicates
    device: bool = False
    layout: bool = False


def policy_from(dispatch_sizes_strides_policy: Optional[str], dispatch_device: bool,
                dispatch_layout: bool) -> Optional[MetadataPolicy]:
    """The policy of the factories' arguments (None: the handler answers for nothing)."""
    if dispatch_sizes_strides_policy not in (None, "sizes", "strides"):
        raise ValueError(f"Unknown sizes_strides_policy: {dispatch_sizes_strides_policy}; expected 'strides' or 'sizes'")
    sizes = dispatch_sizes_strides_policy == "sizes"
    policy = MetadataPolicy(sizes=sizes, strides=sizes or dispatch_sizes_strides_policy == "strides",
                            device=bool(dispatch_device), layout=bool(dispatch_layout))
    return policy if policy != MetadataPolicy() else None


def apply_policy(t: Tensor, policy: Optional[MetadataPolicy]) -> None:
    """Make ``t``'s handler answer for the metadata ``policy`` names."""
    if policy is None:
        return
    t._metadata_policy = policy  # type: ignore[attr-defined]
    _give_class_slow_paths(type(t))


# -- asking the handler -----------------------------------------------------------------------
def _ask(t: Any, namespace: str, name: str, overload: str, *extra: Any) -> Any:
    """What the handlers say for the query ``namespace::name.overload`` of ``t``:
    the active dispatch mode's (popped while it runs), else ``t``'s type's."""
    func = getattr(getattr(getattr(ops, namespace), name), overload)
    args, types = (t, *extra), (type(t),)
    mode = _get_current_dispatch_mode()
    if mode is not None:
        with _pop_mode_temporarily() as popped:
            answer = popped.__torch_dispatch__(func, types, args, {})
        if answer is not NotImplemented:
            return answer
    handler = getattr(type(t), "__torch_dispatch__", None)
    if handler is None or handler is disabled_torch_dispatch_impl:
        # torch fails an internal assert here; the default handler would run the query again, forever.
        raise RuntimeError(f"{type(t).__name__} was made to answer for its metadata, but defines no "
                           f"__torch_dispatch__ to answer {namespace}.{name}.{overload}")
    answer = handler(func, types, args, {})
    if answer is NotImplemented:
        # torch's text, which names the operator by its Python path in torch (the
        # engine's own error for an operator call names it dispatcher.ops.<ns>.<name>);
        # code written for torch matches on it.
        lines = [f"Multiple dispatch failed for 'torch.ops.{namespace}.{name}'; all __torch_dispatch__ handlers "
                 "returned NotImplemented:", ""]
        if mode is not None:
            lines.append(f"  - mode object {mode!r}")
        lines += [f"  - tensor subclass {type(t)!r}", "",
                  "For more information, try re-running with TORCH_LOGS=not_implemented"]
        raise TypeError("\n".join(lines))
    return answer


def _invalid(query: str, answer: Any, expected: str) -> RuntimeError:
    return RuntimeError(f"{query} returned invalid type {type(answer).__name__}, expected {expected}")


def _policy(t: Any) -> Optional[MetadataPolicy]:
    return getattr(t, "_metadata_policy", None)


# -- the tensor's own metadata, read from its fields (never through the class's queries) --------
def _own_shape(t: Any) -> tuple[int, ...]:
    return _SHAPE.__get__(t)


def _own_strides(t: Any) -> tuple[int, ...]:
    if t._strides is not None:
        return t._strides
    data = t._data
    if isinstance(data, np.ndarray):
        return tuple([step // data.itemsize for step in data.strides])
    return contiguous_strides(_own_shape(t))  # no numpy memory: row-major


def _own_is_contiguous(t: Any, memory_format: Any) -> bool:
    if memory_format is not None and memory_format in (channels_last, channels_last_3d):
        return contiguity.is_channels_last_contiguous(_own_shape(t), _own_strides(t),
                                                      4 if memory_format == channels_last else 5)
    return contiguity.is_contiguous(_own_shape(t), _own_strides(t))


def _asked_list(t: Any, name: str, own: Callable[[Any], tuple[int, ...]], what: str) -> tuple[int, ...]:
    """The handler's answer to aten::<name> (sym_size, sym_stride), ``own(t)`` if it answers None."""
    answer = _ask(t, "aten", name, "default")
    if answer is None:
        return own(t)
    if not isinstance(answer, (list, tuple)):
        raise RuntimeError(f"{what} must be a list or a tuple")
    return tuple(answer)


def _asked_sizes(t: Any) -> tuple[int, ...]:
    return _asked_list(t, "sym_size", _own_shape, "sym_size")


def _strides(t: Any) -> tuple[int, ...]:
    policy = _policy(t)
    if policy is None or not policy.strides:
        return _own_strides(t)
    return _asked_list(t, "sym_stride", _own_strides, "sym_strides")  # (torch's text says sym_strides)


def _answered_bool(t: Any, query: str, name: str, overload: str, *extra: Any) -> Optional[bool]:
    answer = _ask(t, "aten", name, overload, *extra)
    if answer is not None and not isinstance(answer, bool):
        raise _invalid(query, answer, "bool")
    return answer


# -- the queries, as a subclass with slow paths has them --------------------------------------
def _dim(self: Any) -> int:
    policy = _policy(self)
    if policy is None or not policy.sizes:
        return len(_own_shape(self))
    answer = _ask(self, "aten", "dim", "default")
    if type(answer) is not int:
        raise _invalid("dim", answer, "int")
    return answer


def _size(self: Any, dim: Optional[int] = None) -> Any:
    policy = _policy(self)
    if policy is None or not policy.sizes:
        shape = _own_shape(self)
        return shape if dim is None else shape[dim]
    if dim is None:
        return _asked_sizes(self)
    ndim = _dim(self)  # torch wraps the index with the handler's dim()
    return _asked_sizes(self)[shapes.wrap_dim(dim, ndim)]


def _stride(self: Any, dim: Optional[int] = None) -> Any:
    found = _strides(self)
    return found if dim is None else found[shapes.wrap_dim(dim, len(found))]


def _numel(self: Any) -> int:
    policy = _policy(self)
    if policy is None or not policy.sizes:
        return math.prod(_own_shape(self))
    answer = _ask(self, "aten", "sym_numel", "default")
    return math.prod(_own_shape(self)) if answer is None else answer


def _is_contiguous(self: Any, memory_format: Any = None) -> bool:
    policy = _policy(self)
    if policy is not None and policy.strides:
        if memory_format is None or memory_format == contiguous_format:  # torch asks the format-less overload
            answer = _answered_bool(self, "is_contiguous", "is_contiguous", "default")
        else:
            answer = _answered_bool(self, "is_contiguous", "is_contiguous", "memory_format", memory_format)
        if answer is not None:
            return answer
    return _own_is_contiguous(self, memory_format)


def _storage_offset(self: Any) -> int:
    policy = _policy(self)
    if policy is not None and policy.sizes:
        answer = _ask(self, "aten", "sym_storage_offset", "default")
        if answer is not None:
            return answer
    return Tensor.storage_offset(self)


def _data_ptr(self: Any) -> int:
    policy = _policy(self)
    if policy is not None and policy.sizes:
        # torch reads numel() to tell an empty tensor (no address), through the handler.
        answer = _ask(self, "aten", "numel", "default")
        if (math.prod(_own_shape(self)) if answer is None else answer) == 0:
            return 0
    return Tensor.data_ptr(self)


def _get_shape(self: Any) -> tuple[int, ...]:
    policy = _policy(self)
    return _asked_sizes(self) if policy is not None and policy.sizes else _own_shape(self)


def _get_device(self: Any) -> Device:
    policy = _policy(self)
    if policy is None or not policy.device:
        return _DEVICE.__get__(self)
    answer = _ask(self, "prim", "device", "default")
    if isinstance(answer, Device):
        return answer
    if isinstance(answer, str):
        return tensor_device(answer)
    raise _invalid("device", answer, "Device")


def _get_layout(self: Any) -> Layout:
    policy = _policy(self)
    if policy is None or not policy.layout:
        return Tensor.layout.fget(self)  # type: ignore[attr-defined]
    answer = _ask(self, "prim", "layout", "default")
    if not isinstance(answer, Layout):
        raise _invalid("layout", answer, "Layout")
    return answer


def is_strides_like_format(self: Any, memory_format: Any) -> bool:
    """Whether ``self``'s strides are ordered as ``memory_format``'s (c10's
    is_strides_like: only the channels-last formats can be; row-major never counts)."""
    policy = _policy(self)
    if policy is not None and policy.strides:
        answer = _answered_bool(self, "is_strides_like", "is_strides_like_format", "default", memory_format)
        if answer is not None:
            return answer
    if memory_format not in (channels_last, channels_last_3d):
        return False
    return contiguity.is_strides_like_channels_last(_own_shape(self), _own_strides(self),
                                                    4 if memory_format == channels_last else 5)


def is_non_overlapping_and_dense(self: Any) -> bool:
    """Whether ``self``'s elements fill a block of memory exactly once."""
    policy = _policy(self)
    if policy is not None and policy.strides:
        answer = _answered_bool(self, "is_non_overlapping_and_dense", "is_non_overlapping_and_dense", "default")
        if answer is not None:
            return answer
    return contiguity.is_non_overlapping_and_dense(_own_shape(self), _own_strides(self))


# Tensor's shape and device are slots: a subclass's property reads and writes them through these.
_SHAPE = Tensor.__dict__["shape"]
_DEVICE = Tensor.__dict__["device"]

_SLOW_PATHS: dict[str, Any] = {
    "dim": _dim, "size": _size, "stride": _stride, "numel": _numel, "is_contiguous": _is_contiguous,
    "storage_offset": _storage_offset, "data_ptr": _data_ptr,
    "ndim": property(_dim),
    "shape": property(_get_shape, _SHAPE.__set__),
    "device": property(_get_device, _DEVICE.__set__),
    "layout": property(_get_layout),
}


def _give_class_slow_paths(cls: type) -> None:
    """Give ``cls`` the queries above, where it has Tensor's own (not where it,
    or a class between it and Tensor, defines one)."""
    for name, query in _SLOW_PATHS.items():
        current, tensors = getattr(cls, name), getattr(Tensor, name)
        if current is tensors:
            setattr(cls, name, query)
        elif hasattr(current, "checking") and current.__wrapped__ is _unchecked(tensors):
            # Tensor's method behind its __torch_function__ check (torch_function_methods.py): checked still.
            setattr(cls, name, current.checking(query))


def _unchecked(method: Any) -> Any:
    return method.__wrapped__ if hasattr(method, "checking") else method


# -- the operators: each asks the tensor --------------------------------------------------------
_aten = Library("aten", "IMPL", "CompositeImplicitAutograd")
_prim = Library("prim", "IMPL", "CompositeImplicitAutograd")

_KERNELS: dict[str, Callable[..., Any]] = {
    "dim": lambda self: self.dim(),
    "sym_size": lambda self: list(self.size()),
    "sym_size.int": lambda self, dim: self.size(dim),
    "size": lambda self: list(self.size()),
    "size.int": lambda self, dim: self.size(dim),
    "sym_stride": lambda self: list(self.stride()),
    "sym_stride.int": lambda self, dim: self.stride(dim),
    "stride": lambda self: list(self.stride()),
    "stride.int": lambda self, dim: self.stride(dim),
    "sym_numel": lambda self: self.numel(),
    "numel": lambda self: self.numel(),
    "sym_storage_offset": lambda self: self.storage_offset(),
    "storage_offset": lambda self: self.storage_offset(),
    "is_contiguous": lambda self: self.is_contiguous(),
    "is_contiguous.memory_format": lambda self, memory_format: self.is_contiguous(memory_format=memory_format),
    "is_strides_like_format": is_strides_like_format,
    "is_non_overlapping_and_dense": is_non_overlapping_and_dense,
}
for _name, _kernel in _KERNELS.items():
    _aten.impl(_name, _kernel)
_prim.impl("device", lambda a: a.device)
_prim.impl("layout", lambda a: a.layout)

Tensor._metadata_policy = None  # type: ignore[attr-defined]  # (instances made with a policy have theirs)
