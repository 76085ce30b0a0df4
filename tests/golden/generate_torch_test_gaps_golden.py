#!/usr/bin/env python
"""Generate ``torch_test_gaps_golden.json``: torch 2.13's answers to
torch_test_gap_cases.py (the features PyTorch's test/test_custom_ops.py
needed), for tests/test_torch_test_gaps.py.

    /work/venv-torch/bin/python tests/golden/generate_torch_test_gaps_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch
import torch.utils._python_dispatch  # noqa: F401  (torch.utils._python_dispatch, as the cases read it)
from torch._library.simple_registry import singleton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_test_gap_cases import run  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_test_gaps_golden.json")


def fake_source(qualname: str) -> object:
    kernel = singleton.find(qualname).fake_impl.kernel
    return None if kernel is None else kernel.source


with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, **run(torch, fake_source)}, f, indent=1, sort_keys=True)
    f.write("\n")
