"""Element types as torch 2.13's: the same code (tests/golden/dtype_cases.py)
through tests/torch_shim.py on dispatcher.prototype, against what torch gave
(dtype_golden.json), on this process's engine and, in a subprocess, on the
other: promotion of every pair, each dtype's attributes, the unsigned types,
and bfloat16 (float32 arrays rounded to nearest even: see
dispatcher/prototype/bfloat16_rounding.py)."""
from typing import Any

import numpy as np
import pytest

from dispatcher.prototype import bfloat16_rounding

from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.dtype_cases import NAMES, run
from .torch_shim import installed

GOLDEN = load_golden("dtype_golden.json")["cases"]
# float64 with complex64 is complex128 in torch: the prototype has no complex128 (docs/prototype.md).
NO_COMPLEX128 = ("TypeError: the complex dtype of torch.float64 (torch's promotion of it with complex64) is not one "
                 "dispatcher.prototype has: complex64 is its only complex dtype")


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


def expected(case: str) -> Any:
    """torch's answer, with complex128 (which the prototype lacks) as the prototype's error."""
    answer = GOLDEN[case]
    if case.startswith("promote_types"):
        return [NO_COMPLEX128 if value == "torch.complex128" else value for value in answer]
    return answer


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_dtypes", run_cases, {case: expected(case) for case in GOLDEN}, count=62)


def test_only_complex128_differs():
    differing = [(a, b) for a in NAMES for b, value in zip(NAMES, GOLDEN[f"promote_types {a}"])
                 if value == "torch.complex128"]
    assert sorted(differing) == [("complex64", "float64"), ("float64", "complex64")]


def test_rounding_keeps_bfloat16_arrays_and_rounds_ties_to_even():
    exact = np.array([1.0, 1.0078125, -2.5], dtype=np.float32)  # bfloat16 values already
    assert bfloat16_rounding.round_to_bfloat16(exact) is exact
    ties = np.array([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8], dtype=np.float32)  # halfway: to the even mantissa
    assert bfloat16_rounding.round_to_bfloat16(ties).tolist() == [1.0, 1.015625]
    nan = np.array([-np.nan], dtype=np.float32)
    assert bfloat16_rounding.round_to_bfloat16(nan).view(np.uint32).tolist() == [0x7FC00000]
    values = np.array([0.1, 3.4e38], dtype=np.float32)
    bfloat16_rounding.round_in_place(values)
    assert values.tolist()[0] == 0.10009765625 and values[1] == np.inf
    with pytest.raises(TypeError, match="float32 arrays, not float64"):
        bfloat16_rounding.round_in_place(np.zeros(2))
