#!/usr/bin/env python
"""Generate ``view_inplace_golden.json``: torch 2.13's results of view_inplace_cases.py.

    /work/venv-torch/bin/python tests/golden/generate_view_inplace_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch.testing._internal import two_tensor  # noqa: E402
from view_inplace_cases import run, run_two_tensor  # noqa: E402

with open(os.path.join(HERE, "view_inplace_golden.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": run(torch), "two_tensor": run_two_tensor(torch, two_tensor)}, f,
              indent=1, sort_keys=True)
    f.write("\n")
