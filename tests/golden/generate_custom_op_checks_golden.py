#!/usr/bin/env python
"""Generate ``custom_op_checks_golden.json``: torch 2.13's answers to
custom_op_check_cases.py (opcheck's comparisons, register_vmap's decorator
forms), for tests/test_custom_op_checks.py.

    /work/venv-torch/bin/python tests/golden/generate_custom_op_checks_golden.py
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Optional

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from custom_op_check_cases import run  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "custom_op_checks_golden.json")


def close(actual: Any, expected: Any, rtol: Optional[float], atol: Optional[float]) -> Optional[str]:
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol)
    except AssertionError as exc:
        return str(exc)
    return None


with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, **run(torch, close)}, f, indent=1, sort_keys=True)
    f.write("\n")
