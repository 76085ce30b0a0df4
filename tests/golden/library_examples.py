"""torch.library's documented examples: found in a copy of torch 2.13's
``torch/library.py`` (never in this repository) and run as a doctest would,
one example per process, so that each defines its ``mylib`` operators afresh.

``EXAMPLES`` names the docstrings whose examples need neither torch.compile
nor CUDA.  ``examples(source)`` extracts them (the ``>>>`` and ``...``
lines, without xdoctest directives); ``run(code)`` runs one statement at a
time in ``single`` mode, as doctest does (an expression statement prints its
value), and returns what it printed and the first error.

Run as a script (``python library_examples.py``, the code on stdin) it prints
``run``'s result as JSON: generate_library_examples_golden.py runs it under
torch, tests/test_library_examples.py under this package's torch shim
(``--shim``).
"""
from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import sys
from typing import Any, Optional

# The functions of torch/library.py whose docstring's example runs on torch
# 2.13's CPU build.  Left out: register_kernel, register_autocast and opcheck
# (their examples need CUDA; opcheck's runs without it in
# tests/golden/opcheck_example.py), register_fake (FakeTensorMode and
# torch.compile), triton_op and wrap_triton (Triton); get_kernel and the
# Library methods' snippets do not run on torch either (a line of prose inside
# get_kernel's, ``Library`` never imported in the others).
# (custom_op and infer_schema are documented in torch/_library, not here.)
EXAMPLES = ["define", "impl", "register_autograd", "register_torch_dispatch", "register_vmap"]


def examples(source: str) -> dict[str, str]:
    """The example code of each docstring named in EXAMPLES."""
    docs: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            docs[node.name] = ast.get_docstring(node) or ""
    found = {}
    for name in EXAMPLES:
        lines = []
        for line in docs.get(name, "").splitlines():
            text = line.strip()
            if (text.startswith(">>>") or text.startswith("...")) and "xdoctest" not in text:
                lines.append(line.lstrip()[4:] if len(line.lstrip()) > 3 else "")
        if not lines:
            raise ValueError(f"torch/library.py has no example in the docstring of {name}")
        found[name] = "\n".join(lines) + "\n"
    return found


def masked(printed: str) -> str:
    """What an example printed, with its numbers (random tensors' values) as ``#``
    and runs of spaces as one: the shape of the output, not its values."""
    return re.sub(r"\[ ", "[", re.sub(r" +", " ", re.sub(r"-?\d+(\.\d*)?(e[+-]\d+)?", "#", printed)))


def run(code: str, namespace: Optional[dict[str, Any]] = None) -> dict[str, Optional[str]]:
    namespace = {"__name__": "__example__"} if namespace is None else namespace
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            for statement in ast.parse(code).body:
                exec(compile(ast.Interactive(body=[statement]), "<example>", "single"), namespace)
        except Exception as exc:  # noqa: BLE001  (recording what the example raises)
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return {"printed": masked(out.getvalue()), "error": error}


if __name__ == "__main__":
    if "--shim" in sys.argv:
        sys.path.insert(0, sys.argv[sys.argv.index("--shim") + 1])
        from tests.torch_shim import installed

        with installed():
            print(json.dumps(run(sys.stdin.read())))
    else:
        print(json.dumps(run(sys.stdin.read())))
