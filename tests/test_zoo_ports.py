"""Public subclass_zoo examples on dispatcher.prototype, by changing their imports only (tests/zoo_ports.py).

The examples are not in this repository: the test reads them from a copy
(``SUBCLASS_ZOO``, default /work/upstream/subclass_zoo) and skips without
one; tests/golden/zoo_ports_golden.json has what torch 2.13 printed.
"""
from __future__ import annotations

import pytest


from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .zoo_ports import PORTED, run_example, zoo_directory

pytest.importorskip("dispatcher.pytree", reason="the examples use pytree, which needs optree")
ZOO = zoo_directory()
pytestmark = pytest.mark.skipif(ZOO is None, reason="no copy of albanD/subclass_zoo (set SUBCLASS_ZOO)")
GOLDEN = load_golden("zoo_ports_golden.json")["examples"]


def run_ports() -> dict:
    assert ZOO is not None
    return {name: run_example(ZOO / name, imports) for name, imports in PORTED.items()}


@pytest.mark.parametrize("name", sorted(PORTED))
def test_example_prints_and_fails_as_under_torch(name):
    assert run_ports()[name] == GOLDEN[name]


def test_examples_on_the_other_engine():
    assert run_on_other_engine("tests.test_zoo_ports", "run_ports") == GOLDEN
