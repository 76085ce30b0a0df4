"""``__torch_dispatch__`` programs in the style of the public subclass examples, written once for either library.

Each example takes a ``Lib`` -- torch's names (built by
generate_subclass_examples_golden.py) or dispatcher.prototype's (built by
tests/test_subclass_examples.py) -- and returns what it printed
(``output``) and the operators its handlers saw, in order, forward and
backward (``events``).  subclass_examples_golden.json holds torch 2.13's.
The programs are this project's own, written in the style of
albanD/subclass_zoo (see docs/subclass_zoo.md for which of those were
ported and which not):

* logging_mode: a dispatch mode that logs every call and its result's shape and dtype;
* saved_results_mode: formulas that save their result (exp, reciprocal, relu), which
  torch saves and unpacks as detached aliases;
* logging_tensor: a wrapper subclass that logs and forwards to its inner tensor;
  autograd treats the wrapper as the leaf;
* negative_tensor: a lazily negated wrapper that cancels a ``neg`` and
  materializes for anything else;
* tracer_tensor: a wrapper that names every value (in a weak table) and
  records the program, backward included, as lines of a graph;
* nan_verifier_mode: a mode that checks every floating result for NaN;
* memory_tracking_mode: a mode that counts the bytes of new results, once each, with a weak table;
* subclass_with_super: a ``_make_subclass`` subclass whose handler logs and
  calls ``super().__torch_dispatch__``, differentiated with ``autograd.grad``;
* no_dispatch_wrapper: a handler that runs ``func`` on the subclass itself
  under ``no_dispatch()`` and corrects the aliasing of views and in-place
  results with ``return_and_correct_aliasing``;
* scalar_arguments_mode: numbers where operators take tensors (``x * 2``,
  ``2.0 / z``, ``1 - x``), which handlers get as Python numbers;
* double_backward_mode: ``autograd.grad(..., create_graph=True)`` and
  ``backward(create_graph=True)``, then backward through the gradient;
* functorch_grad: functorch's grad transform from level-tagged
  ``_make_subclass`` wrappers and ``create_graph=True``, nested (grad of grad);
* grad_fn_names: the ``grad_fn.name()`` of every differentiable operator
  the prototype has, numbered as torch numbers them (no handler: no events).

The events are the calls as the handlers got them: operator, arguments
(tensors by type, shape, dtype and device; numbers with their type) and
keyword arguments.
"""
import gc
from typing import Any, Callable, NamedTuple


class Lib(NamedTuple):
    Tensor: type
    tensor: Callable[..., Any]
    aten: Any
    tree_map: Callable[..., Any]
    TorchDispatchMode: type
    no_dispatch: Callable[[], Any]
    return_and_correct_aliasing: Callable[..., Any]
    WeakIdKeyDictionary: type
    grad: Callable[..., Any]  # torch.autograd.grad
    disabled_torch_function_impl: Any
    enable_reentrant_dispatch: Callable[[], Any]
    float64: Any


def values(t: Any) -> Any:
    """A tensor's values, rounded: the same text for either library."""
    return _rounded(t.tolist())


def _rounded(v: Any) -> Any:
    return [_rounded(x) for x in v] if isinstance(v, list) else round(v, 4)


def describe(t: Any) -> str:
    return f"{list(t.shape)} {t.dtype}" if hasattr(t, "shape") else repr(t)


def argument(value: Any) -> str:
    """One argument a handler got, as the same text for either library: a
    tensor by its type, shape, dtype and device; a number with its type."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{type(value).__name__}{list(value.shape)}:{value.dtype}:{value.device.type}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(argument(v) for v in value) + "]"
    if type(value) in (bool, int, float):  # a Python number, exactly
        return f"{type(value).__name__} {value!r}"
    return repr(value)


def call(func: Any, args: Any, kwargs: Any) -> str:
    """A handler's call as it got it: the operator, its arguments and keyword arguments."""
    arguments = [argument(a) for a in args] + [f"{k}={argument(v)}" for k, v in sorted((kwargs or {}).items())]
    return f"{func}({', '.join(arguments)})"


def logging_mode(lib: Lib) -> dict:
    events: list[str] = []

    class LoggingMode(lib.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            events.append(f"{call(func, args, kwargs)} -> {describe(out)}")
            return out

    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    w = lib.tensor([1.5, -1.0, 0.25], requires_grad=True)
    with LoggingMode():
        y = (x * w).sin()
        loss = (y * y.cos()).sum()
        loss.backward()
    output = [f"loss {values(loss)}", f"x.grad {values(x.grad)}", f"w.grad {values(w.grad)}",
              f"grad_fn {loss.grad_fn.name()}", f"device {x.device.type} {x.device!r} dtype {x.dtype}"]
    return {"output": output, "events": events}


def saved_results_mode(lib: Lib) -> dict:
    """Formulas that save their result: torch saves and unpacks it detached, and a mode sees both."""
    events: list[str] = []

    class NameLogger(lib.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            events.append(call(func, args, kwargs))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([1.0, -2.0, 4.0], requires_grad=True)
    with NameLogger():
        loss = (x.exp() * x.reciprocal() + x.relu()).sum()
        loss.backward()
    return {"output": [f"loss {values(loss)}", f"x.grad {values(x.grad)}"], "events": events}


def logging_tensor(lib: Lib) -> dict:
    events: list[str] = []

    class LoggingTensor(lib.Tensor):
        __torch_function__ = lib.disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem, requires_grad=False):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                                  device=elem.device, requires_grad=requires_grad)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, LoggingTensor) else e

            def wrap(e):
                return LoggingTensor(e) if isinstance(e, lib.Tensor) else e

            events.append(call(func, args, kwargs))
            return lib.tree_map(wrap, func(*lib.tree_map(unwrap, args), **lib.tree_map(unwrap, kwargs or {})))

    x = LoggingTensor(lib.tensor([1.0, 2.0, 3.0]), requires_grad=True)
    y = (x * x + x * 2).sum()
    y.backward()
    output = [
        f"x: {type(x).__name__} leaf={x.is_leaf} requires_grad={x.requires_grad} shape={list(x.shape)} "
        f"stride={list(x.stride())} dtype={x.dtype}",
        f"inner requires_grad={x.elem.requires_grad} inner grad={x.elem.grad}",
        f"y: {type(y).__name__} {values(y.elem)} grad_fn={y.grad_fn.name()}",
        f"x.grad: {type(x.grad).__name__} {values(x.grad.elem)}",
    ]
    return {"output": output, "events": events}


def negative_tensor(lib: Lib) -> dict:
    events: list[str] = []

    class NegativeTensor(lib.Tensor):
        """Stands for -elem without computing it: neg of it is elem itself."""

        __torch_function__ = lib.disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            if func is lib.aten.neg.default:
                events.append("neg cancelled")
                return args[0].elem
            events.append(f"materialize for {call(func, args, kwargs)}")

            def materialize(e):
                return lib.aten.neg.default(e.elem) if isinstance(e, NegativeTensor) else e

            return func(*lib.tree_map(materialize, args), **lib.tree_map(materialize, kwargs or {}))

    a = lib.tensor([1.0, -2.0, 3.0])
    n = NegativeTensor(a)
    back = -n
    total = n + lib.tensor([10.0, 10.0, 10.0])
    output = [f"-n is a: {back is a}", f"n + 10: {type(total).__name__} {values(total)}",
              f"n.sum(): {values(n.sum())}"]
    return {"output": output, "events": events}


def tracer_tensor(lib: Lib) -> dict:
    graph: list[str] = []
    names = lib.WeakIdKeyDictionary()

    class TracerTensor(lib.Tensor):
        __torch_function__ = lib.disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem, requires_grad=False):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device,
                                                  requires_grad=requires_grad)
            r.elem = elem
            names[r] = f"v{len(graph)}"
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def name(e):
                if isinstance(e, TracerTensor):
                    return names[e]
                return type(e).__name__ if isinstance(e, lib.Tensor) else repr(e)

            def unwrap(e):
                return e.elem if isinstance(e, TracerTensor) else e

            out = func(*lib.tree_map(unwrap, args), **lib.tree_map(unwrap, kwargs or {}))
            out = lib.tree_map(lambda e: TracerTensor(e) if isinstance(e, lib.Tensor) else e, out)
            arguments = ", ".join(name(a) for a in args)
            results = ", ".join(name(o) for o in (out if isinstance(out, (tuple, list)) else [out]))
            graph.append(f"{results} = {func}({arguments})")
            return out

    graph.append("v0 = input")
    x = TracerTensor(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    y = x.sin().sum(1)
    z = (y * y).mean()
    z.backward()
    del y
    gc.collect()
    output = [f"z = {values(z.elem)}", f"x.grad = {values(x.grad.elem)}", f"named values alive: {len(names) > 0}"]
    return {"output": output, "events": graph}


def nan_verifier_mode(lib: Lib) -> dict:
    events: list[str] = []

    class NanVerifier(lib.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            events.append(call(func, args, kwargs))
            if isinstance(out, lib.Tensor) and out.dtype.is_floating_point and out.ne(out).any().item():
                raise RuntimeError(f"{func} produced NaN")
            return out

    x = lib.tensor([4.0, 1.0, 0.25])
    with NanVerifier():
        y = x.log().cos()
        try:
            (y - 2.0).log()
        except RuntimeError as exc:
            caught = str(exc)
    return {"output": [f"y {values(y)}", f"caught: {caught}"], "events": events}


def memory_tracking_mode(lib: Lib) -> dict:
    events: list[str] = []

    class MemoryTracker(lib.TorchDispatchMode):
        """Counts the bytes of every new result, each tensor once (a weak table
        remembers which were counted without keeping them alive)."""

        def __init__(self):
            super().__init__()
            self.counted = lib.WeakIdKeyDictionary()
            self.total = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, lib.Tensor) and out not in self.counted:
                self.counted[out] = size = out.numel() * out.element_size()
                self.total += size
                events.append(f"{call(func, args, kwargs)} +{size}")
            else:
                events.append(f"{call(func, args, kwargs)} (no new tensor)")
            return out

    tracker = MemoryTracker()
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with tracker:
        h = x.sin() * x.cos()
        loss = h.sum()
        loss.backward()
        x.grad.add_(lib.tensor([1.0, 1.0, 1.0, 1.0]))
    output = [f"allocated {tracker.total} bytes", f"loss still counted: {loss in tracker.counted}",
              f"x.grad {values(x.grad)}"]
    return {"output": output, "events": events}


def subclass_with_super(lib: Lib) -> dict:
    events: list[str] = []

    class Traced(lib.Tensor):
        @staticmethod
        def __new__(cls, data, requires_grad=False):
            return lib.Tensor._make_subclass(cls, data, requires_grad)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            events.append(f"{call(func, args, kwargs)} {[t.__name__ for t in types]}")
            return super().__torch_dispatch__(func, types, args, kwargs)

    data = lib.tensor([1.0, 2.0, 3.0])
    x = Traced(data, requires_grad=True)
    y = (x * x).sum()
    (g,) = lib.grad(y, [x])
    data.add_(lib.tensor([1.0, 1.0, 1.0]))  # x shares data's memory
    output = [f"x {type(x).__name__} leaf={x.is_leaf} requires_grad={x.requires_grad}",
              f"y {type(y).__name__} {values(y)}", f"grad {type(g).__name__} {values(g)} x.grad={x.grad}",
              f"x after data.add_ {values(x.detach())} version={x._version}"]
    return {"output": output, "events": events}


def no_dispatch_wrapper(lib: Lib) -> dict:
    events: list[str] = []

    class Alias(lib.Tensor):
        """A subclass whose data is its own: the handler runs kernels on it directly."""

        __torch_function__ = lib.disabled_torch_function_impl

        @staticmethod
        def __new__(cls, data):
            return lib.Tensor._make_subclass(cls, data)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            events.append(call(func, args, kwargs))
            with lib.no_dispatch():
                out = func(*args, **(kwargs or {}))
            out = lib.tree_map(lambda e: Alias(e) if type(e) is lib.Tensor else e, out)
            return lib.return_and_correct_aliasing(func, args, kwargs, out)

    data = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = Alias(data)
    v = a.view(4)
    b = a.add_(lib.tensor([[1.0, 1.0], [1.0, 1.0]]))
    t = a.t()
    # tolist() refuses subclasses: the values are read through data, whose memory a shares.
    output = [f"view: {type(v).__name__} {list(v.shape)} base is a: {v._base is a}",
              f"add_ returns a: {b is a}, data now {values(data)}",
              f"t: {type(t).__name__} {list(t.shape)} base is a: {t._base is a}",
              f"versions: a {a._version} v {v._version} data {data._version}"]
    return {"output": output, "events": events}


def scalar_arguments_mode(lib: Lib) -> dict:
    """Numbers where an operator takes a tensor (x * 2 is mul.Tensor): a handler
    gets the Python number, in forward and in the backward formulas using it."""
    events: list[str] = []

    class ArgumentLogger(lib.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            events.append(call(func, args, kwargs))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with ArgumentLogger():
        y = x * 2 + 1
        z = (y / 4 - 3.5).sub(x, alpha=2) * True
        w = 2.0 / z + (1 - x)
        loss = w.mean()
        loss.backward()
    output = [f"loss {values(loss)}", f"x.grad {values(x.grad)}",
              f"grad_fns {z.grad_fn.name()} {w.grad_fn.name()} {loss.grad_fn.name()}"]
    return {"output": output, "events": events}


def double_backward_mode(lib: Lib) -> dict:
    """A gradient taken with create_graph=True is differentiable again."""
    events: list[str] = []

    class NameLogger(lib.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            events.append(call(func, args, kwargs))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with NameLogger():
        y = (x.sin() * x * x).sum()
        (g,) = lib.grad(y, [x], create_graph=True)
        events.append("-- second backward")
        g.sum().backward()
    # backward(create_graph=True) through a formula that saves its result (exp).
    v = lib.tensor([0.5, -1.0], requires_grad=True)
    with NameLogger():
        events.append("-- backward(create_graph=True)")
        (v.exp() * v).sum().backward(create_graph=True)
        first = f"v.grad {values(v.grad)} grad_fn={v.grad.grad_fn.name()}"
        events.append("-- backward of v.grad")
        v.grad.sum().backward()
    output = [f"y {values(y)}", f"g {values(g)} requires_grad={g.requires_grad} grad_fn={g.grad_fn.name()}",
              f"x.grad {values(x.grad)}", first, f"v.grad after {values(v.grad)}"]
    return {"output": output, "events": events}


def functorch_grad(lib: Lib) -> dict:
    """functorch's grad transform as subclass_zoo's functorch_test.py writes it:
    each level wraps its input in a ``_make_subclass`` tensor tagged with the
    level, differentiates with ``autograd.grad(create_graph=True)`` and
    unwraps; a handler unwraps only the innermost level, so grad of grad nests."""
    events: list[str] = []
    depth = [0]

    class LevelTensor(lib.Tensor):
        __torch_function__ = lib.disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem, level):
            with lib.no_dispatch():  # so that _make_subclass's detach does not reach a handler
                return cls._make_subclass(cls, elem)

        def __init__(self, elem, level):
            self.elem = elem
            self.level = level

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            level = max((t.level for t in list(args) + list(kwargs.values()) if isinstance(t, cls)), default=-1)

            def unwrap(t):
                return t.elem if isinstance(t, cls) and t.level == level else t

            def wrap(t):
                return cls(t, level) if isinstance(t, lib.Tensor) and not (isinstance(t, cls) and t.level == level) else t

            events.append(f"level {level}: {call(func, args, kwargs)}")
            with lib.enable_reentrant_dispatch():
                return lib.tree_map(wrap, func(*lib.tree_map(unwrap, args), **lib.tree_map(unwrap, kwargs)))

    def grad(fn):
        def transformed(x):
            depth[0] += 1
            level = depth[0]
            try:
                wrapped = LevelTensor(x, level)
                wrapped.requires_grad_()
                (g,) = lib.grad(fn(wrapped), wrapped, create_graph=True, allow_unused=True)
                return g.elem if isinstance(g, LevelTensor) and g.level == level else g
            finally:
                depth[0] -= 1

        return transformed

    x = lib.tensor(0.5)
    first = grad(lambda t: t.sin())(x)
    events.append("-- grad of grad")
    second = grad(grad(lambda t: t * t * t))(x)
    output = [f"grad(sin)(0.5) = {values(first)} {type(first).__name__} (cos: {values(x.cos())})",
              f"grad(grad(x^3))(0.5) = {values(second)} {type(second).__name__}"]
    return {"output": output, "events": events}


def grad_fn_names(lib: Lib) -> dict:
    """The node each differentiable operator records, by its name() (torch
    numbers a name's overloads: MulBackward0 for mul.Tensor, MulBackward1 for mul.Scalar)."""
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    v = lib.tensor([1.0, -1.0, 0.5], requires_grad=True)
    aten = lib.aten
    made = {
        "x + v": x + v, "x - v": x - v, "1 - x": 1 - x, "x * v": x * v, "x / v": x / v, "2 / x": 2 / x,
        "mul.Scalar": aten.mul.Scalar(x, 2), "div.Scalar": aten.div.Scalar(x, 2), "-x": -x, "exp": x.exp(),
        "log": x.log(), "reciprocal": x.reciprocal(), "relu": x.relu(), "sin": x.sin(), "cos": x.cos(),
        "sum": x.sum(), "sum(1)": x.sum(1), "mean": x.mean(), "x @ v": x @ v, "v @ v": v @ v,
        "x @ x.t()": x @ x.t(), "permute": x.permute(1, 0), "transpose": x.transpose(0, 1), "view": x.view(6),
        "reshape": x.reshape(3, 2), "expand": v.expand(2, 3), "select": x.select(0, 0), "unsqueeze": aten.unsqueeze.default(v, 0),
        "squeeze": aten.squeeze.dim(aten.unsqueeze.default(v, 0), 0), "clone": x.clone(), "to(float64)": x.to(lib.float64),
        "copy_": lib.tensor([0.0, 0.0, 0.0]).copy_(v), "add_": (v * 1).add_(v),
    }
    return {"output": [f"{name}: {t.grad_fn.name()}" for name, t in made.items()], "events": []}


EXAMPLES: dict[str, Callable[[Lib], dict]] = {
    "logging_mode": logging_mode,
    "saved_results_mode": saved_results_mode,
    "logging_tensor": logging_tensor,
    "negative_tensor": negative_tensor,
    "tracer_tensor": tracer_tensor,
    "nan_verifier_mode": nan_verifier_mode,
    "memory_tracking_mode": memory_tracking_mode,
    "subclass_with_super": subclass_with_super,
    "no_dispatch_wrapper": no_dispatch_wrapper,
    "scalar_arguments_mode": scalar_arguments_mode,
    "double_backward_mode": double_backward_mode,
    "functorch_grad": functorch_grad,
    "grad_fn_names": grad_fn_names,
}


def run_all(lib: Lib) -> dict:
    return {name: example(lib) for name, example in EXAMPLES.items()}
