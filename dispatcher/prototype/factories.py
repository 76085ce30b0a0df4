"""The factory functions: ``zeros(2, 3, requires_grad=True)`` and the like, as torch's.

Each calls its aten factory operator (``empty`` is ``aten::empty.memory_format``,
torch.empty's).  A factory has no tensor argument, so a call's keyset holds
only the thread-local keys; the operator's BackendSelect kernel, which the
catalog makes from its schema as torch generates it (dispatcher/_backend_select.py),
reads the ``device`` and ``dtype`` arguments and redispatches to the backend
they name -- c10's ``computeDispatchKey`` + ``redispatch``.  The kernels
there are the composites of composite.py ("allocate, then fill") and each
backend's ``empty``.

``dtype`` is a prototype dtype or its name ("float64"); the operators get DTypes.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .dtypes import DType, optional_dtype
from .operators import aten
from .tensor import Tensor, tensor_device

__all__ = ["empty", "empty_like", "full", "full_like", "ones", "ones_like", "randn", "zeros", "zeros_like"]


def _placement(device: Optional[str]) -> dict[str, Any]:
    """The device and pin_memory arguments torch's Python binding gives a factory:
    the device asked for, else the default device (cpu), and pin_memory=False
    (what a dispatch mode sees in the call: ``device=device(type='cpu'), pin_memory=False``)."""
    return {"device": tensor_device("cpu" if device is None else device), "pin_memory": False}


def _finish(out: Tensor, requires_grad: bool) -> Tensor:
    return out.requires_grad_() if requires_grad else out


def _size(size: tuple) -> list[int]:
    return list(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else list(size)


def empty(*size: Any, dtype: Optional[DType] = None, layout: Any = None, device: Optional[str] = None,
          requires_grad: bool = False, pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    """torch.empty: ``layout`` and ``memory_format`` reach the operator when
    given, as torch's binding passes them; ``pin_memory`` always (the kernels
    refuse True: there is no pinned-memory allocator without an accelerator)."""
    options: dict[str, Any] = {**_placement(device), "pin_memory": pin_memory}
    if layout is not None:
        options["layout"] = layout
    if memory_format is not None:
        options["memory_format"] = memory_format
    return _finish(aten.empty.memory_format(_size(size), dtype=optional_dtype(dtype), **options), requires_grad)


def zeros(*size: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
          requires_grad: bool = False) -> Tensor:
    return _finish(aten.zeros.default(_size(size), dtype=optional_dtype(dtype), **_placement(device)), requires_grad)


def ones(*size: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
         requires_grad: bool = False) -> Tensor:
    return _finish(aten.ones.default(_size(size), dtype=optional_dtype(dtype), **_placement(device)), requires_grad)


def full(size: Any, fill_value: float, *, dtype: Optional[DType] = None, device: Optional[str] = None,
         requires_grad: bool = False) -> Tensor:
    out = aten.full.default(_size((size,)), fill_value, dtype=optional_dtype(dtype), **_placement(device))
    return _finish(out, requires_grad)


def randn(*size: Any, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = None,
          device: Optional[str] = None, requires_grad: bool = False) -> Tensor:
    # As torch.randn: the overload with a generator when one is given.
    if generator is None:
        out = aten.randn.default(_size(size), dtype=optional_dtype(dtype), **_placement(device))
    else:
        out = aten.randn.generator(_size(size), generator=generator, dtype=optional_dtype(dtype), **_placement(device))
    return _finish(out, requires_grad)


def empty_like(t: Any, *, dtype: Optional[DType] = None, device: Optional[str] = None,
               requires_grad: bool = False) -> Any:
    return _finish(aten.empty_like.default(t, dtype=optional_dtype(dtype), device=device), requires_grad)


def zeros_like(t: Any, *, dtype: Optional[DType] = None, device: Optional[str] = None,
               requires_grad: bool = False) -> Any:
    return _finish(aten.zeros_like.default(t, dtype=optional_dtype(dtype), device=device), requires_grad)


def ones_like(t: Any, *, dtype: Optional[DType] = None, device: Optional[str] = None,
              requires_grad: bool = False) -> Any:
    return _finish(aten.ones_like.default(t, dtype=optional_dtype(dtype), device=device), requires_grad)


def full_like(t: Any, fill_value: float, *, dtype: Optional[DType] = None, device: Optional[str] = None,
              requires_grad: bool = False) -> Any:
    return _finish(aten.full_like.default(t, fill_value, dtype=optional_dtype(dtype), device=device), requires_grad)
