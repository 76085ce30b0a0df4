"""dispatcher.prototype: Meta kernels compute what CPU kernels would, without data."""
import numpy as np
import pytest

import dispatcher
import dispatcher.prototype as P
from dispatcher.prototype import float64, int64


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


aten = dispatcher.ops.aten

CASES = {
    "add": lambda a, b, i: a + b,
    "add.alpha": lambda a, b, i: a.add(b, alpha=2),
    "add.number": lambda a, b, i: i + 2.5,
    "sub": lambda a, b, i: i - b,
    "rsub": lambda a, b, i: 1 - i,
    "mul.int_float": lambda a, b, i: i * b,
    "div.ints": lambda a, b, i: i / i,
    "neg": lambda a, b, i: -i,
    "exp.int": lambda a, b, i: i.exp(),
    "reciprocal.int": lambda a, b, i: i.reciprocal(),
    "log": lambda a, b, i: a.log(),
    "gt": lambda a, b, i: a.gt(0),
    "relu": lambda a, b, i: b.relu(),
    "sum": lambda a, b, i: a.sum(),
    "sum.int": lambda a, b, i: i.sum(),
    "sum.dims": lambda a, b, i: a.sum([0, 2], keepdim=True),
    "sum.dtype": lambda a, b, i: a.sum(dtype=float64),
    "mean": lambda a, b, i: a.mean(),
    "matmul.3d_2d": lambda a, b, i: a @ a.select(0, 0).t(),
    "matmul.1d_2d": lambda a, b, i: b.select(0, 0) @ b.t(),
    "matmul.2d_1d": lambda a, b, i: b @ b.select(0, 1),
    "matmul.1d_1d": lambda a, b, i: b.select(0, 0) @ b.select(0, 1),
    "matmul.batched": lambda a, b, i: a @ a.transpose(1, 2),
    "matmul.broadcast": lambda a, b, i: a.select(0, 0).t() @ a,
    "permute": lambda a, b, i: a.permute(1, 2, 0),
    "transpose": lambda a, b, i: a.transpose(0, -1),
    "view": lambda a, b, i: a.view(4, -1),
    "reshape": lambda a, b, i: a.reshape(-1),
    "expand": lambda a, b, i: b.expand(2, 3, 4),
    "select": lambda a, b, i: a.select(1, -1),
    "select_backward": lambda a, b, i: aten.select_backward.default(b, [2, 3, 4], 0, 1),
    "stack": lambda a, b, i: P.stack([b, b], -1),
    "clone": lambda a, b, i: a.clone(),
    "add_": lambda a, b, i: a.clone().add_(b),
    "copy_": lambda a, b, i: a.clone().copy_(b),
    "to": lambda a, b, i: a.to(int64),
}


def inputs(device):
    rng = np.random.default_rng(0)
    a = P.tensor(rng.uniform(0.5, 2.0, (2, 3, 4)), device=device)
    b = P.tensor(rng.standard_normal((3, 4)).astype(np.float32), device=device)
    i = P.tensor(rng.integers(1, 5, (3, 4)), device=device)
    return a, b, i


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_matches_cpu_shape_and_dtype(name):
    on_cpu = CASES[name](*inputs("cpu"))
    on_meta = CASES[name](*inputs("meta"))
    assert on_meta.device.type == "meta" and on_meta._data is None
    assert (on_meta.shape, on_meta.dtype) == (on_cpu.shape, on_cpu.dtype)


@pytest.mark.parametrize("fn", [
    lambda a, b, i: a + P.zeros(5, device=a.device),
    lambda a, b, i: a @ a,
    lambda a, b, i: a.view(7, -1),
    lambda a, b, i: a.permute(0, 0, 1),
    lambda a, b, i: a.select(3, 0),
    lambda a, b, i: b.expand(3, 5),
    lambda a, b, i: P.stack([a, b]),
    lambda a, b, i: i @ b.t(),  # torch multiplies matrices of one dtype only
    lambda a, b, i: b.select(0, 0) @ i.select(0, 0),
    lambda a, b, i: a @ b.select(0, 0),
    lambda a, b, i: b @ a.select(0, 0),
    lambda a, b, i: b - i.gt(0),  # no subtraction of bools
    lambda a, b, i: i.add_(a.select(0, 0)),
    lambda a, b, i: a.sum(dtype=3),
])
def test_meta_refuses_what_cpu_refuses_with_the_same_error(fn):
    errors = []
    for device in ("cpu", "meta"):
        with pytest.raises(Exception) as info:
            fn(*inputs(device))
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_meta_tensors_cost_no_memory_and_have_no_data():
    huge = P.empty(10**6, 10**6, device="meta")
    assert (huge @ P.empty(10**6, 3, device="meta")).shape == (10**6, 3)
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        huge.numpy()
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        P.zeros(2).copy_(P.zeros(2, device="meta"))
    assert P.zeros(2, device="meta").copy_(P.ones(2)).device.type == "meta"  # into meta is fine


def test_autograd_on_meta_gives_meta_gradients_of_the_right_shape():
    w = P.zeros(4, 3, device="meta", requires_grad=True)
    b = P.zeros(3, device="meta", requires_grad=True)
    loss = (P.empty(8, 4, device="meta") @ w + b).relu().mean()
    loss.backward()
    assert (w.grad.device.type, w.grad.shape, b.grad.shape) == ("meta", (4, 3), (3,))
