"""``register_autocast`` and ``autocast``: an operator's autocast kernel, and the switch that runs them.

torch.library.register_autocast(op, device_type, cast_inputs) registers, at
the device type's Autocast key (AutocastCPU for "cpu", ...), a kernel that
casts each eligible tensor argument to ``cast_inputs`` and calls the
operator again with that Autocast key excluded.  Eligible, as torch's
``_cast`` says: a floating-point tensor, not float64, on that device type;
lists, tuples and dicts are cast element by element.  The dispatcher has no
tensors of its own, so a tensor here is the engine's TensorBase with torch's
``dtype`` (whose ``is_floating_point`` says whether it is one), ``device`` (a
device type string, or an object with ``type``) and ``to(dtype)``, as
dispatcher.prototype's tensors have.

The Autocast keys are in the thread's excluded set by default, as in torch;
``with autocast("cpu"):`` takes the device type's key out of it and puts
it in the included set (tensors here do not carry Autocast keys), so every
call in the block reaches it: the standard fallthrough for operators
without an autocast kernel, the registered kernel for the others.
"""
from __future__ import annotations

import collections.abc
import contextlib
import threading
from typing import TYPE_CHECKING, Any, Iterator, Optional

from ._core import ENGINE
from .backends import dispatch_key_for_device
from .keys import DispatchKey

if TYPE_CHECKING:
    from ._library import Library

__all__ = ["add_autocast_kernel", "autocast", "autocast_dtype", "autocast_key_for_device"]


class _AutocastDtypes(threading.local):
    """The dtype each device type's innermost autocast region of this thread asked for."""

    def __init__(self) -> None:
        self.by_device: dict[str, Any] = {}


_dtypes = _AutocastDtypes()


def autocast_dtype(device_type: str) -> Any:
    """The ``dtype`` this thread's innermost ``autocast(device_type, dtype=...)``
    gave (None where none gave one): a tensor library's own autocast kernels
    cast to it, or to their default lower precision (torch's
    ``get_autocast_dtype``: bfloat16 on the CPU, float16 on CUDA)."""
    return _dtypes.by_device.get(device_type)


def autocast_key_for_device(device_type: object) -> DispatchKey:
    """The Autocast key of ``device_type`` ("cpu" -> AutocastCPU); ValueError for
    a device type without one, in torch's words."""
    try:
        key = DispatchKey.__members__.get("Autocast" + dispatch_key_for_device(device_type).name)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        key = None
    if key is None:
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    return key


def _device_type(tensor: Any) -> Any:
    device = tensor.device
    return getattr(device, "type", device)


def _is_float64(dtype: Any) -> bool:
    return getattr(dtype, "name", None) == "float64" or str(dtype).endswith("float64")


def cast_eligible(value: Any, device_type: str, dtype: Any, tensor_type: type) -> Any:
    """torch.library's ``_cast``: ``value`` with each eligible tensor cast to ``dtype``."""
    if isinstance(value, tensor_type):
        tensor: Any = value
        dtype_now = tensor.dtype
        eligible = (bool(getattr(dtype_now, "is_floating_point", False)) and _device_type(value) == device_type
                    and not _is_float64(dtype_now))
        return tensor.to(dtype) if eligible else tensor
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {cast_eligible(k, device_type, dtype, tensor_type): cast_eligible(v, device_type, dtype, tensor_type)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(cast_eligible(v, device_type, dtype, tensor_type) for v in value)
    return value


def add_autocast_kernel(lib: "Library", op_name: str, device_type: str, cast_inputs: Any) -> None:
    """The autocast kernel of ``op_name`` (of ``lib``'s namespace) for ``device_type``."""
    key = autocast_key_for_device(device_type)
    registry = lib._registry
    engine = registry.engine
    op = registry.op_or_throw(str(lib._name_for_impl(op_name))).handle
    excluded = engine.DispatchKeySet(key)
    tensor_type = engine.TensorBase

    def autocast_kernel(_keyset: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise AssertionError("Custom ops do not support kwargs yet.")
        with engine.ExcludeDispatchKeyGuard(excluded):
            return op(*cast_eligible(args, device_type, cast_inputs, tensor_type))

    lib.impl(op_name, autocast_kernel, key, with_keyset=True)


@contextlib.contextmanager
def autocast(device_type: str, dtype: Any = None, enabled: bool = True,
             cache_enabled: Optional[bool] = None) -> Iterator[None]:
    """``with autocast("cpu"):`` -- calls in the block reach the device type's
    Autocast key (see the module's docstring); ``enabled=False`` takes it out
    again, as torch.autocast(..., enabled=False) does inside an autocast region.

    torch.autocast's signature: ``dtype`` is the lower precision torch's own
    autocast lists cast its aten operators to, recorded for a tensor
    library's autocast kernels of them (autocast_dtype; dispatcher.prototype
    has torch's CPU lists); ``cache_enabled`` (torch's cast cache) changes
    nothing here.  An operator register_autocast gave a kernel is cast to
    that kernel's ``cast_inputs``."""
    key = autocast_key_for_device(device_type)
    was_included = ENGINE.tls_is_dispatch_key_included(key)
    was_excluded = ENGINE.tls_is_dispatch_key_excluded(key)
    had_dtype = _dtypes.by_device.get(device_type)
    ENGINE.tls_set_dispatch_key_included(key, enabled)
    ENGINE.tls_set_dispatch_key_excluded(key, not enabled)
    if dtype is not None:
        _dtypes.by_device[device_type] = dtype
    try:
        yield
    finally:
        ENGINE.tls_set_dispatch_key_included(key, was_included)
        ENGINE.tls_set_dispatch_key_excluded(key, was_excluded)
        if had_dtype is None:
            _dtypes.by_device.pop(device_type, None)
        else:
            _dtypes.by_device[device_type] = had_dtype
