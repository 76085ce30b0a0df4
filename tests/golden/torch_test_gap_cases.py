"""What torch_test_gaps_golden.json records: the features PyTorch's
test/test_custom_ops.py needed (schema texts, parse_schema,
``_defined_in_python``, register_autograd with defaults, opcheck's texts,
``numpy(force=True)``, indexing and the operators it and the test file run,
the source of a fake implementation).

Written once for either library: ``run(torch, fake_source)`` takes a
``torch`` module -- torch 2.13 itself (generate_torch_test_gaps_golden.py),
or tests/torch_shim.py's over this package (tests/test_torch_test_gaps.py) --
and ``fake_source(qualname)``, that library's answer to where an operator's
fake implementation was registered.  No imports of either library here.
"""
from __future__ import annotations

import itertools
import os
from typing import Any, Callable

NS = "_gap_cases"

DEFINE_ERRORS = ("foo12(Tensor a) -> asdfasdf", "foo12(asdf a) -> Tensor", "foo12(int64_t a) -> Tensor",
                 "foo12(double a) -> Tensor", "foo12(Tensor a, double b) -> Tensor")
PARSED = ("foo(Tensor[]? x) -> ()", "foo(Tensor?[]? x) -> ()", "foo(t x, t[] y) -> t",
          "ns::bar.over(Tensor(a!) x, *, int y=2) -> Tensor(a!)")
INF = 2**63 - 1
# (label, index): torch's answers for a tensor of shape (3, 4).
INDICES = (
    (":", slice(None)), ("1:3", slice(1, 3)), ("::2", slice(None, None, 2)), ("5:1", slice(5, 1)), ("-2:", slice(-2, None)),
    ("None", None), ("...", Ellipsis), ("-1", -1), ("(0, 1)", (0, 1)), ("(:, 1)", (slice(None), 1)),
    ("(..., None)", (Ellipsis, None)), ("(1, 1:)", (1, slice(1, None))), ("(:, :)", (slice(None), slice(None))),
    ("(None, 0)", (None, 0)), ("(..., ::3)", (Ellipsis, slice(None, None, 3))), ("(0:3, 0:4)", (slice(0, 3), slice(0, 4))),
    ("(..., 0, ...)", (Ellipsis, 0, Ellipsis)), ("(..., ...)", (Ellipsis, Ellipsis)), ("()", ()), ("(0,)", (0,)),
    ("(None, ..., None, -1)", (None, Ellipsis, None, -1)),
)
# (label, index): what torch raises for them on a tensor of shape (2, 3).
BAD_INDICES = (
    ("::-1", slice(None, None, -1)), ("::0", slice(None, None, 0)), ("(0, 0, 0)", (0, 0, 0)), ("5", 5),
    ("-3", -3), ("(:, 7)", (slice(None), 7)), ("(None, 0, -4)", (None, 0, -4)), ("(..., 3)", (Ellipsis, 3)),
)


def _message(exc: BaseException) -> str:
    """An error's message without torch's marking of the spot (its first part)."""
    return str(exc).strip().split(":\n")[0]


def _error(fn: Callable[[], Any]) -> dict[str, str]:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  (what is recorded is which exception)
        return _described(exc)
    return {"error": "none", "message": ""}


def _described(exc: BaseException) -> dict[str, Any]:
    """An exception's class (and the classes it is, so that one library's may be a
    subclass of the other's) and message."""
    return {"error": type(exc).__name__, "is": [c.__name__ for c in type(exc).__mro__], "message": _message(exc)}


def define_errors(torch: Any) -> dict[str, Any]:
    found = {}
    for schema in DEFINE_ERRORS:
        with torch.library._scoped_library(NS, "FRAGMENT") as lib:
            found[schema] = _error(lambda: lib.define(schema))
    return found


def parsed(torch: Any) -> dict[str, Any]:
    return {text: str(torch._C.parse_schema(text)) for text in PARSED}


def defined_in_python(torch: Any) -> dict[str, Any]:
    found = {"aten.sin.default": torch.ops.aten.sin.default._defined_in_python,
             "aten.sum.dim_IntList": torch.ops.aten.sum.dim_IntList._defined_in_python}
    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        torch.library.define(f"{NS}::foo", "(Tensor x) -> Tensor", lib=lib)
        lib.define("bar.overload(Tensor x) -> Tensor")
        ns = getattr(torch.ops, NS)
        found["foo.default"] = ns.foo.default._defined_in_python
        found["bar.overload"] = ns.bar.overload._defined_in_python
    return found


def autograd_defaults(torch: Any) -> dict[str, Any]:
    """register_autograd on an operator with defaults, positional and keyword-only."""
    seen: dict[str, Any] = {}
    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("foo(Tensor w, int x = 2, *, int y = 3, int z) -> Tensor")
        lib.impl("foo", lambda w, x=2, *, y=3, z: w * x * y * z, "CPU")

        def setup_context(ctx: Any, inputs: Any, keyword_only_inputs: Any, output: Any) -> None:
            seen.setdefault("inputs", []).append([v if isinstance(v, int) else "Tensor" for v in inputs])
            seen.setdefault("keyword_only_inputs", []).append(dict(keyword_only_inputs))
            ctx.c = keyword_only_inputs["y"] * keyword_only_inputs["z"] * inputs[1]

        torch.library.register_autograd(f"{NS}::foo", lambda ctx, grad: grad * ctx.c, setup_context=setup_context,
                                        lib=lib)
        grads = []

        def grad_of(*args: Any, **kwargs: Any) -> Any:
            w = torch.ones(3, requires_grad=True)
            try:
                getattr(torch.ops, NS).foo(w, *args, **kwargs).sum().backward()
            except RuntimeError as exc:  # a backward with too few gradients for the arguments given
                return _described(exc)
            return w.grad.tolist()

        # x given at its default is left out, as not given: one gradient (w's) is enough;
        # given another value, x needs a gradient (None) too.
        for args, kwargs in (((), {"z": 42}), ((2,), {"z": 42}), ((5,), {"y": 3, "z": 1})):
            grads.append(grad_of(*args, **kwargs))
        torch.library.register_autograd(f"{NS}::foo", lambda ctx, grad: (grad * ctx.c, None),
                                        setup_context=setup_context, lib=lib)
        for args, kwargs in (((), {"z": 1}), ((5,), {"z": 1})):
            grads.append(grad_of(*args, **kwargs))
    seen["grads"] = grads
    return seen


def _opcheck_results(torch: Any, op: Any, args: tuple) -> dict[str, Any]:
    results = torch.library.opcheck(op, args, raise_exception=False)
    return {test: result if isinstance(result, str) else _described(result) for test, result in results.items()}


def opcheck_texts(torch: Any) -> dict[str, Any]:
    def not_an_operator(x: Any) -> Any:
        return x

    found: dict[str, Any] = {"not an operator": _error(lambda: torch.library.opcheck(not_an_operator, (torch.ones(1),))),
                             "a packet of several overloads": _error(
                                 lambda: torch.library.opcheck(torch.ops.aten.sin, (torch.ones(1),)))}
    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("mutates(Tensor(a!) x) -> Tensor(a!)")
        lib.impl("mutates", lambda x: x.sin_(), "CPU")
        lib.impl("mutates", lambda x: x, "Meta")
        found["returns a written argument"] = _opcheck_results(
            torch, getattr(torch.ops, NS).mutates.default, (torch.tensor([0.0, 1.0]),))
        lib.define("nofake(Tensor x) -> Tensor")
        lib.impl("nofake", lambda x: x.clone(), "CPU")
        found["a packet of one overload"] = _opcheck_results(
            torch, getattr(torch.ops, NS).mutates, (torch.tensor([0.0, 1.0]),))
        found["no fake implementation"] = _opcheck_results(
            torch, getattr(torch.ops, NS).nofake.default, (torch.tensor([0.0, 1.0]),))
        calls = itertools.count(1)
        lib.define("counts(Tensor x) -> Tensor")
        lib.impl("counts", lambda x: x * next(calls), "CPU")  # its result depends on how often it ran
        lib.impl("counts", lambda x: x.clone(), "Meta")
        found["global state"] = _opcheck_results(torch, getattr(torch.ops, NS).counts.default, (torch.tensor([1.0, 2.0]),))
        backward_calls = itertools.count(1)
        lib.define("counts_in_backward(Tensor x) -> Tensor")
        lib.impl("counts_in_backward", lambda x: x * 2, "CPU")
        lib.impl("counts_in_backward", lambda x: x.clone(), "Meta")
        torch.library.register_autograd(f"{NS}::counts_in_backward",
                                        lambda ctx, grad: grad * next(backward_calls), lib=lib)
        found["global state in backward"] = _opcheck_results(
            torch, getattr(torch.ops, NS).counts_in_backward.default, (torch.tensor([1.0, 2.0], requires_grad=True),))
        lib.define("noisy(Tensor x) -> Tensor")
        lib.impl("noisy", lambda x: x + torch.randn(*x.shape), "CPU")  # random, and the same for a seed
        lib.impl("noisy", lambda x: x.clone(), "Meta")
        found["random"] = _opcheck_results(torch, getattr(torch.ops, NS).noisy.default, (torch.tensor([1.0, 2.0]),))

    return found


def numpy_force(torch: Any) -> list[float]:
    return torch.tensor([1.5, 2.0], requires_grad=True).numpy(force=True).tolist()


def indexing(torch: Any) -> dict[str, Any]:
    """Each index's result (shape, values, whether it is a view) and the operators it calls, in order."""
    calls: list[str] = []

    class Log(torch.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            calls.append(f"{func}{[a if not isinstance(a, torch.Tensor) else 'T' for a in args]}")
            return func(*args, **(kwargs or {}))

    found = {}
    for label, index in INDICES:
        x = torch.tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]])
        calls.clear()
        with Log():
            y = x[index]
        found[label] = {"shape": list(y.shape), "values": y.tolist(), "calls": list(calls),
                        "same_memory": y.numel() > 0 and _writes_through(torch, x, y)}
    return found


def bad_indexing(torch: Any) -> dict[str, Any]:
    found = {}
    for label, index in BAD_INDICES:
        x = torch.zeros(2, 3)
        found[label] = _error(lambda: x[index])
    found["0-d[1:]"] = _error(lambda: torch.tensor(1.0)[1:])
    found["0-d[0]"] = _error(lambda: torch.tensor(1.0)[0])
    found["0-d[0, 0]"] = _error(lambda: torch.tensor(1.0)[0, 0])
    found["0-d[None]"] = list(torch.tensor(1.0)[None].shape)
    return found


def _writes_through(torch: Any, x: Any, y: Any) -> bool:
    """Whether writing to ``y`` changes ``x`` (a view)."""
    before = x.sum().item()
    torch.ops.aten.fill_.Scalar(y, 100.0)
    return x.sum().item() != before


def operators(torch: Any) -> dict[str, Any]:
    """The operators test_custom_ops.py runs: results, dtypes, gradients."""
    found: dict[str, Any] = {}
    x = torch.tensor([0.5, 1.0])
    y = torch.ops.aten.sin_(x)
    found["sin_"] = {"values": x.tolist(), "returns_self": y is x, "version": x._version}
    w = torch.tensor([0.5, 1.0, -2.0], requires_grad=True)
    v = w * 1
    v.sin_()
    v.sum().backward()
    found["sin_ grad"] = w.grad.tolist()
    found["pow"] = {label: {"values": r.tolist(), "dtype": str(r.dtype)} for label, r in (
        ("int ** 2", torch.tensor([1, 2, 3]) ** 2), ("float ** 0.5", torch.tensor([1.0, 4.0]) ** 0.5),
        ("int ** 2.5", torch.tensor([1, 4]) ** 2.5), ("float ** 0", torch.tensor([2.0, 0.0]) ** 0))}
    p = torch.tensor([1.0, 2.0, -3.0], requires_grad=True)
    (p ** 3).sum().backward()
    found["pow grad"] = p.grad.tolist()
    found["nonzero"] = {label: {"values": r.tolist(), "dtype": str(r.dtype)} for label, r in (
        ("1-d", torch.ops.aten.nonzero.default(torch.tensor([0, 1, 2, 0, 0]))),
        ("2-d", torch.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero()),
        ("none", torch.tensor([0, 0]).nonzero()))}
    found["view_as"] = list(torch.ones(6).view_as(torch.ones(2, 3)).shape)
    s = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]], requires_grad=True)
    (s[1:, ::2] * 2).sum().backward()
    found["slice grad"] = s.grad.tolist()
    return found


def fake_sources(torch: Any, fake_source: Callable[[str], Any]) -> dict[str, Any]:
    """Where each fake implementation was registered: this file and the line (paths differ by machine)."""
    found = {}

    def where(qualname: str) -> Any:
        source = fake_source(qualname)
        return None if source is None else os.path.basename(source)

    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("src0(Tensor x) -> Tensor")
        torch.library.register_fake(f"{NS}::src0", lambda x: x.clone(), lib=lib)
        lib.define("src1(Tensor x) -> Tensor")

        @torch.library.register_fake(f"{NS}::src1", lib=lib)
        def _(x: Any) -> Any:
            return x.clone()

        lib.define("nofake(Tensor x) -> Tensor")
        found = {name: where(f"{NS}::{name}") for name in ("src0", "src1")}
    return found


def run(torch: Any, fake_source: Callable[[str], Any]) -> dict[str, Any]:
    return {
        "define_errors": define_errors(torch), "parse_schema": parsed(torch), "defined_in_python": defined_in_python(torch),
        "autograd_defaults": autograd_defaults(torch), "opcheck": opcheck_texts(torch), "numpy_force": numpy_force(torch),
        "indexing": indexing(torch), "bad_indexing": bad_indexing(torch), "operators": operators(torch),
        "fake_sources": fake_sources(torch, fake_source),
    }
