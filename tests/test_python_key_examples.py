"""Four worked examples of the Python key, on dispatcher.prototype tensors, against torch 2.13.

tests/golden/generate_python_key_golden.py runs the same programs on torch
tensors (the same aten operators, the same custom operators) and records
what each handler saw; here they must see the same:

1. a logging mode: the operators and overloads a small program calls,
   those its composite operator calls and those backward calls;
2. a fake-tensor mode: every call runs on meta tensors (Meta kernels, and
   custom operators' register_fake), the data is never read;
3. a wrapper subclass that unwraps, calls ``func`` and rewraps;
4. that subclass and a mode together: the mode first, then the subclass.

The prototype's operators are torch's, with torch's derivative formulas for
these.  The one step that differs is the end of backward: torch's
AccumulateGrad hands the gradient to the leaf with ``aten.detach``, the
prototype's with ``aten.clone`` (a copy); the test checks each is last and
compares the rest.

The examples run on the default engine here, and on the other engine in a
subprocess (``DISPATCHER_NO_EXTENSIONS=1``), since the prototype is built on
the default registry.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import dispatcher
from dispatcher import HAS_EXTENSION, Library, Tensor, TensorBase, TorchDispatchMode, custom_op, ops
from dispatcher._engine import compiled_engine

from .conftest import load_golden

GOLDEN = load_golden("python_key_golden.json").get("examples", {})
ROOT = pathlib.Path(__file__).resolve().parent.parent
NS = "pkx"  # the custom operators' namespace, the same as the golden script's


def op_name(func: Any) -> list[str]:
    return [func.namespace, func._opname, func._overloadname]


def run_examples() -> dict[str, Any]:
    """The four examples on prototype tensors: what each handler saw."""
    import dispatcher.prototype as P

    aten = ops.aten

    # -- the operators: two custom operators, one composite ------------------------------
    @custom_op(f"{NS}::scale", mutates_args=())
    def scale(x: Tensor, s: float) -> Tensor:
        return P.Tensor.from_numpy(x.numpy() * np.float32(s))

    @scale.register_fake
    def _(x, s):
        return P.empty(list(x.shape), dtype=x.dtype, device=x.device)

    def scale_setup(ctx, inputs, output):
        ctx.s = inputs[1]

    scale.register_autograd(lambda ctx, grad: (scale(grad, ctx.s), None), setup_context=scale_setup)
    library = Library(NS, "FRAGMENT")
    library.define("square_plus(Tensor x) -> Tensor")
    library.impl("square_plus", lambda x: aten.add.Tensor(aten.mul.Tensor(x, x), x), "CompositeImplicitAutograd")
    square_plus = getattr(ops, NS).square_plus.default

    # 1. a logging mode --------------------------------------------------------------------------
    class Logging(TorchDispatchMode):
        def __init__(self) -> None:
            self.log: list[list[Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(op_name(func) + [len(args), sorted(kwargs or {})])
            return func(*args, **(kwargs or {}))

    x = P.tensor([1.0, 2.0], requires_grad=True)
    gradient = P.tensor([1.0, 1.0])
    with Logging() as logging_mode:
        y = square_plus(x)
        z = aten.neg.default(aten.log.default(scale(y, 0.5)))
        zeros = aten.zeros.default([2])
        aten.add.Tensor(z, zeros).backward(gradient)
    logging = {"calls": logging_mode.log, "grad": np.round(x.grad.numpy(), 5).tolist()}

    # 2. a fake-tensor mode ----------------------------------------------------------------------
    class FakeTensors(TorchDispatchMode):
        def __init__(self) -> None:
            self.log: list[list[Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            def fake(a):
                return P.meta_tensor(a.shape, a.dtype) if isinstance(a, P.Tensor) else a

            out = func(*[fake(a) for a in args], **{k: fake(v) for k, v in (kwargs or {}).items()})
            self.log.append(op_name(func) + [list(out.shape), out.dtype.name, out.device])
            return out

    a = P.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = P.tensor([0.5, 0.25, 2.0])
    for t in (a, b):
        t._data = None  # the data is gone: a kernel that reads it fails
    with FakeTensors() as fake_mode:
        s = aten.sum.dim_IntList(aten.exp.default(aten.mul.Tensor(a, b)), [1])
        out = aten.add.Tensor(scale(s, 2.0), s)
    fake = {"calls": fake_mode.log, "result": [list(out.shape), out.dtype.name, out.device]}

    # 3. a wrapper subclass ----------------------------------------------------------------------
    wrapper_log: list[list[Any]] = []

    class Wrapper(TensorBase):
        """A tensor holding another: every operator unwraps, runs, and rewraps."""

        def __init__(self, elem: P.Tensor) -> None:
            super().__init__(elem.key_set)
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            wrapper_log.append(["wrapper"] + op_name(func) + [[t.__name__ for t in types]])

            def unwrap(v):
                if isinstance(v, (list, tuple)):
                    return type(v)(unwrap(e) for e in v)
                return v.elem if isinstance(v, Wrapper) else v

            out = func(*unwrap(args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})
            return Wrapper(out) if isinstance(out, P.Tensor) else out

    u, v = Wrapper(P.tensor([1.0, 2.0])), Wrapper(P.tensor([3.0, 4.0]))
    w = aten.sum.default(aten.add.Tensor(aten.mul.Tensor(u, v), u))
    wrapper = {"calls": list(wrapper_log), "result": [type(w).__name__, w.elem.item()]}

    # 4. a subclass and a mode together --------------------------------------------------------
    wrapper_log.clear()

    class Tagging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            wrapper_log.append(["mode"] + op_name(func) + [[t.__name__ for t in types]])
            return func(*args, **(kwargs or {}))

    with Tagging():
        w = aten.neg.default(aten.mul.Tensor(u, v))
    together = {"calls": list(wrapper_log), "result": [type(w).__name__, w.elem.tolist()]}
    library.close()
    return {"logging_mode": logging, "fake_tensor_mode": fake, "wrapper_subclass": wrapper,
            "subclass_and_mode": together}


# The examples define custom operators in the package's registry: run them once.
_RESULTS: dict[str, Any] = {}


def results() -> dict[str, Any]:
    if not _RESULTS:
        _RESULTS.update(run_examples())
    return _RESULTS


def check(example: str, ours: dict[str, Any]) -> None:
    expected = GOLDEN[example]
    if example == "logging_mode":
        # The end of backward: see the module's docstring.
        assert ours["calls"][-1][:3] == ["aten", "clone", "default"]
        assert expected["calls"][-1][:3] == ["aten", "detach", "default"]
        assert ours["calls"][:-1] == expected["calls"][:-1]
        assert ours["grad"] == expected["grad"]
        return
    assert ours == expected


@pytest.mark.parametrize("example", ["logging_mode", "fake_tensor_mode", "wrapper_subclass", "subclass_and_mode"])
def test_example_matches_torch(example):
    check(example, results()[example])


@pytest.mark.skipif(compiled_engine() is None, reason="the compiled engine is not built: one engine only")
def test_examples_on_the_other_engine(tmp_path):
    env = dict(os.environ)
    # The default engine ran above; the subprocess runs the other one.
    if HAS_EXTENSION:
        env["DISPATCHER_NO_EXTENSIONS"] = "1"
    else:
        env.pop("DISPATCHER_NO_EXTENSIONS", None)
    # The same dispatcher package as this process's, and this test module.
    package_root = str(pathlib.Path(dispatcher.__file__).resolve().parent.parent)
    code = (f"import sys; sys.path.insert(0, {package_root!r}); sys.path.append({str(ROOT)!r}); "
            "import json, dispatcher; from tests.test_python_key_examples import run_examples; "
            "print(json.dumps([dispatcher.HAS_EXTENSION, run_examples()]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    has_extension, examples = json.loads(out.stdout.splitlines()[-1])
    assert has_extension is not HAS_EXTENSION
    for example, ours in examples.items():
        check(example, ours)
