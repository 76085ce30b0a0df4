#!/usr/bin/env python
"""Generate ``repr_golden.json``: torch 2.13's repr of each tensor of repr_cases.py.

    /work/venv-torch/bin/python tests/golden/generate_repr_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from repr_cases import CASES  # noqa: E402

out = {name: repr(torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=grad))
       for name, (values, dtype, grad) in CASES.items()}
with open(os.path.join(HERE, "repr_golden.json"), "w") as f:
    json.dump({"torch": torch.__version__, "repr": out}, f, indent=1, sort_keys=True)
    f.write("\n")
