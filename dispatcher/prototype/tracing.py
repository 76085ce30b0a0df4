"""Tracing: record every operator a function calls into a graph you can print and replay.

``trace(f, *inputs)`` runs ``f`` with the Tracer key in the thread-local
include set, so every operator call -- factories included, which have no
tensor to carry a key -- dispatches to Tracer first.  One boxed fallback
there serves all operators: it records the call (operator, arguments,
results) and runs the operator below Tracer.  Tracer sits above autograd,
so the graph holds the calls as the user made them; while an operator runs,
Tracer is excluded, so the operators its kernels call are not recorded.

Tensors the graph did not make and was not given (a model's weights, say)
become constants of the graph.  The fallback is installed with the
prototype's other backend fallbacks (see backend_fallbacks.py).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Sequence

from dispatcher import (
    DispatchKey,
    DispatchKeySet,
    ExcludeDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    OperatorHandle,
    Stack,
    TensorBase,
    box_returns,
    unbox_arguments,
)


__all__ = ["Graph", "Value", "trace", "tracer_fallback"]

_TRACER = DispatchKeySet(DispatchKey.Tracer)
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


class _TracingState(threading.local):
    recorder: Optional[_Recorder] = None


_state = _TracingState()


def tracer_fallback(op: OperatorHandle, keyset: DispatchKeySet, stack: Stack) -> None:
    """The Tracer backend fallback: run the operator below Tracer, then record it."""
    values = unbox_arguments(op.schema, stack)
    args, kwargs = op.schema.split_call(values)
    with ExcludeDispatchKeyGuard(_TRACER):
        result = op.redispatch(keyset - _TRACER, *args, **kwargs)
    if _state.recorder is not None:
        _state.recorder.record(op, values, result)
    box_returns(op.schema, result, stack)


def trace(func: Callable, *inputs: Any) -> Graph:
    """Run ``func(*inputs)`` once and return the graph of the operators it called."""
    if _state.recorder is not None:
        raise RuntimeError("trace() is already tracing on this thread")
    graph = Graph()
    recorder = _Recorder(graph)
    for t in inputs:
        recorder.add_input(t)
    _state.recorder = recorder
    try:
        with IncludeDispatchKeyGuard(_TRACER):
            out = func(*inputs)
    finally:
        _state.recorder = None
    graph.outputs = recorder.lookup(out)
    return graph
