"""The benchmark's ratio table as a bar chart: ``python -m dispatcher bench --plot FILE.svg``.

One bar per case, its length the case's ratio to a direct call of the same
kernel on a logarithmic axis (the ratios run from under 2x to about 70x, and
a linear axis would squash the compiled cases together).  Each bar carries
``data-case`` and ``data-ratio`` and is labelled with the ratio as the table
prints it.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Protocol, Sequence

from . import _svg


class PlottedResult(Protocol):
    """What the chart reads of a benchmark row (bench.Result): a Protocol, so
    that drawing needs nothing of the benchmark."""

    @property
    def name(self) -> str: ...

    @property
    def ratio(self) -> float: ...

    @property
    def peer(self) -> bool: ...

__all__ = ["axis_range", "render"]

MARGIN = 20
LABEL_WIDTH = 430  # the case names, right-aligned against the axis
PLOT_WIDTH = 520
ROW = 24
BAR = 16
TOP = 70
BAR_COLOUR = "#4e79a7"
PEER_COLOUR = "#bab0ac"


def axis_range(ratios: Sequence[float]) -> tuple[float, float]:
    """The axis' ends: the powers of ten around the ratios, 1x at least
    below (a direct call)."""
    low = min(1.0, *ratios)
    high = max(10.0, *ratios)
    return 10.0 ** math.floor(math.log10(low)), 10.0 ** math.ceil(math.log10(high))


def _ticks(low: float, high: float) -> list[float]:
    ticks = []
    decade = low
    while decade < high:
        ticks += [decade, 2 * decade, 5 * decade]
        decade *= 10
    return [*ticks, high]


def _label(ratio: float) -> str:
    return f"{ratio:g}x"


def render(results: Sequence[PlottedResult], title: str) -> ET.Element:
    """The chart of ``results``; peers (``result.peer``) in grey."""
    if not results:
        raise ValueError("no benchmark results to plot")
    low, high = axis_range([r.ratio for r in results])
    span = math.log10(high / low)
    left = MARGIN + LABEL_WIDTH

    def x_of(ratio: float) -> float:
        return left + PLOT_WIDTH * math.log10(ratio / low) / span

    bottom = TOP + ROW * len(results)
    root = _svg.document(left + PLOT_WIDTH + 70, bottom + 50, title)
    _svg.text(root, MARGIN, 30, title, font_size=16, font_weight="bold")
    _svg.text(root, MARGIN, 50, "time per call / time of a direct call of the same kernel (median of rounds; "
              "log scale); grey: other libraries", font_size=11)
    axis = _svg.child(root, "g", **{"class": "axis"})
    for tick in _ticks(low, high):
        x = x_of(tick)
        _svg.child(axis, "line", **{"class": "tick", "data-ratio": f"{tick:g}"}, x1=x, x2=x, y1=TOP - 4,
                   y2=bottom, stroke="#dddddd" if tick != 1 else "#555555", stroke_width=1)
        _svg.text(axis, x, bottom + 16, _label(tick), font_size=10, text_anchor="middle")
    for n, result in enumerate(results):
        y = TOP + ROW * n
        row = _svg.child(root, "g", **{"class": "case"})
        _svg.text(row, left - 8, y + BAR - 4, result.name.replace("`", ""), font_size=11, text_anchor="end")
        end = x_of(result.ratio)
        _svg.child(row, "rect", **{"class": "bar", "data-case": result.name, "data-ratio": f"{result.ratio:.2f}"},
                   x=x_of(low), y=y + (ROW - BAR) / 2 - 2, width=end - x_of(low), height=BAR,
                   fill=PEER_COLOUR if result.peer else BAR_COLOUR)
        _svg.text(row, end + 4, y + BAR - 4, f"{result.ratio:.2f}x", font_size=10, **{"class": "value"})
    return root
