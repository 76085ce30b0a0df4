"""dispatcher.prototype: a small MLP learns synthetic data on CPU, on the toy device and under vmap."""
import warnings

import numpy as np
import pytest

import dispatcher.prototype as P
from dispatcher.prototype import nn
from dispatcher.prototype.demo import train_mlp


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


STEPS = 8


@pytest.fixture(scope="module")
def cpu_losses():
    return train_mlp("cpu", steps=STEPS)


def assert_learns(losses):
    assert len(losses) == STEPS
    assert all(b < a for a, b in zip(losses, losses[1:])), losses  # every step helps at this learning rate
    assert losses[-1] < 0.5 * losses[0]


def test_mlp_learns_on_cpu(cpu_losses):
    assert_learns(cpu_losses)


def test_mlp_learns_on_toy_with_the_same_numbers(cpu_losses):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses = train_mlp("toy", steps=STEPS)
    assert_learns(losses)
    # The toy device computes on CPU, through the fallback: the same arithmetic.
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-6)
    # Backward uses views (transpose, expand), which the fallback can only copy.
    assert any("appears to be a view operator" in str(w.message) for w in caught)


def test_mlp_learns_under_vmap(cpu_losses):
    losses = train_mlp("cpu", batched=True, steps=STEPS)
    assert_learns(losses)
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-5)


def test_mlp_parameters_stay_on_their_device():
    model = nn.MLP((4, 8, 1), device="toy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nn.mse_loss(model(P.randn(5, 4, device="toy")), P.zeros(5, 1, device="toy")).backward()
        nn.sgd_step(model.parameters(), 0.1)
    for p in model.parameters():
        assert p.device.type == "toy" and p.is_leaf and p.requires_grad and p.grad is None


def test_mlp_on_meta_checks_shapes_without_data():
    model = nn.MLP((1024, 4096, 10), device="meta")
    loss = nn.mse_loss(model(P.empty(10_000, 1024, device="meta")), P.empty(10_000, 10, device="meta"))
    assert (loss.shape, loss.device.type) == ((), "meta")
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        model(P.empty(10, 1000, device="meta"))
