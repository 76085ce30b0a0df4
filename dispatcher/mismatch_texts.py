"""torch.testing.assert_close's texts, for the values a comparison found different.

opcheck's test_aot_dispatch_* compare results as torch's do, with
``torch.testing.assert_close``; a tensor library that can compare its
tensors (TensorChecks.mismatch, see dispatcher.tensor_protocols) says why
two differ in these words, and opcheck says them of Python numbers.  Only
the texts live here: the numbers (which elements are close, the greatest
differences) are the tensor library's to compute.
"""
from __future__ import annotations

import cmath
from typing import Any, Optional, Union

__all__ = ["attribute_mismatch", "number_mismatch", "scalar_mismatch", "tensor_mismatch", "with_item"]

Index = Optional[tuple[int, ...]]


def _difference(kind: str, diff: Any, index: Index, tolerance: float, equality: bool) -> str:
    text = f"{kind.title()} difference: {diff}" if index is None else f"Greatest {kind} difference: {diff} at index {index}"
    return text if equality else f"{text} (up to {tolerance} allowed)"


def _mismatch(what: str, extra: str, abs_diff: Any, abs_index: Index, rel_diff: Any, rel_index: Index,
              rtol: float, atol: float) -> str:
    equality = rtol == 0 and atol == 0  # then the values must be equal, and no tolerance is named
    lines = [f"{what} are not {'equal' if equality else 'close'}!", "", extra.strip(),
             _difference("absolute", abs_diff, abs_index, atol, equality),
             _difference("relative", rel_diff, rel_index, rtol, equality)]
    return "\n".join(lines)


def scalar_mismatch(actual: Union[int, float, complex], expected: Union[int, float, complex], *,
                    rtol: float, atol: float) -> str:
    """Two numbers (or one-element tensors of no dimension, as their ``item()``s) that differ."""
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None, rtol, atol)


def tensor_mismatch(mismatched: int, total: int, abs_diff: Any, abs_index: tuple[int, ...], rel_diff: Any,
                    rel_index: tuple[int, ...], *, rtol: float, atol: float) -> str:
    """Tensors with dimensions whose elements differ: how many of them, and the greatest
    absolute and relative differences among those that are not close, with where they are."""
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    return _mismatch("Tensor-likes", extra, abs_diff, abs_index, rel_diff, rel_index, rtol, atol)


def attribute_mismatch(name: str, actual: Any, expected: Any) -> str:
    """Tensors whose shape, device or dtype (``name``) differ, as torch prints each."""
    return f"The values for attribute '{name}' do not match: {actual} != {expected}."


def with_item(text: str, path: tuple[int, ...]) -> str:
    """A mismatch found at ``path`` inside sequences of values, as torch says where."""
    return text if not path else f"{text}\n\nThe failure occurred for item {''.join(str([i]) for i in path)}"


def number_mismatch(actual: Any, expected: Any, rtol: Optional[float], atol: Optional[float]) -> Optional[str]:
    """Why two Python numbers (bool, int, float, complex) differ as torch's
    assert_close compares them, or None if they match.  Default tolerances:
    none for ints, float64's and complex128's (1e-7 both) for the others."""
    if isinstance(actual, bool) and isinstance(expected, bool):
        return None if actual is expected else f"Booleans mismatch: {actual} is not {expected}"
    if type(actual) is not type(expected):
        return f"The (d)types do not match: {type(actual)} != {type(expected)}."
    if rtol is None or atol is None:
        rtol = atol = 0.0 if isinstance(actual, int) else 1e-7
    if actual == expected:
        return None
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return None
    return scalar_mismatch(actual, expected, rtol=rtol, atol=atol)
