"""In-place writes through views under autograd on dispatcher.prototype, as
torch 2.13 does them (CopySlices, the views' regenerated grad_fn, torch's
errors), and the in-place arithmetic dunders: the same code
(tests/golden/view_inplace_cases.py) through tests/torch_shim.py, against
what torch gave (view_inplace_golden.json), on this process's engine and,
in a subprocess, on the other."""
from typing import Any

import pytest

import dispatcher.prototype as P

from . import torch_test_files as files
from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.view_inplace_cases import run, run_two_tensor
from .torch_shim import installed
from .torch_test_helpers import HELPERS
from .torch_test_modules import modules

GOLDEN = load_golden("view_inplace_golden.json")["cases"]
GOLDEN_TWO_TENSOR = load_golden("view_inplace_golden.json")["two_tensor"]


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_prototype_view_inplace", run_cases, GOLDEN, count=23)


def test_views_of_a_subclass_are_replayed_as_torch():
    copies = files.UPSTREAM / "testing_internal"
    if not all((copies / name).is_file() for name in HELPERS.values()):
        pytest.skip(f"no copy of torch's two_tensor.py at {copies}")
    loaded = modules()  # torch's helper modules, TwoTensor's imports among them
    with files.torch_installed(loaded), installed() as torch:
        answers = run_two_tensor(torch, loaded["torch.testing._internal.two_tensor"])
    assert answers == GOLDEN_TWO_TENSOR


def test_a_view_written_twice_keeps_earlier_results_differentiable():
    # y was computed from the view between two writes: its AsStridedBackward0 keeps
    # the base's geometry, not the base itself, so the second write does not spoil it.
    leaf = P.tensor([[1.0, 2.0], [3.0, 4.0]]).requires_grad_()
    base = leaf * 1
    view = base[0]
    view.mul_(2)
    y = view.sum()
    view.add_(1)
    (y + base.sum()).backward()
    assert leaf.grad.tolist() == [[4.0, 4.0], [1.0, 1.0]]  # torch 2.13's


def test_the_dunders_are_the_in_place_operators():
    t = P.tensor([1.0, 2.0])
    alias = t
    t += 1
    t *= 3
    t -= P.tensor([1.0, 1.0])
    t /= 2
    assert t is alias and t.tolist() == [2.5, 4.0] and t._version == 4
    with pytest.raises(TypeError, match="expected a tensor or a number"):
        t *= "2"


def test_a_base_keeps_weak_references_to_its_views_and_drops_the_dead():
    base = P.tensor([1.0, 2.0]).requires_grad_() * 1
    kept = base[0]
    for _ in range(100):
        base[1]  # made and dropped: a view its base need not keep
    views = base.__dict__["_views"]
    assert len(views) <= 16 and any(ref() is kept for ref in views)
    kept.mul_(2)  # the dropped views are not regenerated, the kept one is
    assert kept.grad_fn.name() == "AsStridedBackward0"
