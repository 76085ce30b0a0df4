#!/usr/bin/env python
"""Generate ``autocast_cpu_golden.json``: torch 2.13's results of
autocast_cpu_cases.py, and the aten operators torch has an AutocastCPU kernel
for (of the catalog dispatcher/catalog/torch-2.13.txt).

    /work/venv-torch/bin/python tests/golden/generate_autocast_cpu_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from autocast_cpu_cases import run  # noqa: E402

CATALOG = os.path.join(HERE, "..", "..", "dispatcher", "catalog", "torch-2.13.txt")


def autocast_cpu_operators() -> list[str]:
    found = []
    with open(CATALOG) as f:
        for line in f:
            if not line.startswith("aten::"):
                continue
            name = line.split("(")[0]
            try:
                if torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastCPU"):
                    found.append(name)
            except RuntimeError:  # a catalog name torch has only as a JIT operator
                pass
    return sorted(found)


with open(os.path.join(HERE, "autocast_cpu_golden.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": run(torch), "operators": autocast_cpu_operators()}, f,
              indent=1, sort_keys=True)
    f.write("\n")
