"""Regenerate python_key_golden.json: torch 2.13's Python key, for tests/test_python_key.py.

Run with a Python that has torch 2.13 (never needed by the tests):

    /tmp/torchenv/bin/python tests/golden/generate_python_key_golden.py

Records

* ``scenarios``: the events of python_key_cases.py's scenarios run on torch
  tensors, with torch.library operators and torch's TorchDispatchMode:
  which handler ran for which call, the ``types`` it got, the thread's
  include/exclude sets inside it, the mode on top of the stack, what
  ``torch._C._RestorePythonTLSSnapshot`` restores, and the errors;
* ``examples``: the four worked examples of tests/test_python_key_examples.py
  (a logging mode, a fake-tensor mode, a wrapper subclass, a subclass and a
  mode together), written here for torch tensors: the same aten operators
  and custom operators.
"""
import json
import pathlib
import sys

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

HERE = pathlib.Path(__file__).parent
OUT = HERE / "python_key_golden.json"
sys.path.insert(0, str(HERE))

from python_key_cases import Api, scenarios  # noqa: E402

C = torch._C


def make_subclass(cls, elem):
    t = torch.Tensor._make_subclass(cls, elem)
    t.elem = elem.clone()
    return t


def keyset(names):
    out = C.DispatchKeySet(getattr(C.DispatchKey, names[0]))
    for name in names[1:]:
        out = out | C.DispatchKeySet(getattr(C.DispatchKey, name))
    return out


def torch_api() -> Api:
    return Api(
        library=torch.library.Library,
        ops=torch.ops,
        tensor=lambda: torch.ones(2),
        TensorBase=torch.Tensor,
        make_subclass=make_subclass,
        TorchDispatchMode=TorchDispatchMode,
        current_mode=_get_current_dispatch_mode,
        include_set=lambda: repr(C._dispatch_tls_local_include_set()),
        exclude_set=lambda: repr(C._dispatch_tls_local_exclude_set()),
        exclude_guard=lambda names: C._ExcludeDispatchKeyGuard(keyset(names)),
        include_guard=lambda name: C._IncludeDispatchKeyGuard(getattr(C.DispatchKey, name)),
        restore_snapshot=C._RestorePythonTLSSnapshot,
        after_autograd=C._after_autograd_keyset,
    )


# -- the four worked examples (tests/test_python_key_examples.py writes them for the prototype) --
NS = "pkx"


def op_name(func):
    return [func.namespace, func._opname, func._overloadname]


def record_examples() -> dict:
    from torch.library import custom_op

    aten = torch.ops.aten

    @custom_op(f"{NS}::scale", mutates_args=())
    def scale(x: torch.Tensor, s: float) -> torch.Tensor:
        return torch.from_numpy(x.numpy() * np.float32(s))

    @scale.register_fake
    def _(x, s):
        return torch.empty_like(x)

    def scale_setup(ctx, inputs, output):
        ctx.s = inputs[1]

    scale.register_autograd(lambda ctx, grad: (scale(grad, ctx.s), None), setup_context=scale_setup)
    library = torch.library.Library(NS, "FRAGMENT")
    library.define("square_plus(Tensor x) -> Tensor")
    library.impl("square_plus", lambda x: aten.add.Tensor(aten.mul.Tensor(x, x), x), "CompositeImplicitAutograd")
    square_plus = getattr(torch.ops, NS).square_plus.default

    # 1. a logging mode
    class Logging(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(op_name(func) + [len(args), sorted(kwargs or {})])
            return func(*args, **(kwargs or {}))

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    gradient = torch.tensor([1.0, 1.0])
    with Logging() as logging_mode:
        y = square_plus(x)
        z = aten.neg.default(aten.log.default(scale(y, 0.5)))
        zeros = aten.zeros.default([2])
        aten.add.Tensor(z, zeros).backward(gradient)
    logging = {"calls": logging_mode.log, "grad": np.round(x.grad.numpy(), 5).tolist()}

    # 2. a fake-tensor mode
    class FakeTensors(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            def fake(a):
                return torch.empty_like(a, device="meta") if isinstance(a, torch.Tensor) else a

            out = func(*[fake(a) for a in args], **{k: fake(v) for k, v in (kwargs or {}).items()})
            self.log.append(op_name(func) + [list(out.shape), str(out.dtype).removeprefix("torch."),
                                             out.device.type])
            return out

    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = torch.tensor([0.5, 0.25, 2.0])
    with FakeTensors() as fake_mode:
        s = aten.sum.dim_IntList(aten.exp.default(aten.mul.Tensor(a, b)), [1])
        out = aten.add.Tensor(scale(s, 2.0), s)
    fake = {"calls": fake_mode.log,
            "result": [list(out.shape), str(out.dtype).removeprefix("torch."), out.device.type]}

    # 3. a wrapper subclass
    wrapper_log = []

    class Wrapper(torch.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            wrapper_log.append(["wrapper"] + op_name(func) + [[t.__name__ for t in types]])

            def unwrap(v):
                if isinstance(v, (list, tuple)):
                    return type(v)(unwrap(e) for e in v)
                return v.elem if isinstance(v, Wrapper) else v

            out = func(*unwrap(args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})
            return Wrapper(out) if isinstance(out, torch.Tensor) else out

    u, v = Wrapper(torch.tensor([1.0, 2.0])), Wrapper(torch.tensor([3.0, 4.0]))
    w = aten.sum.default(aten.add.Tensor(aten.mul.Tensor(u, v), u))
    wrapper = {"calls": list(wrapper_log), "result": [type(w).__name__, w.elem.item()]}

    # 4. a subclass and a mode together
    wrapper_log.clear()

    class Tagging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            wrapper_log.append(["mode"] + op_name(func) + [[t.__name__ for t in types]])
            return func(*args, **(kwargs or {}))

    with Tagging():
        w = aten.neg.default(aten.mul.Tensor(u, v))
    together = {"calls": list(wrapper_log), "result": [type(w).__name__, w.elem.tolist()]}
    return {"logging_mode": logging, "fake_tensor_mode": fake, "wrapper_subclass": wrapper,
            "subclass_and_mode": together}


def main() -> None:
    golden = {
        "meta": {"torch": torch.__version__},
        "scenarios": scenarios(torch_api(), "pk"),
        "examples": record_examples(),
    }
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
