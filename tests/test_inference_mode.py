"""torch.inference_mode (dispatcher.prototype.inference_mode) as torch 2.13's:
the same code (tests/golden/inference_mode_cases.py) through
tests/torch_shim.py, against what torch gave (inference_mode_golden.json), on
this process's engine and, in a subprocess, on the other."""
import threading
from typing import Any

import pytest

import dispatcher.prototype as P

from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.inference_mode_cases import run
from .torch_shim import installed

GOLDEN = load_golden("inference_mode_golden.json")["cases"]


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_inference_mode", run_cases, GOLDEN, count=29)


def test_inference_mode_is_per_thread():
    seen = []
    with P.inference_mode():
        worker = threading.Thread(target=lambda: seen.append((P.is_inference_mode_enabled(), P.ones(1).is_inference())))
        worker.start()
        worker.join()
        assert P.ones(1).is_inference()
    assert seen == [(False, False)]


def test_inference_mode_takes_a_bool_or_a_function():
    with pytest.raises(TypeError, match="takes a bool .* not int"):
        P.inference_mode(3)
