"""Why two prototype tensors are not close, as torch.testing.assert_close says it.

``mismatch(actual, expected)`` compares as assert_close does with its
defaults: shape, device and dtype first (each must match), then the values,
element by element, with numpy's isclose (torch's formula:
``|actual - expected| <= atol + rtol * |expected|``, NaN never close) and
the default tolerances of the dtype unless both ``rtol`` and ``atol`` are
given.  Meta tensors compare their metadata only.  The texts are
dispatcher.mismatch_texts'; opcheck's test_aot_dispatch_* call this through
PrototypeTensorChecks.mismatch.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from dispatcher.mismatch_texts import attribute_mismatch, scalar_mismatch, tensor_mismatch

from .tensor import Tensor

__all__ = ["default_tolerances", "mismatch"]

# torch.testing's default (rtol, atol) by dtype; every other dtype compares exactly.
_PRECISIONS = {
    "torch.float16": (0.001, 1e-5),
    "torch.bfloat16": (0.016, 1e-5),
    "torch.float32": (1.3e-6, 1e-5),
    "torch.float64": (1e-7, 1e-7),
    "torch.complex32": (0.001, 1e-5),
    "torch.complex64": (1.3e-6, 1e-5),
    "torch.complex128": (1e-7, 1e-7),
}


def default_tolerances(*dtypes: Any) -> tuple[float, float]:
    """``(rtol, atol)``: the loosest of the dtypes' defaults, as torch's default_tolerances."""
    precisions = [_PRECISIONS.get(str(dtype), (0.0, 0.0)) for dtype in dtypes]
    return max(rtol for rtol, _ in precisions), max(atol for _, atol in precisions)


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


def mismatch(actual: Tensor, expected: Tensor, rtol: Optional[float] = None,
             atol: Optional[float] = None) -> Optional[str]:
    """Why ``actual`` is not close to ``expected`` (torch's text), or None if it is."""
    if tuple(actual.shape) != tuple(expected.shape):
        return attribute_mismatch("shape", _size(tuple(actual.shape)), _size(tuple(expected.shape)))
    if actual.device != expected.device:
        return attribute_mismatch("device", actual.device, expected.device)
    if actual.dtype != expected.dtype:
        return attribute_mismatch("dtype", actual.dtype, expected.dtype)
    if actual.device.type == "meta":
        return None  # no values to compare
    if rtol is None or atol is None:
        rtol, atol = default_tolerances(actual.dtype, expected.dtype)
    got, want = actual.numpy(), expected.numpy()
    matches = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=False)
    if matches.all():
        return None
    if got.ndim == 0:
        return scalar_mismatch(got.item(), want.item(), rtol=rtol, atol=atol)
    return _elements_mismatch(got, want, matches, rtol, atol)


def _elements_mismatch(got: np.ndarray, want: np.ndarray, matches: np.ndarray, rtol: float, atol: float) -> str:
    """The greatest differences among the elements that are not close, computed in the
    dtype as torch computes them (integers and bools as int64, their ratio as float32)."""
    if got.dtype.kind not in "fc":
        got, want = got.astype(np.int64), want.astype(np.int64)
    got, want, close = got.ravel(), want.ravel(), matches.ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        abs_diff = np.abs(got - want)
        abs_diff[close] = 0
        ratio_dtype = np.float32 if abs_diff.dtype.kind == "i" else abs_diff.dtype
        rel_diff = np.true_divide(abs_diff, np.abs(want), dtype=ratio_dtype)
    rel_diff[close] = 0
    abs_at, rel_at = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))

    def index(flat: int) -> tuple[int, ...]:
        return tuple(int(i) for i in np.unravel_index(flat, matches.shape))

    return tensor_mismatch(int(close.size - close.sum()), int(close.size), abs_diff[abs_at].item(), index(abs_at),
                           rel_diff[rel_at].item(), index(rel_at), rtol=rtol, atol=atol)
