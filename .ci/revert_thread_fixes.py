"""Undo each fix of the registration side's thread and lifetime findings on
purpose, and check that its regression test notices.

Not part of `.ci/run` (a minute or two): run it by hand after changing the
registration side or its tests::

    python .ci/revert_thread_fixes.py             # every fix
    python .ci/revert_thread_fixes.py snapshot    # the fixes whose title has "snapshot"

Each fix is undone in the working tree by one edit (found by its text, so
that a refactor that moves it fails loudly here instead of silently), the
tests that guard it run on the pure engine (the fixes live in Python code
both engines share; the compiled engine's own fix, the Python-key state, is
guarded by a crash test in a subprocess), and the file is put back.  A
race's test gets three tries.  Exits non-zero if a fix can be undone
without a test failing.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import NamedTuple

ROOT = pathlib.Path(__file__).resolve().parent.parent


class Revert(NamedTuple):
    title: str
    path: str
    fixed: str  # the text of the fix, which must occur once
    reverted: str  # what the code said (or would say) without it
    tests: str
    selection: str  # pytest -k


REVERTS = [Revert(*case) for case in [

    ("catalog lookups publish last", "dispatcher/registry.py",
   "            self._defining_from_catalog.add(qualified_name)\n",
   "            self._defining_from_catalog.add(qualified_name)\n            self._from_catalog.add(qualified_name)\n",
   "tests/test_registration_threads.py", "catalog"),
    ("packet trusts the published packet", "dispatcher/registry.py",
   "        if packet is None:\n            self._define_from_catalog(qualified_name)  # or another",
   "        if qualified_name not in self._overloads:\n            self._define_from_catalog(qualified_name)  # or another",
   "tests/test_registration_threads.py", "catalog"),
    ("custom_op under the lock", "dispatcher/custom_ops.py",
   "        with registry.lock:\n            result = CustomOpDef(",
   "        if True:\n            result = CustomOpDef(",
   "tests/test_registration_threads.py", "one_name"),
    ("register_kernel stores the function first", "dispatcher/custom_ops.py",
   "                self._backend_fns = {**previous, **{d: self._enabled_or_init(d, fn) for d in keys}}\n",
   "                self._backend_fns = {**previous, **{d: self._enabled_or_init(d, fn) for d in keys if d in previous}}\n",
   "tests/test_registration_threads.py", "without_its_function"),
    ("register_kernel rolls back", "dispatcher/custom_ops.py",
   "                    self._lib.undo_newest(registered)\n                    self._backend_fns = previous\n",
   "                    pass\n",
   "tests/test_registration_lifetimes.py", "part_way"),
    ("kernels replaced whole (snapshot)", "dispatcher/operator_entry.py",
   "        self.kernels = {**self.kernels, key: (kernel, *kernels)}  # Note [Entries are read as snapshots]\n",
   "        self.kernels[key] = (kernel, *kernels)\n",
   "tests/test_registration_threads.py", "dumps"),
    ("kernels removed from a copy (snapshot)", "dispatcher/operator_entry.py",
   "        kernels = dict(self.kernels)  # Note [Entries are read as snapshots]\n",
   "        kernels = self.kernels\n",
   "tests/test_registration_threads.py", "dumps"),
    ("lines replaced whole (snapshot)", "dispatcher/operator_entry.py",
   "            lines = dict(self._lines)\n",
   "            lines = self._lines\n",
   "tests/test_registration_threads.py", "dumps"),
    ("a closed library refuses", "dispatcher/library.py",
   "        if self._closed:\n            raise AssertionError",
   "        if False:\n            raise AssertionError",
   "tests/test_registration_lifetimes.py", "closed_library"),
    ("entries are forgotten", "dispatcher/registry.py",
   "        if self._operators.get(op.name) is op:\n            del self._operators[op.name]\n",
   "        pass\n",
   "tests/test_registration_lifetimes.py", "last_registration or define_impl_close"),
    ("packets are dropped", "dispatcher/registry.py",
   "            del self._packets[qualified_name]\n",
   "",
   "tests/test_registration_lifetimes.py", "last_registration or define_impl_close"),
    ("pure engine remakes a dropped state", "dispatcher/_engine/core.py",
   '    state = getattr(_python_tls, "state", None)\n',
   '    state = _python_tls.state\n',
   "tests/test_registration_threads.py", "dropping and pure"),
    ("packet publish sets first, deletes last", "dispatcher/_engine/core.py",
   "        for name in gone:\n            delattr(self, name)",
   "        for name in gone:\n            delattr(self, name)\n        for name, handle in overloads:\n"
   "            if name not in _PACKET_ATTRIBUTES:\n                delattr(self, name)\n                setattr(self, name, handle)",
   "tests/test_registration_threads.py", "never_missing and py"),
]]


def main(only: list[str]) -> int:
    survivors = []
    env = dict(os.environ, DISPATCHER_NO_EXTENSIONS="1")
    for revert in REVERTS:
        if only and not any(word in revert.title for word in only):
            continue
        path = ROOT / revert.path
        text = path.read_text()
        if text.count(revert.fixed) != 1:
            raise SystemExit(f"{revert.title}: the fix's text is not found once in {revert.path}")
        path.write_text(text.replace(revert.fixed, revert.reverted))
        try:
            for _attempt in range(3):
                done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                       revert.tests, "-k", revert.selection],
                                      cwd=ROOT, capture_output=True, text=True, env=env)
                if done.returncode != 0:
                    break
        finally:
            path.write_text(text)
        killed = done.returncode != 0
        summary = (done.stdout.strip().splitlines() or [""])[-1]
        print(f"{'killed  ' if killed else 'SURVIVED'} {revert.title}: {summary}", flush=True)
        if not killed:
            survivors.append(revert.title)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
