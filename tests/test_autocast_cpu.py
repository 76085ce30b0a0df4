"""torch's CPU autocast of aten operators on dispatcher.prototype
(dispatcher/prototype/autocast_cpu.py): the same code
(tests/golden/autocast_cpu_cases.py) through tests/torch_shim.py, against
what torch 2.13 gave (autocast_cpu_golden.json), on this process's engine and,
in a subprocess, on the other; and kernels at AutocastCPU for exactly the
operators torch has them for."""
from typing import Any


import dispatcher
import dispatcher.prototype  # noqa: F401  (registers the kernels)

from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.autocast_cpu_cases import run
from .torch_shim import installed

GOLDEN = load_golden("autocast_cpu_golden.json")


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_autocast_cpu", run_cases, GOLDEN["cases"], count=17)


def test_kernels_at_autocast_cpu_are_torchs():
    registered = dispatcher.registry.default_registry.registrations_for_dispatch_key("AutocastCPU")
    assert sorted(name for name in registered if name.startswith("aten::")) == GOLDEN["operators"]
