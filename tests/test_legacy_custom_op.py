"""torch's older CustomOp API (dispatcher._custom_ops, dispatcher._custom_op.impl).

The cases of tests/golden/legacy_custom_op_cases.py run on dispatcher.prototype
and give torch 2.13's outcomes (legacy_custom_op_golden.json): the checks of a
definition and their texts, the report-error callback's texts, device kernels,
the autograd kernel with its formulas and the checks of what they return, and
the API on operators defined with Library.  The other tests run the
registration side and the calls on both engines, with the engines' own tensors.
"""
import warnings

import pytest

import dispatcher._custom_op.impl as legacy_impl
import dispatcher._custom_ops as custom_ops
import dispatcher.prototype as P
from dispatcher import DispatchKey as K
from dispatcher import Library, Tensor

from .conftest import load_golden
from .golden import legacy_custom_op_cases as cases

GOLDEN = load_golden("legacy_custom_op_golden.json")["cases"]


@pytest.fixture(scope="module")
def prototype_api(prototype_fallbacks):
    return cases.Api(custom_ops=custom_ops, impl=legacy_impl, Library=Library, Tensor=P.Tensor,
                     randn=P.randn, no_grad=P.no_grad)


@pytest.fixture(scope="module")
def outcomes(prototype_api):
    return cases.run(prototype_api, "_legacy_golden")


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_case_as_torch(outcomes, case):
    assert outcomes[case] == GOLDEN[case]


def test_every_case_has_a_golden_outcome():
    assert sorted(GOLDEN) == sorted(case.__name__ for case in cases.CASES)


def test_run_leaves_no_custom_op_behind(outcomes):
    assert not [name for name in legacy_impl.global_registry if name.startswith("_legacy_golden::")]


# -- both engines: the registry in use is the world's ----------------------------------------
@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _define(qualname: str) -> None:
    def foo(x: Tensor, k: int) -> Tensor:
        raise NotImplementedError

    foo.__name__ = qualname.split("::")[1]
    custom_ops.custom_op(qualname)(foo)


def test_custom_op_is_defined_in_the_registry_in_use(in_use, quiet):
    _define("legacy::foo")
    try:
        op = legacy_impl.get_op("legacy::foo")
        assert str(op.schema) == "legacy::foo(Tensor x, SymInt k) -> Tensor"
        assert in_use.registry.find_op("legacy::foo") is not None
        assert "needs_fixed_stride_order" in op.tags or any(getattr(t, "name", None) == "needs_fixed_stride_order"
                                                            for t in op.tags)
        assert in_use.registry.op_or_throw("legacy::foo").has_kernel_for_dispatch_key(K.Autograd)
    finally:
        custom_ops._destroy("legacy::foo")
    assert in_use.registry.find_op("legacy::foo") is None
    assert "legacy::foo" not in legacy_impl.global_registry


def test_impl_runs_on_the_engine(in_use, quiet):
    _define("legacy::foo")
    try:
        custom_ops.impl("legacy::foo", device_types="cpu")(lambda x, k: ("cpu kernel", k))
        x = in_use.tensor(K.CPU)
        assert legacy_impl.get_op("legacy::foo")(x, 2) == ("cpu kernel", 2)
        with pytest.raises(NotImplementedError, match="there is no cuda impl registered for this CustomOp"):
            legacy_impl.get_op("legacy::foo")(in_use.tensor(K.CUDA), 2)
        with pytest.raises(RuntimeError, match="already has a cpu impl registered from Python at .*test_legacy"):
            custom_ops.impl("legacy::foo", device_types="cpu")(lambda x, k: x)
    finally:
        custom_ops._destroy("legacy::foo")


def test_autograd_indirection_goes_below_autograd(in_use, quiet):
    """Without formulas and with nothing requiring grad, the Autograd kernel runs
    the operator below autograd (tensors of the world's engine have no autograd
    engine, so nothing requires grad)."""
    _define("legacy::foo")
    try:
        custom_ops.impl("legacy::foo", device_types="cpu")(lambda x, k: k * 10)
        x = in_use.tensor(K.CPU, K.ADInplaceOrView, K.AutogradCPU)
        assert legacy_impl.get_op("legacy::foo")(x, 4) == 40
    finally:
        custom_ops._destroy("legacy::foo")


def test_impl_factory_registers_backend_select(in_use, quiet):
    def bar(n: int) -> Tensor:
        raise NotImplementedError

    custom_ops.custom_op("legacy::bar")(bar)
    try:
        op = legacy_impl.global_registry["legacy::bar"]
        with pytest.raises(NotImplementedError, match="There were no Tensor inputs to this operator"):
            op(3)
        op.impl_factory()(lambda n: n + 1)
        assert op(3) == 4
        assert in_use.registry.op_or_throw("legacy::bar").has_kernel_for_dispatch_key(K.BackendSelect)
    finally:
        custom_ops._destroy("legacy::bar")


def test_impl_abstract_is_the_meta_kernel_and_has_no_ctx(in_use, quiet):
    from dispatcher.library import get_ctx

    _define("legacy::foo")
    try:
        op = legacy_impl.global_registry["legacy::foo"]
        op.impl_abstract()(lambda x, k: get_ctx())
        with pytest.raises(RuntimeError, match="Attempted to call get_ctx\\(\\) for the meta implementation for "
                                               "legacy::foo.*registered with impl_abstract at .*test_legacy"):
            op(in_use.tensor(K.Meta), 1)
        assert legacy_impl.get_abstract_impl("legacy::foo") is not None
        assert legacy_impl.get_abstract_impl("legacy::nothing") is None
    finally:
        custom_ops._destroy("legacy::foo")


def test_impl_abstract_through_custom_ops_is_register_fake(in_use, quiet):
    _define("legacy::foo")
    try:
        custom_ops.impl_abstract("legacy::foo")(lambda x, k: "fake result")
        meta = in_use.registry.op_or_throw("legacy::foo").kernel_for(K.Meta)
        assert meta is not None and meta.debug.startswith("registered by register_fake at ")
    finally:
        custom_ops._destroy("legacy::foo")


def test_decorator_form_of_custom_op_impl(in_use, quiet):
    def baz(x):
        pass

    op = legacy_impl.custom_op("legacy::baz", "(Tensor x) -> Tensor")(baz)
    try:
        assert repr(op) == '<CustomOp(op="legacy::baz")>' and op.__name__ == "baz"
        op.impl("cpu")(lambda x: "ran")
        assert op(in_use.tensor(K.CPU)) == "ran"
        # The decorator registers its Autograd kernel itself: a formula is refused, as torch refuses it.
        with pytest.raises(RuntimeError, match="already has an Autograd kernel registered to DispatchKey::Autograd"):
            op.impl_backward()(lambda ctx, saved, grad: {"x": grad})
    finally:
        op._destroy()


def test_bad_names_and_device_types_are_named(quiet):
    with pytest.raises(TypeError, match="expected the operator's name as a str such as 'ns::foo', got int"):
        custom_ops.custom_op(3, "(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match=r"CustomOp.impl\(device_types=\[\['cpu'\], ...\]\): we only support device_type"):
        legacy_impl.validate_device_type(["cpu"])
