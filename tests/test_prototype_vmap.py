"""dispatcher.prototype: vmap via FuncTorchBatched -- rules, decompositions, the loop fallback."""
import warnings

import numpy as np
import pytest

import dispatcher
from dispatcher import DispatchKey as K
import dispatcher.prototype as P
from dispatcher.prototype import BatchedTensor, float64, set_vmap_fallback_warning_enabled, vmap


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


@pytest.fixture
def fallback_warnings():
    """Within the test, every use of the per-example fallback warns."""
    set_vmap_fallback_warning_enabled(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    set_vmap_fallback_warning_enabled(False)


def fallback_ops(caught):
    return [str(w.message).rpartition(" ")[2].rstrip(".") for w in caught]


def per_example(fn, *batches):
    """The reference: call fn on each example and stack the results."""
    return np.stack([fn(*(P.tensor(b[i]) for b in batches)).numpy() for i in range(len(batches[0]))])


rng = np.random.default_rng(0)
X = rng.standard_normal((5, 3))  # a batch of 5 vectors
M = rng.standard_normal((5, 3, 4))  # a batch of 5 matrices
W = P.tensor(rng.standard_normal((3, 4)))  # not batched
V = P.tensor(rng.standard_normal(3))
V4 = rng.standard_normal((5, 4))  # a batch of 5 vectors of 4


# name -> (function of one example, batched inputs, operators expected to loop)
CASES = {
    "pointwise": (lambda x: (-x).exp().log() * 2 + 1, [X], []),
    "broadcast.unbatched_higher_rank": (lambda x: x + P.tensor(np.ones((2, 3))), [X], []),
    "broadcast.both_batched": (lambda x, m: m * x.select(0, 0) / (x.sum() + 10), [X, M], ["aten::select.int"]),
    "gt": (lambda x: x.gt(0), [X], []),
    # matmul decomposes (as in functorch) into dot, mv, mm, unsqueeze and squeeze_, which have rules.
    "matmul.batched_vector_unbatched_matrix": (lambda x: x @ W, [X], []),
    "matmul.batched_matrix_unbatched_vector": (lambda m: m.t() @ V, [M], ["aten::t"]),
    "matmul.unbatched_matrix_batched_matrix": (lambda m: W.t() @ m, [M], []),
    "matmul.both_batched_matrices": (lambda m: m.t() @ m, [M], ["aten::t"]),
    "matmul.both_batched_vector_matrix": (lambda m, x: x @ m, [M, X], []),
    "matmul.both_batched_matrix_vector": (lambda m, v: m @ v, [M, V4], []),
    "matmul.both_batched_vectors": (lambda x: x @ (x * 2), [X], []),
    "matmul.batched_vector_unbatched_vector": (lambda x: x @ V, [X], []),
    "sum": (lambda m: m.sum(), [M], []),
    "mean": (lambda m: m.mean(), [M], []),
    "decomposed": (lambda x: (x - 1).relu().mean() - 1 / x, [X], []),
    "reshape": (lambda m: m.reshape(12), [M], ["aten::view"]),
    "stack": (lambda x: P.stack([x, x * 2], 1), [X], ["aten::stack"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_per_example_calls_and_rules_take_precedence(name, fallback_warnings):
    fn, batches, looping = CASES[name]
    out = vmap(fn)(*(P.tensor(b) for b in batches))
    assert fallback_ops(fallback_warnings) == looping
    np.testing.assert_allclose(out.numpy(), per_example(fn, *batches), rtol=1e-12)


def test_batched_tensor_is_an_example_view_of_the_batch():
    seen = []

    def fn(x):
        seen.append((type(x), x.shape, x.level, x.key_set))
        return x

    vmap(fn)(P.tensor(M))
    ((cls, shape, level, keys),) = seen
    assert (cls, shape, level) == (BatchedTensor, (3, 4), 1)
    assert keys.highest_priority_key() == K.FuncTorchBatched
    assert keys.has(K.AutogradCPU)  # the value's keys stay, below FuncTorchBatched


def test_in_dims_and_out_dims():
    a = rng.standard_normal((3, 5))
    out = vmap(lambda x, w: x @ w, in_dims=(1, None), out_dims=1)(P.tensor(a), W)
    np.testing.assert_allclose(out.numpy(), (a.T @ W.numpy()).T)
    # An output that does not depend on the batch is broadcast over it.
    assert vmap(lambda x: V)(P.tensor(X)).shape == (5, 3)


def test_keyword_arguments_reach_every_call_unmapped():
    """torch.vmap passes keyword arguments through as they are: only positional
    inputs are mapped."""
    seen = []

    def scaled(x, *, scale, shift=0.0):
        seen.append((type(x), scale, shift))
        return x * scale

    out = vmap(scaled)(P.tensor(X), scale=2.0, shift=1.0)
    np.testing.assert_allclose(out.numpy(), X * 2.0)
    assert seen == [(BatchedTensor, 2.0, 1.0)]


def test_nested_vmap_unwraps_one_level_at_a_time():
    a, b = P.tensor(rng.standard_normal(4)), P.tensor(rng.standard_normal(3))
    outer = vmap(vmap(lambda x, y: x * y + x, in_dims=(None, 0)), in_dims=(0, None))(a, b)
    np.testing.assert_allclose(outer.numpy(), np.outer(a.numpy(), b.numpy()) + a.numpy()[:, None])
    # matmul decomposes into dot, whose rule applies at each level in turn.
    m = P.tensor(rng.standard_normal((2, 4, 3)))
    nested = vmap(vmap(lambda r, v: r @ v, in_dims=(0, None)), in_dims=(0, None))(m, b)
    np.testing.assert_allclose(nested.numpy(), m.numpy() @ b.numpy())


def test_in_place_under_vmap_writes_the_batch():
    x = P.tensor(X.copy())
    out = vmap(lambda r: r.add_(V))(x)
    np.testing.assert_allclose(x.numpy(), X + V.numpy())
    np.testing.assert_allclose(out.numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="self is not batched while another argument is"):
        vmap(lambda r: V.clone().add_(r))(P.tensor(X))


def test_gradients_flow_through_vmap():
    bias = rng.standard_normal(4)
    grads = []
    for batched in (False, True):
        w, b = P.tensor(W.numpy(), requires_grad=True), P.tensor(bias, requires_grad=True)
        if batched:
            out = vmap(lambda x: (x @ w + b).relu().sum())(P.tensor(X))
        else:
            out = (P.tensor(X) @ w + b).relu().sum(1)
        (out * out).mean().backward()
        grads.append((w.grad.numpy(), b.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_gradients_flow_through_the_fallback_loop():
    m = P.tensor(M, requires_grad=True)
    vmap(lambda r: (r.t() * 2).sum())(m).sum().backward()  # t loops: select + stack backward
    np.testing.assert_allclose(m.grad.numpy(), np.full(M.shape, 2.0))


def test_vmap_errors():
    with pytest.raises(ValueError, match=r"different sizes in the mapped dimension: \[3, 5\]"):
        vmap(lambda x, y: x + y)(P.tensor(X), P.tensor(X[:3]))
    with pytest.raises(ValueError, match="at least one input must be mapped"):
        vmap(lambda x: x, in_dims=None)(P.tensor(X))
    with pytest.raises(ValueError, match="in_dims has 1 entries for 2 inputs"):
        vmap(lambda x, y: x, in_dims=(0,))(P.tensor(X), P.tensor(X))
    with pytest.raises(ValueError, match="must return tensors"):
        vmap(lambda x: 3)(P.tensor(X))


@pytest.mark.filterwarnings("ignore:The operator aten..view appears to be a view operator")  # matmul's, on toy
def test_vmap_on_toy():
    out = vmap(lambda x: (x @ W.to("toy")).exp())(P.tensor(X, device="toy"))
    assert out.device.type == "toy"
    np.testing.assert_allclose(out.numpy(), np.exp(X @ W.numpy()))


def test_the_fallback_is_a_backend_fallback_for_every_operator():
    with dispatcher.Library("vmaptest", "DEF") as lib:
        lib.define("double(Tensor x) -> Tensor")
        lib.impl("double", lambda x: x * 2, "CPU")
        out = vmap(dispatcher.ops.vmaptest.double.default)(P.tensor(X, dtype=float64))
    np.testing.assert_allclose(out.numpy(), 2 * X)
