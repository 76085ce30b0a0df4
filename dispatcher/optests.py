"""``opcheck``: does an operator do what its registrations say? (torch.library.opcheck without torch)

torch's opcheck (torch/testing/_internal/optests) runs the operator on sample
inputs under several checkers and returns ``{test name: "SUCCESS" or the
exception}``.  The checkers here are those that need no torch machinery,
asking the inputs' tensor library what they need to know about its tensors
(dispatcher.tensor_protocols.TensorChecks; the autograd engine for
``requires_grad``).  Each test gets fresh copies of the inputs, and, as in
torch, checks nothing when an input is a meta tensor.

``test_schema`` (torch's SchemaCheckMode, for the operator itself)
    Calls the operator below autograd and compares each argument's values
    before and after: one the schema does not mark as written
    (``Tensor(a!)``) must not change; a result must not be an argument or
    share memory with one unless the schema says it may alias it; two
    results must not share memory unless their annotations allow it.  As in
    torch, an argument marked as written that is left alone passes.
``test_autograd_registration``
    With an input that requires grad: an operator without a kernel on an
    autograd key (its tensors' Autograd<backend>, Autograd, or a
    CompositeImplicitAutograd decomposition) must not return results that
    require grad: if it does, its backend kernel recorded autograd itself.
``test_faketensor`` (see Note [Fake means Meta] in custom_ops.py)
    Runs the operator on meta copies of the inputs (its fake implementation,
    the Meta kernel) and on the inputs, below autograd, and compares the
    results: how many, which are tensors, whether any of them is an input
    itself (torch's outputs_are_inputs), and each tensor's shape and dtype.  Devices differ by construction
    (meta against the real one), so they are not compared; torch's
    FakeTensors keep the device.  Strides and storage offsets are compared
    as torch's check compares them (_stride_mismatch) where the tensor library
    knows the fake result's (TensorChecks.layout): with meta tensors that all
    count as contiguous, when the inputs are contiguous and the fake call
    made no view of a meta tensor.  torch's check of memory aliasing between
    the results and the inputs is not made.
``test_aot_dispatch_dynamic``, ``test_aot_dispatch_static``
    compare eager results and gradients with torch.compile's (AOTAutograd).
    What fails there without a compiler fails here, with torch's texts
    (check_aot_dispatch): an aliased output that functionalization refuses,
    an operator without a fake implementation or whose call on fake (meta)
    tensors fails, results or gradients that differ from call to call (two
    calls, the generator seeded alike, compared as torch's by assert_close
    with opcheck's tolerances), a backward that fails.  The comparison with
    the compiled operator needs torch.compile: then they report ``Skipped``,
    a str equal to ``"SKIPPED"`` that carries the reason.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator, Optional, Sequence, Union

from . import _engine
from .custom_ops import CustomOpDef
from .keys import DispatchKey, get_autograd_key_from_backend
from .mismatch_texts import number_mismatch, with_item
from .operator_entry import BACKEND_FALLBACK
from .registry import registry_in_use
from .tensor_protocols import TensorChecks, autograd_engine_for, tensor_checks_for

__all__ = [
    "ALL_TEST_UTILS", "DEFAULT_TEST_UTILS", "MetadataMismatchError", "OpCheckError", "Skipped",
    "UnsupportedOperatorException", "opcheck",
]


class OpCheckError(Exception):
    """What ``opcheck(..., raise_exception=True)`` raises for the first failing test."""


class MetadataMismatchError(RuntimeError):
    """A fake (meta) result that does not match the real one."""


class UnsupportedOperatorException(RuntimeError):
    """An operator with no fake implementation: nothing runs it on meta tensors
    (torch's FakeTensorMode raises it, its text the overload's name)."""

    def __init__(self, func: Any) -> None:
        super().__init__(str(func))
        self.func = func


class Skipped(str):
    """A test that cannot run here: equal to ``"SKIPPED"``; ``reason`` says why."""

    reason: str

    def __new__(cls, reason: str) -> "Skipped":
        skipped = super().__new__(cls, "SKIPPED")
        skipped.reason = reason
        return skipped

    def __repr__(self) -> str:
        return f"Skipped({self.reason!r})"


Result = Union[str, Exception]

# Says what it needs as the features out of scope say it (tests/torch_test_modules.py: "needs <feature>").
_NO_COMPILER = (
    "needs torch.compile (dynamo, AOTAutograd): it compares eager mode with torch.compile (AOTAutograd, "
    "functionalization, FakeTensor tracing), which do not exist without torch; only its checks that need no "
    "tracing ran"
)


# -- inputs --------------------------------------------------------------------------------------
class _Inputs:
    """One test's view of the sample inputs: the tensors among them and what their library says."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any], engine: Any) -> None:
        self.args = args
        self.kwargs = kwargs
        self.engine = engine

    def tensors(self, values: Sequence[Any]) -> Iterator[Any]:
        """The tensors among ``values`` and in lists and tuples among them."""
        for value in values:
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if self.engine.tensor_key_set(item) is not None:
                    yield item

    def all_tensors(self) -> list[Any]:
        return list(self.tensors((*self.args, *self.kwargs.values())))

    def any_meta(self) -> bool:
        return any(checks_of(t).is_meta(t) for t in self.all_tensors())

    def map_tensors(self, fn: Callable[[TensorChecks, Any], Any]) -> "_Inputs":
        """The inputs with each tensor ``t`` replaced by ``fn(checks of t, t)``."""
        def one(value: Any) -> Any:
            if self.engine.tensor_key_set(value) is not None:
                return fn(checks_of(value), value)
            if isinstance(value, (list, tuple)):
                return type(value)(one(v) for v in value)
            return value

        return _Inputs(tuple(one(a) for a in self.args), {k: one(v) for k, v in self.kwargs.items()}, self.engine)

    def copies(self) -> "_Inputs":
        return self.map_tensors(lambda checks, t: checks.copy(t))


def checks_of(tensor: Any) -> TensorChecks:
    checks = tensor_checks_for(tensor)
    if checks is None:
        raise RuntimeError(
            f"opcheck cannot inspect tensors of type {type(tensor).__qualname__}: their library registered no "
            "TensorChecks (dispatcher.register_tensor_checks), which opcheck needs to copy, compare and make "
            "meta versions of them"
        )
    return checks


def _requires_grad(tensor: Any) -> bool:
    engine = autograd_engine_for(tensor)
    return engine is not None and engine.requires_grad(tensor)


def _results(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def _leaves(out: Any) -> list[Any]:
    """The values of a result, lists flattened (torch's pytree leaves)."""
    leaves: list[Any] = []
    for value in _results(out):
        if isinstance(value, (list, tuple)):
            leaves.extend(value)
        else:
            leaves.append(value)
    return leaves


# -- the tests --------------------------------------------------------------------------------------
def _overlap(inputs: _Inputs, a: Any, b: Any) -> bool:
    """Whether any tensor of ``a`` shares memory with any tensor of ``b`` (each a tensor or a list)."""
    for x in inputs.tensors((a,)):
        for y in inputs.tensors((b,)):
            checks = checks_of(x)
            if x is y or (checks is tensor_checks_for(y) and checks.shares_memory(x, y)):
                return True
    return False


def _run_through_autograd(op: Any, inputs: _Inputs) -> None:
    """torch runs test_schema's and test_faketensor's call through autograd
    (its SchemaCheckMode and FakeTensorMode sit below it), so inputs that
    require grad run the operator's autograd kernel: a setup_context or
    backward registration that fails there fails the test.  The checks
    themselves look below autograd, where those modes see the call; this
    runs the call through autograd first, on its own copies, when an input
    requires grad."""
    if any(_requires_grad(t) for t in inputs.all_tensors()):
        op(*inputs.args, **inputs.kwargs)


def check_schema(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], engine: Any) -> None:
    """test_schema: what the call writes and what its results alias, against the schema."""
    inputs = _Inputs(args, kwargs, engine)
    if inputs.any_meta():
        return
    _run_through_autograd(op, inputs.copies())
    inputs = inputs.copies()
    schema = op.schema
    values = schema.bind(inputs.args, inputs.kwargs)
    before = [[(t, checks_of(t).snapshot(t)) for t in inputs.tensors((v,))] for v in values]
    with engine.AutoDispatchBelowAutograd():  # where torch's SchemaCheckMode sees the call
        out = op(*inputs.args, **inputs.kwargs)
    outputs = _results(out)
    for i, argument in enumerate(schema.arguments):
        name = "input" if argument.name == "self" else argument.name  # torch's standardize_name
        value = values[i]
        if value is None:
            continue
        for j, output in enumerate(outputs):
            if _overlap(inputs, output, value) and i not in schema.aliased_arguments(j):
                raise RuntimeError(f"Argument {name} is not defined to alias output but was aliasing")
            if output is value and engine.tensor_key_set(value) is not None and not argument.is_write:
                raise RuntimeError(
                    "Dispatcher operators below autograd are not allowed to directly return inputs.\n"
                    f"However, we found that `outputs[{j}] is {name}"
                )
        if not argument.is_write and any(checks_of(t).changed(t, snapshot) for t, snapshot in before[i]):
            raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")
    for i, j in itertools.combinations(range(min(len(schema.returns), len(outputs))), 2):
        if _overlap(inputs, outputs[i], outputs[j]):
            ai, aj = schema.returns[i].alias_info, schema.returns[j].alias_info
            if ai is None or aj is None or not set(ai.after_set) & set(aj.after_set):
                raise RuntimeError(f"Outputs {i} and {j} alias unexpectedly")


def check_autograd_registration(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], engine: Any) -> None:
    """test_autograd_registration: a kernel on an autograd key if outputs require grad."""
    inputs = _Inputs(args, kwargs, engine)
    if inputs.any_meta():
        return
    inputs = inputs.copies()
    tensors = inputs.all_tensors()
    if not any(_requires_grad(t) for t in tensors):
        return  # torch's safe_autograd_registration_check: nothing to test
    entry = registry_in_use().op_or_throw(op.name())
    keys = {get_autograd_key_from_backend(engine.tensor_key_set(t).highest_backend()) for t in tensors}
    keys |= {DispatchKey.Autograd, DispatchKey.CompositeImplicitAutograd}
    if any(entry.has_kernel_for_dispatch_key(key) for key in keys):
        return
    # No autograd kernel: the Autograd<backend> fallbacks are fallthroughs
    # (torch's autograd fallback mode "nothing"), so an output that requires
    # grad was made so by the backend kernel itself.
    out = op(*inputs.args, **inputs.kwargs)
    input_ids = {id(t) for t in tensors}
    if any(_requires_grad(t) and id(t) not in input_ids for t in inputs.tensors(_leaves(out))):
        raise AssertionError(
            f"{op.name()}: at least one output of this operator has requires_grad=True but the operator does not "
            "have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean "
            "that you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may "
            "lead to silently incorrect results. If your operator consists of other operators, consider not "
            "using an operator at all or registering your operator as CompositeImplicitAutograd. If you have "
            "an autograd formula registered to a backend (CPU/CUDA/...) key, the correct location for it is "
            "the Autograd key."
        )


def check_has_fake(op: Any) -> None:
    """What torch's FakeTensorMode refuses first: an operator nothing runs on meta
    tensors (no fake implementation, Meta kernel, nor a kernel for every backend).
    A Meta backend fallback (the prototype's raises torch's NotImplementedError,
    as ATen's does) is no kernel of the operator's."""
    kernel, rule = registry_in_use().op_or_throw(op.name()).compute_entry(DispatchKey.Meta)
    if kernel is None or rule.tag == BACKEND_FALLBACK:
        raise UnsupportedOperatorException(op)


def check_fake(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], engine: Any) -> None:
    """test_faketensor: the fake implementation's results against the real ones."""
    inputs = _Inputs(args, kwargs, engine)
    if inputs.any_meta():
        return
    check_has_fake(op)
    inputs = inputs.copies()
    fake_inputs = inputs.map_tensors(lambda checks, t: checks.to_meta(t))
    _run_through_autograd(op, fake_inputs)
    context = f"When comparing the output of {op.name()} on meta tensors and real tensors, found"
    views_before = _meta_views_made(inputs)
    with engine.AutoDispatchBelowAutograd():  # where torch's CrossRefFakeMode sees the call
        fake_out = op(*fake_inputs.args, **fake_inputs.kwargs)
        fake_layout_certain = views_before is not None and views_before == _meta_views_made(inputs) and all(
            _contiguous(t) for t in inputs.all_tensors())
        real_out = op(*inputs.args, **inputs.kwargs)
    fake_leaves, real_leaves = _leaves(fake_out), _leaves(real_out)
    if len(fake_leaves) != len(real_leaves):
        raise AssertionError(f"{context} mismatch in number of returns {len(fake_leaves)} != {len(real_leaves)}")
    real_inputs = inputs.all_tensors()
    fake_inputs_list = fake_inputs.all_tensors()
    # torch's outputs_are_inputs: whether any output is an input, one bool per side.
    real_are_inputs = any(r is t for r in real_leaves for t in real_inputs)
    fake_are_inputs = any(f is t for f in fake_leaves for t in fake_inputs_list)
    if real_are_inputs != fake_are_inputs:
        raise MetadataMismatchError(
            f"{context} mismatch in outputs_are_inputs check {fake_are_inputs} != {real_are_inputs}"
        )
    for idx, (real, fake) in enumerate(zip(real_leaves, fake_leaves)):
        real_is_tensor = engine.tensor_key_set(real) is not None
        if real_is_tensor != (engine.tensor_key_set(fake) is not None):
            raise AssertionError(f"{context} mismatched number of tensor outputs")
        if not real_is_tensor:
            continue
        (real_shape, real_dtype), (fake_shape, fake_dtype) = checks_of(real).metadata(real), checks_of(fake).metadata(fake)
        real_layout, fake_layout = (_layout(real), _layout(fake)) if fake_layout_certain else (None, None)
        problem = (" mismatched storage offset" if real_layout and fake_layout and real_layout[1] != fake_layout[1]
                   else f"Shapes {real_shape} and {fake_shape} are not equal!" if real_shape != fake_shape
                   else f"Dtypes {real_dtype} and {fake_dtype} are not equal!" if real_dtype != fake_dtype
                   else _stride_mismatch(real_shape, real_layout, fake_layout))
        if problem is not None:
            which = "" if len(real_leaves) == 1 else f" for output[{idx}]"
            raise MetadataMismatchError(f"{context} mismatched tensor metadata{which}: {problem}")


def _layout(tensor: Any) -> Optional[tuple[tuple[int, ...], int]]:
    """``(strides, storage offset)`` of ``tensor``, if its library tells (TensorChecks.layout)."""
    layout = getattr(checks_of(tensor), "layout", None)
    return None if layout is None else layout(tensor)


def _meta_views_made(inputs: _Inputs) -> Optional[int]:
    """How many views of meta tensors the inputs' library has made (TensorChecks.meta_views_made), or None."""
    tensors = inputs.all_tensors()
    count = getattr(checks_of(tensors[0]), "meta_views_made", None) if tensors else None
    return None if count is None else count()


def _contiguous(tensor: Any) -> bool:
    """Whether ``tensor`` is laid out as a fresh tensor of its shape (torch's significant
    strides: those of dimensions longer than 1), from its first element."""
    layout = _layout(tensor)
    if layout is None:
        return False
    strides, offset = layout
    shape = checks_of(tensor).metadata(tensor)[0]
    expected = 1
    for size, stride in reversed(list(zip(shape, strides))):
        if size > 1 and stride != expected:
            return False
        expected *= max(size, 1)
    return offset == 0


def _stride_mismatch(shape: tuple[int, ...], real: Optional[tuple[tuple[int, ...], int]],
                     fake: Optional[tuple[tuple[int, ...], int]]) -> Optional[str]:
    """torch's check of a fake result's strides against the real one's (compare_tensor_meta
    with check_strides): only the dimensions longer than 1 of a tensor with elements count."""
    if real is None or fake is None or not all(shape):
        return None
    (real_strides, _), (fake_strides, _) = real, fake  # (the storage offsets were compared first)
    for dim, size in enumerate(shape):
        if size > 1 and real_strides[dim] != fake_strides[dim]:
            return f"Stride mismatch! Strides are {real_strides} and {fake_strides} (mismatched at {dim})!"
    return None


def check_functionalizable(op: Any) -> None:
    """What torch's functionalization (the first step of AOTAutograd) refuses
    before it traces anything: a custom operator, not decomposed on the way
    (CompositeImplicitAutograd), that returns an alias of an input
    (``Tensor(a!)``, ``Tensor(a)``): torch's auto_functionalize handles
    mutated arguments, not aliased outputs.  torch's words (its
    FunctionalizeFallbackKernel)."""
    schema = op.schema
    if op.name().partition("::")[0] in ("aten", "prim") or not any(r.alias_info for r in schema.returns):
        return
    if registry_in_use().op_or_throw(op.name()).has_kernel_for_dispatch_key(DispatchKey.CompositeImplicitAutograd):
        return
    raise RuntimeError(
        f"Found a custom (non-ATen) operator whose output has alias annotations: {schema}. We only support "
        "functionalizing operators whose outputs do not have alias annotations (e.g. 'Tensor(a)' is a Tensor "
        "with an alias annotation whereas 'Tensor' is a Tensor without. The '(a)' is the alias annotation). The "
        "alias annotation specifies that the output Tensor shares storage with an input that has the same "
        "annotation. Please check if (1) the output needs to be an output (if not, don't return it), (2) if the "
        "output doesn't share storage with any inputs, then delete the alias annotation. (3) if the output "
        "indeed shares storage with an input, then add a .clone() before returning it to prevent storage "
        "sharing and then delete the alias annotation. Otherwise, please file an issue on GitHub."
    )


# torch's text (torch/testing/_internal/optests/aot_autograd.py) when the traced call's results differ.
_OUTPUTS_DIFFER = (
    "Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher tracing. This means the operator "
    "will have incorrect output underneath torch.compile. This could be because the operator's implementation not "
    "traceable."
)


_GRADIENTS_DIFFER = (
    "Gradients of the operator are different in eager-mode PyTorch vs AOTDispatcher. This means the operator will "
    "have incorrect gradients underneath torch.compile. This could be because the operator's backward is incorrectly "
    "registered or not traceable."
)


def check_same_results_twice(op: Any, inputs: _Inputs, rtol: Optional[float] = None,
                             atol: Optional[float] = None) -> None:
    """torch compares an eager call with a traced one, each on fresh copies of
    the inputs and with the random generators seeded alike, and, when an input
    and a result require grad, their gradients (of the results' sum): an
    operator whose results or backward depend on state that its calls change
    (a counter, a cache) gives others the second time.  Two eager calls show
    that much (and a backward that fails fails here, as torch's eager one
    does); torch's verdicts and texts.  Only for a tensor library whose
    TensorChecks can seed its generators (``seeded``), lest an operator that
    draws random numbers look like one; gradients if it can compute them
    (``gradients``).

    The second call's values are compared with the first's as torch compares
    the traced call's with the eager one's, by torch.testing.assert_close
    (with ``rtol`` and ``atol`` if both are given and not zero, else the
    dtypes' defaults), if the library can say why two tensors differ
    (TensorChecks.mismatch); else they must be equal.  As in torch, with
    gradients to compare the verdict is raised from assert_close's
    AssertionError (the exception's ``__context__``), without them in its
    place."""
    tensors = inputs.all_tensors()
    checks = checks_of(tensors[0]) if tensors else None
    seeded = getattr(checks, "seeded", None)
    if seeded is None:
        return
    gradients = getattr(checks, "gradients", None)
    tolerance = (rtol, atol) if rtol and atol else (None, None)  # torch's test: ``if rtol and atol``
    runs = []
    with_gradients = False
    for _ in range(2):
        call = inputs.copies()
        with seeded():
            out = op(*call.args, **call.kwargs)
            wrt = [t for t in call.all_tensors() if _requires_grad(t)]
            differentiable = [o for o in call.tensors(_leaves(out)) if _requires_grad(o)]
            with_gradients = bool(wrt) and bool(differentiable) and gradients is not None
            grads = tuple(gradients(differentiable, wrt)) if with_gradients and gradients is not None else ()
        runs.append((out, grads))
    (first, first_grads), (second, second_grads) = runs
    outputs_differ = _mismatch(inputs, second, first, tolerance)
    if not with_gradients:
        if outputs_differ is not None:
            raise AssertionError(_OUTPUTS_DIFFER)  # torch's assert_close(..., msg=): its text only
        return
    for differ, verdict in ((outputs_differ, _OUTPUTS_DIFFER),
                            (_mismatch(inputs, second_grads, first_grads, tolerance), _GRADIENTS_DIFFER)):
        if differ is not None:
            try:
                raise AssertionError(differ)
            except AssertionError as comparison:
                raise AssertionError(verdict) from comparison


def _mismatch(inputs: _Inputs, actual: Any, expected: Any, tolerance: tuple[Optional[float], Optional[float]],
              path: tuple[int, ...] = ()) -> Optional[str]:
    """Why ``actual`` (the second call's result) is not ``expected`` (the first's), as
    torch.testing.assert_close says it of tensors, numbers, None and sequences of them,
    or None if they match."""
    rtol, atol = tolerance
    actual_is_tensor = inputs.engine.tensor_key_set(actual) is not None
    expected_is_tensor = inputs.engine.tensor_key_set(expected) is not None
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            return with_item(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            found = _mismatch(inputs, a, e, tolerance, (*path, i))
            if found is not None:
                return found
        return None
    if actual_is_tensor and expected_is_tensor:
        mismatch = getattr(checks_of(actual), "mismatch", None)
        if mismatch is not None:
            found = mismatch(actual, expected, rtol, atol)
        else:
            found = "The values differ." if _differ(expected, actual) else None
    elif actual is None or expected is None:
        found = None if actual is expected else f"None mismatch: {actual} is not {expected}"
    elif actual_is_tensor or expected_is_tensor or not isinstance(actual, (bool, int, float, complex)):
        found = None if actual == expected else (
            f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")
    else:
        found = number_mismatch(actual, expected, rtol, atol)
    return None if found is None else with_item(found, path)


def _differ(a: Any, b: Any) -> bool:
    """Whether tensor ``b`` is not ``a`` (metadata or values), for a library that cannot say why (no ``mismatch``)."""
    checks = checks_of(a)
    return checks.metadata(a) != checks_of(b).metadata(b) or checks.changed(b, checks.snapshot(a))


def check_aot_dispatch(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], engine: Any, *,
                       rtol: Optional[float] = None, atol: Optional[float] = None) -> Skipped:
    """test_aot_dispatch_*: what torch's finds without a compiler.  AOTAutograd
    functionalizes the call (check_functionalizable) and traces it with fake
    tensors (check_has_fake, then the call on meta copies, through autograd
    as its trace is); the compiled call's results must be the eager ones
    (check_same_results_twice).  The rest of the comparison of results and
    gradients with the compiled operator's needs torch.compile, so the test
    is Skipped."""
    inputs = _Inputs(args, kwargs, engine)
    if not inputs.any_meta():
        check_functionalizable(op)
        check_has_fake(op)
        fake = inputs.copies().map_tensors(lambda checks, t: checks.to_meta(t))
        op(*fake.args, **fake.kwargs)
        check_same_results_twice(op, inputs, rtol, atol)
    return Skipped(_NO_COMPILER)


Checker = Callable[..., Optional[Skipped]]  # (op, args, kwargs, engine), the comparing ones also rtol=, atol=

# In the order opcheck runs them (torch's ALL_TEST_UTILS).
ALL_TEST_UTILS: dict[str, Checker] = {
    "test_schema": check_schema,
    "test_autograd_registration": check_autograd_registration,
    "test_faketensor": check_fake,
    "test_aot_dispatch_static": check_aot_dispatch,
    "test_aot_dispatch_dynamic": check_aot_dispatch,
}

# The tests that compare values, and so take opcheck's tolerances.
_COMPARING = ("test_aot_dispatch_static", "test_aot_dispatch_dynamic")

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def _resolve(op: Any) -> Any:
    """The OperatorHandle to test: a CustomOpDef's, a packet's only overload, or the handle itself."""
    if isinstance(op, CustomOpDef):
        return op._opoverload
    engines = _engine.loaded_engines()
    if any(isinstance(op, engine.OverloadPacket) for engine in engines):
        names = registry_in_use().overload_names(op.qualified_name)
        if len(names) != 1:
            raise RuntimeError(
                "opcheck can only test operators without overloads. "
                f"Got the following overloads for {op.qualified_name}: {names}"
            )
        return getattr(op, names[0] or "default")
    if any(isinstance(op, engine.OperatorHandle) for engine in engines):
        return op
    # torch's words (its OpOverload is an OperatorHandle here).
    raise ValueError(
        "opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. torch.ops.aten.sin.default, "
        f"got {type(op)}"
    )


def opcheck(
    op: Any,
    args: tuple[Any, ...],
    kwargs: Optional[dict[str, Any]] = None,
    *,
    test_utils: Union[str, Sequence[str]] = DEFAULT_TEST_UTILS,
    raise_exception: bool = True,
    atol: Optional[float] = None,
    rtol: Optional[float] = None,
) -> dict[str, Result]:
    """Check that ``op``'s registrations agree with what it does on ``args`` and ``kwargs``.

    ``op`` is a CustomOpDef, an OperatorHandle or a packet with one
    overload.  Runs ``test_utils`` (default: test_schema,
    test_autograd_registration, test_faketensor, test_aot_dispatch_dynamic;
    "ALL" adds test_aot_dispatch_static) and returns ``{test: "SUCCESS"}``,
    the exception of a failed test (or, with ``raise_exception``, raises
    OpCheckError from the first), or ``Skipped`` for the tests that cannot
    run without torch.  ``atol`` and ``rtol`` are torch's tolerances for the
    compiled-versus-eager comparisons (both or neither), here those of a
    second call with the first (check_same_results_twice).  Call it with several representative inputs, some that
    require grad.
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    if kwargs is None:
        kwargs = {}
    if isinstance(args, list):  # torch unpacks args as it is, so a list serves as a tuple
        args = tuple(args)
    if not isinstance(args, tuple) or not isinstance(kwargs, dict):
        raise TypeError(f"opcheck(op, args, kwargs): args must be a tuple and kwargs a dict, got {args!r}, {kwargs!r}")
    handle = _resolve(op)
    if test_utils == "ALL":
        test_utils = tuple(ALL_TEST_UTILS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils).issubset(ALL_TEST_UTILS):
        raise ValueError(
            f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
            f"{tuple(ALL_TEST_UTILS)} but it was not"
        )
    engine = registry_in_use().engine
    results: dict[str, Result] = {}
    for test_util in test_utils:
        try:
            tolerances = {"rtol": rtol, "atol": atol} if test_util in _COMPARING else {}
            skipped = ALL_TEST_UTILS[test_util](handle, args, kwargs, engine, **tolerances)
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {test_util} failed with {ex} (scroll up for stack trace)") from ex
            results[test_util] = ex
            continue
        results[test_util] = "SUCCESS" if skipped is None else skipped
    return results
