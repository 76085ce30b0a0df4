"""Tensors whose ``repr`` torch 2.13 and the prototype must write alike:
``CASES`` (name -> (values as nested lists, dtype name, requires_grad)),
made by generate_repr_golden.py on torch and read by tests/test_prototype_repr.py."""
from __future__ import annotations

import numpy as np


def _values() -> dict[str, tuple[object, str]]:
    rng = np.random.default_rng(23)
    cases: dict[str, tuple[object, str]] = {
        "randn 3": (rng.standard_normal(3).astype(np.float32).tolist(), "float32"),
        "randn 2x3": (rng.standard_normal((2, 3)).astype(np.float32).tolist(), "float32"),
        "randn 2x2x3": (rng.standard_normal((2, 2, 3)).astype(np.float32).tolist(), "float32"),
        "wide row wraps": (rng.standard_normal(30).astype(np.float32).tolist(), "float32"),
        "integral floats": ([1.0, -2.0, 30.0], "float32"),
        "integral floats far apart": ([1.0, 20000.0], "float32"),
        "small values": ([1e-5, 0.5], "float32"),
        "large values": ([1e9, 2.5], "float32"),
        "zeros": ([0.0, 0.0], "float32"),
        "inf and nan": ([float("inf"), float("nan"), 1.5], "float32"),
        "0-d": (3.25, "float32"),
        "float64": ([0.5, -1.25, 3.0], "float64"),
        "float16": ([1.5, 2.25, -0.1], "float16"),
        "int64": ([1, -20, 300], "int64"),
        "int64 2x2": ([[1, 2], [30, 4]], "int64"),
        "bool": ([True, False], "bool"),
        "empty": ([], "float32"),
        "empty int64": ([], "int64"),
        "empty 0x3": (np.zeros((0, 3)).tolist(), "float32"),
        "summarised 2000": (np.arange(2000, dtype=np.float32).tolist(), "float32"),
        "summarised 40x40": ((np.arange(1600, dtype=np.float32).reshape(40, 40) / 7).tolist(), "float32"),
        "many columns 4x30 float64": (rng.standard_normal((4, 30)).tolist(), "float64"),
    }
    return cases


CASES = {name: (values, dtype, False) for name, (values, dtype) in _values().items()}
CASES["requires grad"] = ([0.5, 1.0], "float32", True)
CASES["float64 requires grad (suffixes wrap)"] = (np.linspace(-1, 1, 9).tolist(), "float64", True)
