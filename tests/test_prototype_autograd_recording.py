"""dispatcher.prototype: what the autograd kernel records, on its one-pass path and its general one.

A positional call of an operator without Tensor[] arguments that is not in
place is recorded in one pass over its tensor arguments (autograd._record);
every other call by binding it and walking its schema (autograd._context).
Both must give the node the same context, saved tensors and edges, and the
node's class is named as torch's.
"""
import pytest

import dispatcher.prototype as P
from dispatcher.prototype.autograd import AccumulateGrad, Node, TensorMeta
from dispatcher.prototype.operators import aten

pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


def _described(node):
    """A node's context, saved names and edges, as comparable values."""
    fields = {}
    for name, value in node.ctx.__dict__.items():
        if isinstance(value, TensorMeta):
            value = ("meta", value.shape, value.dtype, value.device)
        elif isinstance(value, P.Tensor):
            value = ("tensor", id(value))
        fields[name] = value
    edges = tuple(None if edge is None else (id(edge[0]), edge[1]) for edge in node.edges)
    return fields, [name for name, _, _ in node._saved], edges, node.metadata[0].shape


def _inputs():
    x = P.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = P.tensor([0.5, -1.0])  # no grad: its edge is None
    h = x * 2  # a non-leaf: its edge is its node's
    return x, y, h


@pytest.mark.parametrize("call, general", [
    # (the one-pass call, the same call with a keyword: the general path)
    (lambda x, y, h: aten.add.Tensor(h, y), lambda x, y, h: aten.add.Tensor(h, y, alpha=1)),
    (lambda x, y, h: aten.sub.Tensor(x, h), lambda x, y, h: aten.sub.Tensor(x, h, alpha=1)),
    (lambda x, y, h: aten.mul.Tensor(h, y), lambda x, y, h: aten.mul.Tensor(h, other=y)),
    (lambda x, y, h: aten.mul.Tensor(x, 3), lambda x, y, h: aten.mul.Tensor(x, other=3)),  # a number as a tensor
    (lambda x, y, h: aten.mm.default(x, h), lambda x, y, h: aten.mm.default(x, mat2=h)),
    (lambda x, y, h: aten.threshold_backward.default(h, x, 0.0),
     lambda x, y, h: aten.threshold_backward.default(h, x, threshold=0.0)),
])
def test_the_one_pass_recording_equals_the_general_one(call, general):
    x, y, h = _inputs()
    fast, slow = call(x, y, h), general(x, y, h)
    assert type(fast.grad_fn) is type(slow.grad_fn)
    assert _described(fast.grad_fn) == _described(slow.grad_fn)
    assert fast.grad_fn.edges[0] is not None and isinstance(fast.grad_fn.edges[0][0], (Node, AccumulateGrad))


def test_a_call_leaving_out_a_defaulted_argument_is_recorded_with_its_default():
    x, y, h = _inputs()
    fields, _, _, _ = _described(aten.sum.dim_IntList(h, [0]).grad_fn)
    assert fields["keepdim"] is False and fields["dim"] == [0] and fields["dtype"] is None


def test_the_gradients_are_the_same_through_either_path():
    x, y, _ = _inputs()
    ((x * y).add(x, alpha=1) * 2).sum().backward()
    by_keyword = x.grad.tolist()
    x.grad = None
    ((x * y) + x).mul(2).sum().backward()
    assert x.grad.tolist() == by_keyword == [[3.0, 0.0], [3.0, 0.0]]


@pytest.mark.parametrize("make, name", [
    (lambda x: x * x, "MulBackward0"),
    (lambda x: x * 2.0, "MulBackward0"),
    (lambda x: x + x, "AddBackward0"),
    (lambda x: x @ x, "MmBackward0"),
    (lambda x: x.relu(), "ReluBackward0"),
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.sum(0), "SumBackward1"),
    (lambda x: x.t(), "TBackward0"),
])
def test_a_nodes_class_is_named_as_torchs(make, name):
    x = P.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    node = make(x).grad_fn
    assert type(node).__name__ == name == node.name()
    assert isinstance(node, Node) and repr(node) == f"<{name}>"


def test_saved_tensors_are_properties_of_the_nodes_class():
    x = P.tensor([1.0, -2.0], requires_grad=True)
    r = x.relu()
    assert {n for n in dir(type(r.grad_fn)) if n.startswith("_saved_")} == {"_saved_result"}
    kept = r.grad_fn._saved_result
    assert kept.tolist() == [1.0, 0.0] and kept is not r  # a detached alias of the output, as torch saves it
    m = x * x
    assert {n for n in dir(type(m.grad_fn)) if n.startswith("_saved_")} == {"_saved_self", "_saved_other"}
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute '_saved_result'"):
        m.grad_fn._saved_result


def test_a_keyword_only_argument_passed_positionally_is_refused_before_anything_is_recorded():
    x, y, h = _inputs()
    with pytest.raises(TypeError, match="alpha"):
        aten.add.Tensor(h, y, 2)  # alpha is keyword-only
