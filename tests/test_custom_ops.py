"""custom_op, register_fake / register_autograd / register_kernel, on dispatcher.prototype tensors.

The operators are PyTorch's custom-op tutorial patterns, written as
tests/golden/generate_custom_op_golden.py writes them for torch with the
imports changed (torch.from_numpy -> Tensor.from_numpy, torch.empty_like ->
P.empty(x.shape, ...)), and give torch 2.13's results on the same inputs:
values, gradients, node names, kernels, version counters, errors.
"""
import numpy as np
import pytest

import dispatcher.prototype as P
from dispatcher import DispatchKey, Library, Tensor, custom_op, device, ops, register_autograd, register_fake
from dispatcher import custom_ops
from dispatcher.prototype import float64
from dispatcher.registry import default_registry

from .conftest import load_golden

GOLDEN = load_golden("custom_op_golden.json")["ops"]
KEYS = ["CPU", "CUDA", "Meta", "PrivateUse1", "BackendSelect", "ADInplaceOrView", "Autograd", "AutogradCPU",
        "CompositeExplicitAutograd", "CompositeImplicitAutograd"]
X = [0.0, 0.5, 1.0, 2.0]
A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
B = [[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]]
W = [[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]]


def t(data, requires_grad=False):
    return P.tensor(data, dtype=P.float32, requires_grad=requires_grad)


def empty_like(x):
    return P.empty(x.shape, dtype=x.dtype, device=x.device)


class Tutorial:
    """The golden script's operators, on prototype tensors."""

    def __init__(self):
        @custom_op("golden::numpy_sin", mutates_args=())
        def numpy_sin(x: Tensor) -> Tensor:
            return P.Tensor.from_numpy(np.sin(x.numpy()))

        @numpy_sin.register_fake
        def _(x):
            return empty_like(x)

        @custom_op("golden::numpy_cos", mutates_args=())
        def numpy_cos(x: Tensor) -> Tensor:
            return P.Tensor.from_numpy(np.cos(x.numpy()))

        @numpy_cos.register_fake
        def _(x):
            return empty_like(x)

        def sin_setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        def sin_backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * numpy_cos(x)

        numpy_sin.register_autograd(sin_backward, setup_context=sin_setup_context)

        @custom_op("golden::mymuladd", mutates_args=())
        def mymuladd(a: Tensor, b: Tensor, c: float) -> Tensor:
            return P.Tensor.from_numpy(a.numpy() * b.numpy() + c)

        @mymuladd.register_fake
        def _(a, b, c):
            if a.shape != b.shape or a.dtype != b.dtype:
                raise RuntimeError("mymuladd: a and b must have the same shape and dtype")
            return empty_like(a)

        def muladd_setup_context(ctx, inputs, output):
            a, b, c = inputs
            ctx.save_for_backward(b if ctx.needs_input_grad[0] else None, a if ctx.needs_input_grad[1] else None)

        def muladd_backward(ctx, grad):
            a, b = ctx.saved_tensors
            return (grad * a if ctx.needs_input_grad[0] else None, grad * b if ctx.needs_input_grad[1] else None,
                    None)

        register_autograd("golden::mymuladd", muladd_backward, setup_context=muladd_setup_context)

        @custom_op("golden::mymul", mutates_args=())
        def mymul(a: Tensor, b: Tensor) -> Tensor:
            return P.Tensor.from_numpy(a.numpy() * b.numpy())

        @register_fake("golden::mymul")
        def _(a, b):
            return empty_like(a)

        @custom_op("golden::myadd_out", mutates_args=("out",))
        def myadd_out(a: Tensor, b: Tensor, out: Tensor) -> None:
            np.add(a.numpy(), b.numpy(), out=out.numpy())

        @custom_op("golden::numpy_scale", mutates_args=())
        def numpy_scale(x: Tensor, *, val: float) -> Tensor:
            return P.Tensor.from_numpy(x.numpy() * val)

        @numpy_scale.register_fake
        def _(x, *, val):
            return empty_like(x)

        def scale_setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.val = keyword_only_inputs["val"]

        numpy_scale.register_autograd(lambda ctx, grad: grad * ctx.val, setup_context=scale_setup_context)

        @custom_op("golden::numpy_cube", mutates_args=())
        def numpy_cube(x: Tensor) -> tuple[Tensor, Tensor]:
            x_np = x.numpy()
            return P.Tensor.from_numpy(x_np ** 3), P.Tensor.from_numpy(3 * x_np ** 2)

        @numpy_cube.register_fake
        def _(x):
            return empty_like(x), empty_like(x)

        def cube_setup_context(ctx, inputs, output):
            (x,) = inputs
            _, dx = output
            ctx.save_for_backward(x, dx)

        def cube_backward(ctx, grad_out, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_out * dx + grad_dx * 6 * x

        numpy_cube.register_autograd(cube_backward, setup_context=cube_setup_context)

        @custom_op("golden::weighted_sum", mutates_args=())
        def weighted_sum(tensors: list[Tensor], weights: list[float]) -> Tensor:
            return P.Tensor.from_numpy(sum(t.numpy() * w for t, w in zip(tensors, weights)))

        @weighted_sum.register_fake
        def _(tensors, weights):
            return empty_like(tensors[0])

        def weighted_setup_context(ctx, inputs, output):
            ctx.weights = inputs[1]

        weighted_sum.register_autograd(lambda ctx, grad: ([grad * w for w in ctx.weights], None),
                                       setup_context=weighted_setup_context)

        @custom_op("golden::make_ones", mutates_args=(), device_types="cpu")
        def make_ones(n: int, device: device) -> Tensor:
            return P.ones(n)

        @custom_op("golden::no_backward", mutates_args=())
        def no_backward(x: Tensor) -> Tensor:
            return x.clone()

        @no_backward.register_fake
        def _(x):
            return empty_like(x)

        @custom_op("golden::returns_input", mutates_args=())
        def returns_input(x: Tensor) -> Tensor:
            return x

        @returns_input.register_fake
        def _(x):
            return empty_like(x)

        self.defs = {name: op for name, op in locals().items() if isinstance(op, custom_ops.CustomOpDef)}
        self.__dict__.update(self.defs)

    def close(self):
        for op in self.defs.values():
            op._destroy()


@pytest.fixture(scope="module")
def tut():
    ops_ = Tutorial()
    yield ops_
    ops_.close()


def kernels(op):
    entry = default_registry.find_op(op._opoverload.name())
    return [k for k in KEYS if entry.has_kernel_for_dispatch_key(DispatchKey.parse(k))]


def facts(op):
    return {"schema": str(op._opoverload.schema), "tags": list(op._lib.tags_of(op._name)), "kernels": kernels(op)}


def expect(name, *fields):
    return {field: GOLDEN[name][field] for field in fields}


def test_numpy_sin(tut):
    x = t(X, requires_grad=True)
    y = tut.numpy_sin(x)
    assert y is not None and ops.golden.numpy_sin.default is tut.numpy_sin._opoverload
    y.backward(t([1.0, -1.0, 2.0, 0.5]))
    got = {**facts(tut.numpy_sin), "output": y.tolist(), "grad": x.grad.tolist(), "requires_grad": y.requires_grad,
           "grad_fn": y.grad_fn.name()}
    assert got == expect("numpy_sin", *got)
    assert ops.golden.numpy_sin.default(t(X)).tolist() == GOLDEN["numpy_sin"]["output"]  # the operator itself


def test_mymuladd(tut):
    a, b = t(A, requires_grad=True), t(B, requires_grad=True)
    y = tut.mymuladd(a, b, 1.5)
    (y * t(W)).sum().backward()
    got = {**facts(tut.mymuladd), "output": y.tolist(), "grad_a": a.grad.tolist(), "grad_b": b.grad.tolist(),
           "grad_fn": y.grad_fn.name()}
    a = t(A, requires_grad=True)
    tut.mymuladd(a, t(B), 1.5).sum().backward()
    got["grad_a_only"] = a.grad.tolist()
    assert got == expect("mymuladd", *got)


def test_mymul_records_without_a_formula(tut):
    got = {**facts(tut.mymul), "output": tut.mymul(t(A), t(B)).tolist(),
           "requires_grad": tut.mymul(t(A, requires_grad=True), t(B)).requires_grad}
    assert got == expect("mymul", *got)


def test_myadd_out_writes_and_bumps_the_version(tut):
    out = P.zeros(2, 3)
    before = out._version
    returned = tut.myadd_out(t(A), t(B), out)
    got = {**facts(tut.myadd_out), "returned": returned, "out": out.tolist(), "version_bump": out._version - before}
    assert got == expect("myadd_out", *got)


def test_keyword_only_argument_reaches_setup_context(tut):
    x = t(X, requires_grad=True)
    y = tut.numpy_scale(x, val=3.25)
    y.backward(t([1.0, 2.0, 3.0, 4.0]))
    got = {**facts(tut.numpy_scale), "output": y.tolist(), "grad": x.grad.tolist()}
    assert got == expect("numpy_scale", *got)


def test_two_outputs_one_node(tut):
    x = t(X, requires_grad=True)
    cube, dx = tut.numpy_cube(x)
    (cube * t([1.0, 2.0, 3.0, 4.0]) + dx * t([0.5, -1.0, 1.0, 2.0])).sum().backward()
    got = {**facts(tut.numpy_cube), "output": [cube.tolist(), dx.tolist()], "grad": x.grad.tolist(),
           "grad_fn": cube.grad_fn.name(), "same_node": cube.grad_fn is dx.grad_fn}
    x = t(X, requires_grad=True)
    tut.numpy_cube(x)[1].sum().backward()  # the first output's gradient is materialized as zeros
    got["grad_second_output_only"] = x.grad.tolist()
    assert got == expect("numpy_cube", *got)


def test_a_list_of_tensors(tut):
    p, q = t(A, requires_grad=True), t(B, requires_grad=True)
    y = tut.weighted_sum([p, q], [0.25, -2.0])
    (y * t(W)).sum().backward()
    got = {**facts(tut.weighted_sum), "output": y.tolist(), "grad_p": p.grad.tolist(), "grad_q": q.grad.tolist()}
    assert got == expect("weighted_sum", *got)


def test_an_operator_without_tensors_dispatches_on_its_device(tut):
    got = {**facts(tut.make_ones), "output": tut.make_ones(3, "cpu").tolist()}
    assert got == expect("make_ones", *got)
    with pytest.raises(RuntimeError) as info:
        tut.make_ones(3, "meta")
    assert str(info.value) == GOLDEN["make_ones"]["meta_error"]["message"]


def test_backward_without_a_formula_names_the_operator(tut):
    x = t(X, requires_grad=True)
    y = tut.no_backward(x)
    assert {"requires_grad": y.requires_grad, "grad_fn": y.grad_fn.name()} == expect("no_backward", "requires_grad", "grad_fn")
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    torch_message = GOLDEN["no_backward"]["backward_error"]["message"]
    assert str(info.value) == torch_message.replace("golden.no_backward.default", "golden::no_backward")


def test_returning_an_input_is_refused(tut):
    with pytest.raises(RuntimeError) as info:
        tut.returns_input(t(X))
    torch_message = GOLDEN["returns_input"]["call_error"]["message"]
    assert str(info.value).startswith(f"returns_input (with implementation in <module '{__name__}'")
    assert str(info.value).partition(">): ")[2] == torch_message.partition(">): ")[2]


def test_custom_ops_pass_gradcheck(tut):
    x = P.tensor([0.3, -1.2, 2.5], dtype=float64, requires_grad=True)
    assert P.gradcheck(lambda x: tut.numpy_sin(x), [x])
    a = P.tensor([[0.5, 1.0], [2.0, -1.0]], dtype=float64, requires_grad=True)
    b = P.tensor([[1.5, -0.5], [0.25, 3.0]], dtype=float64, requires_grad=True)
    assert P.gradcheck(lambda a, b: tut.mymuladd(a, b, 0.5), [a, b])
    assert P.gradcheck(lambda x: tut.numpy_cube(x)[0] + tut.numpy_cube(x)[1], [x])
    assert P.gradcheck(lambda a, b: tut.weighted_sum([a, b], [2.0, -0.5]), [a, b])


def test_no_grad_records_nothing(tut):
    x = t(X, requires_grad=True)
    with P.no_grad():
        y = tut.numpy_sin(x)
    assert not y.requires_grad and y.grad_fn is None


def test_meta_tensors_run_the_fake_implementation(tut):
    y = tut.mymuladd(P.empty(2, 3, device="meta"), P.empty(2, 3, device="meta"), 1.0)
    assert (y.device.type, y.shape, y.dtype) == ("meta", (2, 3), P.float32)
    with pytest.raises(RuntimeError, match="mymuladd: a and b must have the same shape"):
        tut.mymuladd(P.empty(2, 3, device="meta"), P.empty(3, device="meta"), 1.0)
    assert tut.myadd_out(*(P.empty(2, device="meta") for _ in range(3))) is None  # writes, returns nothing: no fake needed


def test_saved_tensors_written_in_place_are_refused(tut):
    x = t(X, requires_grad=True)
    h = x * 1.0
    y = tut.numpy_sin(h)
    h.add_(t([1.0, 1.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="modified by an inplace operation: saved tensor 0 of "
                                           "GeneratedBackwardFor_golden_numpy_sin_defaultBackward"):
        y.sum().backward()


def test_saved_tensors_are_freed_after_backward(tut):
    x = t(X, requires_grad=True)
    y = tut.numpy_sin(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


@pytest.mark.filterwarnings("ignore:The operator aten")  # views on toy run as copies
def test_the_toy_device_through_the_cpu_fallback(prototype_fallbacks):
    @custom_op("golden_toy::numpy_exp", mutates_args=())
    def numpy_exp(x: Tensor) -> Tensor:
        return P.Tensor.from_numpy(np.exp(x.numpy())).to(x.device)

    def setup_context(ctx, inputs, output):
        ctx.result = output

    numpy_exp.register_autograd(lambda ctx, grad: grad * ctx.result, setup_context=setup_context)
    try:
        x = P.tensor([0.0, 1.0], device="toy", requires_grad=True)
        y = numpy_exp(x)
        y.sum().backward()
        assert y.device.type == "toy" and x.grad.device.type == "toy"
        assert y.tolist() == x.grad.tolist() == pytest.approx(np.exp([0.0, 1.0]).tolist())
    finally:
        numpy_exp._destroy()


def test_redefining_replaces_the_operator():
    @custom_op("golden_redef::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x * 2

    handle = f._opoverload

    @custom_op("golden_redef::f", mutates_args=())
    def g(x: Tensor, n: int) -> Tensor:
        return x * n

    try:
        # A new operator (Note [An entry goes with its last registration]): the old handle says it is gone.
        assert g._opoverload is not handle and g._opoverload is ops.golden_redef.f.default
        assert str(g._opoverload.schema) == "golden_redef::f(Tensor x, SymInt n) -> Tensor"
        assert g(t([1.0]), 3).tolist() == [3.0]
        with pytest.raises(RuntimeError, match="golden_redef::f is not defined"):
            handle(t([1.0]))
    finally:
        g._destroy()
    assert default_registry.find_op("golden_redef::f") is None


def test_failed_definitions_leave_nothing_behind():
    with pytest.raises(ValueError, match="The schema suggests that the op mutates {'x'}"):
        @custom_op("golden_bad::f", mutates_args=(), schema="(Tensor(a!) x) -> ()")
        def f(x):
            pass

    with pytest.raises(NotImplementedError, match="custom_op with kwarg-only Tensor args"):
        @custom_op("golden_bad::g", mutates_args=())
        def g(x: Tensor, *, y: Tensor) -> Tensor: ...

    with pytest.raises(ValueError, match='expected a name of the form "namespace::name", got \'nonamespace\''):
        custom_op("nonamespace", lambda x: x, mutates_args=(), schema="(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="Expected device_type string to not have a device index; got cuda:0"):
        @custom_op("golden_bad::h", mutates_args=(), device_types="cuda:0")
        def h(x: Tensor) -> Tensor: ...

    assert not [name for name in default_registry.all_op_names() if name.startswith("golden_bad::")]


def test_registration_functions_on_a_library_operator():
    lib = Library("golden_lib", "FRAGMENT")
    lib.define("twice(Tensor x) -> Tensor")
    try:
        custom_ops.register_kernel("golden_lib::twice", "cpu", lambda x: P.Tensor.from_numpy(x.numpy() * 2), lib=lib)
        register_fake("golden_lib::twice", lambda x: empty_like(x), lib=lib)
        register_autograd("golden_lib::twice", lambda ctx, grad: grad * 2, lib=lib)
        x = t([1.0, 2.0], requires_grad=True)
        y = ops.golden_lib.twice.default(x)
        y.sum().backward()
        assert (y.tolist(), x.grad.tolist()) == ([2.0, 4.0], [2.0, 2.0])
        assert y.grad_fn.name() == "GeneratedBackwardFor_golden_lib_twice_defaultBackward"
        assert ops.golden_lib.twice.default(P.empty(5, device="meta")).shape == (5,)
        with pytest.raises(RuntimeError, match="the operator golden_lib::twice already has a fake impl registered at "
                                               f"{__file__}:"):
            register_fake("golden_lib::twice", lambda x: x, lib=lib, allow_override=False)
    finally:
        lib.close()


def test_get_ctx_inside_a_fake_implementation():
    seen = []

    @custom_op("golden_ctx::nonzero", mutates_args=())
    def nonzero(x: Tensor) -> Tensor:
        return P.Tensor.from_numpy(np.stack(np.nonzero(x.numpy()), axis=1))

    @nonzero.register_fake
    def _(x):
        ctx = custom_ops.get_ctx()
        seen.append(ctx)
        return P.empty(ctx.new_dynamic_size(), x.ndim, dtype=P.int64, device="meta")

    try:
        assert nonzero(t([0.0, 1.0, 2.0])).tolist() == [[1], [2]]
        with pytest.raises(RuntimeError, match=r"golden_ctx::nonzero \(.*\): ctx.new_dynamic_size\(\) needs symbolic "
                                               "shapes, which this dispatcher does not have"):
            nonzero(P.empty(3, device="meta"))
        assert isinstance(seen[0], custom_ops.FakeImplCtx) and custom_ops.get_ctx() is None
        with pytest.raises(ValueError, match="expected min to be greater than or equal to 0"):
            seen[0].new_dynamic_size(min=-1)
    finally:
        nonzero._destroy()


def test_a_list_output_gets_a_list_of_gradients():
    @custom_op("golden_list::split_halves", mutates_args=())
    def split_halves(x: Tensor) -> list[Tensor]:
        first, second = np.split(x.numpy(), 2)
        return [P.Tensor.from_numpy(first.copy()), P.Tensor.from_numpy(second.copy())]

    seen = []

    def backward(ctx, grads):
        seen.append(grads)
        return P.Tensor.from_numpy(np.concatenate([g.numpy() for g in grads]))

    split_halves.register_autograd(backward)
    try:
        x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        first, second = split_halves(x)
        (second * t([5.0, 6.0])).sum().backward()
        # One list of gradients for the list output; the unused half's is zeros.
        assert [[g.tolist() for g in grads] for grads in seen] == [[[0.0, 0.0], [5.0, 6.0]]]
        assert x.grad.tolist() == [0.0, 0.0, 5.0, 6.0]
        assert first.grad_fn is second.grad_fn and (first._output_nr, second._output_nr) == (0, 1)
    finally:
        split_halves._destroy()


def test_the_context_of_a_custom_function():
    @custom_op("golden_ctx2::f", mutates_args=())
    def f(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        return P.Tensor.from_numpy(x.numpy() * 2), P.Tensor.from_numpy(y.numpy() * 3)

    contexts = []

    def setup_context(ctx, inputs, output):
        contexts.append(ctx)
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(output[1])
        with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 0 is of type int"):
            ctx.save_for_backward(3)

    def backward(ctx, grad_a, grad_b):
        assert grad_b is None  # not materialized
        return grad_a * 2, None

    f.register_autograd(backward, setup_context=setup_context)
    try:
        x, y = t([1.0], requires_grad=True), t([1.0])
        a, b = f(x, y)
        assert contexts[0].needs_input_grad == (True, False)
        assert a.requires_grad and not b.requires_grad and b.grad_fn is None
        a.sum().backward()
        assert x.grad.tolist() == [2.0]
    finally:
        f._destroy()


def test_register_kernel_takes_dispatch_key_names_too():
    lib = Library("golden_keys", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    try:
        decorated = custom_ops.register_kernel("golden_keys::f", "CPU", lib=lib)(lambda x: x.clone())
        assert decorated is None  # torch's decorator returns None for an operator that is not a CustomOpDef
        assert ops.golden_keys.f.default(t([1.0])).tolist() == [1.0]
        with pytest.raises(RuntimeError, match="Expected one of cpu, .* device type at start of device string: nope"):
            custom_ops.register_kernel("golden_keys::f", "nope", lambda x: x, lib=lib)
    finally:
        lib.close()
