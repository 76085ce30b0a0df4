"""The four tests of a file that runs torch's code through tests/torch_shim.py
against the answers torch 2.13 gave (a golden file's cases): the module's
``run_cases()`` once per module (``ours``), every case present, each case as
torch's, and all of them computed again on the other engine in a subprocess.

A test module binds them to its own names, which pytest then collects::

    ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
        "tests.test_x", run_cases, GOLDEN, count=16)
"""
from typing import Any, Callable, Optional

import pytest

from ._other_engine import run_on_other_engine


def _equal(answer: Any, expected: Any) -> None:
    assert answer == expected


def golden_case_tests(module: str, run_cases: Callable[[], dict[str, Any]], golden: dict[str, Any], count: int,
                      check: Optional[Callable[[Any, Any], None]] = None) -> tuple[Callable[..., Any], ...]:
    """The ``ours`` fixture and the three tests of ``module`` (its dotted name,
    for the other engine's subprocess), whose ``run_cases`` answers each of
    the ``count`` cases of ``golden``; ``check(answer, expected)`` asserts one
    case's answer (default: equal)."""
    assert_case = check or _equal

    @pytest.fixture(scope="module")
    def ours() -> dict[str, Any]:
        return run_cases()

    def test_every_case_ran(ours: dict[str, Any]) -> None:
        assert len(golden) == count
        assert set(ours) == set(golden)

    @pytest.mark.parametrize("case", sorted(golden))
    def test_as_torch(ours: dict[str, Any], case: str) -> None:
        assert_case(ours[case], golden[case])

    def test_as_torch_on_the_other_engine() -> None:
        answers = run_on_other_engine(module, "run_cases")
        assert set(answers) == set(golden)
        for case in sorted(golden):
            assert_case(answers[case], golden[case])

    return ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine
