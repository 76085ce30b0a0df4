#!/usr/bin/env python
"""Generate ``argument_count_golden.json``: torch 2.13's errors for calls of an
operator overload with a wrong number of arguments (``CASES``: the schema,
then the call's positional arguments, ``"T"`` for a tensor, and keywords).

    /work/venv-torch/bin/python tests/golden/generate_argument_count_golden.py
"""
from __future__ import annotations

import json
import os

import torch
from torch.library import Library

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "argument_count_golden.json")
CASES = [
    ("f(Tensor x, int n=1) -> Tensor", ["T", 1, 2], {}),
    ("f(Tensor x, int n=1) -> Tensor", [], {}),
    ("f(Tensor x, int n=1) -> Tensor", ["T", 1, 2, 3], {}),
    ("f(Tensor x, int n, *, int k=2) -> Tensor", ["T"], {}),
    ("f(Tensor x, int n, *, int k=2) -> Tensor", ["T", 1, 2], {}),
    ("f(Tensor x, int n, *, int k=2) -> Tensor", [], {"n": 1}),
    ("f(Tensor? x, int n) -> Tensor", ["T"], {}),
    ("f(Tensor[] xs, int n) -> Tensor", [["T"], 1, 2], {}),
]


def main():
    recorded = []
    for i, (schema, args, kwargs) in enumerate(CASES):
        lib = Library(f"argcount{i}", "DEF")
        lib.define(schema)
        lib.impl("f", lambda *a, **k: torch.ones(1), "CPU")
        values = [torch.ones(1) if a == "T" else [torch.ones(1)] if a == ["T"] else a for a in args]
        try:
            getattr(torch.ops, f"argcount{i}").f.default(*values, **kwargs)
            error = None
        except RuntimeError as exc:
            error = str(exc).replace(f"argcount{i}::", "ns::")
        recorded.append({"schema": schema, "args": args, "kwargs": kwargs, "error": error})
        lib._destroy()
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": recorded}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
