"""torch.utils.data.DataLoader (dispatcher.prototype.data) as torch 2.13's: the
same code (tests/golden/data_loader_cases.py) through tests/torch_shim.py,
against what torch gave (data_loader_golden.json), batches made in the
loader's process and in worker processes, on this process's engine and, in a
subprocess, on the other."""
from typing import Any

import pytest

import dispatcher.prototype as P
from dispatcher.prototype.data import DataLoader, default_collate

from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.data_loader_cases import run
from .torch_shim import installed

GOLDEN = load_golden("data_loader_golden.json")["cases"]


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_data_loader", run_cases, GOLDEN, count=16)


def test_shuffle_gives_every_sample_once():
    P.manual_seed(0)
    seen = [int(v) for batch in DataLoader(list(range(10)), batch_size=3, shuffle=True) for v in batch.tolist()]
    assert sorted(seen) == list(range(10))


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        DataLoader([1], batch_size=0)
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object()])
