#!/usr/bin/env python
"""Generate ``api_gaps_golden.json``: torch 2.13's answers to api_gap_cases.py
(dtype names as ScalarType defaults, opaque schema types, warn_always, the
Meta fallback's error, custom operators' list arguments, ops namespaces), for
tests/test_api_gaps.py.

    cd /tmp && /work/venv-torch/bin/python /path/to/tests/golden/generate_api_gaps_golden.py

(From outside the repository: torch must not find its tests/ directory's shim.)
"""
from __future__ import annotations

import json
import os
import sys

import torch
import torch._custom_ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_gap_cases import run  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_gaps_golden.json")

with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, **run(torch, torch._custom_ops)}, f, indent=1, sort_keys=True)
    f.write("\n")
