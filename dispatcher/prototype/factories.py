"""Factory functions, and the BackendSelect kernels that route them.

A factory has no tensor argument, so a call's keyset holds only the
thread-local keys (BackendSelect, ADInplaceOrView by default).  The
BackendSelect kernel reads the ``device`` and ``dtype`` arguments, adds the
backend key they name, and redispatches below BackendSelect -- c10's
``computeDispatchKey`` + ``redispatch``, as in PyTorch's generated
BackendSelectRegister.cpp.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from dispatcher import (
    DispatchKey,
    DispatchKeySet,
    Library,
    OperatorHandle,
    compute_dispatch_key_set,
)

from .dtypes import DType, check_dtype, optional_dtype
from .operators import OP
from .tensor import Tensor, device_backend

__all__ = ["backend_key_set", "empty", "full", "ones", "randn", "zeros"]

_library = Library("proto", "IMPL", "BackendSelect")
_BELOW_BACKEND_SELECT = DispatchKeySet.full_after(DispatchKey.BackendSelect)


def backend_key_set(dtype: Optional[DType], device: Optional[str]) -> DispatchKeySet:
    """The backend a factory's result lives on (c10::computeDispatchKey for strided tensors).

    PyTorch also consults the dtype (quantized dtypes pick Quantized<backend>);
    the dtypes here are all dense, so it is only checked.
    """
    if dtype is not None:
        check_dtype(dtype)
    return DispatchKeySet([DispatchKey.Dense, device_backend(device or "cpu")])


def _backend_select(op: OperatorHandle) -> Callable:
    def kernel(*args: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
               **kwargs: Any) -> Tensor:
        dtype = optional_dtype(dtype)  # the kernels below get a DType, never its name
        keys = compute_dispatch_key_set(backend_key_set(dtype, device), _BELOW_BACKEND_SELECT)
        return op.redispatch(keys, *args, dtype=dtype, device=device, **kwargs)

    return kernel


for _name in ("empty", "zeros", "ones", "full", "randn"):
    _library.impl(_name, _backend_select(OP[_name]))


# -- the Python-level factories (torch.zeros(2, 3, requires_grad=True) style) ---------------
# ``dtype`` is a proto dtype or its name ("float64"); the operators take DTypes only.
def _finish(out: Tensor, requires_grad: bool) -> Tensor:
    return out.requires_grad_() if requires_grad else out


def _size(size: tuple) -> list[int]:
    return list(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else list(size)


def empty(*size: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
          requires_grad: bool = False) -> Tensor:
    return _finish(OP["empty"](_size(size), dtype=optional_dtype(dtype), device=device), requires_grad)


def zeros(*size: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
          requires_grad: bool = False) -> Tensor:
    return _finish(OP["zeros"](_size(size), dtype=optional_dtype(dtype), device=device), requires_grad)


def ones(*size: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
         requires_grad: bool = False) -> Tensor:
    return _finish(OP["ones"](_size(size), dtype=optional_dtype(dtype), device=device), requires_grad)


def full(size: Any, fill_value: float, *, dtype: Optional[DType] = None, device: Optional[str] = None,
         requires_grad: bool = False) -> Tensor:
    return _finish(OP["full"](_size((size,)), fill_value, dtype=optional_dtype(dtype), device=device), requires_grad)


def randn(*size: Any, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = None,
          device: Optional[str] = None, requires_grad: bool = False) -> Tensor:
    out = OP["randn"](_size(size), generator=generator, dtype=optional_dtype(dtype), device=device)
    return _finish(out, requires_grad)
