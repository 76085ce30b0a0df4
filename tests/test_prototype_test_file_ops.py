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


def test_cumprods_derivative_is_differentiable_again():
    # cumprod_backward is made of operators (CompositeImplicitAutograd, as
    # torch's): a second derivative goes through them.
    import dispatcher.prototype as P

    x = P.tensor([2.0, 3.0, 4.0], dtype=P.float64, requires_grad=True)
    (grad,) = P.grad(x.cumprod(0).sum(), x, create_graph=True)
    assert grad.tolist() == [16.0, 10.0, 6.0]
    (second,) = P.grad(grad.sum(), x)
    # The gradient summed is 1 + x1 + x1 x2 + x0 + x0 x2 + x0 x1; its derivative by
    # x0 is 1 + x2 + x1, by x1 1 + x2 + x0, by x2 x1 + x0.
    assert second.tolist() == [1.0 + 4.0 + 3.0, 1.0 + 4.0 + 2.0, 3.0 + 2.0]


def test_split_by_a_list_of_sizes_is_not_in_the_prototype():
    import dispatcher.prototype as P

    assert [p.tolist() for p in P.arange(5).split(3)] == [[0, 1, 2], [3, 4]]
    with pytest.raises(NotImplementedError, match="split_with_sizes"):
        P.arange(5).split([2, 3])


def test_a_meta_mask_is_refused_as_torchs_nonzero_on_meta():
    import dispatcher.prototype as P
    from dispatcher import ops

    mask = P.ones(2, dtype=P.bool_, device="meta")
    with pytest.raises(NotImplementedError, match="The register_meta function for torch.nonzero"):
        ops.aten.index.Tensor(P.ones(2, 3, device="meta"), [mask])
