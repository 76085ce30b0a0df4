"""PyTorch's own test/test_python_dispatch.py and test/test_custom_ops.py, run
as PyTorch wrote them through tests/torch_shim.py (tests/torch_test_files.py,
tests/torch_test_modules.py), from copies outside the repository:
``$DISPATCHER_UPSTREAM/<file>`` (default tests/upstream/); without a copy its
tests skip.

The reference copies, and how to get them: tests/torch_test_left_out.py.

Every test of a copy passes, or is in tests/torch_test_left_out.py: a test
needing a feature out of this package's scope must fail naming that feature
(then it is skipped with it), and a gap must fail (a strict xfail).  The
tests run on the default engine, where dispatcher.prototype lives.
"""
from __future__ import annotations

import types
import unittest
from typing import Optional

import pytest

from . import torch_test_files as files
from .torch_test_left_out import FAILS_ON_TORCH_2_13, GAP, LEFT_OUT, NOT_PORTED, OUT_OF_SCOPE, SKIPS_ITSELF_ON_LINUX
from .torch_test_modules import COMPILE, CUDA, FAKE, modules

FILES = ("test_python_dispatch.py", "test_custom_ops.py")
MODULES = modules()


LOAD_ERRORS: dict[str, str] = {}


def _load(name: str) -> Optional[types.ModuleType]:
    path = files.UPSTREAM / name
    if not path.is_file():
        return None
    try:
        return files.load(path, MODULES)
    except Exception as exc:  # noqa: BLE001  (a copy that does not load fails its own test, not the collection)
        LOAD_ERRORS[name] = f"{type(exc).__name__}: {exc}"
        return None


LOADED = {name: _load(name) for name in FILES}
CASES = [(name, f"{cls}.{method}") for name, module in LOADED.items() if module is not None
         for cls, method in files.test_cases(module)]


def _report(result: unittest.TestResult) -> str:
    return "\n".join(report for _, report in result.failures + result.errors)


@pytest.mark.parametrize("name", [name for name in FILES if LOADED[name] is None])
def test_copy_is_not_here(name):
    if name in LOAD_ERRORS:
        pytest.fail(f"the copy at {files.UPSTREAM / name} does not load through the shim: {LOAD_ERRORS[name]}")
    pytest.skip(f"PyTorch's test/{name} is not at {files.UPSTREAM / name}: copy it there or set DISPATCHER_UPSTREAM")


@pytest.mark.parametrize("case", CASES, ids=[f"{name}::{test}" for name, test in CASES])
def test_pytorch_test(case):
    name, test = case
    cls, _, method = test.partition(".")
    module = LOADED[name]
    assert module is not None
    result = files.run_case(module, MODULES, cls, method)
    reason = LEFT_OUT.get(name, {}).get(test)
    failed = bool(result.failures or result.errors)
    if reason is None:
        if failed:
            pytest.fail(_report(result), pytrace=False)
        assert not result.skipped, f"{test} skipped itself ({result.skipped[0][1]}): list it with its reason"
        return
    if reason == SKIPS_ITSELF_ON_LINUX:
        # A copy that does not skip it (the 2.4-era one) runs it: then it passes.
        if failed:
            pytest.fail(_report(result), pytrace=False)
        if result.skipped:
            pytest.skip(f"{test} skips itself on Linux ({result.skipped[0][1]}), as on torch 2.13")
        return
    if not failed and result.skipped and reason != CUDA:
        # The copy skips it itself on this machine (torch skips it on Linux too,
        # e.g. for a known flaky bug): it runs nowhere here, so its reason cannot be checked.
        pytest.skip(f"{test} skips itself here ({result.skipped[0][1]}); listed as: {reason}")
    if reason == FAILS_ON_TORCH_2_13:
        # It fails on torch 2.13 too (tools/run_torch_test_copy.py runs the copy under torch).
        assert failed, f"{test} passes, though it fails on torch 2.13: take it off tests/torch_test_left_out.py"
        pytest.skip(f"tests {reason}: {_report(result).strip().splitlines()[-1]}")
    if reason.startswith(GAP):
        assert failed, f"{test} passes: take it off tests/torch_test_left_out.py"
        pytest.xfail(reason)
    said = _report(result) if failed else (result.skipped[0][1] if result.skipped else "")
    # A test that skips itself for want of CUDA (or of any accelerator) says so in its own words.
    assert (f"needs {reason}" in said or (reason == CUDA and ("cuda" in said.lower() or "accelerator" in said))
            or (reason == COMPILE and "torch.compile" in said) or (reason == FAKE and "needs symbolic shapes" in said)), (
        f"{test} is left out for needing {reason}, but it ran to: {said or 'success'}")
    pytest.skip(f"needs {reason}")


def test_the_list_names_tests_of_the_copies():
    """The list holds the names of the 2.4-era copies and of the recent ones
    (see tests/torch_test_left_out.py): a name absent from the copy in use is
    a test of the other copy, but the copy in use has listed tests."""
    for name in FILES:
        if LOADED[name] is None:
            continue
        present = {test for file, test in CASES if file == name}
        assert set(LEFT_OUT.get(name, {})) & present, f"no test of {files.UPSTREAM / name} is in the list"


def test_every_reason_is_a_feature_out_of_scope_a_gap_or_torch_2_13s_own_failure_or_skip():
    for listed in LEFT_OUT.values():
        for reason in listed.values():
            assert (reason in OUT_OF_SCOPE or reason.startswith(GAP)
                    or reason in (FAILS_ON_TORCH_2_13, SKIPS_ITSELF_ON_LINUX)), reason
            if reason.startswith(GAP):
                assert reason[len(GAP):] not in OUT_OF_SCOPE  # a feature out of scope is no gap
    assert not NOT_PORTED & OUT_OF_SCOPE
