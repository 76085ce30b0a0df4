"""dispatcher.prototype: autograd kernels, backward, no_grad, checked by finite differences."""
import threading

import numpy as np
import pytest

import dispatcher
from dispatcher import DispatchKey as K
from dispatcher.prototype import float64, gradcheck, no_grad
import dispatcher.prototype as P


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


def leaf(*shape, low=-2.0, high=2.0, seed=0):
    values = np.random.default_rng(seed).uniform(low, high, shape)
    return P.tensor(values, dtype=float64, requires_grad=True)


# (function, input shapes); inputs are float64 leaves that require grad.
GRADIENT_CASES = {
    "add.broadcast": (lambda a, b: a + b, [(3, 4), (4,)]),
    "add.alpha": (lambda a, b: a.add(b, alpha=-2.5), [(3, 1), (1, 4)]),
    "add.number": (lambda a: 3 + a, [(2, 3)]),
    "sub": (lambda a, b: a - b, [(2, 3), (2, 1)]),
    "sub.alpha": (lambda a, b: a.sub(b, alpha=3), [(2, 3), (3,)]),
    "rsub": (lambda a: 1 - a, [(3,)]),
    "mul.broadcast": (lambda a, b: a * b, [(2, 3, 4), (3, 1)]),
    "mul.number": (lambda a: a * 0.5, [(3,)]),
    "div": (lambda a, b: a / (b * b + 1), [(2, 3), (3,)]),
    "div.number": (lambda a: a / 3, [(3,)]),
    "rdiv": (lambda a: 2 / (a * a + 1), [(3,)]),
    "neg": (lambda a: -a, [(2, 2)]),
    "exp": (lambda a: a.exp(), [(2, 3)]),
    "log": (lambda a: (a * a + 0.5).log(), [(2, 3)]),
    "sum": (lambda a: a.sum(), [(2, 3)]),
    "sum.dim": (lambda a: a.sum(1), [(2, 3, 2)]),
    "sum.dims_keepdim": (lambda a: a.sum([0, -1], keepdim=True), [(2, 3, 2)]),
    "mean": (lambda a: a.mean(), [(4, 2)]),
    "relu": (lambda a: a.relu(), [(3, 4)]),
    "matmul.2d": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "matmul.1d_2d": (lambda a, b: a @ b, [(3,), (3, 2)]),
    "matmul.2d_1d": (lambda a, b: a @ b, [(2, 3), (3,)]),
    "matmul.1d_1d": (lambda a, b: a @ b, [(3,), (3,)]),
    "matmul.batched_broadcast": (lambda a, b: a @ b, [(2, 3, 4), (4, 2)]),
    "matmul.batched_both": (lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)]),
    "matmul.matrix_batch": (lambda a, b: a @ b, [(2, 3), (4, 3, 5)]),  # folded, and transposed back
    "matmul.batch_of_one": (lambda a, b: a @ b, [(1, 3, 4), (2, 4, 2)]),  # the batch of one squeezed
    "matmul.batch_vector": (lambda a, b: a @ b, [(3,), (2, 3, 4)]),
    "matmul.strided": (lambda a, b: a.transpose(0, 1) @ b, [(3, 2, 4), (4,)]),
    "t": (lambda a: a.t() * 1, [(2, 3)]),
    "transpose": (lambda a: a.transpose(0, 2) * 1, [(2, 3, 4)]),
    "permute": (lambda a: a.permute(2, 0, 1) * 1, [(2, 3, 4)]),
    "view": (lambda a: a.view(3, 2) * 1, [(2, 3)]),
    "reshape.copying": (lambda a: a.t().reshape(6) * 1, [(2, 3)]),
    "expand": (lambda a: a.expand(4, 2, 3) * 1, [(2, 1)]),
    "select": (lambda a: a.select(1, -1) * 1, [(2, 3)]),
    "stack": (lambda a, b: P.stack([a, b * 2, a], 1), [(2, 3), (2, 3)]),
    "clone": (lambda a: a.clone(), [(3,)]),
    "to.device": (lambda a: (a.to("toy") * 2).to("cpu"), [(3,)]),
    "to.copy": (lambda a: a.to(float64, copy=True), [(3,)]),
    "add_.non_leaf": (lambda a, b: (a * 1).add_(b, alpha=2), [(2, 3), (3,)]),
    "copy_.non_leaf": (lambda a, b: (a * 1).copy_(b) * a, [(2, 3), (3,)]),
    "mlp": (lambda x, w1, w2: ((x @ w1).relu() @ w2).exp().mean(), [(4, 3), (3, 5), (5, 2)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_agree_with_finite_differences(name):
    fn, shapes = GRADIENT_CASES[name]
    inputs = [leaf(*shape, seed=i) for i, shape in enumerate(shapes)]
    assert gradcheck(fn, inputs)
    for t in inputs:
        assert t.grad is not None and t.grad.shape == t.shape and t.grad.dtype == float64


def test_gradcheck_catches_a_wrong_gradient():
    # Leaving the dispatcher (through numpy) cuts the graph: autograd's zero
    # gradient disagrees with the finite differences.
    w = leaf(3)
    with pytest.raises(AssertionError, match="input 0 element"):
        gradcheck(lambda w: w * P.tensor(w.numpy() ** 2), [w])


def test_backward_fills_grad_and_accumulates():
    x = leaf(3)
    y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3)
    assert x.is_leaf and not y.is_leaf and y.grad_fn.name() == "SumBackward0"


def test_gradient_reaching_a_leaf_twice_is_summed():
    x = leaf(2, 2)
    (x @ x + x * x).sum().backward()
    xn = x.numpy()
    expected = np.ones((2, 2)) @ xn.T + xn.T @ np.ones((2, 2)) + 2 * xn
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_formulas_compute_only_the_gradients_wanted():
    # As torch's grad_input_mask: x / 4 divides by a wrapped number, which
    # wants no gradient, so DivBackward computes only x's.
    seen = []

    class Log(dispatcher.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.name())
            return func(*args, **(kwargs or {}))

    x = leaf(3)
    y = (x / 4).sum()
    with Log():
        y.backward()
    assert seen == ["aten::ones_like", "aten::expand", "aten::div.Tensor", "aten::detach"]
    np.testing.assert_allclose(x.grad.numpy(), [0.25] * 3)


def test_inputs_that_do_not_require_grad_get_none():
    x, w = P.tensor([1.0, 2.0]), leaf(2)
    (x * w).sum().backward()
    assert x.grad is None and w.grad.tolist() == [1.0, 2.0]


def test_results_require_grad_only_when_an_input_does():
    a, b = P.tensor([1.0]), leaf(1)
    assert not (a * 2).requires_grad and (a * 2).grad_fn is None
    assert (a * b).requires_grad and (a * b).grad_fn.name() == "MulBackward0"
    assert not b.gt(0).requires_grad  # comparisons have no derivative


def test_autograd_kernel_redispatches_below_autograd_with_the_keyset(capsys):
    x, w = P.tensor([1.0]), leaf(1)
    dispatcher.set_show_dispatch_trace(True)
    try:
        x * w
    finally:
        dispatcher.set_show_dispatch_trace(False)
    assert capsys.readouterr().err.splitlines() == [
        "[call] op=[aten::mul.Tensor], key=[AutogradCPU]",
        " [redispatch] op=[aten::mul.Tensor], key=[CPU]",
    ]


def test_nested_calls_of_a_kernel_are_not_recorded_again():
    # _to_copy's kernel calls empty and copy_; with autograd excluded below the
    # autograd kernel, only _to_copy's own node is recorded.
    x = leaf(2)
    y = x.to("toy")
    assert y.grad_fn.name() == "ToCopyBackward0"
    assert y.grad_fn.next_functions == (x._grad_accumulator,)


def test_no_grad_is_a_tls_guard():
    x = leaf(2)
    with no_grad():
        assert dispatcher.tls_is_dispatch_key_excluded(K.AutogradFunctionality)
        y = x * 2
    assert not dispatcher.tls_is_dispatch_key_excluded(K.AutogradFunctionality)
    assert not y.requires_grad and y.grad_fn is None
    assert (x * 2).requires_grad
    with no_grad(), pytest.raises(ValueError):
        raise ValueError
    assert (x * 2).requires_grad


def test_no_grad_is_per_thread():
    x = leaf(2)
    results = {}
    inside, done = threading.Event(), threading.Event()

    def other_thread():
        with no_grad():
            inside.set()
            results["other"] = (x * 2).requires_grad
            done.wait(5)

    thread = threading.Thread(target=other_thread)
    thread.start()
    inside.wait(5)
    results["main"] = (x * 2).requires_grad
    done.set()
    thread.join()
    assert results == {"other": False, "main": True}


def test_in_place_rules():
    x = leaf(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(P.ones(2, dtype=float64))
    with no_grad():
        x.add_(P.ones(2, dtype=float64))  # an optimizer step
    assert x.is_leaf and x.requires_grad
    # In-place into a tensor that does not require grad makes it part of the graph.
    acc = P.zeros(2, dtype=float64)
    acc.add_(x * 3)
    assert acc.grad_fn.name() == "AddBackward0"
    acc.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    # Through a view, the base's history is rebased (tests/test_prototype_view_inplace.py).
    base = x * 1
    view = base.view(2, 1)
    view.add_(P.ones(2, 1, dtype=float64))
    assert base.grad_fn.name() == "torch::autograd::CopySlices" and view.grad_fn.name() == "AsStridedBackward0"


def test_a_saved_tensor_modified_in_place_is_an_error():
    x = leaf(2)
    y = x * 2
    z = y * y  # saves y
    assert y._version == 0
    y.add_(P.ones(2, dtype=float64))
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation: 'self' of MulBackward0.*"
                                           "is at version 1; expected version 0 instead"):
        z.sum().backward()
    # Only what a formula reads is saved: add needs no values, so this is fine.
    w = y + 1
    y.add_(P.ones(2, dtype=float64))
    w.sum().backward()


def test_backward_errors():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        P.tensor([1.0]).backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (leaf(2) * 2).backward()
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        P.tensor([1]).requires_grad_()
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        (leaf(2) * 2).requires_grad_(False)


def test_backward_with_an_explicit_gradient():
    x = leaf(3)
    (x * 2).backward(P.tensor([1.0, 0.0, -1.0], dtype=float64))
    assert x.grad.tolist() == [2.0, 0.0, -2.0]


# -- regressions: the gradient's shape, backward twice, retain_graph (repro_13) ----------------
def test_backward_with_a_gradient_of_another_shape_is_an_error():
    x = P.tensor([[1.0, 2.0], [3.0, 4.0]]).requires_grad_()
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward(P.tensor([1.0, 2.0, 3.0]))
    # torch: "... a shape of torch.Size([3]) and output[0] has a shape of torch.Size([2, 2])."
    assert str(info.value) == ("Mismatch in shape: grad_output[0] has a shape of (3,) and output[0] has a "
                               "shape of (2, 2).")
    # Even one that would broadcast: torch checks the root's gradient exactly.
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a shape of \(2,\) and output\[0\] has a shape "
                                           r"of \(2, 2\)\."):
        (x * 2).backward(P.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got float"):
        (x * 2).backward(1.0)
    assert x.grad is None


def test_a_second_backward_through_freed_saved_tensors_is_an_error():
    y = P.tensor([1.0, 2.0]).requires_grad_()
    z = (y * y).sum()  # MulBackward saves both operands
    z.backward()
    with pytest.raises(RuntimeError) as info:
        z.backward()
    assert str(info.value) == (
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
        "if you need to access saved tensors after calling backward."
    )
    assert y.grad.tolist() == [2.0, 4.0]  # the failed backward added nothing
    assert z.grad_fn.next_functions[0]._saved is None and not hasattr(z.grad_fn.next_functions[0].ctx, "self")


def test_retain_graph_keeps_the_saved_tensors_and_gradients_accumulate():
    y = P.tensor([1.0, 2.0]).requires_grad_()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()  # retain_graph defaults to False: this one frees the graph
    assert y.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()
    w = leaf(2)
    loss = (w * w).sum()
    P.backward(loss, retain_graph=True)  # the functional form takes it too
    P.backward(loss)
    np.testing.assert_allclose(w.grad.numpy(), 4 * w.numpy())
    # A graph whose nodes saved no tensors can be walked again, as in PyTorch ...
    w.grad = None
    v = (w + 3).sum()
    v.backward()
    v.backward()
    assert w.grad.tolist() == [2.0, 2.0]
    # ... but w * 3 saved the 3 (a wrapped number, a tensor), as torch's MulBackward0 does.
    v = (w * 3).sum()
    v.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        v.backward()


def test_gradients_are_converted_to_the_dtype_and_device_of_their_tensor():
    x = P.tensor([1.0, 2.0]).requires_grad_()
    (x * P.tensor([3.0, 4.0], dtype=float64)).sum().backward()  # the product is float64
    assert x.grad.dtype == P.float32 and x.grad.tolist() == [3.0, 4.0]
    x.grad = None
    (x * 2).backward(P.tensor([1, 2]))  # an int64 gradient becomes float32
    assert x.grad.dtype == P.float32 and x.grad.tolist() == [2.0, 4.0]
    x.grad = None
    (x.sum(dtype=float64) + x.mean(dtype=float64)).backward()  # reductions' gradients are float64
    assert x.grad.dtype == P.float32 and x.grad.tolist() == [1.5, 1.5]
    x.grad = None
    (x * 2).sum().backward(P.tensor(1.0, device="toy"))  # a 0-d gradient moves
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="invalid gradient at index 0 - expected device cpu but got toy"):
        (x * 2).backward(P.tensor([1.0, 1.0], device="toy"))


def test_a_formula_returning_a_gradient_of_the_wrong_shape_is_caught():
    x = leaf(3)
    y = x * 2
    y.grad_fn.formula = lambda ctx, grad: (P.ones(5, dtype=float64),)
    with pytest.raises(RuntimeError, match=r"^Function MulBackward0 returned an invalid gradient at index 0 - got "
                                           r"\[5\] but expected shape compatible with \[3\]$"):
        y.sum().backward()
    assert x.grad is None
    # A gradient that x's shape broadcasts to is summed down to it (the engine's reduce_grad).
    y = x * 2
    y.grad_fn.formula = lambda ctx, grad: (P.ones(2, 3, dtype=float64),)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_integer_results_are_not_differentiable():
    # As torch.ones(2, requires_grad=True).long(): cut from the graph.
    x = leaf(2)
    y = x.to(P.int64)
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert x.to(P.float32).grad_fn.name() == "ToCopyBackward0"


def test_assigning_grad_is_checked():
    x = leaf(2, 2)
    x.grad = P.ones(2, 2, dtype=float64)
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a tensor of "
                                           r"size '\[2, 2\]'. Please ensure that the gradient and the tensor "
                                           r"are the same size"):
        x.grad = P.ones(3, dtype=float64)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'torch.float32' to a tensor "
                                           "with dtype 'torch.float64'"):
        x.grad = P.ones(2, 2)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with device type 'toy'"):
        x.grad = P.ones(2, 2, dtype=float64, device="toy")
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type list"):
        x.grad = [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        x.grad = x
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    # So the gradient backward() adds to always has the leaf's shape.
    (x * 2).sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    x.grad = None
    assert x.grad is None


def test_create_graph_gives_differentiable_gradients():
    # d/dx (x^3) = 3x^2 recorded (create_graph), then d/dx sum(3x^2) = 6x;
    # exp saves its result, which create_graph unpacks as part of the graph:
    # d2/dv2 exp(v) = exp(v).
    x = P.tensor([0.5, -1.0, 2.0], dtype=P.float64, requires_grad=True)
    (g,) = P.grad((x * x * x).sum(), [x], create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    (gg,) = P.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), 6 * x.numpy())
    v = P.tensor([0.5, -1.0], dtype=P.float64, requires_grad=True)
    v.exp().sum().backward(create_graph=True)
    assert v.grad.requires_grad and v.grad.grad_fn.name() == "torch::autograd::CopyBackwards"
    (second,) = P.grad(v.grad.sum(), [v])
    np.testing.assert_allclose(second.numpy(), np.exp(v.numpy()))
