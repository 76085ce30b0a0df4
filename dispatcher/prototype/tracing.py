"""Tracing: record every operator a function calls into a graph you can print and replay.

``trace(f, *inputs)`` runs ``f`` under a ``Tracer``, a dispatch mode (the
Python key: see dispatcher.dispatch_modes): while it is active every
operator call reaches its ``__torch_dispatch__`` -- factories included,
which have no tensor to carry a key -- and it runs the operator, then
records the call (operator, arguments, results).  Inside its handler the
mode is off the stack, so the operators the kernels call are not recorded.

The Python key sits below autograd and vmap: autograd has already run when
a call is recorded (a traced function still builds its graph for
backward), vmap has already unbatched it (the graph of a vmapped function
is the batched computation), and a CompositeImplicitAutograd operator has
already decomposed (``x @ w`` is recorded as the ``mm`` that ``matmul``
calls): the graph of a program is what torch's make_fx records for it
(tests/test_prototype_tracing.py compares them).

Tensors the graph did not make and was not given (a model's weights, say)
become constants of the graph; a number the program wrote where an operator
takes a tensor (``x * 2``: see Note [Numbers where an operator takes a
tensor] in tensor.py) reaches the dispatcher as the number, and shows as
the number, as in make_fx.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from dispatcher import OperatorHandle, TensorBase, TorchDispatchMode
from dispatcher.dispatch_modes import _get_current_dispatch_mode_stack


__all__ = ["Graph", "Tracer", "Value", "trace"]

_SHORT_DTYPE = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "b8"}


class Value:
    """A tensor in the graph: an input, a constant, or a call's result."""

    __slots__ = ("name", "shape", "dtype", "device")

    def __init__(self, name: str, t: Any) -> None:
        self.name = name
        self.shape, self.dtype, self.device = tuple(t.shape), t.dtype, t.device

    def __repr__(self) -> str:
        return f"%{self.name}"

    def describe(self) -> str:
        dtype = _SHORT_DTYPE.get(self.dtype.name, self.dtype.name)
        return f"%{self.name}: {dtype}{list(self.shape)} {self.device}"


class Call:
    """One recorded operator call: ``outputs = op(*arguments)``."""

    __slots__ = ("op", "arguments", "outputs")

    def __init__(self, op: OperatorHandle, arguments: tuple, outputs: tuple) -> None:
        self.op = op
        self.arguments = arguments  # in schema order; tensors replaced by Values
        self.outputs = outputs

    def __str__(self) -> str:
        parts = []
        for argument, value in zip(self.op.schema.arguments, self.arguments):
            if argument.kwarg_only or argument.has_default:
                if argument.has_default and value == argument.default:
                    continue  # keep the graph short: defaults are implied
                parts.append(f"{argument.name}={value!r}")
            else:
                parts.append(repr(value))
        lhs = ", ".join(o.describe() for o in self.outputs)
        return f"{lhs} = {self.op.name()}({', '.join(parts)})"


class Graph:
    """Inputs, constants, calls in order, and outputs; ``str()`` prints it, ``replay`` reruns it."""

    def __init__(self) -> None:
        self.inputs: list[Value] = []
        self.constants: dict[str, Any] = {}  # Value name -> tensor
        self.calls: list[Call] = []
        self.outputs: Any = None

    def __str__(self) -> str:
        lines = [f"graph({', '.join(v.describe() for v in self.inputs)}):"]
        lines += [f"  {c}" for c in self.calls]
        lines.append(f"  return {self.outputs!r}")
        return "\n".join(lines)

    def replay(self, *inputs: Any) -> Any:
        """Run the recorded calls again on new inputs (of the same shapes, for the
        graph to mean the same thing); constants keep their recorded values."""
        if len(inputs) != len(self.inputs):
            raise TypeError(f"this graph takes {len(self.inputs)} inputs, got {len(inputs)}")
        env: dict[str, Any] = dict(self.constants)
        env.update((v.name, t) for v, t in zip(self.inputs, inputs))

        def resolve(x: Any) -> Any:
            if isinstance(x, Value):
                return env[x.name]
            if isinstance(x, (list, tuple)):
                return type(x)(resolve(v) for v in x)
            return x

        for call in self.calls:
            args, kwargs = call.op.schema.split_call([resolve(a) for a in call.arguments])
            result = call.op(*args, **kwargs)
            results = result if len(call.outputs) > 1 else (result,)
            env.update((o.name, r) for o, r in zip(call.outputs, results))
        return resolve(self.outputs)


class _Recorder:
    """Maps the tensors of one trace to Values (by identity) and appends calls."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._values: dict[int, Value] = {}
        self._alive: list[Any] = []  # keeps traced tensors alive, so their ids stay unique
        self._count = 0

    def _new(self, t: Any, name: str) -> Value:
        value = Value(name, t)
        self._values[id(t)] = value
        self._alive.append(t)
        return value

    def add_input(self, t: Any) -> Value:
        value = self._new(t, f"x{len(self.graph.inputs)}")
        self.graph.inputs.append(value)
        return value

    def lookup(self, x: Any) -> Any:
        """``x`` with tensors as Values; a tensor seen for the first time is a constant."""
        if isinstance(x, list):
            return [self.lookup(v) for v in x]
        if isinstance(x, tuple):
            return tuple(self.lookup(v) for v in x)
        if not isinstance(x, TensorBase):
            return x
        value = self._values.get(id(x))
        if value is None:
            value = self._new(x, f"c{len(self.graph.constants)}")
            self.graph.constants[value.name] = x
        return value

    def record(self, op: OperatorHandle, arguments: Sequence[Any], result: Any) -> None:
        arguments = tuple(self.lookup(a) for a in arguments)
        results = result if len(op.schema.returns) > 1 else (result,)
        outputs = []
        for r in results:
            # A new Value even for an in-place result: later uses see the written version.
            outputs.append(self._new(r, str(self._count)))
            self._count += 1
        self.graph.calls.append(Call(op, arguments, tuple(outputs)))


class Tracer(TorchDispatchMode):
    """The dispatch mode ``trace`` runs a function under: runs each call and records it."""

    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def __torch_dispatch__(self, func: OperatorHandle, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        # The graph holds every argument in schema order, defaults included.
        self.recorder.record(func, func._schema.bind(args, kwargs), result)
        return result


def trace(func: Callable, *inputs: Any) -> Graph:
    """Run ``func(*inputs)`` once and return the graph of the operators it called."""
    if any(isinstance(mode, Tracer) for mode in _get_current_dispatch_mode_stack()):
        raise RuntimeError("trace() is already tracing on this thread")
    graph = Graph()
    recorder = _Recorder(graph)
    for t in inputs:
        recorder.add_input(t)
    with Tracer(recorder):
        out = func(*inputs)
    graph.outputs = recorder.lookup(out)
    return graph
