"""The operators dispatcher.prototype implements for issue 23's gaps in PyTorch's
test files (tests/golden/prototype_test_file_ops_cases.py lists the calls),
against torch 2.13's answers recorded in
tests/golden/prototype_test_file_ops_golden.json: values, dtypes, shapes,
gradients and node names, what a dispatch mode sees, and the exception's
type and first line where torch refuses the call.
"""
from __future__ import annotations

import pytest

from . import torch_shim
from .conftest import load_golden
from .golden.prototype_test_file_ops_cases import cases, run

GOLDEN = load_golden("prototype_test_file_ops_golden.json")["answers"]


@pytest.fixture(scope="module")
def answers():
    import dispatcher.prototype as P

    with torch_shim.installed() as torch:
        torch.Tensor = P.Tensor  # torch.Tensor as PyTorch's test files subclass it (tests/torch_test_modules.py)
        return run(torch)


def test_the_golden_file_has_every_case():
    with torch_shim.installed() as torch:
        assert set(cases(torch)) == set(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_answer_is_torchs(answers, name):
    assert answers[name] == GOLDEN[name]
