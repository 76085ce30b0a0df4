#!/usr/bin/env python
"""Generate ``library_examples_golden.json``: what torch 2.13 prints and raises
running torch.library's documented examples (tests/golden/library_examples.py
says which, and how they are run), each in a process of its own.

    /work/venv-torch/bin/python tests/golden/generate_library_examples_golden.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import torch.library

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from library_examples import examples  # noqa: E402

OUT = os.path.join(HERE, "library_examples_golden.json")

with open(torch.library.__file__) as f:
    found = examples(f.read())
results = {}
for name, code in found.items():
    done = subprocess.run([sys.executable, os.path.join(HERE, "library_examples.py")], input=code, text=True,
                          capture_output=True, check=True)
    results[name] = json.loads(done.stdout.strip().splitlines()[-1])
with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, "examples": results}, f, indent=1, sort_keys=True)
    f.write("\n")
