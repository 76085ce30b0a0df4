"""``Stream``: torch.Stream, the value of a schema's ``Stream`` type.

A c10::Stream names a queue of work on a device: a stream id, a device
index and a device type (c10's DeviceType number).  Operators take and
return them (``aten::record_stream(Tensor(a!) self, Stream s)``); the
dispatcher passes them through as opaque values (ivalue.py), and a
``__torch_dispatch__`` handler sees the Stream it was given.

There are no accelerators here: as on a CPU-only torch, a stream of the CPU
or meta device is always idle (``query()`` is True, ``synchronize()``
returns at once), and a stream of any other device type can be made and
passed around but not waited on.
"""
from __future__ import annotations

from typing import Any, Union

from .backends import PRIVATEUSE1_DEVICE_TYPE, get_privateuse1_backend_name, parse_device
from .value_types import device as Device

__all__ = ["DEVICE_TYPE_NAMES", "Stream"]

# c10::DeviceType's names by number (DeviceTypeName, lower case).
DEVICE_TYPE_NAMES: tuple[str, ...] = (
    "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla", "vulkan", "metal", "xpu",
    "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia", PRIVATEUSE1_DEVICE_TYPE,
)
# The device types whose streams a CPU-only torch can query.
_IDLE = frozenset({"cpu", "meta"})


def _int_argument(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Stream(): argument '{name}' must be int, not {type(value).__name__}")
    return value


class Stream:
    """torch.Stream: ``Stream(stream_id=, device_index=, device_type=)`` (or those
    three by position), or ``Stream(device=None, *, priority=0)``: the default
    stream of ``device`` (the CPU's without one).  Read-only; equal when its three
    numbers are."""

    __slots__ = ("_stream_id", "_device_index", "_device_type")
    _stream_id: int
    _device_index: int
    _device_type: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raw = ("stream_id", "device_index", "device_type")
        if len(args) == 3 or any(name in kwargs for name in raw):
            values = dict(zip(raw, args))
            for name, value in kwargs.items():
                if name not in raw or name in values:
                    raise TypeError(f"Stream() got an unexpected keyword argument '{name}'")
                values[name] = value
            missing = [name for name in raw if name not in values]
            if missing:
                raise TypeError(f"Stream() missing required argument '{missing[0]}'")
            stream_id, index, kind = (_int_argument(values[name], name) for name in raw)
            if not 0 <= kind < len(DEVICE_TYPE_NAMES):
                raise RuntimeError("Expected isValidDeviceType(device_type) to be true, but got false.")
        else:
            stream_id, index, kind = 0, -1, self._device_form(*args, **kwargs)
        object.__setattr__(self, "_stream_id", stream_id)
        object.__setattr__(self, "_device_index", index)
        object.__setattr__(self, "_device_type", kind)

    @staticmethod
    def _device_form(device: Union[str, Device, None] = None, *, priority: int = 0) -> int:
        """The device type number of ``Stream(device, priority=...)``'s device."""
        if device is None:
            return 0
        if isinstance(device, Device):
            name = device.type
        elif isinstance(device, str):
            name = parse_device(device)[0]
        else:
            raise TypeError(f"Stream(): argument 'device' must be torch.device or str, not {type(device).__name__}")
        if name == get_privateuse1_backend_name():
            name = PRIVATEUSE1_DEVICE_TYPE
        if name not in _IDLE:
            raise RuntimeError(f"PyTorch is not linked with support for {name} devices")
        return DEVICE_TYPE_NAMES.index(name)

    @property
    def stream_id(self) -> int:
        return self._stream_id

    @property
    def device_index(self) -> int:
        """The device's index (-1: the current device of its type)."""
        return self._device_index

    @property
    def device_type(self) -> int:
        """The device type's c10::DeviceType number (0 is the CPU)."""
        return self._device_type

    @property
    def _type_name(self) -> str:
        name = DEVICE_TYPE_NAMES[self._device_type]
        return get_privateuse1_backend_name() if name == PRIVATEUSE1_DEVICE_TYPE else name

    @property
    def device(self) -> Device:
        """The stream's device, as a tensor's ``.device``."""
        index = None if self._device_index < 0 else self._device_index
        return Device(self._type_name, index)

    def query(self) -> bool:
        """Whether all work queued on the stream is done (always, on the CPU and meta devices)."""
        self._check_idle()
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work (there is none, on the CPU and meta devices)."""
        self._check_idle()

    def _check_idle(self) -> None:
        name = DEVICE_TYPE_NAMES[self._device_type]
        if name == "lazy":
            raise RuntimeError("Backend doesn't support querying streams.")
        if name not in _IDLE:
            raise RuntimeError(f"PyTorch is not linked with support for {self._type_name} devices")

    def _key(self) -> tuple[int, int, int]:
        return (self._stream_id, self._device_index, self._device_type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("readonly attribute")

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self._type_name}, device_index={self._device_index}, "
                f"stream_id={self._stream_id}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Stream, self._key())
