"""torch's CPU autocast of aten operators on dispatcher.prototype
(dispatcher/prototype/autocast_cpu.py): the same code
(tests/golden/autocast_cpu_cases.py) through tests/torch_shim.py, against
what torch 2.13 gave (autocast_cpu_golden.json), on this process's engine and,
in a subprocess, on the other; and kernels at AutocastCPU for exactly the
operators torch has them for."""
from typing import Any

import pytest

import dispatcher
import dispatcher.prototype  # noqa: F401  (registers the kernels)

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.autocast_cpu_cases import run
from .torch_shim import installed

GOLDEN = load_golden("autocast_cpu_golden.json")


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


@pytest.fixture(scope="module")
def ours():
    return run_cases()


def test_every_case_ran(ours):
    assert len(GOLDEN["cases"]) == 17
    assert set(ours) == set(GOLDEN["cases"])


@pytest.mark.parametrize("case", sorted(GOLDEN["cases"]))
def test_as_torch(ours, case):
    assert ours[case] == GOLDEN["cases"][case]


def test_as_torch_on_the_other_engine():
    assert run_on_other_engine("tests.test_autocast_cpu", "run_cases") == GOLDEN["cases"]


def test_kernels_at_autocast_cpu_are_torchs():
    registered = dispatcher.registry.default_registry.registrations_for_dispatch_key("AutocastCPU")
    assert sorted(name for name in registered if name.startswith("aten::")) == GOLDEN["operators"]
