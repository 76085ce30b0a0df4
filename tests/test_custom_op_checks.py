"""opcheck's comparisons and register_vmap's decorator forms as torch 2.13's
(tests/golden/custom_op_checks_golden.json, from
tests/golden/custom_op_check_cases.py run on torch and here through
tests/torch_shim.py): torch.testing.assert_close's texts and tolerances for
prototype tensors and Python numbers; test_aot_dispatch_dynamic's verdict on
an operator whose results change from call to call, its chain of exceptions
and opcheck's rtol/atol; test_faketensor's strides and storage offsets; a
register_vmap rule under vmap and nested vmaps.  On the default engine here,
and on the other one in a subprocess.
"""
from __future__ import annotations

import json
from typing import Any, Optional

import pytest

import dispatcher.prototype as P
from dispatcher import Tensor, custom_op, opcheck
from dispatcher.mismatch_texts import number_mismatch

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.custom_op_check_cases import run
from .torch_shim import installed

GOLDEN = load_golden("custom_op_checks_golden.json")
SECTIONS = sorted(set(GOLDEN) - {"torch"})


def close(actual: Any, expected: Any, rtol: Optional[float], atol: Optional[float]) -> Optional[str]:
    from dispatcher.prototype.closeness import mismatch

    if isinstance(actual, (bool, int, float, complex)):
        return number_mismatch(actual, expected, rtol, atol)
    return mismatch(actual, expected, rtol, atol)


def ours() -> dict[str, Any]:
    with installed() as torch:
        return json.loads(json.dumps(run(torch, close)))


@pytest.fixture(scope="module")
def here():
    return ours()


def same(got: Any, expected: Any, where: str) -> None:
    """As torch's, but opcheck's test_aot_dispatch_dynamic is Skipped where torch's
    passes (its comparison with torch.compile's results needs torch.compile)."""
    if expected == "SUCCESS" and where.endswith("/test_aot_dispatch_dynamic"):
        assert got == "SKIPPED", where
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), (where, got)
        for key in expected:
            same(got[key], expected[key], f"{where}/{key}")
    else:
        assert got == expected, (where, got)


@pytest.mark.parametrize("section", SECTIONS)
def test_as_torch(here, section):
    same(here[section], GOLDEN[section], section)


def test_as_torch_on_the_other_engine():
    found = run_on_other_engine("tests.test_custom_op_checks", "ours")
    for section in SECTIONS:
        same(found[section], GOLDEN[section], section)


class _WithoutComparisons:
    """The prototype's TensorChecks without the optional ``mismatch``, ``layout`` and
    ``meta_views_made``: a tensor library that cannot say why tensors differ nor
    how they are laid out."""

    def __init__(self, checks: Any) -> None:
        self._checks = checks

    def __getattr__(self, name: str) -> Any:
        if name in ("mismatch", "layout", "meta_views_made"):
            raise AttributeError(name)
        return getattr(self._checks, name)


@pytest.fixture
def without_comparisons():
    from dispatcher.tensor_protocols import register_tensor_checks, tensor_checks_for, unregister_tensor_checks

    checks = tensor_checks_for(P.ones(1))
    unregister_tensor_checks(P.Tensor)
    register_tensor_checks(P.Tensor, _WithoutComparisons(checks))
    try:
        yield
    finally:
        unregister_tensor_checks(P.Tensor)
        register_tensor_checks(P.Tensor, checks)


def test_a_library_without_the_optional_comparisons(prototype_fallbacks, without_comparisons):
    # Results that change from call to call still fail (equality, in this
    # package's words), and strides are not compared (nothing says them).
    from dispatcher.optests import OpCheckError

    invoked = [0]

    @custom_op("_check_cases::counted_plain", mutates_args=())
    def counted(x: Tensor) -> Tensor:
        invoked[0] += 1
        return x * invoked[0]

    counted.register_fake(lambda x: x.new_empty(x.shape))
    counted.register_autograd(lambda ctx, grad: grad)
    with pytest.raises(OpCheckError, match="eager-mode PyTorch vs AOTDispatcher") as raised:
        opcheck(counted, (P.tensor([1.0, 2.0], requires_grad=True),))
    assert str(raised.value.__context__.__context__) == "The values differ."

    @custom_op("_check_cases::permuted_plain", mutates_args=())
    def permuted(x: Tensor) -> Tensor:
        return x.clone().permute(2, 0, 1)

    permuted.register_fake(lambda x: x.new_empty(x.shape[2], x.shape[0], x.shape[1]))
    assert opcheck(permuted, (P.randn(4, 4, 3),), test_utils="test_faketensor")["test_faketensor"] == "SUCCESS"
