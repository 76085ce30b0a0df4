"""Regenerate prototype_golden.json: what torch 2.13 does with the programs dispatcher.prototype runs.

Run with a Python that has torch 2.13 (never needed by the tests):

    /tmp/torchenv/bin/python tests/golden/generate_prototype_golden.py

Records

* ``traces``: for every program of prototype_cases.py (run on torch tensors),
  the operators ``make_fx`` records, in order, as ``aten::name.overload``:
  what tests/test_prototype_tracing.py expects the prototype's tracer to
  record for the same program;
* ``kernels``: for every aten operator the prototype implements
  (prototype_cases.OPERATORS), the dispatch keys torch has a kernel at
  (``torch._C._dispatch_has_kernel_for_dispatch_key``), among those the
  prototype registers at: tests/test_prototype_tensor.py checks that the
  prototype decomposes exactly the operators torch does, and gives the
  others backend kernels and a derivative; None for the operators torch has
  only as JIT operators (aten::sym_size, aten::stride, ...: no c10 operator).
"""
import json
import pathlib
import sys
from typing import Optional

import torch
from torch.fx.experimental.proxy_tensor import make_fx

HERE = pathlib.Path(__file__).parent
OUT = HERE / "prototype_golden.json"
sys.path.insert(0, str(HERE))

from prototype_cases import OPERATORS, programs  # noqa: E402

KEYS = ["CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CPU",
        "Meta", "Autograd", "ADInplaceOrView", "BackendSelect"]


def traced_operators(program) -> list[str]:
    graph = make_fx(program.fn)(*program.inputs).graph
    return [node.target.name() for node in graph.nodes if node.op == "call_function"]


def kernel_keys(name: str) -> Optional[list[str]]:
    """None for an operator torch has only as a JIT operator (no c10 kernels)."""
    qualified = f"aten::{name}"
    if qualified not in torch._C._dispatch_get_all_op_names():
        return None
    return [key for key in KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key)]


def main() -> None:
    golden = {
        "meta": {"torch": torch.__version__},
        "traces": {name: traced_operators(program) for name, program in programs(torch).items()},
        "kernels": {name: kernel_keys(name) for name in OPERATORS},
    }
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
