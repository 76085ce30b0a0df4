"""bfloat16 values in float32 arrays.

numpy has no bfloat16 type.  A bfloat16 tensor of the prototype keeps its
values in a float32 array, each value one that bfloat16 can hold: a float32
whose low 16 bits are zero (bfloat16 is float32's upper half: sign, the same
8-bit exponent, 7 bits of mantissa).  A kernel computes in float32 (as
torch's CPU kernels compute bfloat16 in float32, their "opmath" type) and
its result is rounded here, once, as c10's ``round_to_nearest_even``:

* to the nearest bfloat16, ties to the one with an even last mantissa bit;
* a NaN becomes the canonical quiet NaN 0x7FC0 (sign dropped, as c10 does);
* values beyond bfloat16's largest finite (about 3.39e38) round to infinity.

Rounding returns the very array it was given when every value is already a
bfloat16 (a view of a bfloat16 tensor, a copy of one), so views keep sharing
their memory; only new values are copied.
"""
from __future__ import annotations

import numpy as np

__all__ = ["round_in_place", "round_to_bfloat16"]

_NAN = np.uint32(0x7FC00000)
_LOW_HALF = np.uint32(0xFFFF)


def _rounded_bits(values: np.ndarray) -> np.ndarray:
    bits = values.view(np.uint32)
    # c10: rounding_bias = ((U32 >> 16) & 1) + 0x7FFF; result = (U32 + rounding_bias) >> 16
    # (in uint32 arithmetic, which wraps as C's does)
    with np.errstate(over="ignore"):
        rounded = (bits + (((bits >> 16) & 1) + np.uint32(0x7FFF))) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(values), _NAN, rounded)


def round_to_bfloat16(array: np.ndarray) -> np.ndarray:
    """``array``'s values rounded to bfloat16, as a float32 array (``array``
    itself when it is a float32 array of bfloat16 values already)."""
    values = np.asarray(array, dtype=np.float32)
    if values.ndim == 0:
        values = values.reshape(())  # a 0-d array (never a numpy scalar): its view below works
    if not (values.view(np.uint32) & _LOW_HALF).any() and not _has_noncanonical_nan(values):
        return values
    return _rounded_bits(values).view(np.float32)


def _has_noncanonical_nan(values: np.ndarray) -> bool:
    nans = np.isnan(values)
    return bool(nans.any() and (values.view(np.uint32)[nans] != _NAN).any())


def round_in_place(array: np.ndarray) -> None:
    """Round a float32 array's values to bfloat16 where they are (an in-place kernel's result)."""
    if array.dtype != np.float32:
        raise TypeError(f"round_in_place: bfloat16 values live in float32 arrays, not {array.dtype}")
    rounded = round_to_bfloat16(array)
    if rounded is not array:
        array[...] = rounded
