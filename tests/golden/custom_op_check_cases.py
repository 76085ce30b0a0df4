"""What custom_op_checks_golden.json records: opcheck's comparisons as torch
2.13 makes them (assert_close's texts, its tolerances, the chain of
exceptions test_aot_dispatch_dynamic raises, test_faketensor's strides and
storage offsets) and register_vmap's decorator forms under nested vmaps.

Written once for either library: ``run(torch, close)`` takes a ``torch``
module -- torch 2.13 itself (generate_custom_op_checks_golden.py), or
tests/torch_shim.py's over this package (tests/test_custom_op_checks.py) --
and ``close(actual, expected, rtol, atol)``: that library's answer to why two
tensors or two numbers are not close (torch.testing.assert_close's message,
or None).  No imports of either library here.
"""
from __future__ import annotations

import re
from typing import Any, Callable

NS = "_check_cases"

Close = Callable[[Any, Any, Any, Any], Any]


def _masked(text: str) -> str:
    """A message with the numbers that depend on how often an operator ran
    (its values) left out; the tolerances it names stay."""
    text = re.sub(r"Expected \S+ but got \S+\.", "Expected <x> but got <y>.", text)
    return re.sub(r"(Absolute|Relative) difference: \S+", r"\1 difference: <d>", text)


def _chain(exc: BaseException) -> list[list[str]]:
    """An exception and its ``__context__``s: each one's class and (masked) message."""
    chain = []
    current: Any = exc
    while current is not None:
        chain.append([type(current).__name__, _masked(str(current))])
        current = current.__context__
    return chain


def _results(found: dict[str, Any]) -> dict[str, Any]:
    """opcheck's results (raise_exception=False): "SUCCESS", or the failure's class and message."""
    return {test: result if isinstance(result, str) else [type(result).__name__, _masked(str(result))]
            for test, result in found.items()}


def _after_found(found: dict[str, Any], test: str) -> Any:
    """A test_faketensor failure's message after its context (which names the
    operator and what it compared, in each library's words)."""
    result = found[test]
    return result if isinstance(result, str) else [type(result).__name__, str(result).split(", found ", 1)[-1]]


def assert_close_texts(torch: Any, close: Close) -> dict[str, Any]:
    t = torch.tensor
    cases = {
        "float32 2-d": (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.5], [3.0, 4.0]]), None, None),
        "float32 0-d": (t(2.5), t(2.0), None, None),
        "float32 close": (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), None, None),
        "float32 two off": (t([1.0, 5.0, 3.0, -1.0]), t([1.5, 2.0, 3.0, 1.0]), None, None),
        "float64": (t([1.0, 2.0], dtype=torch.float64), t([1.0, 2.0000001], dtype=torch.float64), None, None),
        "explicit tolerances": (t([1.0, 2.0]), t([1.0, 2.5]), 0.1, 0.01),
        "explicit tolerances close": (t([1.0, 2.0]), t([1.0, 2.5]), 0.5, 0.01),
        "int64": (t([1, 2, 3]), t([1, 2, 5]), None, None),
        "int64 0-d": (t(7), t(5), None, None),
        "bool": (t([True, False]), t([True, True]), None, None),
        "nan": (t([float("nan"), 1.0]), t([float("nan"), 1.0]), None, None),
        "expected zero": (t([0.5, 1.0]), t([0.0, 1.0]), None, None),
        "shape": (t([1.0, 2.0]), t([1.0, 2.0, 3.0]), None, None),
        "dtype": (t([1.0, 2.0]), t([1.0, 2.0], dtype=torch.float64), None, None),
        "float16": (t([1.0, 2.0], dtype=torch.float16), t([1.0, 2.01], dtype=torch.float16), None, None),
    }
    numbers = {"ints": (1, 2), "floats": (1.5, 1.0), "close floats": (2.0, 2.0000001), "bools": (True, False),
               "float and int": (1.0, 1), "equal ints": (3, 3)}
    found = {label: close(actual, expected, rtol, atol) for label, (actual, expected, rtol, atol) in cases.items()}
    found.update({f"number {label}": close(actual, expected, None, None)
                  for label, (actual, expected) in numbers.items()})
    return found


def global_state(torch: Any) -> dict[str, Any]:
    """PyTorch's test_global_state_mutation: an operator whose result depends on
    how often it ran fails test_aot_dispatch_dynamic, raised from assert_close's
    AssertionError when gradients are compared too; tolerances wide enough pass."""
    found: dict[str, Any] = {}
    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("counted(Tensor x) -> Tensor")
        op = getattr(torch.ops, NS).counted.default
        invoked = [0]

        def counted(x: Any) -> Any:
            invoked[0] += 1
            return x.clone() * invoked[0]

        lib.impl("counted", counted, "CompositeImplicitAutograd")
        for label, requires_grad in (("requires grad", True), ("no grad", False)):
            x = torch.tensor(3.14159 / 3, requires_grad=requires_grad)
            try:
                torch.library.opcheck(op, (x,), {})
                found[label] = "passed"
            except Exception as exc:  # noqa: BLE001  (what is recorded is which exception, and its chain)
                found[label] = _chain(exc)
            found[f"{label}, results"] = _results(torch.library.opcheck(op, (x,), {}, raise_exception=False))
            found[f"{label}, wide tolerances"] = _results(torch.library.opcheck(op, (x,), {}, atol=3, rtol=0.01))
            found[f"{label}, zero tolerances"] = _results(
                torch.library.opcheck(op, (x,), {}, atol=0, rtol=0, raise_exception=False))
    return found


def _define(torch: Any, name: str, kernel: Callable[[Any], Any], fake: Callable[[Any], Any]) -> Any:
    op = torch.library.custom_op(f"{NS}::{name}", kernel, mutates_args=())
    op.register_fake(fake)
    return op


def fake_layouts(torch: Any) -> dict[str, Any]:
    """test_faketensor against fake implementations whose results are laid out
    as the real ones, or not (PyTorch's test_opcheck_cpu_stride_mismatch)."""
    def new_empty_permuted(x: Any) -> Any:
        return x.new_empty(x.shape[2], x.shape[0], x.shape[1])

    def permuted(x: Any) -> Any:
        return x.clone().permute(2, 0, 1)

    def scaled_permuted(x: Any) -> Any:
        return x.permute(2, 0, 1) * 2

    def new_empty_row(x: Any) -> Any:
        return x.new_empty(x.shape[0] - 1, x.shape[1], x.shape[2])

    def new_empty_single(x: Any) -> Any:
        return x.new_empty(1, x.shape[0], x.shape[1])

    def new_empty_row_size_one(x: Any) -> Any:
        return x.new_empty(x.shape[2], 1, x.shape[1])

    cases = {
        "permuted, fake contiguous": (permuted, new_empty_permuted),
        "permuted, fake permuted": (permuted, permuted),
        "scaled permuted, fake alike": (scaled_permuted, scaled_permuted),
        "rows after the first, fake fresh": (lambda x: x.clone()[1:], new_empty_row),
        "first channel permuted, fake fresh": (lambda x: x.clone().permute(2, 0, 1)[:1], new_empty_single),
        "size-one dimension": (lambda x: x.clone().permute(2, 0, 1)[:, :1], new_empty_row_size_one),
    }
    found = {}
    for i, (label, (kernel, fake)) in enumerate(cases.items()):
        kernel.__annotations__ = fake.__annotations__ = {"x": torch.Tensor, "return": torch.Tensor}
        op = _define(torch, f"layout{i}", kernel, fake)
        result = torch.library.opcheck(op, (torch.randn(4, 4, 3),), test_utils="test_faketensor", raise_exception=False)
        found[label] = _after_found(result, "test_faketensor")
    return found


def vmap_decorators(torch: Any) -> dict[str, Any]:
    """register_vmap as a decorator, of torch.library and of a custom op, under vmap and nested vmaps."""
    found: dict[str, Any] = {}
    calls: list[tuple[Any, ...]] = []

    def rule(info: Any, in_dims: Any, x: Any, y: Any) -> Any:
        calls.append((info.batch_size, tuple(in_dims)))
        x = x.movedim(in_dims[0], -1) if in_dims[0] is not None else x.unsqueeze(-1)
        y = y.movedim(in_dims[1], -1) if in_dims[1] is not None else y.unsqueeze(-1)
        return (x * y).movedim(-1, 0), 0

    def mul(x: Any, y: Any) -> Any:
        return x * y

    mul.__annotations__ = {"x": torch.Tensor, "y": torch.Tensor, "return": torch.Tensor}
    x = torch.tensor([1.0, 2.0, 3.0])
    y = torch.tensor([10.0, 20.0])
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    for i, form in enumerate(("library decorator", "op decorator")):
        f = torch.library.custom_op(f"{NS}::mul{i}", mul, mutates_args=())
        registered = torch.library.register_vmap(f"{NS}::mul{i}")(rule) if i == 0 else f.register_vmap(rule)
        calls.clear()
        results = {
            "returns the rule": registered is rule,
            "vmap": torch.vmap(f)(m, m * 2).tolist(),
            "nested": torch.vmap(torch.vmap(f, in_dims=(0, None)), in_dims=(None, 0))(x, y).tolist(),
            "nested, both batched inside": torch.vmap(torch.vmap(f))(m, m + 1).tolist(),
        }
        results["calls"] = [list(c) for c in calls]
        found[form] = results
    return found


def _outcome(fn: Callable[[], Any]) -> Any:
    """What ``fn()`` gives, or its error's class and the first line of its message."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  (what is recorded is which exception)
        return [type(exc).__name__, str(exc).split("\n")[0]]


def _noop(*args: Any) -> None:
    return None


# name: (schema, what its kernel returns)
VIEW_OPS = {
    "view_int": ("(Tensor(a) x, int i) -> Tensor(a)", lambda x, i: x[i:]),
    "view_symint": ("(Tensor(a) x, SymInt i) -> Tensor(a)", lambda x, i: x[i:]),
    "view_symint_list": ("(Tensor(a) x, SymInt[] i) -> Tensor(a)", lambda x, i: x[i[0]:]),
    "view_symint_optional": ("(Tensor(a) x, SymInt? i) -> Tensor(a)", lambda x, i: x[:]),
    "view_second": ("(Tensor x, Tensor(a) y) -> Tensor(a)", lambda x, y: y[:]),
    "view_two_inputs": ("(Tensor(a) x, Tensor(a) y) -> Tensor(a)", lambda x, y: x[:]),
    "view_two_outputs": ("(Tensor(a) x) -> (Tensor(a), Tensor(a))", lambda x: (x[:], x[1:])),
    "view_and_tensor": ("(Tensor(a) x, Tensor y) -> Tensor(a)", lambda x, y: x[:]),
    "view_list": ("(Tensor(a) x, SymInt n) -> Tensor(a)[]", lambda x, n: [x[:n], x[n:]]),
}


def view_ops(torch: Any) -> dict[str, Any]:
    """Custom operators whose result aliases an input: which take register_autograd,
    what a call checks (torch's ADInplaceOrView fallback), and that the result is
    a view of the input (its ``_base``, a shared version counter, its values)."""
    found: dict[str, Any] = {}
    for name, (schema, kernel) in VIEW_OPS.items():
        op = torch.library.custom_op(f"{NS}::{name}", kernel, mutates_args=(), schema=schema)
        entry: dict[str, Any] = {"register_autograd": _outcome(lambda: op.register_autograd(_noop, setup_context=_noop))}
        x = torch.tensor([1.0, 2.0, 3.0])
        extra = {"view_int": (1,), "view_symint": (1,), "view_symint_list": ([1],), "view_symint_optional": (None,),
                 "view_list": (1,)}.get(name, (torch.tensor([4.0, 5.0, 6.0]),) if "two_outputs" not in name else ())

        def call() -> Any:
            out = getattr(getattr(torch.ops, NS), name)(x, *extra)
            outs = out if isinstance(out, (list, tuple)) else [out]
            x.add_(10)  # written through the base: each view sees it, and its version
            return [[o._is_view(), o._base is x, o._version == x._version, o.tolist()] for o in outs]

        entry["call"] = _outcome(call)
        found[name] = entry
    return found


def view_op_autograd(torch: Any) -> dict[str, Any]:
    """A view custom operator with an autograd formula, on an input that requires grad
    (PyTorch's test_subclass_accessor_view, without its subclass): the result is a
    view of the input and the gradient flows through the formula."""
    op = torch.library.custom_op(f"{NS}::tail", lambda x, i: x[i:], mutates_args=(),
                                 schema="(Tensor(a) x, int i) -> Tensor(a)")

    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.scale = 2.0

    def backward(ctx: Any, grad: Any) -> Any:
        return grad * ctx.scale, None

    op.register_autograd(backward, setup_context=setup_context)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = op(x, 0)
    (out * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    y = torch.tensor([1.0, 2.0, 3.0])
    plain = op(y, 1)
    return {"is view": out._is_view(), "base is x": out._base is x, "requires grad": out.requires_grad,
            "grad": x.grad.tolist(), "without grad, is view": plain._is_view(), "without grad, base": plain._base is y}


def run(torch: Any, close: Close) -> dict[str, Any]:
    return {"assert_close": assert_close_texts(torch, close), "global_state": global_state(torch),
            "fake_layouts": fake_layouts(torch), "vmap_decorators": vmap_decorators(torch),
            "view_ops": view_ops(torch), "view_op_autograd": view_op_autograd(torch)}
