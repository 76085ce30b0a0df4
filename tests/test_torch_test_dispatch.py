"""PyTorch's own test/test_dispatch.py, run through dispatcher.compat.torch_C.

PyTorch's file is not part of this repository: it is read, when the tests
are collected, from the path in ``DISPATCHER_TORCH_TEST_DISPATCH``, else from
``$DISPATCHER_UPSTREAM/test_dispatch.py``, else from
``tests/upstream/pytorch_test_dispatch.py`` (copy PyTorch's
``test/test_dispatch.py`` there; the name keeps pytest from collecting it as
it is, importing torch).  Without it the one test here is skipped.
PyTorch is BSD-3-Clause licensed (Copyright (c) 2016- Facebook, Inc. and its
contributors; see PyTorch's LICENSE); a copy placed at that path keeps
PyTorch's license notice with it.

The file is run as PyTorch wrote it but for these edits, made to its text as
it is read (``EDITS``; each matches one whole line, at most once, and the first
must match):

1. ``import torch._C as C`` becomes ``import dispatcher.compat.torch_C as C``;
2. ``from torch.testing._internal.common_utils import ...`` imports the same
   names from ``tests._torch_testing`` (unittest's TestCase with
   expecttest's ``assertExpectedInline``, ``run_tests``, ``CapturedOutput``);
3. ``from torch._python_dispatcher import PythonDispatcher`` imports
   ``dispatcher.python_dispatcher``'s;
4. ``import torch.utils.cpp_extension`` and ``import torch`` are commented out
   (the tests that use torch itself are skipped: ``SKIPS``).

Every test runs on both engines, on the engine's world registry (conftest's
``compat``), with this package's own standard fallbacks: compat's dump table
prints them as torch's framework fallbacks, the lines PyTorch's tests mask
to ``registered in pytorch framework``.  A test that fails here fails under
pytest with unittest's report; ``SKIPS`` says why each skipped test cannot
run without torch.  (Measured with the 2.15-era copy of cyyever/pytorch, test/test_dispatch.py
at commit 1669dd43a48f7baac5508b6793a3229c3762349c:
every test passes on both engines but the C++-extension one.)
"""
from __future__ import annotations

import os
import pathlib
import re
import types
import unittest
from typing import Optional

import pytest

DEFAULT_PATH = pathlib.Path(__file__).parent / "upstream" / "pytorch_test_dispatch.py"
UPSTREAM_COPY = (pathlib.Path(os.environ["DISPATCHER_UPSTREAM"]) / "test_dispatch.py"
                 if os.environ.get("DISPATCHER_UPSTREAM") else DEFAULT_PATH)
PATH = pathlib.Path(os.environ.get("DISPATCHER_TORCH_TEST_DISPATCH") or UPSTREAM_COPY)

# (a whole line, what it becomes, whether the file must have it)
EDITS: list[tuple[str, str, bool]] = [
    (r"import torch\._C as C", "import dispatcher.compat.torch_C as C", True),
    (r"from torch\.testing\._internal\.common_utils import (?P<names>.+)", r"from tests._torch_testing import \g<names>", False),
    (r"from torch\._python_dispatcher import PythonDispatcher", "from dispatcher.python_dispatcher import PythonDispatcher", False),
    (r"import torch\.utils\.cpp_extension", "# import torch.utils.cpp_extension  (edit 4: no torch)", False),
    (r"import torch", "# import torch  (edit 4: no torch)", False),
]

# The tests that need torch itself, and why they cannot run here.
SKIPS = {
    "test_find_dangling_impls_ext": "builds a C++ extension against libtorch (torch.utils.cpp_extension) that registers "
                                    "a kernel from C++; this package has no C++ registration API",
    "test_quantized_structured_not_implemented": "calls aten's quantized kernels on torch tensors "
                                                 "(torch.quantize_per_tensor, torch.bmm); this package has no aten kernels",
    "test_dispatch_print_registrations_for_dispatch_key": "expects the operators torch registers at import (aten's, "
                                                           "with CPU kernels); this package's registry starts empty",
}


def edited_source(text: str) -> str:
    """PyTorch's file with EDITS made."""
    for pattern, replacement, required in EDITS:
        text, count = re.subn(rf"^{pattern}$", replacement, text, flags=re.MULTILINE)
        if count > 1 or (required and count == 0):
            raise ValueError(f"{PATH}: the line {pattern!r} occurs {count} times; the edits expect it once")
    return text


def load_upstream() -> Optional[types.ModuleType]:
    if not PATH.is_file():
        return None
    module = types.ModuleType("torch_test_dispatch")
    module.__file__ = str(PATH)
    exec(compile(edited_source(PATH.read_text()), str(PATH), "exec"), module.__dict__)
    return module


UPSTREAM = load_upstream()
CASES = [] if UPSTREAM is None else [
    (name, method)
    for name, cls in vars(UPSTREAM).items()
    if isinstance(cls, type) and issubclass(cls, unittest.TestCase)
    for method in unittest.TestLoader().getTestCaseNames(cls)
]


if UPSTREAM is None:

    def test_pytorch_test_dispatch_is_not_here():
        pytest.skip(f"PyTorch's test/test_dispatch.py is not at {PATH}: copy it there or set DISPATCHER_TORCH_TEST_DISPATCH")

else:

    @pytest.mark.parametrize("case", CASES, ids=[f"{name}.{method}" for name, method in CASES])
    def test_pytorch_test_dispatch(case, world, compat):
        name, method = case
        if method in SKIPS:
            pytest.skip(SKIPS[method])
        result = unittest.TestResult()
        getattr(UPSTREAM, name)(method).run(result)
        problems = result.failures + result.errors
        if problems:
            pytest.fail("\n".join(report for _, report in problems), pytrace=False)
        if result.skipped:
            pytest.skip(result.skipped[0][1])


def test_the_edits_swap_the_imports_only():
    header = (
        "import torch._C as C\n"
        "from torch.testing._internal.common_utils import TestCase, run_tests\n"
        "from torch._python_dispatcher import PythonDispatcher\n"
        "import torch.utils.cpp_extension\n"
        "import torch\n"
        "x = 'import torch._C as C'\n"
    )
    assert edited_source(header) == (
        "import dispatcher.compat.torch_C as C\n"
        "from tests._torch_testing import TestCase, run_tests\n"
        "from dispatcher.python_dispatcher import PythonDispatcher\n"
        "# import torch.utils.cpp_extension  (edit 4: no torch)\n"
        "# import torch  (edit 4: no torch)\n"
        "x = 'import torch._C as C'\n"
    )
    with pytest.raises(ValueError, match="occurs 0 times"):
        edited_source("import os\n")
    with pytest.raises(ValueError, match="occurs 2 times"):
        edited_source("import torch._C as C\nimport torch._C as C\n")
