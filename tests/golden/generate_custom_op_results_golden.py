"""Regenerate custom_op_results_golden.json: what torch 2.13 does with a custom operator's wrong results.

Run with a Python that has torch 2.13 (never needed by the tests):

    /tmp/torchenv/bin/python tests/golden/generate_custom_op_results_golden.py

Records, for each case of custom_op_result_cases.py,

* ``results``: a ``custom_op`` whose kernel returns the case's value, called
  on a CPU tensor (``call``), on one that requires grad (``requires_grad``),
  below autograd (``below_autograd``), and, with a fake implementation
  returning the same on meta tensors, on a meta tensor (``meta``, and
  ``meta_below_autograd``): the result as ``describe`` words it, or the
  error's type and message;
* ``overlong``: for a kernel returning more values than the schema's returns
  (torch's C++ reads past them), whether torch accepted the result (it runs
  in a child process: torch 2.13 may crash);
* ``backward``: the error (or the gradients) of ``backward()`` through an
  operator whose registered backward returns the case's value;
* ``tensor_list_backward``: the same for an operator taking a list of tensors;
* ``schema_integers``: torch._C.parse_schema of schemas with huge integers.
"""
import json
import pathlib
import subprocess
import sys

import torch
from torch.library import custom_op

HERE = pathlib.Path(__file__).parent
OUT = HERE / "custom_op_results_golden.json"
sys.path.insert(0, str(HERE))

from custom_op_result_cases import BACKWARD_CASES, OVERLONG_CASES, RESULT_CASES, TENSOR_LIST_BACKWARD_CASES  # noqa: E402

HUGE_DEFAULT = "1" * 4301  # more digits than Python's int() takes from a string by default
SCHEMA_INTEGER_CASES = {
    "list_size_over_int64": "f(int[99999999999999999999] x) -> ()",
    "list_size_int64_max": "f(int[9223372036854775807] x) -> ()",
    "list_size_int64_max_plus_one": "f(int[9223372036854775808] x) -> ()",
    "list_size_zero": "f(int[0] x) -> ()",
    "int_default_over_int64": "f(int x=99999999999999999999) -> ()",
    "int_default_int64_max": "f(int x=9223372036854775807) -> ()",
    "int_default_int64_min": "f(int x=-9223372036854775808) -> ()",
    "int_default_int64_max_plus_one": "f(int x=9223372036854775808) -> ()",
    "int_default_4301_digits": f"f(int x={HUGE_DEFAULT}) -> ()",
    "int_list_default_over_int64": "f(int[] x=[1, 99999999999999999999]) -> ()",
    "int_list_default_4301_digits": f"f(int[] x=[{HUGE_DEFAULT}]) -> ()",
    "float_default_4301_digits": f"f(float x={HUGE_DEFAULT}.0) -> ()",
    "sized_list_default_over_int64": "f(int[2] x=99999999999999999999) -> ()",
}


def error(exc: BaseException) -> dict:
    return {"error": type(exc).__name__, "message": str(exc)}


def describe(value: object) -> str:
    """A result as the test words the dispatcher's: its type, and the value of a plain one."""
    if isinstance(value, torch.Tensor):
        return "Tensor"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{', '.join(describe(v) for v in value)}]"
    return f"{type(value).__name__} {value!r}"


def outcome(call) -> dict:
    try:
        return {"result": describe(call())}
    except Exception as exc:
        return error(exc)


def record_results() -> dict:
    out = {}
    for case in RESULT_CASES:
        def kernel(x, case=case):
            return case.result(x.clone)

        op = custom_op(f"results::{case.name}", kernel, mutates_args=(), schema=case.schema)
        op.register_fake(kernel)
        x = torch.ones(2)
        paths = {
            "call": lambda: op(x),
            "requires_grad": lambda: op(torch.ones(2, requires_grad=True)),
            "meta": lambda: op(torch.ones(2, device="meta")),
        }

        def below_autograd(x=x):
            with torch._C._AutoDispatchBelowAutograd():
                return op(x)

        paths["below_autograd"] = below_autograd
        paths["meta_below_autograd"] = lambda: below_autograd(torch.ones(2, device="meta"))
        out[case.name] = {"schema": str(op._opoverload._schema), **{k: outcome(v) for k, v in paths.items()}}
    return out


def record_overlong() -> dict:
    out = {}
    for case in OVERLONG_CASES:
        program = (
            "import sys, torch\nsys.path.insert(0, sys.argv[1])\nfrom torch.library import custom_op\n"
            "from custom_op_result_cases import OVERLONG_CASES\n"
            f"case = [c for c in OVERLONG_CASES if c.name == {case.name!r}][0]\n"
            "op = custom_op('results::' + case.name, lambda x: case.result(x.clone), mutates_args=(), schema=case.schema)\n"
            "try:\n    op(torch.ones(2))\n    print('accepted')\nexcept Exception as exc:\n    print('refused')\n"
        )
        child = subprocess.run([sys.executable, "-c", program, str(HERE)], capture_output=True, text=True)
        out[case.name] = {"schema": case.schema, "accepted": child.stdout.strip() == "accepted"}
    return out


def record_backward() -> dict:
    out = {}
    for case in BACKWARD_CASES:
        def kernel(x, *rest):
            return x.clone()

        op = custom_op(f"backward::{case.name}", kernel, mutates_args=(), schema=case.schema)
        op.register_autograd(lambda ctx, grad, case=case: case.grad(grad.clone))
        inputs = [torch.ones(2, requires_grad=True) for _ in range(case.n_tensors)]

        def run():
            op(*inputs, *([2] if case.with_int else [])).sum().backward()
            return tuple(i.grad for i in inputs)

        out[case.name] = outcome(run)
    return out


def record_tensor_list_backward() -> dict:
    out = {}
    for name, grad in TENSOR_LIST_BACKWARD_CASES.items():
        op = custom_op(f"backward::{name}", lambda xs: xs[0].clone(), mutates_args=(), schema="(Tensor[] xs) -> Tensor")
        op.register_autograd(lambda ctx, g, grad=grad: grad(g.clone))
        inputs = [torch.ones(2, requires_grad=True) for _ in range(2)]

        def run():
            op(inputs).sum().backward()
            return tuple(i.grad for i in inputs)

        out[name] = outcome(run)
    return out


def record_schema_integers() -> dict:
    out = {}
    for name, text in SCHEMA_INTEGER_CASES.items():
        try:
            schema = torch._C.parse_schema(text)
            default = schema.arguments[0].default_value
            out[name] = {"schema": text, "parsed": str(schema) if len(str(schema)) < 200 else "(long)",
                         "default": None if default is None else repr(default)[:80]}
        except Exception as exc:
            out[name] = {"schema": text, **error(exc)}
    return out


def main() -> None:
    golden = {
        "torch": torch.__version__,
        "results": record_results(),
        "overlong": record_overlong(),
        "backward": record_backward(),
        "tensor_list_backward": record_tensor_list_backward(),
        "schema_integers": record_schema_integers(),
    }
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
