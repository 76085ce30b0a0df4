"""custom_op's kernels, the AutogradEngine and TensorChecks protocols, and opcheck, on both engines.

Each test defines its operators in the world's registry (the registry in use
points there while it runs) and calls them with ``T``: a minimal tensor type
of the world's engine (numpy values, a requires_grad flag, a version count)
whose library registers a recording autograd engine and TensorChecks.
"""
import numpy as np
import pytest

from dispatcher import DispatchKey as K
from dispatcher import Tensor, custom_op, custom_ops, device, get_privateuse1_backend_name, opcheck
from dispatcher.custom_ops import dispatch_key_for_device, get_ctx, register_autograd
from dispatcher.tensor_protocols import (
    register_autograd_engine,
    register_tensor_checks,
    unregister_autograd_engine,
    unregister_tensor_checks,
)

from .conftest import load_golden

DEVICE_KEYS = {"cpu": (K.CPU, K.ADInplaceOrView, K.AutogradCPU), "cuda": (K.CUDA, K.ADInplaceOrView, K.AutogradCUDA),
               "meta": (K.Meta, K.ADInplaceOrView, K.AutogradMeta)}


class Ctx:
    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


class RecordingEngine:
    """An AutogradEngine that keeps each call instead of building a graph."""

    def __init__(self):
        self.calls = []

    def requires_grad(self, tensor):
        return tensor.requires_grad

    def increment_version(self, tensor):
        tensor.version += 1

    def apply(self, function, args):
        ctx = Ctx(tuple(getattr(a, "requires_grad", False) for a in args))
        out = function.forward(ctx, *args)
        self.calls.append((function, ctx, args, out))
        out.requires_grad = True
        return out


class Checks:
    """TensorChecks of T."""

    def copy(self, t):
        return type(t)(None if t.value is None else t.value.copy(), t.requires_grad, t.device, t.shape)

    def snapshot(self, t):
        return None if t.value is None else t.value.copy()

    def changed(self, t, snapshot):
        return snapshot is not None and not np.array_equal(t.value, snapshot, equal_nan=True)

    def to_meta(self, t):
        return type(t)(None, t.requires_grad, "meta", t.shape)

    def is_meta(self, t):
        return t.device == "meta"

    def metadata(self, t):
        return t.shape, "float64"

    def shares_memory(self, a, b):
        return a is b or (a.value is not None and b.value is not None and np.may_share_memory(a.value, b.value))


@pytest.fixture
def lib(in_use, world, monkeypatch):
    """The world, with custom operators defined in its registry."""
    monkeypatch.setattr(custom_ops, "OPDEF_TO_LIB", {})
    return world


@pytest.fixture
def T(world):
    base = world.engine.TensorBase

    class T(base):
        def __init__(self, value, requires_grad=False, device="cpu", shape=None):
            base.__init__(self, world.keyset(*DEVICE_KEYS[device]))
            self.value = None if value is None else np.asarray(value, dtype=float)
            self.shape = tuple(shape if value is None else self.value.shape)
            self.requires_grad, self.device, self.version = requires_grad, device, 0

    T.engine = RecordingEngine()
    register_autograd_engine(T, T.engine)
    register_tensor_checks(T, Checks())
    yield T
    unregister_autograd_engine(T)
    unregister_tensor_checks(T)


def kernels(world, op):
    entry = world.registry.find_op(op._opoverload.name())
    return {str(k) for k in entry.kernels if entry.has_kernel_for_dispatch_key(k)}


def test_custom_op_defines_an_operator(lib, T):
    @custom_op("eng::add", mutates_args=())
    def add(x: Tensor, y: Tensor, alpha: float = 1.0) -> Tensor:
        return T(x.value + alpha * y.value)

    assert lib.ops.eng.add.default is add._opoverload and repr(add) == "<CustomOpDef(eng::add)>"
    assert str(add._opoverload.schema) == "eng::add(Tensor x, Tensor y, float alpha=1.) -> Tensor"
    assert add(T([1.0]), T([2.0]), alpha=3.0).value.tolist() == [7.0]
    assert lib.ops.eng.add.default(T([1.0]), y=T([2.0])).value.tolist() == [3.0]
    assert kernels(lib, add) == {"Meta", "Autograd", "CompositeExplicitAutograd"}


def test_the_autograd_kernel_records_only_when_an_input_requires_grad(lib, T):
    below = []

    @custom_op("eng::double", mutates_args=())
    def double(x: Tensor, *, scale: float = 2.0) -> Tensor:
        below.append(lib.engine.tls_is_dispatch_key_excluded(K.AutogradFunctionality))
        return T(x.value * scale)

    setups = []
    double.register_autograd(lambda ctx, grad: T(grad.value * 2),
                             setup_context=lambda ctx, inputs, keyword_only_inputs, output:
                             setups.append((inputs, keyword_only_inputs, output)))
    out = double(T([1.0]))
    assert not out.requires_grad and T.engine.calls == [] and setups == []
    x = T([1.0], requires_grad=True)
    out = double(x, scale=3.0)
    assert out.requires_grad and out.value.tolist() == [3.0]
    (function, ctx, args, result), = T.engine.calls
    assert function.name == "GeneratedBackwardFor_eng_double_default" and args == (x,) and result is out
    assert setups == [((x,), {"scale": 3.0}, out)]
    assert below == [True, True]  # both calls ran the kernel below autograd
    grad_x, = function.backward(ctx, T([5.0]))
    assert grad_x.value.tolist() == [10.0]


def test_backward_errors(lib, T):
    @custom_op("eng::noformula", mutates_args=())
    def noformula(x: Tensor, n: int) -> Tensor:
        return T(x.value.copy())

    noformula(T([1.0], requires_grad=True), 2)
    function, ctx, _, _ = T.engine.calls[-1]
    with pytest.raises(RuntimeError, match="Trying to backward through eng::noformula but no autograd formula was "
                                           "registered. Please use register_autograd to add one."):
        function.backward(ctx, 1)
    noformula.register_autograd(lambda ctx, grad: ())  # no gradient for two inputs
    # torch's counts include its generated Function's extra input (see custom_op_autograd._checked_gradients)
    with pytest.raises(RuntimeError, match=r"function GeneratedBackwardFor_eng_noformula_defaultBackward returned an "
                                           r"incorrect number of gradients \(expected 3, got 1\)"):
        function.backward(ctx, T([1.0]))


def test_register_autograd_refuses_what_torch_refuses(lib, T):
    @custom_op("eng::inplace", mutates_args=("x",))
    def inplace(x: Tensor) -> None:
        x.value += 1

    with pytest.raises(RuntimeError, match=r"Cannot register autograd formula for non-functional operator "
                                           r"<CustomOpDef\(eng::inplace\)> with schema eng::inplace\(Tensor\(a0!\) x\) -> \(\)"):
        inplace.register_autograd(lambda ctx, grad: grad)
    with pytest.raises(ValueError, match=r"register_autograd\(3\): got unexpected type for op: <class 'int'>"):
        register_autograd(3, lambda ctx, grad: grad)
    with pytest.raises(RuntimeError, match="Could not find operator eng::nope"):
        register_autograd("eng::nope", lambda ctx, grad: grad)
    functional = custom_op("eng::f", mutates_args=(), schema="(Tensor x) -> Tensor")(lambda x: x)
    with pytest.raises(TypeError, match=r"register_autograd\(...\): expected a function, got 5"):
        functional.register_autograd(5)


def test_a_mutable_operator_bumps_versions_below_autograd(lib, T):
    @custom_op("eng::fill", mutates_args=("out",))
    def fill(value: float, out: Tensor) -> None:
        out.value[...] = value

    out = T([0.0, 0.0])
    fill(3.0, out)
    assert out.value.tolist() == [3.0, 3.0] and out.version == 1
    assert "ADInplaceOrView" in kernels(lib, fill)


# A "meta" kernel replaces the fake implementation's Meta kernel, with c10's override warning, as in torch.
@pytest.mark.filterwarnings("ignore:Overriding a previously registered kernel")
@pytest.mark.parametrize("device_type, key", [("cpu", "CPU"), ("cuda", "CUDA"), ("meta", "Meta")])
def test_kernels_per_device_type(lib, T, device_type, key):
    @custom_op("eng::which", mutates_args=(), device_types=device_type)
    def which(x: Tensor) -> Tensor:
        return T([1.0], device="cpu")

    assert key in kernels(lib, which)
    assert which(T([0.0], device=device_type)).value.tolist() == [1.0]
    other = "cuda" if device_type == "cpu" else "cpu"
    with pytest.raises(NotImplementedError, match="eng::which"):
        which(T([0.0], device=other))
    which.register_kernel(other)(lambda x: T([2.0]))
    assert which(T([0.0], device=other)).value.tolist() == [2.0]


def test_set_kernel_enabled(lib, T):
    @custom_op("eng::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return T([0.0])

    f.register_kernel("cpu")(lambda x: T([1.0]))
    assert f(T([5.0])).value.tolist() == [1.0]
    with f.set_kernel_enabled("cpu", enabled=False):
        assert f(T([5.0])).value.tolist() == [0.0]
    assert f(T([5.0])).value.tolist() == [1.0]


def test_an_operator_without_tensors_dispatches_on_its_device_argument(lib, T):
    @custom_op("eng::ones", mutates_args=(), device_types="cpu")
    def ones(n: int, device: device) -> Tensor:
        return T(np.ones(n))

    assert "BackendSelect" in kernels(lib, ones)
    assert ones(2, "cpu").value.tolist() == [1.0, 1.0]
    assert ones(2, device="cpu:0").value.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="ones does not have a kernel registered for cuda. Please use register_kernel"):
        ones(2, "cuda")
    with pytest.raises(ValueError, match="Functions without tensor inputs are required to have a `device: "
                                         "torch.device` argument"):  # torch's text
        custom_op("eng::nodevice", mutates_args=(), device_types="cpu", schema="(int n) -> Tensor")(lambda n: n)


def test_the_fake_implementation_is_the_meta_kernel(lib, T):
    seen = []

    @custom_op("eng::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return T(x.value.copy())

    meta = T(None, device="meta", shape=(3,))
    with pytest.raises(RuntimeError, match=r"There was no fake impl registered for <CustomOpDef\(eng::g\)>. .* "
                                           "Please use `g.register_fake` to add an fake impl."):
        g(meta)

    @g.register_fake
    def _(x):
        seen.append(get_ctx())
        return T(None, device="meta", shape=x.shape)

    assert g(meta).shape == (3,) and isinstance(seen[0], custom_ops.FakeImplCtx) and get_ctx() is None


def test_out_and_inplace_tags(lib, T):
    @custom_op("eng::add_out", mutates_args=("out",), tags="out")
    def add_out(x: Tensor, *, out: Tensor) -> Tensor:
        out.value[...] = x.value + 1
        return out

    out = T([0.0])
    assert str(add_out._opoverload.schema) == "eng::add_out(Tensor x, *, Tensor(a1!) out) -> Tensor(a1!)"
    assert add_out(T([1.0]), out=out) is out and out.value.tolist() == [2.0]
    assert add_out(T(None, device="meta", shape=(1,)), out=out) is out  # the trivial fake returns out
    with pytest.raises(RuntimeError, match=r"add_out\(\): functions with out=... arguments don't support automatic "
                                           "differentiation, but one of the arguments requires grad."):
        add_out(T([1.0], requires_grad=True), out=out)
    with pytest.raises(RuntimeError, match="Cannot register autograd formula for operator tagged with torch.Tag.out"):
        add_out.register_autograd(lambda ctx, grad: grad)

    @custom_op("eng::bump_", mutates_args=("x",), tags=["inplace"])
    def bump_(x: Tensor) -> Tensor:
        return T(x.value + 1)  # wrong: an inplace operator returns its first argument

    with pytest.raises(RuntimeError, match="bump_ .*: An operator tagged with torch.Tag.inplace must return its first argument."):
        bump_(T([1.0]))
    with pytest.raises(ValueError, match="Schema tagged with torch.Tag.inplace must only mutate the first positional argument"):
        custom_op("eng::bad_", mutates_args=("x", "y"), tags="inplace",
                  schema="(Tensor(a!) x, Tensor(b!) y) -> Tensor(a!)")(lambda x, y: x)


def test_opcheck(lib, T):
    @custom_op("eng::sneaky", mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.value[0] = 7
        return T(x.value * 2)

    @sneaky.register_fake
    def _(x):
        return T(None, device="meta", shape=x.shape)

    @custom_op("eng::honest", mutates_args=())
    def honest(x: Tensor) -> Tensor:
        return T(x.value * 2)

    honest.register_fake(lambda x: T(None, device="meta", shape=(9,)))
    x = T([1.0, 2.0])
    results = opcheck(sneaky, (x,), raise_exception=False)
    assert str(results["test_schema"]) == "Argument x is not defined as mutable but was mutated"
    assert results["test_faketensor"] == "SUCCESS" and x.value.tolist() == [1.0, 2.0]
    results = opcheck(honest, (x,), raise_exception=False)
    assert results["test_schema"] == "SUCCESS"
    assert str(results["test_faketensor"]) == ("When comparing the output of eng::honest on meta tensors and real "
                                               "tensors, found mismatched tensor metadata: Shapes (2,) and (9,) are not equal!")


def test_an_engine_is_needed_to_record(lib, T):
    @custom_op("eng::h", mutates_args=())
    def h(x: Tensor, y: Tensor) -> Tensor:
        return T(x.value.copy())

    class U(lib.engine.TensorBase):  # a tensor type whose library has no autograd engine
        requires_grad = True

    u = U(lib.keyset(*DEVICE_KEYS["cpu"]))
    assert not h(T([1.0]), u).requires_grad and T.engine.calls == []

    other = RecordingEngine()
    register_autograd_engine(U, other)
    try:
        with pytest.raises(RuntimeError, match="tensors of two tensor libraries that both require grad"):
            h(T([1.0], requires_grad=True), u)
    finally:
        unregister_autograd_engine(U)


def test_protocol_registration_errors(T):
    with pytest.raises(TypeError, match="is not an AutogradEngine: it has no method apply, increment_version"):
        register_autograd_engine(T, type("Half", (), {"requires_grad": lambda self, t: True})())
    with pytest.raises(RuntimeError, match="T already has an autograd engine"):
        register_autograd_engine(T, RecordingEngine())
    with pytest.raises(TypeError, match="is registered for a class"):
        register_tensor_checks(T([1.0]), Checks())
    with pytest.raises(KeyError, match="has no tensor checks registered"):
        unregister_tensor_checks(int)


DEVICE_GOLDEN = load_golden("custom_op_golden.json")["dispatch_key_for_device"]


@pytest.mark.parametrize("device_type", sorted(DEVICE_GOLDEN))
def test_device_types_map_to_torchs_keys(device_type):
    expected = DEVICE_GOLDEN[device_type]
    if isinstance(expected, str):
        assert dispatch_key_for_device(device_type).name == expected
        return
    with pytest.raises(RuntimeError) as info:
        dispatch_key_for_device(device_type)
    assert str(info.value) == expected["message"]


def test_the_privateuse1_backend_name_maps_to_privateuse1():
    assert dispatch_key_for_device(get_privateuse1_backend_name()) == K.PrivateUse1


def test_a_name_finds_the_custom_op_of_this_registry(lib, T):
    @custom_op("eng::named", mutates_args=())
    def named(x: Tensor) -> Tensor:
        return T(x.value * 2)

    register_autograd("eng::named", lambda ctx, grad: T(grad.value * 2))  # the string reaches the CustomOpDef
    assert named._backward_fn is not None
    named(T([1.0], requires_grad=True))
    function, ctx, _, _ = T.engine.calls[-1]
    assert function.backward(ctx, T([3.0]))[0].value.tolist() == [6.0]
