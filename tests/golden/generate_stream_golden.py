#!/usr/bin/env python
"""Generate ``stream_golden.json``: torch 2.13's torch.Stream, for tests/test_streams.py.

For each construction of STREAMS: its repr, numbers, device (or the error
making it raises), and what query() gives; the expressions are evaluated
with ``Stream`` bound to torch.Stream.

    /work/venv-torch/bin/python tests/golden/generate_stream_golden.py
"""
from __future__ import annotations

import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

STREAMS = [
    "Stream()", "Stream('cpu')", "Stream(device='cpu', priority=1)", "Stream('meta:0')", "Stream('cuda')",
    "Stream(1, 2, 3)", "Stream(stream_id=1, device_index=2, device_type=3)",
    "Stream(stream_id=0, device_index=-1, device_type=0)", "Stream(stream_id=0, device_index=0, device_type=99)",
    "Stream(stream_id='a', device_index=0, device_type=0)",
] + [f"Stream(stream_id=5, device_index=0, device_type={n})" for n in range(21) if n != 11]  # 11: metal, no torch.device


def error(exc):
    return [type(exc).__name__, str(exc).split("  (Could this error message")[0]]


def facts(expression):
    try:
        s = eval(expression, {"Stream": torch.Stream})
    except Exception as exc:  # noqa: BLE001
        return {"error": error(exc)}
    out = {"repr": repr(s), "numbers": [s.stream_id, s.device_index, s.device_type], "device": repr(s.device)}
    try:
        out["query"] = s.query()
    except Exception as exc:  # noqa: BLE001
        out["query"] = error(exc)
    return out


golden = {"torch": torch.__version__, "streams": {expression: facts(expression) for expression in STREAMS}}
with open(os.path.join(HERE, "stream_golden.json"), "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
    f.write("\n")
