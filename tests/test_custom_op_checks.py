"""opcheck's comparisons and register_vmap's decorator forms as torch 2.13's
(tests/golden/custom_op_checks_golden.json, from
tests/golden/custom_op_check_cases.py run on torch and here through
tests/torch_shim.py): torch.testing.assert_close's texts and tolerances for
prototype tensors and Python numbers; test_aot_dispatch_dynamic's verdict on
an operator whose results change from call to call, its chain of exceptions
and opcheck's rtol/atol; test_faketensor's strides and storage offsets; a
register_vmap rule under vmap and nested vmaps.  On the default engine here,
and on the other one in a subprocess.
"""
from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from dispatcher.mismatch_texts import number_mismatch

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.custom_op_check_cases import run
from .torch_shim import installed

GOLDEN = load_golden("custom_op_checks_golden.json")
SECTIONS = sorted(set(GOLDEN) - {"torch"})


def close(actual: Any, expected: Any, rtol: Optional[float], atol: Optional[float]) -> Optional[str]:
    from dispatcher.prototype.closeness import mismatch

    if isinstance(actual, (bool, int, float, complex)):
        return number_mismatch(actual, expected, rtol, atol)
    return mismatch(actual, expected, rtol, atol)


def ours() -> dict[str, Any]:
    with installed() as torch:
        return json.loads(json.dumps(run(torch, close)))


@pytest.fixture(scope="module")
def here():
    return ours()


def same(got: Any, expected: Any, where: str) -> None:
    """As torch's, but opcheck's test_aot_dispatch_dynamic is Skipped where torch's
    passes (its comparison with torch.compile's results needs torch.compile)."""
    if expected == "SUCCESS" and where.endswith("/test_aot_dispatch_dynamic"):
        assert got == "SKIPPED", where
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), (where, got)
        for key in expected:
            same(got[key], expected[key], f"{where}/{key}")
    else:
        assert got == expected, (where, got)


@pytest.mark.parametrize("section", SECTIONS)
def test_as_torch(here, section):
    same(here[section], GOLDEN[section], section)


def test_as_torch_on_the_other_engine():
    found = run_on_other_engine("tests.test_custom_op_checks", "ours")
    for section in SECTIONS:
        same(found[section], GOLDEN[section], section)
