"""The aten operators dispatcher.prototype implements for PyTorch's test files
(tests/golden/prototype_more_ops_cases.py lists the calls), against torch 2.13's
answers recorded in tests/golden/prototype_more_ops_golden.json: values where
the operator is deterministic, dtype, shape and properties where it is random,
and the exception's type and first line where torch refuses the call.
"""
from __future__ import annotations

import pytest

from . import torch_shim
from .conftest import load_golden
from .golden.prototype_more_ops_cases import cases, run

GOLDEN = load_golden("prototype_more_ops_golden.json")["answers"]


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


def test_index_put_refuses_tensors_that_require_grad():
    # torch has a derivative for it; the prototype has none, and says so rather
    # than leaving the write out of the graph.
    import dispatcher.prototype as P
    from dispatcher import ops

    x = P.zeros(3, requires_grad=True) * 1
    with pytest.raises(NotImplementedError, match="aten::index_put_: dispatcher.prototype has no derivative"):
        x.index_put_((P.tensor([1]),), P.tensor(1.0))
    values = P.ones(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="aten::_index_put_impl_"):
        ops.aten._index_put_impl_.default(P.zeros(3), [P.tensor([1])], values)
    with P.no_grad():
        assert x.index_put_((P.tensor([1]),), P.tensor(1.0)).tolist() == [0.0, 1.0, 0.0]


def test_lstsq_refuses_tensors_that_require_grad():
    import dispatcher.prototype as P

    with pytest.raises(NotImplementedError, match="aten::linalg_lstsq: dispatcher.prototype has no derivative"):
        P.linalg.lstsq(P.ones(3, 2, requires_grad=True), P.ones(3, 1))
    with P.no_grad():
        assert P.linalg.lstsq(P.ones(3, 2, requires_grad=True), P.ones(3, 1)).solution.shape == (2, 1)
