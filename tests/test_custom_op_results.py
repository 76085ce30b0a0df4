"""What a custom operator's kernels and backward return, checked as torch 2.13 checks them, on both engines.

The cases are tests/golden/custom_op_result_cases.py's, which
tests/golden/generate_custom_op_results_golden.py ran on torch: each custom
operator's kernel returns the case's value (built from ``T`` tensors here),
called plainly, with an input that requires grad, below autograd, and on a
meta tensor (through its fake implementation); each backward returns the
case's gradients.  The errors are torch's, text for text, but for the cast
errors of torch's C++ binding library, whose details (a '?' in torch) say
here which return of which operator did not convert.
"""
import re

import numpy as np
import pytest

from dispatcher import custom_op, custom_ops
from dispatcher.custom_ops import register_autograd, register_fake
from dispatcher.schema import FunctionSchema, ListType, BaseType, BaseTy, SchemaParseError
from dispatcher.tensor_protocols import register_autograd_engine, unregister_autograd_engine

from .conftest import load_golden
from .golden.custom_op_result_cases import BACKWARD_CASES, OVERLONG_CASES, RESULT_CASES, TENSOR_LIST_BACKWARD_CASES

GOLDEN = load_golden("custom_op_results_golden.json")

# torch 2.13 does not compare a sequence's length with the number of returns:
# a 1-tuple for two returns gives an error only through its autograd wrapper
# (and a tensor below autograd), more values than returns read past them.
LENGTH_ERROR = ("Expected the kernel of results::{name} to return 2 values, as its schema says "
                "(results::{name}(Tensor x) -> (Tensor, Tensor)), but it returned a tuple of {n} instead.")
WRONG_LENGTH = {"one_tuple_for_two": 1, "three_tuple_for_two": 3}
# torch converts a meta tensor returned for an int with Tensor.__index__, which
# raises its own error; T has no __index__: the cast error, as on the CPU.
SAME_AS_CALL = {("tensor_for_int", "meta"), ("tensor_for_int", "meta_below_autograd")}


class Ctx:
    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


class Engine:
    """An AutogradEngine that keeps each differentiable call (function, ctx) instead of building a graph."""

    def __init__(self):
        self.calls = []

    def requires_grad(self, tensor):
        return tensor.requires_grad

    def increment_version(self, tensor):
        pass

    def apply(self, function, args):
        ctx = Ctx()
        out = function.forward(ctx, *args)
        self.calls.append((function, ctx))
        return out


@pytest.fixture
def lib(in_use, world, monkeypatch):
    """The world, with custom operators defined in its registry."""
    monkeypatch.setattr(custom_ops, "OPDEF_TO_LIB", {})
    return world


@pytest.fixture
def T(world):
    """A tensor type of the world's engine: numpy values, a device, a requires_grad flag."""
    base = world.engine.TensorBase
    keys = {"cpu": ("CPU", "ADInplaceOrView", "AutogradCPU"), "meta": ("Meta", "ADInplaceOrView", "AutogradMeta")}

    class T(base):
        def __init__(self, value, requires_grad=False, device="cpu", shape=None):
            base.__init__(self, world.engine.DispatchKeySet([getattr(world.engine.DispatchKey, k) for k in keys[device]]))
            self.value = None if value is None else np.asarray(value, dtype=float)
            self.shape = tuple(shape if value is None else self.value.shape)
            self.requires_grad, self.device = requires_grad, device

        def __repr__(self):
            return f"T({self.value})"

    T.engine = Engine()
    register_autograd_engine(T, T.engine)
    yield T
    unregister_autograd_engine(T)


def describe(value, T):
    """A result as the golden script words torch's."""
    if isinstance(value, T):
        return "Tensor"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{', '.join(describe(v, T) for v in value)}]"
    return f"{type(value).__name__} {value!r}"


def outcome(call, T):
    try:
        return {"result": describe(call(), T)}
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


def define(case, T):
    def new_like(x):
        return (lambda: T(None, device="meta", shape=x.shape)) if x.device == "meta" else (lambda: T(x.value.copy()))

    def kernel(x):
        return case.result(new_like(x))

    op = custom_op(f"results::{case.name}", kernel, mutates_args=(), schema=case.schema)
    op.register_fake(kernel)
    return op


def run_paths(op, T, world):
    def below_autograd(x):
        with world.engine.AutoDispatchBelowAutograd():
            return op(x)

    return {
        "call": lambda: op(T([1.0, 1.0])),
        "requires_grad": lambda: op(T([1.0, 1.0], requires_grad=True)),
        "below_autograd": lambda: below_autograd(T([1.0, 1.0])),
        "meta": lambda: op(T(None, device="meta", shape=(2,))),
        "meta_below_autograd": lambda: below_autograd(T(None, device="meta", shape=(2,))),
    }


_PYBIND = re.compile(r"(Unable to cast Python instance of type <class '[^']*'> to C\+\+ type )'\?' "
                     r"\(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details\)\Z")


def assert_same_outcome(ours, torch_outcome, case, T):
    if "result" in torch_outcome:
        assert ours == torch_outcome
        return
    assert ours.get("error") == torch_outcome["error"], (ours, torch_outcome)
    expected = torch_outcome["message"].replace("<class 'torch.Tensor'>", repr(T))
    expected = expected.replace("Object of type 'Tensor'", f"Object of type '{T.__name__}'")
    pybind = _PYBIND.match(expected)
    if pybind is None:
        assert ours["message"] == expected
    else:  # torch's text, with our details where its binding library gives none
        schema = f"results::{case.name}{case.schema}"
        assert re.fullmatch(re.escape(pybind.group(1)) + r"'[^']+' \(return \d of " + re.escape(schema) + r"(: .+)?\)",
                            ours["message"]), ours["message"]


@pytest.mark.parametrize("case", [c for c in RESULT_CASES if c.name not in WRONG_LENGTH], ids=lambda c: c.name)
def test_kernel_results_are_checked_and_converted_as_torch_does(lib, T, case):
    golden = GOLDEN["results"][case.name]
    op = define(case, T)
    assert f"results::{case.name}{case.schema}" == golden["schema"]
    for path, call in run_paths(op, T, lib).items():
        assert_same_outcome(outcome(call, T), golden["call" if (case.name, path) in SAME_AS_CALL else path], case, T)


@pytest.mark.parametrize("case", [c for c in RESULT_CASES + OVERLONG_CASES if c.name in WRONG_LENGTH],
                         ids=lambda c: c.name)
def test_a_sequence_of_the_wrong_length_is_refused(lib, T, case):
    golden = GOLDEN["results"].get(case.name) or GOLDEN["overlong"][case.name]
    assert "error" in golden.get("call", {}) or golden.get("accepted") is False  # torch does not accept it either
    op = define(case, T)
    message = LENGTH_ERROR.format(name=case.name, n=WRONG_LENGTH[case.name])
    for call in run_paths(op, T, lib).values():
        assert outcome(call, T) == {"error": "RuntimeError", "message": message}


def test_the_cases_cover_the_golden_file():
    assert {c.name for c in RESULT_CASES} == set(GOLDEN["results"])
    assert {c.name for c in OVERLONG_CASES} == set(GOLDEN["overlong"])
    assert {c.name for c in BACKWARD_CASES} == set(GOLDEN["backward"])
    assert set(TENSOR_LIST_BACKWARD_CASES) == set(GOLDEN["tensor_list_backward"])


def test_a_fake_registered_for_any_operator_is_checked(lib, T):
    """register_fake on an operator that is not a custom_op: its Meta kernel's result is checked too,
    against the schema of the operator when called (defined after the fake here)."""
    fakes, definitions = lib.library("plain"), lib.library("plain")
    register_fake("plain::f", lambda x: 5, lib=fakes)
    definitions.define("f(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=r"\AUnable to cast 5 to Tensor\Z"):
        lib.ops.plain.f.default(T(None, device="meta", shape=(2,)))


def test_the_autograd_wrapper_checks_what_the_kernel_below_returns(lib, T):
    """register_autograd on a plain operator whose kernel (not a custom_op's) returns a wrong result:
    the autograd kernel, a Python kernel to torch, checks it on either path."""
    plain = lib.library("plain")
    plain.define("g(Tensor x) -> (Tensor, Tensor)")
    plain.impl("g", lambda x: 5, "CPU")
    register_autograd("plain::g", lambda ctx, a, b: a, lib=plain)
    for requires_grad in (False, True):
        with pytest.raises(TypeError, match=r"\AObject of type 'int' is not an instance of 'sequence'\Z"):
            lib.ops.plain.g.default(T([1.0], requires_grad=requires_grad))


def test_results_that_convert_come_back_converted(lib, T):
    @custom_op("results::halves", mutates_args=(), schema="(Tensor x) -> (float[], Scalar, bool, int)")
    def halves(x):
        return (1, 2), np.float64(0.5), None, np.int64(7)

    assert halves(T([1.0])) == ([1.0, 2.0], 0.5, False, 7)
    assert [type(v) for v in halves(T([1.0]))] == [list, float, bool, int]


@pytest.mark.parametrize("case", BACKWARD_CASES, ids=lambda c: c.name)
def test_backward_results_get_torchs_errors(lib, T, case):
    """The golden file has torch's error, or the inputs' gradients (ours: the tensors' gradients backward gives)."""
    op = custom_op(f"backward::{case.name}", lambda x, *rest: T(x.value.copy()), mutates_args=(), schema=case.schema)
    op.register_autograd(lambda ctx, grad: case.grad(lambda: T(grad.value.copy())))
    op(*[T([1.0, 1.0], requires_grad=True) for _ in range(case.n_tensors)], *([2] if case.with_int else []))
    function, ctx = T.engine.calls[-1]
    gradients = outcome(lambda: function.backward(ctx, T([1.0, 1.0]))[:case.n_tensors], T)
    assert gradients == GOLDEN["backward"][case.name]


def test_schema_integers_are_bounded_as_torchs_parser_bounds_them(lib):
    for name, case in GOLDEN["schema_integers"].items():
        if "error" in case:  # torch's std::stoll/stod give an IndexError; the parser's error here
            with pytest.raises(SchemaParseError, match="out of the 64-bit range|out of range"):
                FunctionSchema.parse(case["schema"])
            with pytest.raises(SchemaParseError):
                lib.library("ints").define(case["schema"].replace("f(", f"{name}(", 1))
        else:
            assert FunctionSchema.parse(case["schema"]).arguments[0].name == "x", name


def test_a_list_size_is_an_int64():
    assert ListType(BaseType(BaseTy.int), 2**63 - 1).size == 2**63 - 1
    with pytest.raises(ValueError, match="a list size must be a non-negative int64, got 9223372036854775808"):
        ListType(BaseType(BaseTy.int), 2**63)


def test_the_prototypes_backward_gets_torchs_error_not_an_attribute_error(prototype_fallbacks):
    """Through dispatcher.prototype's autograd (the default registry), as the issue found it:
    an int gradient was a bare AttributeError ('int' object has no attribute 'shape')."""
    import dispatcher.prototype as P
    from dispatcher import Tensor

    @custom_op("results::proto_double", mutates_args=())
    def proto_double(x: Tensor) -> Tensor:
        return x * 2

    try:
        proto_double.register_autograd(lambda ctx, grad: 5)
        x = P.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match=r"\Aexpected Variable or None \(got int\)\Z"):
            proto_double(x).sum().backward()
        proto_double.register_autograd(lambda ctx, grad: grad * 2)
        proto_double(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
    finally:
        proto_double._destroy()


_STRUCTURE = "Expected the return from backward to be of the same structure as the inputs. Got: "


@pytest.mark.parametrize("name", TENSOR_LIST_BACKWARD_CASES)
def test_the_gradient_of_a_list_of_tensors_is_a_list_as_long(lib, T, name):
    """torch's text prints the pytree specs of the gradients and of the inputs; ours says the same in words."""
    op = custom_op(f"backward::{name}", lambda xs: T(xs[0].value.copy()), mutates_args=(), schema="(Tensor[] xs) -> Tensor")
    op.register_autograd(lambda ctx, grad: TENSOR_LIST_BACKWARD_CASES[name](lambda: T(grad.value.copy())))
    op([T([1.0, 1.0], requires_grad=True), T([1.0, 1.0], requires_grad=True)])
    function, ctx = T.engine.calls[-1]
    ours = outcome(lambda: function.backward(ctx, T([1.0, 1.0])), T)
    golden = GOLDEN["tensor_list_backward"][name]
    if "result" in golden:  # torch's is the inputs' .grad; ours the list backward gives for them
        assert ours == {"result": golden["result"].replace("tuple[", "tuple[list[", 1) + "]"}
    else:
        assert golden["message"].startswith(_STRUCTURE) and ours["error"] == golden["error"]
        assert re.fullmatch(re.escape(_STRUCTURE) + r"(None|an? \w+( of [\w, ]+)?) as the gradient of argument 0, "
                            r"a list of 2 tensors", ours["message"]), ours["message"]


def test_results_are_checked_with_checked_calls_too(lib, T):
    """checked_calls() wraps every plain kernel to check its arguments; the results are still checked."""
    from dispatcher import checked_calls

    op = define(next(c for c in RESULT_CASES if c.name == "int_for_tensor"), T)
    with checked_calls():
        with pytest.raises(RuntimeError, match=r"\AUnable to cast 5 to Tensor\Z"):
            op(T([1.0, 1.0]))
        with pytest.raises(RuntimeError, match=r"\AUnable to cast 5 to Tensor\Z"):
            op(T(None, device="meta", shape=(2,)))
