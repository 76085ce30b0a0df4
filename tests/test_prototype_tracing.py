"""dispatcher.prototype: tracing as a dispatch mode (the Python key), against torch 2.13's make_fx."""
import numpy as np
import pytest

import dispatcher
from dispatcher import DispatchKey as K
import dispatcher.prototype as P
from dispatcher.dispatch_modes import _get_current_dispatch_mode_stack
from dispatcher.prototype import float64, nn, trace, vmap

from .conftest import load_golden
from .golden.prototype_cases import programs

# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")

aten = dispatcher.ops.aten
MAKE_FX = load_golden("prototype_golden.json")["traces"]
# The one program whose graph differs from make_fx's, and how: functorch's
# batching rule of squeeze_.dim calls squeeze_.dims on the batch; the
# prototype's calls squeeze_.dim itself (one operator fewer).
DIFFERENCES = {"vmap.matmul": {"aten::squeeze_.dims": "aten::squeeze_.dim"}}


@pytest.mark.parametrize("name", sorted(MAKE_FX))
def test_graph_has_the_operators_make_fx_records(name):
    program = programs(P)[name]
    graph = trace(program.fn, *program.inputs)
    expected = [DIFFERENCES.get(name, {}).get(op, op) for op in MAKE_FX[name]]
    assert [call.op.name() for call in graph.calls] == expected


def test_graph_prints_readably():
    w = P.ones(3, 2)

    def f(x, b):
        h = (x @ w).add(b, alpha=2)
        return h.relu().sum(), P.zeros(2, dtype=float64)

    graph = trace(f, P.ones(4, 3), P.ones(2))
    assert str(graph) == "\n".join([
        "graph(%x0: f32[4, 3] cpu, %x1: f32[2] cpu):",
        "  %0: f32[4, 2] cpu = aten::mm(%x0, %c0)",  # matmul, decomposed before the Python key
        "  %1: f32[4, 2] cpu = aten::add.Tensor(%0, %x1, alpha=2)",
        "  %2: f32[4, 2] cpu = aten::relu(%1)",
        "  %3: f32[] cpu = aten::sum(%2)",
        "  %4: f64[2] cpu = aten::zeros([2], dtype=torch.float64, device=device(type='cpu'), pin_memory=False)",
        "  return (%3, %4)",
    ])
    assert graph.constants == {"c0": w}


def test_records_inputs_and_outputs_of_every_call():
    x = P.tensor([1.0, 2.0])
    graph = trace(lambda x: (x * 2).exp(), x)
    mul, exp = graph.calls
    assert (mul.op, exp.op) == (aten.mul.Tensor, aten.exp.default)
    # The number the program wrote where mul.Tensor takes a tensor is recorded as the number, as in make_fx.
    assert mul.arguments[0] is graph.inputs[0] and mul.arguments[1] == 2 and type(mul.arguments[1]) is int
    assert str(mul) == "%0: f32[2] cpu = aten::mul.Tensor(%x0, 2)"
    assert exp.arguments == mul.outputs
    assert graph.outputs is exp.outputs[0]
    assert graph.replay(P.tensor([0.0, 1.0])).tolist() == pytest.approx([1.0, np.exp(2.0)])


def test_kernels_calls_are_not_recorded_and_decompositions_are_their_calls():
    # matmul and to are CompositeImplicitAutograd: they decompose at the
    # autograd keys, above the Python key, so their calls are recorded (as
    # torch's make_fx records them).  mean's and _to_copy's kernels call
    # other operators with the tracer off the stack: those are not.
    graph = trace(lambda x: (x @ x.t()).relu().mean().to("toy"), P.ones(2, 3))
    assert [c.op.name() for c in graph.calls] == [
        "aten::t", "aten::mm", "aten::relu", "aten::mean", "aten::_to_copy"]
    replayed = graph.replay(P.tensor([[1.0, -2.0, 4.0], [0.5, 1.0, -1.0]]))
    assert replayed.device.type == "toy"
    np.testing.assert_allclose(replayed.numpy(), (21 + 0 + 0 + 2.25) / 4, rtol=1e-6)


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


def test_tracing_is_a_mode_on_this_thread_that_is_left():
    before = dispatcher.tls_local_include_set()
    seen = []

    def f(x):
        seen.append((dispatcher.tls_is_dispatch_key_included(K.Python), _get_current_dispatch_mode_stack()))
        return x * 2

    trace(f, P.ones(1))
    ((python_included, [mode]),) = seen
    assert python_included and isinstance(mode, P.Tracer)
    assert dispatcher.tls_local_include_set() == before and _get_current_dispatch_mode_stack() == []
    with pytest.raises(ZeroDivisionError):
        trace(lambda x: 1 / 0, P.ones(1))
    assert dispatcher.tls_local_include_set() == before and _get_current_dispatch_mode_stack() == []
    with pytest.raises(RuntimeError, match="already tracing"):
        trace(lambda x: trace(lambda y: y, x), P.ones(1))


def test_tracing_sits_below_autograd_and_vmap():
    # Autograd has run when a call is recorded: the traced function's result can be backpropagated.
    w = P.ones(3, requires_grad=True)
    out = []
    graph = trace(lambda x: out.append((x * w).sum()) or out[0], P.ones(3))
    assert [c.op.name() for c in graph.calls] == ["aten::mul.Tensor", "aten::sum"]
    out[0].backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    # vmap unwraps before the tracer sees a call: the graph is the batched computation.
    graph = trace(vmap(lambda x: x.exp().sum()), P.ones(4, 3))
    assert [c.op.name() for c in graph.calls] == ["aten::exp", "aten::sum.dim_IntList"]
    assert graph.calls[0].arguments == (graph.inputs[0],)
