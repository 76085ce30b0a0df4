"""Instructions per call of the per-operator helpers a tensor library calls, counted by callgrind.

Wall time of a sub-microsecond helper is too noisy on a shared machine to
hold a budget; an instruction count is not.  Each case runs its statement
``--small`` and ``--large`` times in a fresh interpreter under
``valgrind --tool=callgrind``; the difference of the two totals divided by
the difference of the counts is the cost of one call, import and set-up
cancelled out.  docs/performance.md states the budgets these are held to.

Run: ``python benchmarks/instruction_counts.py`` (needs valgrind; about a
minute per case).  ``--registration ours`` (or ``torch``) counts each impl
step of dispatcher/registration_timing.py.  ``--training-step`` counts instead one step of
benchmarks/training_step.py's MLPs, the prototype's and the numpy limit's
(docs/performance.md; a few minutes per row at batch 64).
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

# The call path: a 2-tensor call of an operator with a CPU kernel, and of
# one whose CPU slot takes a backend fallback (its registry's fallback cell:
# Note [Fallback cells] in dispatcher/_engine/core.py).
from dispatcher import Library, TensorBase
def _kernel(x, y):
    return x
_lib = Library("instruction_counts", "DEF")
_lib.define("add(Tensor x, Tensor y) -> Tensor")
_lib.impl("add", _kernel, "CPU")
_lib.define("fallback_add(Tensor x, Tensor y) -> Tensor")
def _fallback(op, x, y):
    return x
_fallbacks = Library("_", "IMPL")
_fallbacks.fallback(_fallback, "PrivateUse3")
call_add = ops.instruction_counts.add.default
call_fallback_add = ops.instruction_counts.fallback_add.default
t = TensorBase(DispatchKeySet([DispatchKey.CPU]))
f = TensorBase(DispatchKeySet([DispatchKey.PrivateUse3]))
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
    "call, 2 tensors, a CPU kernel (prefetched handle)": "call_add(t, t)",
    "call, 2 tensors, a backend fallback (prefetched handle)": "call_fallback_add(f, f)",
    # The attribute reads and the dispatch of a call written inline (Note [ops
    # at attribute speed] in dispatcher/ops.py), and of the packet's call.
    "inline call, ops.bench.f.default(x)": "ops.bench.f.default(x)",
    "packet call, ops.bench.f(x)": "ops.bench.f(x)",
}

# The dispatcher's share of a no-op wrapper subclass's call (bench's "no-op
# wrapper subclass" row): the whole call minus its handler called directly,
# which makes the same inner call.  Once for instances with slots only, once
# for instances with a __dict__ (a Python subclass without __slots__, as
# torch code writes them): see Note [Calling a tensor's handler] in core.py.
WRAPPER_SETUP = '''
from dispatcher import DispatchKey, DispatchKeySet, Library, TensorBase, ops
lib = Library("icount", "DEF")
lib.define("add(Tensor x, Tensor y) -> Tensor")
def kernel(x, y):
    return x
lib.impl("add", kernel, "CPU")
add = ops.icount.add.default
class Wrapper(TensorBase):
    {slots}
    def __init__(self, elem):
        TensorBase.__init__(self, elem.key_set)
        self.elem = elem
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return cls(func(*[a.elem if type(a) is cls else a for a in args], **(kwargs or {})))
w = Wrapper(TensorBase(DispatchKeySet(DispatchKey.CPU)))
'''
WRAPPER_INSTANCES = {"slots only": "__slots__ = ('elem',)", "a __dict__": "pass"}


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


# Registration steps (dispatcher/registration_timing.py's), counted as a
# round with the step minus the same round without it: the step's own
# instructions and its share of the library's _destroy().  {library} is
# this package's Library or torch.library.Library.
REGISTRATION_SETUP = '''
import itertools
{library_import}
def kernel(x, y):
    return x
names = itertools.count()
def round_(key, with_step):
    lib = Library(f"icount{{next(names)}}", "DEF")
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.define("g(Tensor x, Tensor y) -> Tensor")
    for before in REGISTRATION_KEYS[:REGISTRATION_KEYS.index(key)]:
        lib.impl("f", kernel, before)
    if with_step:
        lib.impl("g" if key == "CompositeImplicitAutograd" else "f", kernel, key)
    lib._destroy()
REGISTRATION_KEYS = {keys!r}
for _ in range(20):
    round_(REGISTRATION_KEYS[0], True)
'''
REGISTRATION_KEYS = ("CPU", "AutogradCPU", "Meta", "Autograd", "CompositeExplicitAutograd", "CompositeImplicitAutograd")
LIBRARY_IMPORTS = {"ours": "from dispatcher import Library", "torch": "import torch\nLibrary = torch.library.Library"}


def registration_rows(subject: str, small: int, large: int, keys: Sequence[str] = REGISTRATION_KEYS) -> None:
    """Print the instructions of the impl step on each of ``keys`` (of REGISTRATION_KEYS)."""
    setup = REGISTRATION_SETUP.format(library_import=LIBRARY_IMPORTS[subject], keys=REGISTRATION_KEYS)
    print(f"| impl step ({subject}) | instructions |")
    print("|---|---:|")
    for key in keys:
        step = per_call(f"round_({key!r}, True)", small, large, setup) - per_call(f"round_({key!r}, False)", small, large, setup)
        print(f"| impl {key} | {step:,.0f} |", flush=True)


def training_step_setup(side: str, sizes: Sequence[int], batch: int) -> str:
    """Set-up source making ``step``, one training step of ``side`` ("prototype" or "numpy", see training_step.py)."""
    return (f"import os, sys\nos.environ['OPENBLAS_NUM_THREADS'] = '1'\n"
            f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
            f"import training_step\nstep = training_step.{side}_step({tuple(sizes)!r}, {batch})\n"
            "for _ in range(3):\n    step()\n")


def training_step_rows(small: int, large: int) -> None:
    # Imported here: training_step imports numpy, which the helper cases do not need.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from training_step import BATCHES, SHAPES

    print("| MLP | batch | prototype | numpy limit | over the limit |")
    print("|---|---:|---:|---:|---:|")
    for sizes in SHAPES:
        for batch in BATCHES:
            ours, limit = (per_call("step()", small, large, training_step_setup(side, sizes, batch))
                           for side in ("prototype", "numpy"))
            print(f"| {'-'.join(map(str, sizes))} | {batch} | {ours:,.0f} | {limit:,.0f} | {ours - limit:,.0f} |",
                  flush=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=None,
                        help="calls in the first run (default 1000; 5 steps with --training-step)")
    parser.add_argument("--large", type=int, default=None,
                        help="calls in the second run (default 11000; 25 steps with --training-step)")
    parser.add_argument("--training-step", action="store_true",
                        help="count one training step of each MLP of training_step.py instead of the helpers")
    parser.add_argument("--registration", choices=sorted(LIBRARY_IMPORTS), default=None,
                        help="count registration_timing's impl steps instead, of this package or of torch "
                             "(run with a Python that has torch)")
    args = parser.parse_args(argv)
    if args.registration:
        registration_rows(args.registration, args.small or 100, args.large or 300)
        return 0
    if args.training_step:
        training_step_rows(args.small or 5, args.large or 25)
        return 0
    args.small, args.large = args.small or 1000, args.large or 11000
    print("| helper | instructions per call |")
    print("|---|---:|")
    for name, statement in CASES.items():
        print(f"| {name} | {per_call(statement, args.small, args.large):,.0f} |", flush=True)
    print()
    print("| no-op wrapper instances with | whole call | its handler alone | the dispatcher's share |")
    print("|---|---:|---:|---:|")
    for name, slots in WRAPPER_INSTANCES.items():
        setup = WRAPPER_SETUP.format(slots=slots)
        whole = per_call("add(w, w)", args.small, args.large, setup)
        handler = per_call("Wrapper.__torch_dispatch__(add, (Wrapper,), (w, w), {})", args.small, args.large, setup)
        print(f"| {name} | {whole:,.0f} | {handler:,.0f} | {whole - handler:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
