"""``out=`` variants of the prototype's operators, as torch 2.13 has them: ``add.out``.

A CPU kernel computes as ``add.Tensor`` does and writes the result into
``out`` (cast to its dtype, which the result's must be castable to; an
``out`` of another shape is resized: torch warns then, from C++, which a
call through ``torch.ops`` does not turn into a Python warning); a Meta kernel checks the same and gives ``out`` the shape.
ADInplaceOrView counts the write on ``out``'s version counter; the Autograd
kernel refuses arguments that require grad, with torch's message (out=
operators are not differentiable).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dispatcher import AutoDispatchBelowADInplaceOrView, DispatchKeySet, Library
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET

from . import shapes
from .bfloat16_rounding import round_in_place
from .dtypes import DType, can_cast, result_type, to_numpy_dtype
from .inference_mode import check_inference_write
from .inplace_or_view import written_version_kernel
from .operators import aten, overload
from .tensor import Tensor, tensor_operand

__all__: list[str] = []

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")
_autograd = Library("aten", "IMPL", "Autograd")


def _check_out(self: Any, other: Any, out: Tensor) -> tuple[tuple[int, ...], Any]:
    """The result's shape and dtype, checked against ``out`` as torch's TensorIterator does."""
    a, b = tensor_operand(self), tensor_operand(other)
    shape = shapes.broadcast_shapes(a.shape, b.shape)
    dtype = result_type(a, b)
    if not can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {dtype.scalar_type_name} can't be cast to the desired output type "
                           f"{out.dtype.scalar_type_name}")
    return shape, dtype


def _add_out_cpu(self: Any, other: Any, *, alpha: float = 1, out: Tensor) -> Tensor:
    shape, _ = _check_out(self, other, out)
    check_inference_write(out)
    result = aten.add.Tensor(self, other, alpha=alpha)  # below autograd (the Autograd kernel's redispatch)
    if out.shape != shape:
        out._data = np.empty(shape, dtype=to_numpy_dtype(out.dtype))
        out.shape = shape
    np.copyto(out._data, result._data, casting="unsafe")
    if out.dtype is DType.bfloat16:
        round_in_place(out._data)
    return out


def _add_out_meta(self: Any, other: Any, *, alpha: float = 1, out: Tensor) -> Tensor:
    shape, _ = _check_out(self, other, out)
    out.shape = shape
    return out


def _out_autograd(name: str) -> Any:
    """torch's Autograd kernel of an out= operator: it refuses arguments that require grad."""
    op = overload(name)
    schema = op.schema
    base = name.partition(".")[0]

    def kernel(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        if any(getattr(value, "requires_grad", False) for value in schema.bind(args, kwargs)):
            raise RuntimeError(f"{base}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        with AutoDispatchBelowADInplaceOrView():
            return op.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, *args, **kwargs)

    return kernel


_cpu.impl("add.out", _add_out_cpu)
_meta.impl("add.out", _add_out_meta)
_inplace_or_view.impl("add.out", written_version_kernel(overload("add.out")), with_keyset=True)
_autograd.impl("add.out", _out_autograd("add.out"), with_keyset=True)
