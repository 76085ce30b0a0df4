#!/usr/bin/env python
"""Generate ``opcheck_example_golden.json``: torch 2.13's opcheck on its own
documented example (tests/golden/opcheck_example.py), per CPU sample: each
test's outcome and what ``opcheck`` raises.

    /work/venv-torch/bin/python tests/golden/generate_opcheck_example_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opcheck_example import Api, run  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opcheck_example_golden.json")

api = Api(
    custom_op=torch.library.custom_op,
    opcheck=torch.library.opcheck,
    Tensor=torch.Tensor,
    numpy_mul_impl=lambda x, y: torch.from_numpy(x.numpy(force=True) * y).to(x.device),
    empty_like=torch.empty_like,
    samples=lambda: [(torch.randn(3), 3.14), (torch.randn(1, 10, requires_grad=True), 1.234)],
)

with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, "samples": run(api, "mylib")}, f, indent=1, sort_keys=True)
    f.write("\n")
