"""dispatcher.prototype: tracing through a boxed fallback on the Tracer key."""
import numpy as np
import pytest

import dispatcher
from dispatcher import DispatchKey as K
import dispatcher.prototype as P
from dispatcher.prototype import float64, nn, trace, vmap


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


def test_graph_prints_readably():
    w = P.ones(3, 2)

    def f(x, b):
        h = (x @ w).add(b, alpha=2)
        return h.relu().sum(), P.zeros(2, dtype=float64)

    graph = trace(f, P.ones(4, 3), P.ones(2))
    assert str(graph) == "\n".join([
        "graph(%x0: f32[4, 3] cpu, %x1: f32[2] cpu):",
        "  %0: f32[4, 2] cpu = proto::matmul(%x0, %c0)",
        "  %1: f32[4, 2] cpu = proto::add.Tensor(%0, %x1, alpha=2)",
        "  %2: f32[4, 2] cpu = proto::relu(%1)",
        "  %3: f32[] cpu = proto::sum(%2)",
        "  %4: f64[2] cpu = proto::zeros([2], dtype=proto.float64)",
        "  return (%3, %4)",
    ])
    assert graph.constants == {"c0": w}


def test_records_inputs_and_outputs_of_every_call():
    x = P.tensor([1.0, 2.0])
    graph = trace(lambda x: (x * 2).exp(), x)
    mul, exp = graph.calls
    assert (mul.op, exp.op) == (P.OP["mul.Scalar"], P.OP["exp"])
    assert mul.arguments == (graph.inputs[0], 2)
    assert exp.arguments == mul.outputs
    assert graph.outputs is exp.outputs[0]


def test_only_the_calls_the_function_makes_are_recorded():
    # relu and mean decompose, and _to_copy calls empty and copy_: their
    # kernels' calls run with Tracer excluded.
    graph = trace(lambda x: x.relu().mean().to("toy"), P.ones(3))
    assert [c.op.name() for c in graph.calls] == ["proto::relu", "proto::mean", "proto::to"]


def test_in_place_calls_make_new_values():
    graph = trace(lambda x: x.clone().add_(x), P.ones(2))
    clone, add_ = graph.calls
    assert add_.arguments[0] is clone.outputs[0] and graph.outputs is add_.outputs[0]
    x = P.tensor([1.0, 2.0])
    assert graph.replay(x).tolist() == [2.0, 4.0]


def test_replay_on_new_inputs():
    model = nn.MLP((3, 5, 2), generator=np.random.default_rng(0))
    graph = trace(model, P.randn(4, 3))
    x = P.randn(7, 3)  # another batch size works too: the graph holds no shapes it needs
    np.testing.assert_allclose(graph.replay(x).numpy(), model(x).numpy())
    with pytest.raises(TypeError, match="this graph takes 1 inputs, got 2"):
        graph.replay(x, x)


def test_tracing_is_a_tls_include_that_is_restored():
    before = dispatcher.tls_local_include_set()
    seen = []
    trace(lambda x: seen.append(dispatcher.tls_is_dispatch_key_included(K.Tracer)) or x * 2, P.ones(1))
    assert seen == [True] and dispatcher.tls_local_include_set() == before
    with pytest.raises(ZeroDivisionError):
        trace(lambda x: 1 / 0, P.ones(1))
    assert dispatcher.tls_local_include_set() == before
    with pytest.raises(RuntimeError, match="already tracing"):
        trace(lambda x: trace(lambda y: y, x), P.ones(1))


def test_tracing_sits_above_autograd_and_below_vmap():
    w = P.ones(3, requires_grad=True)
    graph = trace(lambda x: (x * w).sum(), P.ones(3))
    assert [c.op.name() for c in graph.calls] == ["proto::mul.Tensor", "proto::sum"]
    # vmap unwraps before the tracer sees a call: the graph is the batched computation.
    graph = trace(vmap(lambda x: x.exp().sum()), P.ones(4, 3))
    assert [c.op.name() for c in graph.calls] == ["proto::exp", "proto::sum.dim_IntList"]
    assert graph.calls[0].arguments == (graph.inputs[0],)
