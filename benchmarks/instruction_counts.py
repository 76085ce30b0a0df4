"""Instructions per call of the per-operator helpers a tensor library calls, counted by callgrind.

Wall time of a sub-microsecond helper is too noisy on a shared machine to
hold a budget; an instruction count is not.  Each case runs its statement
``--small`` and ``--large`` times in a fresh interpreter under
``valgrind --tool=callgrind``; the difference of the two totals divided by
the difference of the counts is the cost of one call, import and set-up
cancelled out.  docs/performance.md states the budgets these are held to.

Run: ``python benchmarks/instruction_counts.py`` (needs valgrind; about a
minute per case).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

# Each case: set-up source, then the statement whose call is counted.
SETUP = '''
from dispatcher import DispatchKeySet, ops
from dispatcher._backend_select import backend_select_kernel, tensor_options_positions
from dispatcher._engine import core
from dispatcher.keys import DispatchKey
add = ops.aten.add.Tensor.schema
empty = ops.aten.empty.memory_format.schema

class _Handle:
    """Stands for the operator's handle: the kernel's redispatch, doing nothing."""
    def redispatch(self, keyset, *args, **kwargs):
        return keyset

backend_select = backend_select_kernel(empty, tensor_options_positions(empty), _Handle(), core)
keyset = DispatchKeySet(DispatchKey.BackendSelect)
args = ("x", "y")
size = [2, 3]

# An operator of one overload with a CPU kernel, called as user code writes it.
from dispatcher import Library, TensorBase
lib = Library("bench", "DEF")
lib.define("f(Tensor x) -> Tensor")
lib.impl("f", lambda x: x, "CPU")
x = TensorBase(DispatchKeySet(DispatchKey.CPU))
'''

CASES = {
    "bind, positionals (add.Tensor(x, y))": "add.bind(args)",
    "bind, a keyword (add.Tensor(x, y, alpha=2))": "add.bind(args, {'alpha': 2})",
    "BackendSelect kernel, empty(size, dtype=None, device='cpu')":
        "backend_select(keyset, size, dtype=None, device='cpu')",
    # The attribute reads and the dispatch of a call written inline (Note [ops
    # at attribute speed] in dispatcher/ops.py), and of the packet's call.
    "inline call, ops.bench.f.default(x)": "ops.bench.f.default(x)",
    "packet call, ops.bench.f(x)": "ops.bench.f(x)",
}


def _instructions(setup: str, statement: str, count: int) -> int:
    # The collector off: a collection of the whole heap (millions of instructions)
    # falling in one of the two runs and not the other would swamp the slope.
    program = f"{setup}\nimport gc\ngc.collect()\ngc.disable()\nfor _ in range({count}):\n    {statement}\n"
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "callgrind.out")
        # A fixed hash seed: string hashes decide dict probing, and so a few instructions.
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", program],
                       check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        with open(out) as f:
            summary = re.search(r"^summary:\s+(\d+)", f.read(), re.MULTILINE)
    if summary is None:
        raise RuntimeError("callgrind wrote no summary line")
    return int(summary.group(1))


def per_call(statement: str, small: int, large: int, setup: str = SETUP) -> float:
    """Instructions of one run of ``statement``: the slope between ``small`` and ``large`` runs."""
    return (_instructions(setup, statement, large) - _instructions(setup, statement, small)) / (large - small)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000, help="calls in the first run (default 1000)")
    parser.add_argument("--large", type=int, default=11000, help="calls in the second run (default 11000)")
    args = parser.parse_args(argv)
    print("| helper | instructions per call |")
    print("|---|---:|")
    for name, statement in CASES.items():
        print(f"| {name} | {per_call(statement, args.small, args.large):,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
