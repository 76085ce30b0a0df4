"""Break each compiled entry point on purpose and check that the tests notice.

Not part of `.ci/run` (each mutant is a rebuild of the extension, ~1 min):
run it by hand after changing the call paths or their tests::

    python .ci/break_entry_points.py            # all mutants
    python .ci/break_entry_points.py boxed      # the mutants whose name has "boxed"

For every mutant it exports the last commit (``git archive HEAD``: commit
first) to a temporary directory, applies one edit to the engine's source, builds the extension in
place, and runs the entry points' tests (``TESTS``) with
DISPATCHER_REQUIRE_EXTENSION=1.  A mutant the tests do not kill is a compiled
path no test executes; the script exits non-zero if any survives.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORE = "dispatcher/_engine/core.py"
CORE_PXD = "dispatcher/_engine/core.pxd"
FASTCALL = "csrc/_fastcall.pyx"
BROKEN = 'raise RuntimeError("mutant")'
# The tests of the entry points, on both engines.
TESTS = ("tests/test_engine.py", "tests/test_ops_packets.py", "tests/test_keyset.py", "tests/test_python_key.py")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str  # must occur exactly once in the file
    new: str


MUTANTS = [
    Mutant("vectorcall", FASTCALL,
           "    cdef int attempt\n",
           f"    cdef int attempt\n    {BROKEN}\n"),
    Mutant("vectorcall unboxed kernel", FASTCALL,
           "            return PyObject_Vectorcall(entry.fn, args, nargsf, kwnames)\n",
           f"            {BROKEN}\n"),
    Mutant("vectorcall with-keyset kernel", FASTCALL,
           "    args[-1] = <PyObject*>keyset\n",
           f"    {BROKEN}\n"),
    Mutant("vectorcall boxed kernel", FASTCALL,
           "            entry.fn(self, _make(bits), stack)\n",
           "            pass\n"),
    Mutant("redispatch vectorcall", FASTCALL,
           "    cdef uint64_t bits = _keyset_arg(<object>args[0], \"redispatch\")\n",
           f"    cdef uint64_t bits = _keyset_arg(<object>args[0], \"redispatch\")\n    {BROKEN}\n"),
    Mutant("__call__ (tp_call)", CORE,
           "        plan, bits = _plan_and_keys(self, args, kwargs)\n",
           f"        {BROKEN}\n"),
    Mutant("redispatch __call__ (tp_call)", CORE,
           "        return redispatch(self.handle, keyset, args, kwargs)\n",
           f"        {BROKEN}\n"),
    Mutant("call_boxed", CORE,
           "            boxer = plan.shape.boxer  # a Boxer: the plan has a schema\n",
           f"            {BROKEN}\n"),
    Mutant("packet vectorcall", FASTCALL,
           "            return PyObject_Vectorcall(<object>PyTuple_GET_ITEM(choice, 0), args, nargsf, kwnames)\n",
           f"            {BROKEN}\n"),
    Mutant("packet memo of the previous choice", FASTCALL,
           "            return PyObject_Vectorcall(<object>PyTuple_GET_ITEM(previous, 0), args, nargsf, kwnames)\n",
           "            return PyObject_Vectorcall(<object>PyTuple_GET_ITEM(choice, 0), args, nargsf, kwnames)\n"),
    Mutant("packet __call__ (tp_call)", CORE,
           "        return _chosen_overload(self, _call_pattern(args, kwargs), args, kwargs)[0](*args, **kwargs)\n",
           f"        {BROKEN}\n"),
    Mutant("packet choices by pattern", CORE,
           "        choice = choices.get(pattern)\n        if choice is not None:\n            return choice\n",
           "        choice = choices.get(pattern)\n        if choice is not None:\n"
           "            return (packet._overloads[0][1],) + choice[1:]\n"),
    Mutant("redispatch_boxed", CORE,
           "        _dispatch_boxed(self, \"[redispatch]\", plan, _keyset_arg(keyset, \"redispatch_boxed\"), stack)\n",
           f"        {BROKEN}\n"),
    Mutant("packed call of a boxed kernel", CORE,
           "        stack = _box_call(plan.shape.boxer, args, kwargs)\n        entry.fn(handle, _make(bits), stack)\n",
           "        stack = _box_call(plan.shape.boxer, args, kwargs)\n"),
    Mutant("boxed call of a boxed kernel or fallback", CORE,
           "            _print_trace(what, plan.name, bits)\n        entry.fn(handle, _make(bits), stack)\n",
           "            _print_trace(what, plan.name, bits)\n"),
    Mutant("boxed call of an unboxed kernel", CORE,
           "    _box_returns(boxer, dispatch(handle, what, plan, bits, args, kwargs), stack)\n",
           "    _box_returns(boxer, None, stack)\n"),
    Mutant("fast TensorBase.__init__", FASTCALL,
           "        _init_tensor(<TensorBase>self, <object>args[0] if nargs else None)\n",
           "        pass\n"),
    Mutant("TensorBase.__init__'s other forms", FASTCALL,
           "    return _slot_init(self, *_pack_args(args, 0, nargs), **_pack_kwargs(args, nargs, kwnames))\n",
           "    return None\n"),
    Mutant("tensor handler called without a bound method", CORE_PXD,
           "PyObject* stack[6] = {NULL, (PyObject*)tp, func, types, args, kwargs};",
           "PyObject* stack[6] = {NULL, tensor, func, types, args, kwargs};"),
    Mutant("spare kwargs dict kept only when unreferenced", FASTCALL,
           "    if Py_REFCNT(kw) == 1 and PyDict_GET_SIZE(kw) == 0:\n",
           "    if PyDict_GET_SIZE(kw) == 0:\n"),
    Mutant("spare kwargs dict kept only when empty", FASTCALL,
           "    if Py_REFCNT(kw) == 1 and PyDict_GET_SIZE(kw) == 0:\n",
           "    if Py_REFCNT(kw) == 1:\n"),
    Mutant("spare kwargs dict out of the collector's reach", FASTCALL,
           "        PyObject_GC_UnTrack(kw)\n",
           "        pass\n"),
    Mutant("spare args tuple kept only when unreferenced", FASTCALL,
           "    if Py_REFCNT(packed) == 1:\n",
           "    if True:\n"),
    Mutant("spare args tuple keeps no argument alive", FASTCALL,
           "            _clear_item(packed, i, NULL)\n            Py_XDECREF(item)\n",
           "            pass\n"),
    Mutant("spare args tuple tracked again when reused", FASTCALL,
           "    PyObject_GC_Track(packed)\n",
           "    pass\n"),
    Mutant("the memo's entry follows its keyset", CORE,
           "    plan.last_entry = plan.table[_table_index(masked)]\n",
           "    if plan.last_entry is None:\n        plan.last_entry = plan.table[_table_index(masked)]\n"),
    Mutant("vectorcall re-extracts after a re-def", FASTCALL,
           "        if self._plan is plan:  # nothing registered meanwhile",
           "        if True:  # nothing registered meanwhile"),
    Mutant("fallthrough skipping", CORE,
           "    bits = _skip_fallthroughs(plan, bits, plan.name)\n    if not _trace_enabled():\n",
           "    if not _trace_enabled():\n"),
]


def export_head(destination: pathlib.Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive, check=True)


def run_mutant(mutant: Mutant, checkout: pathlib.Path) -> tuple[bool, str]:
    """Apply ``mutant`` to a fresh copy of the checkout, build, test: (killed, summary)."""
    source = checkout / mutant.path
    text = source.read_text()
    count = text.count(mutant.old)
    if count != 1:
        raise SystemExit(f"mutant {mutant.name!r}: its text occurs {count} times in {mutant.path}; update the script")
    source.write_text(text.replace(mutant.old, mutant.new))
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=checkout,
                           capture_output=True, text=True)
    if build.returncode != 0:
        raise SystemExit(f"mutant {mutant.name!r} did not build:\n{build.stderr[-2000:]}")
    env = {"DISPATCHER_REQUIRE_EXTENSION": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(checkout)}
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS],
                           cwd=checkout, capture_output=True, text=True, env=env)
    summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr[-500:]
    return tests.returncode != 0, summary


def main(selected: list[str]) -> int:
    mutants = [m for m in MUTANTS if not selected or any(s in m.name for s in selected)]
    survivors = []
    for mutant in mutants:
        with tempfile.TemporaryDirectory() as tmp:
            checkout = pathlib.Path(tmp)
            export_head(checkout)
            killed, summary = run_mutant(mutant, checkout)
        print(f"{'killed  ' if killed else 'SURVIVED'} {mutant.name}: {summary}", flush=True)
        if not killed:
            survivors.append(mutant.name)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
