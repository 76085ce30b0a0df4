#!/usr/bin/env python
"""Generate ``storage_golden.json``: torch 2.13's storages and ``Tensor.set_``
for tests/test_prototype_storage.py: each expression of storage_cases.py
evaluated with torch (its value, or its error).

    /work/venv-torch/bin/python tests/golden/generate_storage_golden.py
"""
from __future__ import annotations

import json
import os
import sys
import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from storage_cases import EXPRESSIONS, mode_sees, set_, shares  # noqa: E402


def evaluate(expression):
    scope = {"torch": torch, "TorchDispatchMode": TorchDispatchMode, "set_": set_, "shares": shares,
             "mode_sees": mode_sees}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        try:
            return {"value": eval(expression, scope)}
        except Exception as exc:  # noqa: BLE001
            return {"error": [type(exc).__name__, str(exc)]}


golden = {"torch": torch.__version__, "expressions": {e: evaluate(e) for e in EXPRESSIONS}}
with open(os.path.join(HERE, "storage_golden.json"), "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
    f.write("\n")
