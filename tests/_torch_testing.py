"""The few names of ``torch.testing._internal.common_utils`` that PyTorch's
test/test_dispatch.py imports, without torch (see test_torch_test_dispatch.py)."""
from __future__ import annotations

import contextlib
import enum
import io
import unittest
from typing import Any, Optional

__all__ = ["CapturedOutput", "HardwareClassification", "TestCase", "run_tests"]


class HardwareClassification(enum.Enum):
    """Which hardware a torch test class needs (recent test/test_dispatch.py
    sets ``hw_classification = HardwareClassification.GENERIC``); nothing here
    reads it."""

    GENERIC = "generic"


class TestCase(unittest.TestCase):
    """unittest's TestCase with expecttest's ``assertExpectedInline``, as torch's
    TestCase runs it when not accepting new output: the text must equal the
    expected text exactly."""

    def assertExpectedInline(self, actual: Any, expect: str, skip: int = 0) -> None:
        self.assertMultiLineEqual(expect, actual if isinstance(actual, str) else str(actual))


class CapturedOutput:
    """What is printed to ``sys.stdout`` inside ``with``, as ``capturedtext``
    (older torch tests capture ``_dispatch_print_registrations_for_dispatch_key``)."""

    def __init__(self) -> None:
        self.capturedtext = ""
        self._buffer = io.StringIO()
        self._redirect: Optional[contextlib.redirect_stdout[io.StringIO]] = None

    def __enter__(self) -> "CapturedOutput":
        self._redirect = contextlib.redirect_stdout(self._buffer)
        self._redirect.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        assert self._redirect is not None
        self._redirect.__exit__(*exc_info)
        self.capturedtext = self._buffer.getvalue()


def run_tests() -> None:
    unittest.main()
