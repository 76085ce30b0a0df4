"""dispatcher.prototype.Function: torch.autograd.Function, checked against torch 2.13's
gradients and node names for the same functions (values computed by hand below)."""
import numpy as np
import pytest

import dispatcher.prototype as P

pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


class Cube(P.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


class Scale(P.Function):
    """setup_context style, two inputs, a non-tensor one."""

    @staticmethod
    def forward(x, factor):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.factor = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def test_forward_records_one_node_and_backward_is_the_classs():
    x = P.tensor([1.0, 2.0, -3.0]).requires_grad_()
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"  # torch: CubeBackward
    assert np.allclose(y.detach().numpy(), [1.0, 8.0, -27.0])
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), [3.0, 12.0, 27.0])


def test_setup_context_style_and_a_none_gradient():
    x = P.tensor([1.0, 2.0]).requires_grad_()
    y = Scale.apply(x, 2.5)
    assert y.grad_fn.name() == "ScaleBackward"
    (y * y).sum().backward()
    assert np.allclose(x.grad.numpy(), [12.5, 25.0])  # d/dx (2.5x)^2 = 12.5x


def test_forward_runs_below_autograd_and_without_grad_nothing_is_recorded():
    seen = []

    class Peek(P.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            seen.append(out.grad_fn)
            return out

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = P.tensor([1.0]).requires_grad_()
    assert Peek.apply(x).grad_fn.name() == "PeekBackward" and seen == [None]
    assert Peek.apply(P.tensor([1.0])).grad_fn is None
    with pytest.raises(TypeError, match="positionally"):
        Peek.apply(x=x)


def test_no_node_under_no_grad():
    x = P.tensor([1.0]).requires_grad_()
    with P.no_grad():
        assert Cube.apply(x).grad_fn is None
