#!/usr/bin/env python
"""Generate ``legacy_custom_op_golden.json``: torch 2.13's outcome of each case of
tests/golden/legacy_custom_op_cases.py (torch's older CustomOp API).

    /work/venv-torch/bin/python tests/golden/generate_legacy_custom_op_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch
import torch._custom_op.impl
import torch._custom_ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from legacy_custom_op_cases import Api, run  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "legacy_custom_op_golden.json")

api = Api(custom_ops=torch._custom_ops, impl=torch._custom_op.impl, Library=torch.library.Library,
          Tensor=torch.Tensor, randn=torch.randn, no_grad=torch.no_grad)

with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, "cases": run(api, "_legacy_golden")}, f, indent=1, sort_keys=True)
    f.write("\n")
