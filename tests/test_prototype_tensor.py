"""dispatcher.prototype: tensors, their keysets, the CPU kernels, composites and factories."""
import contextlib
import inspect
import io
import re

import numpy as np
import pytest

import dispatcher
from dispatcher import DispatchKey as K
from dispatcher import DispatchKeySet
from dispatcher._kernel_kind import KernelKind
from dispatcher.prototype import float32, float64, int64, bool_
import dispatcher.prototype as P
from dispatcher.prototype.tensor_options import channels_last

from .conftest import load_golden

aten = dispatcher.ops.aten


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


def names_called(fn, *inputs):
    """The operators ``fn`` calls itself: the outermost calls of the dispatch trace."""
    err = io.StringIO()
    dispatcher.set_show_dispatch_trace(True)
    try:
        with contextlib.redirect_stderr(err):
            fn(*inputs)
    finally:
        dispatcher.set_show_dispatch_trace(False)
    return re.findall(r"^\[call\] op=\[([^\]]+)\]", err.getvalue(), re.M)


@pytest.mark.parametrize("device, keys", [
    ("cpu", [K.CPU, K.ADInplaceOrView, K.AutogradCPU]),
    ("meta", [K.Meta, K.ADInplaceOrView, K.AutogradMeta]),
    ("toy", [K.PrivateUse1, K.ADInplaceOrView, K.AutogradPrivateUse1]),
])
def test_key_set_is_backend_plus_its_autograd_keys(device, keys):
    # As a PyTorch tensor's: the backend, ADInplaceOrView and Autograd<backend>,
    # whether or not it requires grad.
    for t in (P.zeros(2, device=device), P.zeros(2, device=device, requires_grad=True)):
        assert t.key_set == DispatchKeySet(keys)
        assert dispatcher.tensor_key_set(t) == DispatchKeySet(keys)


# The aten operators the prototype implements, and the keys torch 2.13 has kernels for them at.
KERNEL_KEYS = load_golden("prototype_golden.json")["kernels"]


def prototype_keys(name):
    """The keys the prototype registered a kernel of aten operator ``name`` at (its
    registrations say where they were made: registered at dispatcher/prototype/...),
    but for the toy device's own (test_prototype_toy.py), which a backend adds,
    and the AutocastCPU casts of torch's autocast lists (test_autocast_cpu.py),
    which implement no operator."""
    entry = dispatcher.registry.default_registry.find_op(f"aten::{name}")
    return {key.name for key, kernels in entry.kernels.items()
            if key not in (K.PrivateUse1, K.AutocastCPU)
            and any("dispatcher/prototype/" in kernel.debug.replace("\\", "/") for kernel in kernels)}


def test_the_prototype_implements_the_listed_aten_operators():
    in_use = dispatcher.registry.default_registry.registrations_for_dispatch_key()
    names = {name.removeprefix("aten::") for name in in_use if name.startswith("aten::")}
    assert {name for name in names if prototype_keys(name)} == set(KERNEL_KEYS)


@pytest.mark.parametrize("name", sorted(KERNEL_KEYS))
def test_kernels_are_where_torch_has_them(name):
    if KERNEL_KEYS[name] is None:
        # torch has it as a JIT operator over a TensorImpl method, which serves
        # every backend and autograd alike: here a CompositeImplicitAutograd kernel.
        assert prototype_keys(name) == {"CompositeImplicitAutograd"}
        return
    torch_keys, ours = set(KERNEL_KEYS[name]), prototype_keys(name)
    # Where torch decomposes, the prototype decomposes, and only there.
    assert ("CompositeImplicitAutograd" in ours) == ("CompositeImplicitAutograd" in torch_keys)
    if "CompositeImplicitAutograd" in torch_keys:
        assert ours <= {"CompositeImplicitAutograd", "FuncTorchBatchedDecomposition"}
        return
    # Elsewhere: the backend kernels torch has, or one composite for every
    # backend where torch has one (a view needing strides is CPU and Meta
    # kernels: see composite.py) ...
    if "CompositeExplicitAutograd" in torch_keys or "CompositeExplicitAutogradNonFunctional" in torch_keys:
        assert "CompositeExplicitAutograd" in ours or {"CPU", "Meta"} <= ours
    else:
        assert {"CPU", "Meta"} <= ours
    # ... a derivative for an operator with a differentiable result (set_'s
    # Autograd kernel only checks its in-place write, as torch's; not a
    # factory's, nor a comparison's), and torch's bookkeeping of views and in-place writes.
    # detach's result is cut from the graph, lift_fresh's is its argument, _local_scalar_dense's a
    # Python number: an Autograd fallthrough serves them.
    differentiable = name not in ("gt.Scalar", "ne.Scalar", "ne.Tensor", "any", "eq.Scalar", "eq.Tensor", "all",
                                  "nonzero", "empty.memory_format", "zeros", "ones",
                                  "full", "randn", "randn.generator", "empty_like", "zeros_like", "ones_like",
                                  "full_like", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
                                  "detach", "lift_fresh", "_local_scalar_dense", "rand", "rand.generator", "randperm",
                                  "randperm.generator", "randperm.out", "randperm.generator_out", "nonzero",
                                  "_efficientzerotensor", "arange", "arange.start", "arange.start_step",
                                  "view.dtype")
    assert ("Autograd" in ours) == differentiable
    assert ("ADInplaceOrView" in ours) == ("ADInplaceOrView" in torch_keys)
    # The factories' BackendSelect kernels are the catalog's, as torch generates its own.
    assert "BackendSelect" not in ours


@pytest.mark.parametrize("name", sorted(KERNEL_KEYS))
def test_kernels_take_the_schemas_full_argument_list(name):
    # A caller may pass every argument of the schema (layout, pin_memory,
    # memory_format, generator, ...), by position or by name, and a kernel gets
    # them as passed: each of the prototype's kernels must accept them all.
    entry = dispatcher.registry.default_registry.find_op(f"aten::{name}")
    arguments = entry.handle._schema.arguments
    positional = [object() for a in arguments if not a.kwarg_only]
    by_name = {a.name: object() for a in arguments}
    keyword_only = {a.name: by_name[a.name] for a in arguments if a.kwarg_only}
    for key, kernels in entry.kernels.items():
        for kernel in kernels:
            if key == K.BackendSelect or "dispatcher/prototype/" not in kernel.debug.replace("\\", "/"):
                continue
            signature = inspect.signature(kernel.kernel.fn)
            keyset = (None,) if kernel.kernel.kind == KernelKind.WITH_KEYSET else ()
            signature.bind(*keyset, *positional, **keyword_only)
            signature.bind(*keyset, **by_name)


def test_tensor_dtype_inference():
    assert P.tensor([1.0, 2.0]).dtype == float32
    assert P.tensor([1, 2]).dtype == int64
    assert P.tensor([True]).dtype == bool_
    assert P.tensor(np.zeros(2)).dtype == float64  # a numpy array keeps its dtype
    assert P.tensor([1, 2], dtype=float64).dtype == float64
    assert P.tensor(3).shape == ()
    with pytest.raises(TypeError, match="numpy dtype"):
        P.tensor(["a"])


# As torch's Tensor: a number where an operator takes a tensor is a wrapped number (x + 2 is add.Tensor).
@pytest.mark.parametrize("expr, ops, expected", [
    (lambda a, b: a + b, ["aten::add.Tensor"], lambda a, b: a + b),
    (lambda a, b: a - b, ["aten::sub.Tensor"], lambda a, b: a - b),
    (lambda a, b: a * b, ["aten::mul.Tensor"], lambda a, b: a * b),
    (lambda a, b: a / b, ["aten::div.Tensor"], lambda a, b: a / b),
    (lambda a, b: a @ b.T, ["aten::permute", "aten::matmul"], lambda a, b: a @ b.T),
    (lambda a, b: -a, ["aten::neg"], lambda a, b: -a),
    (lambda a, b: a + 2, ["aten::add.Tensor"], lambda a, b: a + 2),
    (lambda a, b: 2 + a, ["aten::add.Tensor"], lambda a, b: 2 + a),
    (lambda a, b: a - 2, ["aten::sub.Tensor"], lambda a, b: a - 2),
    (lambda a, b: a * 3, ["aten::mul.Tensor"], lambda a, b: a * 3),
    (lambda a, b: 3 * a, ["aten::mul.Tensor"], lambda a, b: 3 * a),
    (lambda a, b: a / 4, ["aten::div.Tensor"], lambda a, b: a / 4),
    (lambda a, b: 1 - a, ["aten::rsub.Scalar"], lambda a, b: 1 - a),
    (lambda a, b: 1 / b, ["aten::reciprocal", "aten::mul.Tensor"], lambda a, b: 1 / b),
])
def test_python_operators_call_torchs_operators(expr, ops, expected):
    a = P.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    b = P.tensor([[2.0, 1.0, -4.0], [1.0, 8.0, 2.0]])
    assert names_called(expr, a, b) == ops
    np.testing.assert_allclose(expr(a, b).numpy(), expected(a.numpy(), b.numpy()), rtol=1e-6)


@pytest.mark.parametrize("a, b, expected", [
    (P.tensor([1, 2]), 0.5, float32),  # a float scalar lifts integers to the default float
    (P.tensor([1.0], dtype=float64), 2, float64),  # an int scalar does not narrow a float
    (P.tensor([1.0]), 2.5, float32),  # nor does a float one (a float64 wrapped number)
    (P.tensor([True]), 2, int64),
    (P.tensor([1, 2]), P.tensor([1.0, 2.0]), float32),  # numpy would say float64
    (P.tensor([1.0], dtype=float64), P.tensor([1.0]), float64),
    (P.tensor([True]), P.tensor([2]), int64),
    (P.tensor([True]), True, bool_),
    # torch's three tiers: a 0-d tensor only lifts the category of tensors with dimensions ...
    (P.tensor([1.0]), P.tensor(2.5, dtype=float64), float32),
    (P.tensor([1]), P.tensor(2.5, dtype=float64), float64),
    # ... and decides among 0-d tensors and numbers.
    (P.tensor(1.0), P.tensor(2.5, dtype=float64), float64),
    (P.tensor(1), 2.5, float32),
])
def test_type_promotion(a, b, expected):
    assert (a * b).dtype == expected
    assert (a * b).numpy().dtype == np.dtype(expected.name)


def test_true_division_and_unary_float_ops_promote_integers():
    assert (P.tensor([1, 2]) / P.tensor([2, 4])).tolist() == [0.5, 0.5]
    assert P.tensor([0, 1]).exp().dtype == float32
    assert P.tensor([1, 2]).sum().dtype == int64
    assert P.tensor([True, True]).sum().item() == 2


@pytest.mark.parametrize("name, fn, reference", [
    ("exp", lambda x: x.exp(), np.exp),
    ("log", lambda x: x.exp().log(), lambda x: np.log(np.exp(x))),
    ("relu", lambda x: x.relu(), lambda x: np.maximum(x, 0)),
    ("sum", lambda x: x.sum(), np.sum),
    ("sum.dim", lambda x: x.sum(1), lambda x: x.sum(1)),
    ("sum.keepdim", lambda x: x.sum([0, -1], keepdim=True), lambda x: x.sum((0, 2), keepdims=True)),
    ("mean", lambda x: x.mean(), np.mean),
    ("matmul.batched", lambda x: x @ x.transpose(1, 2), lambda x: x @ x.transpose(0, 2, 1)),
    ("matmul.broadcast", lambda x: x.select(0, 0).t() @ x, lambda x: x[0].T @ x),
    ("matmul.vector", lambda x: x.select(0, 0).select(0, 0) @ x.select(0, 1).t(), lambda x: x[0, 0] @ x[1].T),
    ("matmul.batched_vector", lambda x: x @ x.select(0, 0).select(0, 0), lambda x: x @ x[0, 0]),
    ("reciprocal", lambda x: x.reciprocal(), lambda x: 1 / x),
    ("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    ("t", lambda x: x.select(0, 1).t(), lambda x: x[1].T),
    ("view", lambda x: x.view(-1, 4), lambda x: x.reshape(-1, 4)),
    ("reshape", lambda x: x.transpose(0, 1).reshape(12), lambda x: x.transpose(1, 0, 2).reshape(12)),
    ("expand", lambda x: x.select(2, 0).expand(3, 2, 3), lambda x: np.broadcast_to(x[:, :, 0], (3, 2, 3))),
    ("select", lambda x: x.select(-2, 2), lambda x: x[:, 2]),
    ("stack", lambda x: P.stack([x, x * 2], 1), lambda x: np.stack([x, x * 2], 1)),
    ("clone", lambda x: x.clone(), lambda x: x.copy()),
    ("gt", lambda x: x.gt(0.5), lambda x: x > 0.5),
])
def test_cpu_kernels_agree_with_numpy(name, fn, reference):
    x = np.random.default_rng(0).standard_normal((2, 3, 2)).astype(np.float32)
    np.testing.assert_allclose(fn(P.tensor(x)).numpy(), reference(x), rtol=1e-5, atol=1e-6)


def test_only_torchs_decompositions_are_seen_decomposed():
    x = P.tensor([[1.0, -2.0], [3.0, 4.0]])
    # The calls a function makes, not those of the kernels they reach: relu,
    # mean and t are one call each (kernels of their own) ...
    assert names_called(lambda x: x.relu().mean(), x) == ["aten::relu", "aten::mean"]
    assert names_called(lambda x: x.t(), x) == ["aten::t"]
    # ... as are matmul and reshape, whose decompositions run at the autograd
    # key (CompositeImplicitAutograd): the dispatch trace shows the call only.
    assert names_called(lambda x: x @ x, x) == ["aten::matmul"]
    assert names_called(P.composite.matmul, x, x) == ["aten::mm"]
    assert names_called(P.composite.reshape, x.t(), [4]) == ["aten::clone", "aten::_unsafe_view"]
    assert names_called(P.composite.mean, x) == ["aten::sum", "aten::div.Tensor"]
    assert x.relu().tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert (x - x * 2).tolist() == (-x).tolist()


def test_views_share_memory_and_version_counter():
    base = P.tensor(np.arange(6.0).reshape(2, 3))
    view = base.view(3, 2)
    assert view._base is base and view._version_counter is base._version_counter
    view.add_(P.ones(3, 2, dtype=float64))
    assert base.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert base._version == 1
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        base.t().view(6)
    copied = base.t().reshape(6)  # reshape copies when a view is impossible
    assert copied.tolist() == [1.0, 4.0, 2.0, 5.0, 3.0, 6.0] and copied._version_counter is not base._version_counter
    # A view of strided memory, where the strides allow one (c10's computeStride).
    column = P.tensor(np.arange(12.0).reshape(2, 3, 2)).select(2, 0)
    flat = column.view(6)
    assert flat.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0] and np.shares_memory(flat.numpy(), column.numpy())
    assert column.stride() == (6, 2) and flat.stride() == (2,)


def test_in_place_ops_check_shape_and_dtype():
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the broadcast shape \[2, 2\]"):
        P.zeros(2).add_(P.ones(2, 2))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        P.zeros(2, dtype=int64).add_(P.ones(2))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        P.zeros(2).expand(3, 2).add_(P.ones(2))


def test_shape_errors():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\) "
                                           r"at non-singleton dimension 0"):
        P.zeros(2) + P.zeros(3)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        P.zeros(2, 3) @ P.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
        P.zeros(2, 3).view(4, -1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        P.zeros(2, 3).sum(2)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"):
        P.zeros(1, 2, 3).t()


@pytest.mark.parametrize("device", ["cpu", "meta", "toy"])
def test_factories_route_through_backend_select(device):
    for make, value in ((P.zeros, 0.0), (P.ones, 1.0)):
        t = make(2, 3, dtype=float64, device=device)
        assert (t.shape, t.dtype, t.device.type) == ((2, 3), float64, device)
        if device != "meta":
            assert t.tolist() == [[value] * 3] * 2
    assert P.full([2], 7).dtype == int64  # the fill value's type decides without a dtype
    assert P.full([2], 7.0, device=device).dtype == float32
    assert P.empty(4, device=device).device == P.device(device)
    assert P.randn(3, device=device).shape == (3,)


def test_backend_select_kernel_sees_only_tls_keys_and_adds_the_backend():
    calls = []

    def empty(keyset, size, **options):
        calls.append(keyset)
        return P.Tensor.from_numpy(np.zeros(size, np.float32))

    with dispatcher.Library("aten", "IMPL", "CPU") as lib:
        with pytest.warns(UserWarning, match="Overriding"):
            lib.impl("empty.memory_format", empty, with_keyset=True)
        P.empty(2, device="cpu")
    assert calls == [DispatchKeySet(K.CPU)]
    assert P.empty(2).device.type == "cpu"  # the prototype's kernel is back


def test_options_the_prototype_cannot_honour_are_refused():
    x = P.ones(2)
    # Another layout selects another backend (c10's computeDispatchKey), where the prototype has no kernels.
    with pytest.raises(NotImplementedError, match="Could not run 'aten::empty.memory_format' with arguments from the "
                                                  "'SparseCPU' backend"):
        aten.empty.memory_format([2], layout=1)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::empty.memory_format' with arguments from the "
                                                  "'SparseCsrCPU' backend"):
        aten.to.dtype_layout(x, layout=2)  # _to_copy's composite allocates the result there
    with pytest.raises(RuntimeError, match="pin_memory=True requires a CUDA or other accelerator backend"):
        aten.zeros.default([2], pin_memory=True)
    with pytest.raises(NotImplementedError, match="memory_format torch.channels_last is not supported"):
        aten.clone.default(x, memory_format=channels_last)
    with pytest.raises(NotImplementedError, match="memory_format torch.channels_last is not supported"):
        aten.empty.memory_format([2], device="meta", memory_format=channels_last)
    # What the prototype's tensors are anyway is accepted.
    assert aten.empty.memory_format([2], layout=0, pin_memory=False, memory_format=0).shape == (2,)
    assert aten._to_copy.default(x, layout=0, non_blocking=True).tolist() == [1.0, 1.0]


def test_factory_arguments_are_checked():
    with pytest.raises(ValueError, match="device type at start of device string: nope"):
        P.zeros(2, device="nope")
    with pytest.raises(TypeError, match="dtype must be a prototype DType"):
        P.zeros(2, dtype=3)


def test_randn_is_reproducible_with_a_generator_and_manual_seed():
    a = P.randn(4, generator=np.random.default_rng(1)).tolist()
    assert P.randn(4, generator=np.random.default_rng(1)).tolist() == a
    P.manual_seed(5)
    b = P.randn(4).tolist()
    P.manual_seed(5)
    assert P.randn(4).tolist() == b != a


def test_to_converts_dtype_and_device_and_returns_self_when_nothing_changes():
    x = P.tensor([1.5, 2.5])
    assert x.to("cpu") is x and x.to(float32) is x
    assert x.to(float32, copy=True) is not x
    y = x.to(int64)
    assert y.dtype == int64 and y.tolist() == [1, 2]
    z = x.to(device="toy", dtype=float64)
    assert (z.device.type, z.dtype, z.tolist()) == ("toy", float64, [1.5, 2.5])


def test_item_tolist_and_repr():
    assert P.tensor([[2.5]]).item() == 2.5
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        P.tensor([1.0, 2.0]).item()
    assert repr(P.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(P.tensor([1.0], requires_grad=True) * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    assert repr(P.zeros(2, 3, device="meta")) == "tensor(..., size=(2, 3), device='meta')"
    assert repr(P.tensor([1.0], dtype=float64, device="toy")) == "tensor([1.], device='toy', dtype=torch.float64)"


def test_uninstall_removes_only_the_backend_fallbacks():
    P.uninstall()
    try:
        assert not P.is_installed()
        assert (P.tensor([1.0]) * 2).tolist() == [2.0]  # the prototype's kernels stay
        toy = P.tensor([1.0], device="toy")  # and so do the toy device's own
        with pytest.raises(NotImplementedError, match="from the 'PrivateUse1' backend"):
            toy.exp()
        with pytest.raises(NotImplementedError, match="from the 'FuncTorchBatched' backend"):
            P.vmap(lambda x: x.t())(P.ones(2, 2, 2))
    finally:
        P.install()
    assert P.is_installed() and toy.exp().item() == pytest.approx(np.e)


# -- regressions: float ops of bools and ints, dtype names (repro_13) ---------------------------
E32 = float(np.float32(np.e))  # the float32 nearest e: what torch.tensor([1.]).exp() holds


@pytest.mark.parametrize("device", ["cpu", "toy"])
def test_exp_and_log_of_bools_and_ints_are_computed_in_the_default_float(device):
    for data in ([True], [1], [1.0]):
        t = P.tensor(data, device=device)
        y = t.exp()
        assert y.dtype == float32 and y.item() == E32  # not 2.71875, exp computed in float16
        assert t.log().dtype == float32 and t.log().item() == 0.0
    assert P.tensor([False, True], device=device).exp().tolist() == [1.0, E32]
    assert P.tensor([True], dtype=float64).exp().item() == np.e
    assert P.tensor([True], device="meta").exp().dtype == float32


def test_mixed_dtype_arithmetic_runs_in_the_result_dtype():
    # torch casts the inputs to the common dtype first: int64 16777217 is
    # 16777216.0 in float32, and 16777216.5 rounds to 16777216 (numpy's float64
    # sum, rounded once more, would give 16777218).
    big, half = P.tensor([16777217]), P.tensor([0.5])
    for result in (big + half, half + big, big + 0.5, big.add(half, alpha=1), big * P.tensor([1.0])):
        assert result.dtype == float32 and result.item() == 16777216.0
    assert (big / P.tensor([1.0])).item() == 16777216.0
    assert P.stack([big, half]).tolist() == [[16777216.0], [0.5]]
    acc = P.tensor([0.5])
    acc.add_(big)
    assert acc.item() == 16777216.0


def test_division_by_a_scalar_is_a_true_division():
    assert (P.tensor([5.0], dtype=float64) / 3).item() == 5 / 3  # 5 * (1 / 3) is an ulp less
    inf, nan, minus_inf = (P.tensor([1.0, 0.0, -1.0]) / 0).tolist()  # not ZeroDivisionError
    assert inf == np.inf and np.isnan(nan) and minus_inf == -np.inf
    assert (P.tensor([1, 2]) / 2).dtype == float32 and (P.tensor([1, 2]) / 2).tolist() == [0.5, 1.0]
    assert (P.tensor([1.0], dtype=float64) / 0.1).item() == 1.0 / 0.1
    assert P.tensor([3.0, 4.0]).mean().item() == 3.5


def test_dtypes_may_be_given_by_name():
    t = P.tensor([1.0], dtype="float32")
    assert t.dtype == float32 and t.tolist() == [1.0]
    assert P.tensor([1.5], dtype="int64").tolist() == [1]
    assert P.tensor([1], dtype="bool").dtype == bool_
    assert P.zeros(2, dtype="float64").dtype == float64
    assert P.full([2], 3, dtype="float32").tolist() == [3.0, 3.0]
    assert P.ones(2, dtype="int64", device="toy").dtype == int64
    assert P.tensor([1, 2]).to("float64").dtype == float64
    assert P.tensor([1, 2]).to(dtype="float64", device="toy").dtype == float64
    assert P.tensor([1, 2]).sum(dtype="float64").dtype == float64
    assert P.tensor([1, 2]).mean(dtype="float64").item() == 1.5
    with pytest.raises(ValueError, match=r"unknown dtype 'bfloat8'; expected a prototype DType or one of the names "
                                         r"'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64', "
                                         r"'complex64', 'bool', 'bfloat16', 'uint16', 'uint32', 'uint64'"):
        P.tensor([1.0], dtype="bfloat8")
    with pytest.raises(ValueError, match="unknown dtype 'torch.float32'"):
        P.zeros(2, dtype="torch.float32")
    with pytest.raises(TypeError, match="dtype must be a prototype DType .* not 3"):
        P.tensor([1.0], dtype=3)
    with pytest.raises(TypeError, match="dtype must be a prototype DType"):
        P.tensor([1.0], dtype=np.float32)


def test_dtype_and_device_print_as_torchs():
    x = P.ones(2)
    assert (repr(x.dtype), str(P.float64)) == ("torch.float32", "torch.float64")
    assert (repr(x.device), str(x.device), x.device.type, x.device.index) == ("device(type='cpu')", "cpu", "cpu", None)
    assert P.meta_tensor((2,), P.float32).device.type == "meta"


def test_a_0d_tensor_formats_as_its_number():
    assert f"{P.tensor(2.5):.2f}" == "2.50" and f"{P.tensor([1.0])}" == "tensor([1.])"


@pytest.mark.parametrize("where", ["cpu", "meta"])
def test_device_is_a_device_object_as_torchs(where):
    # torch 2.13: torch.ones(2).device is a torch.device, printed 'cpu' and
    # device(type='cpu'), index None, equal to torch.device('cpu') and not to 'cpu'.
    d = P.empty(2, device=where).device
    assert type(d) is P.device and not isinstance(d, str)
    assert (d.type, d.index, str(d), repr(d)) == (where, None, where, f"device(type='{where}')")
    assert d == P.device(where) and hash(d) == hash(P.device(where))
    assert d != where and not d == where
    assert P.empty(2, device=P.device(where)).device is d  # a device object is taken where a string is
    assert P.ones(2).to(P.device(where)).device == d


def test_layout_is_strided():
    from dispatcher.prototype.tensor_options import strided

    assert P.zeros(2).layout == strided == 0  # c10::Layout::Strided


def test_sparse_coo_is_c10s_layout_number_and_torchs_name():
    from dispatcher.prototype.tensor_options import sparse_coo, strided

    assert sparse_coo == 1 and repr(sparse_coo) == "torch.sparse_coo" and sparse_coo != strided


def test_movedim_as_torch():
    x = P.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert np.array_equal(x.movedim(0, -1).numpy(), np.moveaxis(x.numpy(), 0, -1))
    assert np.array_equal(x.movedim((0, 2), (2, 0)).numpy(), np.moveaxis(x.numpy(), (0, 2), (2, 0)))
    # torch 2.13's messages
    with pytest.raises(RuntimeError, match=r"movedim: Invalid source or destination dims: source \(\[0, 1\] dims\) should "
                                           r"contain the same number of dims as destination \(\[0\] dims\)"):
        x.movedim((0, 1), (0,))
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `source` \(\[0, 0\]\)"):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `destination` \(\[1, 1\]\)"):
        x.movedim((0, 1), (1, 1))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 5\)"):
        x.movedim(5, 0)


def test_a_tensor_takes_attributes_as_torchs():
    # torch 2.13: a tensor has a __dict__ (subclass_zoo's simple_functorch.py sets t.t_name).
    t = P.ones(2)
    t.t_name = "x"
    assert t.t_name == "x" and vars(t)["t_name"] == "x"  # (the pure engine keeps its keyset there too)
    assert not hasattr(P.ones(2), "t_name")


def test_unsqueeze_method_is_the_aten_operator():
    x = P.tensor(np.arange(6.0).reshape(2, 3))
    assert x.unsqueeze(-1).shape == (2, 3, 1) and x.unsqueeze(0).shape == (1, 2, 3)
    np.testing.assert_array_equal(x.unsqueeze(1).numpy(), np.arange(6.0).reshape(2, 1, 3))
