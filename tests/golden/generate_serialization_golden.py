#!/usr/bin/env python
"""Generate ``serialization_golden.json``: torch 2.13's results of serialization_cases.py.

    /work/venv-torch/bin/python tests/golden/generate_serialization_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch
import torch.multiprocessing.reductions
import torch.utils._python_dispatch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from serialization_cases import run  # noqa: E402

with open(os.path.join(HERE, "serialization_golden.json"), "w") as f:
    cases = run(torch, torch.multiprocessing.reductions, torch.utils._python_dispatch)
    json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1, sort_keys=True)
    f.write("\n")
