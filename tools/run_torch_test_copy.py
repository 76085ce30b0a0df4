"""Run tests of a copy of PyTorch's test/test_python_dispatch.py (or another of
its test files) under torch 2.13 itself, to see what torch does with them.

    /path/to/torch-venv/bin/python tools/run_torch_test_copy.py TestPythonDispatch.test_format ...

The copy is ``$DISPATCHER_UPSTREAM/test_python_dispatch.py`` (``--file`` for
another).  tests/torch_test_left_out.py lists as FAILS_ON_TORCH_2_13 the tests a
copy (written for a later torch) expects another answer of, which fail
here on torch 2.13 as they fail through the shim: this script is how that
was seen.  A copy may import what 2.13 does not have; those names are
given as None here (the tests using them fail, as they would), and
``expecttest``, a test dependency torch's wheel lacks, as a plain
assertMultiLineEqual.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import types
import unittest

# Imports of a later torch's copies that 2.13 lacks, and what stands for them.
MISSING_IMPORTS = {
    "from torch._custom_op.functional import register_functional_op": "register_functional_op = None",
    "from torch.testing._internal.optests.aot_autograd import _clone_input_for_aot_autograd":
        "_clone_input_for_aot_autograd = None",
}


def _expecttest() -> None:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        module = types.ModuleType("expecttest")

        class TestCase(unittest.TestCase):
            def assertExpectedInline(self, actual: str, expect: str, skip: int = 0) -> None:  # noqa: N802
                self.assertMultiLineEqual(expect, actual)

        module.TestCase = TestCase  # type: ignore[attr-defined]
        sys.modules["expecttest"] = module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="+", help="Class.method (Class: TestPythonDispatch when left out)")
    parser.add_argument("--file", default=os.path.join(os.environ.get("DISPATCHER_UPSTREAM", "tests/upstream"),
                                                       "test_python_dispatch.py"))
    options = parser.parse_args()
    _expecttest()
    path = pathlib.Path(options.file)
    source = path.read_text()
    for line, replacement in MISSING_IMPORTS.items():
        source = source.replace(line, replacement)
    module = types.ModuleType(f"torch_copy_{path.stem}")
    module.__file__ = str(path)
    sys.argv = [sys.argv[0]]  # the copy's run_tests() must not see ours
    # dont_inherit: the copy is compiled as Python compiles a file, not with this
    # script's ``from __future__ import annotations`` (which would turn the copy's
    # annotations into strings that infer_schema cannot resolve).
    source = source.replace('if __name__ == "__main__":', "if False:")
    exec(compile(source, str(path), "exec", dont_inherit=True), module.__dict__)
    for name in options.tests:
        cls, _, method = name.rpartition(".")
        result = unittest.TestResult()
        getattr(module, cls or "TestPythonDispatch")(method).run(result)
        failed = result.failures + result.errors
        print(f"{name}: {'FAIL' if failed else 'SKIP' if result.skipped else 'PASS'}")
        for _, report in failed:
            print(report)


if __name__ == "__main__":
    main()
