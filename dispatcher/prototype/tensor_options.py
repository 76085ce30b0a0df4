"""The tensor options the aten schemas take and the prototype cannot always honour.

Factories and conversions take c10's TensorOptions as arguments, given as
c10's enum numbers.  Prototype tensors are dense and row-major, in pageable
memory: a kernel checks ``pin_memory`` and ``memory_format`` and refuses,
with a clear error, what it cannot honour, rather than ignoring it.  A
``layout`` other than strided needs no check: it selects another backend key
(SparseCPU, ...; c10's computeDispatchKey), where the prototype has no
kernels, so the dispatcher refuses the call.
"""
from __future__ import annotations

from typing import Any

__all__ = ["OptionValue", "channels_last", "check_memory_format", "check_options", "check_pin_memory", "contiguous_format",
           "preserve_format", "sparse_coo", "strided"]

class OptionValue(int):
    """A c10::Layout or c10::MemoryFormat number that prints as torch's object
    of it (``torch.preserve_format``): what a ``__torch_dispatch__`` handler
    sees in ``ones_like(..., memory_format=torch.preserve_format)``.  As the
    number it is, it boxes and compares as the enum."""

    _name: str

    def __new__(cls, value: int, name: str) -> "OptionValue":
        self = super().__new__(cls, value)
        self._name = name
        return self

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__


# c10::Layout and c10::MemoryFormat numbers (torch.strided, torch.contiguous_format, ...).
strided = OptionValue(0, "torch.strided")
sparse_coo = OptionValue(1, "torch.sparse_coo")  # a value to pass and compare; the prototype has no sparse tensors
contiguous_format = OptionValue(0, "torch.contiguous_format")
preserve_format = OptionValue(1, "torch.preserve_format")
channels_last = OptionValue(2, "torch.channels_last")

_MEMORY_FORMAT_NAMES = ("torch.contiguous_format", "torch.preserve_format", "torch.channels_last",
                        "torch.channels_last_3d")


def check_pin_memory(pin_memory: Any) -> None:
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
                           "allocator is available on this system.")


def check_memory_format(memory_format: Any) -> None:
    """Contiguous (and preserve, which a new prototype tensor always is) are the formats there are."""
    if memory_format is not None and memory_format not in (contiguous_format, preserve_format):
        known = isinstance(memory_format, int) and 0 <= memory_format < len(_MEMORY_FORMAT_NAMES)
        name = _MEMORY_FORMAT_NAMES[memory_format] if known else repr(memory_format)
        raise NotImplementedError(f"dispatcher.prototype tensors are row-major: memory_format {name} is not supported")


def check_options(pin_memory: Any = None, memory_format: Any = None) -> None:
    """Both, as an allocating kernel gets them."""
    check_pin_memory(pin_memory)
    check_memory_format(memory_format)
