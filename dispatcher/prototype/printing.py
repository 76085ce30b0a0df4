"""A tensor's text as torch 2.13's ``repr`` writes it (torch/_tensor_str.py
with its default print options): one width for every element, chosen from
the values (integers of a floating tensor as ``2.``, four decimals, or
scientific notation when the magnitudes are far apart), 80 columns, and
tensors of more than 1000 elements summarised to three items at each edge.

Code and documentation written against torch compare these texts (doctest
outputs, examples), so the prototype prints what torch prints for the same
values.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["tensor_text", "text_with_suffixes"]

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    """torch's _Formatter: how every element of one tensor is written."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        low, high = float(magnitudes.min()), float(magnitudes.max())
        listed = finite.tolist()
        self.int_mode = all(value == math.ceil(value) for value in listed)
        far_apart = high / low > 1000.0 or high > 1.0e8 or (not self.int_mode and low < 1.0e-4)
        if far_apart:
            self.sci_mode = True
            widths = [len(f"{value:.{PRECISION}e}") for value in listed]
        elif self.int_mode:
            widths = [len(f"{value:.0f}") + 1 for value in listed]  # the "." that says floating
        else:
            widths = [len(f"{value:.{PRECISION}f}") for value in listed]
        self.max_width = max([self.max_width, *widths])

    def format(self, value: object) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):  # type: ignore[arg-type]
                text += "."
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.max_width - len(text)) + text


def _summarized(values: np.ndarray) -> np.ndarray:
    """torch's get_summarized_data: the elements a summarised print shows."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        ends = [values[i] for i in range(EDGEITEMS)] + [values[i] for i in range(len(values) - EDGEITEMS, len(values))]
    else:
        ends = list(values)
    if values.ndim == 1:
        return np.array(ends, dtype=values.dtype)
    return np.stack([_summarized(part) for part in ends])


def _vector(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    per_line = max(1, math.floor((LINEWIDTH - indent) / (formatter.max_width + 2)))
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        data = ([formatter.format(v) for v in values[:EDGEITEMS].tolist()] + [" ..."]
                + [formatter.format(v) for v in values[-EDGEITEMS:].tolist()])
    else:
        data = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatter)
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        slices = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(EDGEITEMS)] + ["..."]
                  + [_nested(values[i], indent + 1, summarize, formatter)
                     for i in range(values.shape[0] - EDGEITEMS, values.shape[0])])
    else:
        slices = [_nested(values[i], indent + 1, summarize, formatter) for i in range(values.shape[0])]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_text(values: np.ndarray, floating: bool, suffixes: Sequence[str], prefix: str = "tensor(") -> str:
    """``prefix`` + the values as torch writes them + ``suffixes`` (``dtype=...``,
    ``grad_fn=<...>``), wrapped at 80 columns as torch's _add_suffixes wraps them."""
    indent = len(prefix)
    if values.size == 0:
        body = "[]"
    else:
        summarize = values.size > THRESHOLD
        formatter = _Formatter(_summarized(values) if summarize else values, floating)
        body = _nested(values, indent, summarize, formatter)
    return text_with_suffixes(prefix, body, suffixes)


def text_with_suffixes(prefix: str, body: str, suffixes: Sequence[str]) -> str:
    """``prefix`` + ``body`` + ``suffixes``, wrapped as torch's _add_suffixes wraps them
    (``body``: the values as written, or a subclass's ``tensor_contents``)."""
    indent = len(prefix)
    parts = [prefix + body]
    last_line = len(parts[0]) - parts[0].rfind("\n") + 1  # torch's count (one more without a newline)
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
