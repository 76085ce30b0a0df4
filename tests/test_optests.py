"""opcheck on dispatcher.prototype tensors: torch 2.13's verdicts for the same operators and inputs.

tests/golden/custom_op_golden.json has torch's opcheck result per test for
good operators (the tutorial's) and broken ones (undeclared mutation, wrong
fake shapes and dtypes, no fake implementation, an input returned, autograd
recorded by a backend kernel).  test_aot_dispatch_dynamic needs
torch.compile and is Skipped here.
"""
import re

import numpy as np
import pytest

import dispatcher.prototype as P
from dispatcher import DispatchKey, DispatchKeySet, Library, Tensor, TensorBase, custom_op, ops, opcheck
from dispatcher.custom_ops import OPDEFS, CustomOpDef
from dispatcher.optests import ALL_TEST_UTILS, MetadataMismatchError, OpCheckError, Skipped
from dispatcher.prototype import float64

from .conftest import load_golden
from .test_custom_ops import A, B, X, Tutorial, empty_like, t

GOLDEN = load_golden("custom_op_golden.json")["opcheck"]
CHECKED = ("test_schema", "test_autograd_registration", "test_faketensor")


class Broken:
    """The golden script's broken operators."""

    def __init__(self):
        @custom_op("golden::bad_mutation", mutates_args=())
        def bad_mutation(x: Tensor) -> Tensor:
            x.numpy()[0] = 5
            return x.clone()

        @bad_mutation.register_fake
        def _(x):
            return empty_like(x)

        @custom_op("golden::unmutating", mutates_args=("x",))
        def unmutating(x: Tensor) -> None:
            pass

        @custom_op("golden::bad_fake_shape", mutates_args=())
        def bad_fake_shape(x: Tensor) -> Tensor:
            return x.clone()

        @bad_fake_shape.register_fake
        def _(x):
            return P.empty(4, device=x.device)

        @custom_op("golden::bad_fake_dtype", mutates_args=())
        def bad_fake_dtype(x: Tensor) -> Tensor:
            return x.clone()

        @bad_fake_dtype.register_fake
        def _(x):
            return P.empty(3, dtype=float64, device=x.device)

        @custom_op("golden::no_fake", mutates_args=())
        def no_fake(x: Tensor) -> Tensor:
            return x.clone()

        self.defs = {name: op for name, op in locals().items() if isinstance(op, CustomOpDef)}
        self.__dict__.update(self.defs)
        self.lib = Library("golden", "FRAGMENT")
        self.lib.define("cpu_autograd(Tensor x) -> Tensor")
        self.lib.impl("cpu_autograd", lambda x: x * 2, "CPU")

    def close(self):
        self.lib.close()
        for op in self.defs.values():
            op._destroy()


@pytest.fixture(scope="module")
def cases():
    tut, broken = Tutorial(), Broken()
    yield {
        "numpy_sin": (tut.numpy_sin, (t(X),)),
        "numpy_sin_requires_grad": (tut.numpy_sin, (t(X, requires_grad=True),)),
        "mymuladd": (tut.mymuladd, (t(A, requires_grad=True), t(B, requires_grad=True), 1.5)),
        "mymul": (tut.mymul, (t(A), t(B))),
        "myadd_out": (tut.myadd_out, (t(A), t(B), P.zeros(2, 3))),
        "numpy_scale": (tut.numpy_scale, (t(X, requires_grad=True),), {"val": 2.0}),
        "numpy_cube": (tut.numpy_cube, (t(X, requires_grad=True),)),
        "weighted_sum": (tut.weighted_sum, ([t(A, requires_grad=True), t(B)], [0.25, -2.0])),
        "bad_mutation": (broken.bad_mutation, (t(X),)),
        "unmutating": (broken.unmutating, (t(X),)),
        "bad_fake_shape": (broken.bad_fake_shape, (t([1.0, 2.0, 3.0]),)),
        "bad_fake_dtype": (broken.bad_fake_dtype, (t([1.0, 2.0, 3.0]),)),
        "no_fake": (broken.no_fake, (t(X),)),
        "returns_input": (tut.returns_input, (t(X),)),
        "cpu_autograd": (ops.golden.cpu_autograd.default, (t(X, requires_grad=True),)),
        "cpu_autograd_without_grad": (ops.golden.cpu_autograd.default, (t(X),)),
        "no_backward": (tut.no_backward, (t(X, requires_grad=True),)),
    }
    broken.close()
    tut.close()


def as_ours(message):
    """torch's message in this package's words: operator names, meta for fake, shapes as printed here."""
    message = re.sub(r"golden\.(\w+)\.default", r"golden::\1", message)
    message = message.replace("on FakeTensor and concrete Tensors", "on meta tensors and real tensors")
    message = re.sub(r"torch\.Size\(\[([^\]]*)\]\)", lambda m: repr(tuple(int(n) for n in m.group(1).split(", "))), message)
    return message.replace("This is necessary for torch.compile/export/fx tracing to work.",
                           "This is necessary for the operator to run on meta tensors (and for opcheck's test_faketensor).")


# Where the wording differs beyond as_ours: compare the text up to this point.
SAME_UP_TO = {
    ("cpu_autograd", "test_autograd_registration"): "which may lead to silently incorrect results.",
    ("returns_input", "test_schema"): None,  # the implementation's module differs; the rest is the same
    ("returns_input", "test_faketensor"): None,
}


def run(case):
    op, args, *kwargs = case
    return opcheck(op, args, kwargs[0] if kwargs else None, raise_exception=False)


@pytest.mark.parametrize("name", sorted(set(GOLDEN) - {"raised"}))
def test_same_verdicts_as_torch(cases, name):
    results = run(cases[name])
    assert list(results) == ["test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"]
    # torch's compares with torch.compile, which is Skipped here, after what needs no compiler: an
    # operator without a fake implementation, returning its input, or whose backward fails fails
    # that, as torch's does.
    aot, torch_aot = results["test_aot_dispatch_dynamic"], GOLDEN[name]["test_aot_dispatch_dynamic"]
    if torch_aot == "SUCCESS":
        assert isinstance(aot, Skipped), aot
    else:
        assert type(aot).__name__ == torch_aot["error"]
        if name == "returns_input":  # the implementation's module differs; the rest is the same
            assert str(aot).partition(">): ")[2] == torch_aot["message"].partition(">): ")[2]
        elif name.startswith("cpu_autograd"):  # UnsupportedOperatorException: the overload as torch prints it
            assert str(aot) == torch_aot["message"]
        else:
            assert str(aot) == as_ours(torch_aot["message"])
    for test in CHECKED:
        expected, got = GOLDEN[name][test], results[test]
        if expected == "SUCCESS":
            assert got == "SUCCESS", (test, got)
            continue
        assert isinstance(got, Exception), (test, got)
        if name.startswith("cpu_autograd") and test == "test_faketensor":
            # An operator without a Meta kernel: torch's FakeTensor refuses it naming the overload, as torch prints it.
            assert expected["error"] == "UnsupportedOperatorException" == type(got).__name__
            assert str(got) == expected["message"] and got.func is cases[name][0]
            continue
        if (name, test) in SAME_UP_TO:
            cut = SAME_UP_TO[name, test]
            if cut is None:
                assert str(got).partition(">): ")[2] == expected["message"].partition(">): ")[2]
            else:
                assert str(got).partition(cut)[0] == expected["message"].partition(cut)[0]
                assert cut in str(got)
        else:
            assert str(got) == as_ours(expected["message"]), test
        if expected["error"] == "MetadataMismatchError":
            assert isinstance(got, MetadataMismatchError)
        else:
            assert type(got).__name__ == expected["error"]


def test_raise_exception_raises_opcheck_error(cases):
    with pytest.raises(OpCheckError) as info:
        opcheck(*cases["bad_fake_shape"])
    assert str(info.value) == as_ours(GOLDEN["raised"]["message"])
    assert isinstance(info.value.__cause__, MetadataMismatchError)


def test_skipped_carries_a_reason(cases):
    results = opcheck(*cases["numpy_sin"], test_utils="ALL")
    assert list(results) == list(ALL_TEST_UTILS)
    for test in ("test_aot_dispatch_static", "test_aot_dispatch_dynamic"):
        assert results[test] == "SKIPPED" and "torch.compile" in results[test].reason
    assert opcheck(*cases["numpy_sin"], test_utils="test_schema") == {"test_schema": "SUCCESS"}


def test_inputs_are_left_alone(cases):
    op, _ = cases["bad_mutation"]
    x = t(X)  # a fresh one: the case's own may have been written by a test before (were copies not made)
    opcheck(op, (x,), raise_exception=False)
    assert x.tolist() == X  # each test ran on copies


def test_meta_inputs_check_nothing(cases):
    op, _ = cases["bad_mutation"]
    results = opcheck(op, (P.empty(4, device="meta"),))
    assert [results[test] for test in CHECKED] == ["SUCCESS"] * 3


def test_undeclared_aliasing_is_caught():
    @custom_op("golden_alias::view_of", mutates_args=(), schema="(Tensor x) -> Tensor")
    def view_of(x):
        return x.clone()

    view_of.register_kernel("cpu")(lambda x: x.view(-1))  # no alias annotation, but shares memory

    @view_of.register_fake
    def _(x):
        return P.empty(*x.shape, device=x.device)

    try:
        with pytest.raises(RuntimeError, match="The output of this custom operator .* may not alias any inputs"):
            view_of(t(X))
        assert isinstance(opcheck(view_of, (t(X),), raise_exception=False)["test_schema"], RuntimeError)
    finally:
        view_of._destroy()


def test_bad_arguments_say_what_was_wrong(cases):
    op, args = cases["numpy_sin"]
    with pytest.raises(ValueError, match="if you specify one of rtol/atol, you must specify both"):
        opcheck(op, args, atol=1e-3)
    with pytest.raises(ValueError, match=r"expected test_utils to be subset of \('test_schema'"):
        opcheck(op, args, test_utils=("test_nope",))
    with pytest.raises(ValueError, match="op must be instance of torch._ops.OpOverload, .* got <class 'function'>"):
        opcheck(lambda x: x, args)
    with pytest.raises(TypeError, match="args must be a tuple"):
        opcheck(op, args[0])
    # torch unpacks args as given: a list serves as a tuple.
    assert opcheck(op, list(args), test_utils="test_schema") == {"test_schema": "SUCCESS"}
    assert opcheck(ops.golden.numpy_sin, args)["test_schema"] == "SUCCESS"  # a packet with one overload

    class Plain(TensorBase):  # a tensor type whose library registered no TensorChecks
        pass

    plain = Plain(DispatchKeySet([DispatchKey.CPU]))
    result = opcheck(op, (plain,), raise_exception=False)["test_schema"]
    assert isinstance(result, RuntimeError) and "registered no TensorChecks" in str(result)


def test_nan_values_are_not_a_mutation(cases):
    op, _ = cases["numpy_sin"]
    # (test_aot_dispatch_dynamic fails on it, as torch's: assert_close takes NaN for no value.)
    assert opcheck(op, (P.tensor([np.nan, 1.0]),), test_utils="test_schema")["test_schema"] == "SUCCESS"


def test_torchs_documented_example_fails_where_torchs_does():
    """torch.library.opcheck's own example (its setup_context unpacks its inputs
    wrongly): test_schema and test_faketensor run the autograd kernel on the
    sample that requires grad and fail as torch's do; test_autograd_registration
    passes; test_aot_dispatch_dynamic fails as torch's on that sample (its call on
    fake tensors runs the autograd kernel too) and is skipped on the other (the
    comparison with torch.compile's results)."""
    from .golden.opcheck_example import Api, run

    api = Api(
        custom_op=custom_op,
        opcheck=opcheck,
        Tensor=Tensor,
        numpy_mul_impl=lambda x, y: P.tensor(x.numpy() * y),
        empty_like=empty_like,
        samples=lambda: [(P.randn(3), 3.14), (P.randn(1, 10, requires_grad=True), 1.234)],
    )
    try:
        outcomes = run(api, "h23opcheck")
        for ours, torchs in zip(outcomes, load_golden("opcheck_example_golden.json")["samples"], strict=True):
            expected = dict(torchs["results"])
            ours_aot, torch_aot = ours["results"].pop("test_aot_dispatch_dynamic"), expected.pop("test_aot_dispatch_dynamic")
            assert ours_aot.startswith("Skipped") if torch_aot == "SUCCESS" else ours_aot == torch_aot
            assert ours["results"] == expected
            assert ours["raised"] == torchs["raised"]
    finally:
        OPDEFS["h23opcheck::numpy_mul"]._destroy()


# -- one deliberately broken operator per check (mutation findings of 2026-11-27) -------------------
# Each check of opcheck gets an operator that breaks exactly what the check is
# there for, so that deleting or weakening the check fails a test.  Plain
# Library operators, not custom ops: a custom op's own kernel checks would
# refuse most of these before opcheck's checks see them.
@pytest.fixture
def lib():
    library = Library("mutopcheck", "FRAGMENT")
    yield library
    library.close()


def _failure(op, args, test):
    return opcheck(op, args, test_utils=test, raise_exception=False)[test]


def test_schema_check_catches_two_outputs_sharing_memory(lib):
    """test_schema's output-against-output check covers every pair, the last
    output included (finding 4): a kernel returning one tensor twice, which its
    schema does not let alias, fails; the same with both returns annotated as
    aliases of each other passes."""
    lib.define("twice(Tensor x) -> (Tensor, Tensor)")
    lib.define("twice_declared(Tensor x) -> (Tensor(a), Tensor(a))")
    for name in ("twice", "twice_declared"):
        lib.impl(name, lambda x: (lambda y: (y, y))(x.clone()), "CPU")
    failure = _failure(ops.mutopcheck.twice.default, (t(X),), "test_schema")
    assert isinstance(failure, RuntimeError) and str(failure) == "Outputs 0 and 1 alias unexpectedly"
    assert _failure(ops.mutopcheck.twice_declared.default, (t(X),), "test_schema") == "SUCCESS"


def test_schema_check_catches_an_undeclared_view(lib):
    """test_schema refuses a result that shares memory with an argument its
    schema does not let it alias (a plain operator: a custom op's own kernel
    check would refuse it first)."""
    lib.define("flat(Tensor x) -> Tensor")
    lib.impl("flat", lambda x: x.view(-1), "CPU")
    failure = _failure(ops.mutopcheck.flat.default, (t(X),), "test_schema")
    assert isinstance(failure, RuntimeError)
    assert str(failure) == "Argument x is not defined to alias output but was aliasing"


def test_schema_check_catches_an_input_returned_itself(lib):
    """test_schema refuses a kernel that returns an input itself even where the
    schema lets the output alias it (finding 5): below autograd an operator
    returns a view, never its argument; the view passes."""
    lib.define("same(Tensor(a) x) -> Tensor(a)")
    lib.define("viewed(Tensor(a) x) -> Tensor(a)")
    lib.impl("same", lambda x: x, "CPU")
    lib.impl("viewed", lambda x: x.view(-1), "CPU")
    failure = _failure(ops.mutopcheck.same.default, (t(X),), "test_schema")
    assert isinstance(failure, RuntimeError)
    assert str(failure) == ("Dispatcher operators below autograd are not allowed to directly return inputs.\n"
                            "However, we found that `outputs[0] is x")
    assert _failure(ops.mutopcheck.viewed.default, (t(X),), "test_schema") == "SUCCESS"


def test_autograd_registration_counts_a_composite_implicit_kernel(lib):
    """A CompositeImplicitAutograd-only operator decomposes into operators that
    record autograd themselves: its outputs require grad and that is right
    (finding 6).  The same kernel on the CPU key records autograd where no
    autograd kernel can see it, and fails."""
    lib.define("doubled(Tensor x) -> Tensor")
    lib.define("doubled_on_cpu(Tensor x) -> Tensor")
    lib.impl("doubled", lambda x: x * 2, "CompositeImplicitAutograd")
    lib.impl("doubled_on_cpu", lambda x: x * 2, "CPU")
    x = t(X, requires_grad=True)
    assert ops.mutopcheck.doubled.default(x).requires_grad
    assert _failure(ops.mutopcheck.doubled.default, (x,), "test_autograd_registration") == "SUCCESS"
    failure = _failure(ops.mutopcheck.doubled_on_cpu.default, (x,), "test_autograd_registration")
    assert isinstance(failure, AssertionError) and "does not have an autograd kernel" in str(failure)


def test_meta_inputs_check_nothing_even_without_a_meta_kernel(lib):
    """As torch's, every check returns at once for meta inputs (finding 7): an
    operator with no Meta kernel at all passes; the tests would otherwise call
    it on the meta inputs and fail for want of a kernel."""
    lib.define("cpu_only(Tensor x) -> Tensor")
    lib.impl("cpu_only", lambda x: x.clone(), "CPU")
    results = opcheck(ops.mutopcheck.cpu_only.default, (P.empty(4, device="meta"),))
    assert [results[test] for test in CHECKED] == ["SUCCESS"] * 3
    with pytest.raises(NotImplementedError, match="'Meta' backend"):
        ops.mutopcheck.cpu_only.default(P.empty(4, device="meta"))


def test_faketensor_check_catches_a_fake_that_returns_its_input(lib):
    """test_faketensor compares which outputs are inputs (finding 8): a fake
    implementation that returns its input where the real kernel makes a new
    tensor (same shape and dtype) fails."""
    lib.define("fresh(Tensor x) -> Tensor")
    lib.impl("fresh", lambda x: x.clone(), "CPU")
    lib.impl("fresh", lambda x: x, "Meta")
    failure = _failure(ops.mutopcheck.fresh.default, (t(X),), "test_faketensor")
    assert isinstance(failure, MetadataMismatchError)
    assert str(failure) == ("When comparing the output of mutopcheck::fresh on meta tensors and real tensors, "
                            "found mismatch in outputs_are_inputs check True != False")


def test_faketensor_check_asks_whether_any_output_is_an_input_not_which(lib):
    """torch's outputs_are_inputs is one answer per side (finding 8): a fake
    implementation that returns its input in another position than the real
    kernel does passes, as on torch 2.13."""
    lib.define("swap(Tensor(a) x) -> (Tensor(a), Tensor)")
    lib.impl("swap", lambda x: (x, x.clone()), "CPU")
    lib.impl("swap", lambda x: (P.empty(*x.shape, device="meta"), x), "Meta")
    assert _failure(ops.mutopcheck.swap.default, (t(X),), "test_faketensor") == "SUCCESS"


def test_faketensor_check_catches_a_fake_with_more_returns(lib):
    """test_faketensor compares the number of returns first (finding 21): a
    fake implementation returning two tensors in the list where the real one
    returns one fails with that message, not a later one."""
    lib.define("listed(Tensor x) -> Tensor[]")
    lib.impl("listed", lambda x: [x.clone()], "CPU")
    lib.impl("listed", lambda x: [P.empty(*x.shape, device="meta"), P.empty(*x.shape, device="meta")], "Meta")
    failure = _failure(ops.mutopcheck.listed.default, (t(X),), "test_faketensor")
    assert isinstance(failure, AssertionError) and not isinstance(failure, MetadataMismatchError)
    assert str(failure) == ("When comparing the output of mutopcheck::listed on meta tensors and real tensors, "
                            "found mismatch in number of returns 2 != 1")


def test_a_packet_with_several_overloads_is_refused(lib):
    """opcheck tests one operator: a packet with two overloads is refused with
    torch's error, which lists them by overload name (finding 9)."""
    lib.define("pair(Tensor x) -> Tensor")
    lib.define("pair.scaled(Tensor x, float s) -> Tensor")
    lib.impl("pair", lambda x: x.clone(), "CPU")
    with pytest.raises(RuntimeError, match=re.escape(
            "opcheck can only test operators without overloads. "
            "Got the following overloads for mutopcheck::pair: ['', 'scaled']")):
        opcheck(ops.mutopcheck.pair, (t(X),))
    assert opcheck(ops.mutopcheck.pair.default, (t(X),), test_utils="test_schema") == {"test_schema": "SUCCESS"}
