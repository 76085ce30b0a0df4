"""The four worked examples of the Python key whose results tests/golden/python_key_golden.json records.

Written once, for either library: ``examples`` takes a ``Lib`` (torch's,
built by generate_python_key_golden.py, or dispatcher.prototype's, built by
tests/test_python_key_examples.py) and returns what each example's handlers
saw:

1. a logging mode: the operators and overloads a small program calls,
   those its composite operator calls and those backward calls;
2. a fake-tensor mode: every call runs on meta tensors (Meta kernels, and
   custom operators' register_fake), the data is never read;
3. a wrapper subclass that unwraps, calls ``func`` and rewraps;
4. that subclass and a mode together: the mode first, then the subclass.

The operators are aten's and two custom operators defined here, in
namespace ``NS``.  No imports of either library here: ``TensorAnnotation``
is an annotation that ``custom_op`` reads, so this module keeps annotations
evaluated (no ``from __future__ import annotations``).
"""
from typing import Any, Callable, NamedTuple

import numpy as np

NS = "pkx"


class Lib(NamedTuple):
    """One tensor library's pieces, as the examples use them."""

    custom_op: Callable[..., Any]  # torch.library.custom_op
    library: Callable[[str, str], Any]  # Library(ns, kind)
    ops: Any  # torch.ops, or dispatcher.ops
    TorchDispatchMode: type
    TensorAnnotation: Any  # what custom_op reads as "Tensor" in a signature
    Tensor: type  # the tensors' type: what a handler fakes or rewraps
    tensor: Callable[..., Any]  # tensor(data, requires_grad=False)
    from_numpy: Callable[[np.ndarray], Any]
    empty_like: Callable[[Any], Any]  # a tensor of the same shape, dtype and device (register_fake's result)
    meta_like: Callable[[Any], Any]  # a meta tensor of the same shape and dtype
    dtype_name: Callable[[Any], str]  # "float32"
    device_name: Callable[[Any], str]  # "cpu", "meta"
    forget_data: Callable[[Any], None]  # make a tensor's data unreadable, where the library can
    WrapperBase: type  # a tensor type whose instances are made as WrapperBase(elem) and hold it as .elem


def op_name(func: Any) -> list[str]:
    return [func.namespace, func._opname, func._overloadname]


def examples(lib: Lib) -> dict:
    """The four examples' results, by name."""
    aten = lib.ops.aten

    # -- the operators: two custom operators, one composite ------------------------------
    @lib.custom_op(f"{NS}::scale", mutates_args=())
    def scale(x: lib.TensorAnnotation, s: float) -> lib.TensorAnnotation:  # type: ignore[name-defined]
        return lib.from_numpy(x.numpy() * np.float32(s))

    @scale.register_fake
    def _(x, s):
        return lib.empty_like(x)

    def scale_setup(ctx, inputs, output):
        ctx.s = inputs[1]

    scale.register_autograd(lambda ctx, grad: (scale(grad, ctx.s), None), setup_context=scale_setup)
    library = lib.library(NS, "FRAGMENT")
    library.define("square_plus(Tensor x) -> Tensor")
    library.impl("square_plus", lambda x: aten.add.Tensor(aten.mul.Tensor(x, x), x), "CompositeImplicitAutograd")
    square_plus = getattr(lib.ops, NS).square_plus.default

    # 1. a logging mode --------------------------------------------------------------------------
    class Logging(lib.TorchDispatchMode):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.log: list[list[Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(op_name(func) + [len(args), sorted(kwargs or {})])
            return func(*args, **(kwargs or {}))

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    gradient = lib.tensor([1.0, 1.0])
    with Logging() as logging_mode:
        y = square_plus(x)
        z = aten.neg.default(aten.log.default(scale(y, 0.5)))
        zeros = aten.zeros.default([2])
        aten.add.Tensor(z, zeros).backward(gradient)
    logging = {"calls": logging_mode.log, "grad": np.round(x.grad.numpy(), 5).tolist()}

    # 2. a fake-tensor mode ----------------------------------------------------------------------
    class FakeTensors(lib.TorchDispatchMode):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.log: list[list[Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            def fake(a):
                return lib.meta_like(a) if isinstance(a, lib.Tensor) else a

            out = func(*[fake(a) for a in args], **{k: fake(v) for k, v in (kwargs or {}).items()})
            self.log.append(op_name(func) + [list(out.shape), lib.dtype_name(out), lib.device_name(out)])
            return out

    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = lib.tensor([0.5, 0.25, 2.0])
    for t in (a, b):
        lib.forget_data(t)  # a kernel that reads the data fails
    with FakeTensors() as fake_mode:
        s = aten.sum.dim_IntList(aten.exp.default(aten.mul.Tensor(a, b)), [1])
        out = aten.add.Tensor(scale(s, 2.0), s)
    fake = {"calls": fake_mode.log, "result": [list(out.shape), lib.dtype_name(out), lib.device_name(out)]}

    # 3. a wrapper subclass ----------------------------------------------------------------------
    wrapper_log: list[list[Any]] = []

    class Wrapper(lib.WrapperBase):  # type: ignore[name-defined]
        """A tensor holding another: every operator unwraps, runs, and rewraps."""

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            wrapper_log.append(["wrapper"] + op_name(func) + [[t.__name__ for t in types]])

            def unwrap(v):
                if isinstance(v, (list, tuple)):
                    return type(v)(unwrap(e) for e in v)
                return v.elem if isinstance(v, Wrapper) else v

            out = func(*unwrap(args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})
            return Wrapper(out) if isinstance(out, lib.Tensor) else out

    u, v = Wrapper(lib.tensor([1.0, 2.0])), Wrapper(lib.tensor([3.0, 4.0]))
    w = aten.sum.default(aten.add.Tensor(aten.mul.Tensor(u, v), u))
    wrapper = {"calls": list(wrapper_log), "result": [type(w).__name__, w.elem.item()]}

    # 4. a subclass and a mode together --------------------------------------------------------
    wrapper_log.clear()

    class Tagging(lib.TorchDispatchMode):  # type: ignore[name-defined]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            wrapper_log.append(["mode"] + op_name(func) + [[t.__name__ for t in types]])
            return func(*args, **(kwargs or {}))

    with Tagging():
        w = aten.neg.default(aten.mul.Tensor(u, v))
    together = {"calls": list(wrapper_log), "result": [type(w).__name__, w.elem.tolist()]}
    library._destroy()
    return {"logging_mode": logging, "fake_tensor_mode": fake, "wrapper_subclass": wrapper,
            "subclass_and_mode": together}
