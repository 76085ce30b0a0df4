"""``arange``, as torch 2.13 has it.

``arange``, ``arange.start`` and ``arange.start_step`` are
CompositeExplicitAutograd, as torch's: each allocates an empty tensor and
calls ``arange.start_out``, which has the CPU and Meta kernels (the
element count, the dtype and torch's checks are in ``arange_length``).
Without a dtype the result is int64 when start, end and step are all
integers (bools count as integers), else the default float dtype.
``arange()`` is torch.arange: its overload by the number of arguments, and
the device and pin_memory arguments torch's binding passes.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from dispatcher import Library

from .autograd import not_differentiable_out
from .dtypes import DType, default_float, optional_dtype, to_numpy_dtype
from .inplace_or_view import written_version_kernel
from .operators import aten, overload
from .tensor import Tensor, TensorMethods, tensor_device

__all__ = ["arange", "arange_length"]

_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")


def _number(value: Any) -> Any:
    """A Scalar argument as a Python number (a 0-d tensor gives its value)."""
    return value.item() if isinstance(value, Tensor) else value


def _is_integral(*values: Any) -> bool:
    return all(isinstance(v, int) for v in values)  # (bool is an int)


def _in_accumulate_type(start: Any, end: Any, step: Any, dtype: DType) -> tuple[Any, Any, Any]:
    """start, end and step as torch's kernel reads them: in the result's accumulate
    type, so an integer result truncates them (arange(0, 2.5, dtype=int64) ends at 2)."""
    if dtype.is_floating_point:
        return float(start), float(end), float(step)
    return int(start), int(end), int(step)


def arange_length(start: Any, end: Any, step: Any, dtype: DType) -> int:
    """The number of elements of arange(start, end, step), with torch's checks in its order."""
    if dtype is DType.bool or dtype.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype.scalar_type_name}\'')
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    start, end, step = _in_accumulate_type(start, end, step, dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if _is_integral(start, end, step):
        return max(0, -((start - end) // step))  # the ceiling, exactly, for integers of any size
    return max(0, math.ceil((end - start) / step))


def _result_dtype(start: Any, end: Any, step: Any, dtype: Any) -> DType:
    given = optional_dtype(dtype)
    if given is not None:
        return given
    return DType.int64 if _is_integral(start, end, step) else default_float


def _resize_out(out: Tensor, length: int) -> None:
    """``out`` made 1-d of ``length`` elements, as torch's arange_out resizes it
    (torch's note that the element counts differ goes to its C++ log, not to
    Python's warnings: nothing to say here)."""
    if out.numel() == length:
        if out.shape != (length,):
            out._set_shape((length,))
        return
    if out.device.type != "meta":
        out._data = np.empty((length,), dtype=to_numpy_dtype(out.dtype))
    out.shape = (length,)
    out._strides = None


def _arange_out_cpu(start: Any, end: Any, step: Any = 1, *, out: Tensor) -> Tensor:
    start, end, step = _number(start), _number(end), _number(step)
    length = arange_length(start, end, step, out.dtype)
    _resize_out(out, length)
    start, _, step = _in_accumulate_type(start, end, step, out.dtype)
    if out.dtype.is_floating_point:
        # start + i * step in double, rounded once to the result's dtype.
        values = start + step * np.arange(length, dtype=np.float64)
    else:
        values = np.arange(length, dtype=np.int64) * step + start
    np.copyto(out._data, values, casting="unsafe")
    return out


def _arange_out_meta(start: Any, end: Any, step: Any = 1, *, out: Tensor) -> Tensor:
    start, end, step = _number(start), _number(end), _number(step)
    _resize_out(out, arange_length(start, end, step, out.dtype))
    return out


def _arange_start_step(start: Any, end: Any, step: Any = 1, *, dtype: Optional[DType] = None, layout: Any = None,
                       device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    dt = _result_dtype(_number(start), _number(end), _number(step), dtype)
    out = aten.empty.memory_format([0], dtype=dt, layout=layout, device=device, pin_memory=pin_memory)
    return aten.arange.start_out(start, end, step, out=out)


def _arange_start(start: Any, end: Any, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
                  pin_memory: Optional[bool] = None) -> Tensor:
    return aten.arange.start_step(start, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def _arange(end: Any, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
            pin_memory: Optional[bool] = None) -> Tensor:
    return aten.arange.start(0, end, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


_cpu.impl("arange.start_out", _arange_out_cpu)
_meta.impl("arange.start_out", _arange_out_meta)
_inplace_or_view.impl("arange.start_out", written_version_kernel(overload("arange.start_out")), with_keyset=True)
not_differentiable_out("arange.start_out")
_explicit.impl("arange.start_step", _arange_start_step)
_explicit.impl("arange.start", _arange_start)
_explicit.impl("arange", _arange)


def arange(*args: Any, dtype: Optional[DType] = None, layout: Any = None, device: Optional[str] = None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """torch.arange(end), (start, end) or (start, end, step): the overload of that many arguments."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"arange() takes 1 to 3 positional arguments (end; start, end; or start, end, step) but "
                        f"{len(args)} were given")
    options: dict[str, Any] = {"device": tensor_device("cpu" if device is None else device), "pin_memory": pin_memory}
    if dtype is not None:
        options["dtype"] = optional_dtype(dtype)
    if layout is not None:
        options["layout"] = layout
    op = (aten.arange.default, aten.arange.start, aten.arange.start_step)[len(args) - 1]
    out = op(*args, **options)
    if not requires_grad:
        return out
    if not (out.dtype.is_floating_point or out.dtype.is_complex):  # torch's factories' text
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return out.requires_grad_()


def _fill__method(self: Any, value: Any) -> Any:
    """Tensor.fill_(value): every element set to ``value`` (a number, or a 0-d tensor's)."""
    return aten.fill_.Scalar(self, _number(value))


TensorMethods.fill_ = _fill__method  # type: ignore[attr-defined]
