"""register_autocast casting to float16 as torch 2.13 does: the same code
(tests/golden/autocast_cases.py) through tests/torch_shim.py on
dispatcher.prototype, against what torch gave (autocast_golden.json), on
this process's engine and, in a subprocess, on the other.
(Autocast to bfloat16, the CPU default, of torch's own lists of aten
operators: tests/test_autocast_cpu.py.)
"""
from typing import Any

import pytest

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.autocast_cases import run
from .torch_shim import installed

GOLDEN = load_golden("autocast_golden.json")["cases"]


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        out, made = run(torch)
        for op in made:
            op._destroy()
    return out


@pytest.fixture(scope="module")
def ours():
    return run_cases()


def test_every_case_ran():
    assert len(GOLDEN) == 7


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_autocast_to_float16_as_torch(ours, case):
    assert ours[case] == GOLDEN[case]


def test_autocast_to_float16_as_torch_on_the_other_engine():
    assert run_on_other_engine("tests.test_autocast_float16", "run_cases") == GOLDEN
