"""A computed dispatch table as a picture: ``python -m dispatcher table ... --svg FILE``.

Every one of the 137 runtime slots is a cell coloured by where its entry
comes from (``table_view.SOURCES``).  The per-backend slots form a grid,
functionalities down and backends across (CPU's Dense slot is "CPU",
its AutogradFunctionality slot "AutogradCPU"); the other slots follow in
slot order.  Each alias key with a kernel is a strip of its colour along the
bottom of every slot it can serve, so its expansion shows even where another
kernel wins.  Cells carry ``data-key``, ``data-source`` and ``data-tag``,
and a tooltip with the line dump_table prints.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from . import _svg
from .keys import (
    BackendComponent,
    DispatchKey,
    is_per_backend_functionality_key,
    to_backend_component,
    to_functionality_key,
)
from .operator_entry import TableEntry
from .table_view import AMBIGUOUS, DIRECT, FALLBACK, FALLTHROUGH, MISSING, SOURCES, TableView, entry_text

__all__ = ["COLOURS", "LABELS", "render"]

K = DispatchKey

# Tableau's ten colours (told apart by most colour-blind readers), and
# white for a missing entry.
COLOURS: dict[str, str] = {
    DIRECT: "#4e79a7",
    K.CompositeExplicitAutogradNonFunctional.name: "#76b7b2",
    K.CompositeExplicitAutograd.name: "#59a14f",
    K.CompositeImplicitAutogradNestedTensor.name: "#edc948",
    K.CompositeImplicitAutograd.name: "#f28e2b",
    K.Autograd.name: "#b07aa1",
    K.FuncTorchBatchedDecomposition.name: "#9c755f",
    FALLBACK: "#ff9da7",
    FALLTHROUGH: "#d7d7d7",
    AMBIGUOUS: "#e15759",
    MISSING: "#ffffff",
}
# The short text in a cell (the colour says the same, for who cannot see it).
LABELS: dict[str, str] = {
    DIRECT: "kernel",
    K.CompositeExplicitAutogradNonFunctional.name: "CEA-NF",
    K.CompositeExplicitAutograd.name: "CEA",
    K.CompositeImplicitAutogradNestedTensor.name: "CIA-NT",
    K.CompositeImplicitAutograd.name: "CIA",
    K.Autograd.name: "Autograd",
    K.FuncTorchBatchedDecomposition.name: "Batched",
    FALLBACK: "fallback",
    FALLTHROUGH: "fallthrough",
    AMBIGUOUS: "ambiguous",
    MISSING: "missing",
}
# What the legend says of each source that is not an alias key.
_DESCRIPTIONS = {
    DIRECT: "a kernel registered on the slot's own key",
    FALLBACK: "the key's backend fallback",
    FALLTHROUGH: "a fallthrough kernel or fallback: calls skip the key",
    AMBIGUOUS: "ambiguous AutogradOther: calling it is an error",
    MISSING: "no kernel: calling it is an error",
}
_DARK = {DIRECT, K.CompositeExplicitAutograd.name, K.Autograd.name, K.FuncTorchBatchedDecomposition.name, AMBIGUOUS}

MARGIN = 20
ROW_HEADER = 150  # the functionality names left of the grid
GRID_CELL = 66  # width of a per-backend cell
GRID_WIDTH = ROW_HEADER + GRID_CELL * 16
OTHER_COLUMNS = 6
OTHER_CELL = GRID_WIDTH / OTHER_COLUMNS  # width of another slot's cell (it holds the key's name)
CELL_HEIGHT = 32  # the coloured part; the alias strips go in a band below it
STRIP = 3  # height of an alias key's strip
WIDTH = MARGIN * 2 + GRID_WIDTH
_LEGEND_COLUMNS = 2

BACKENDS = [b for b in BackendComponent if b != BackendComponent.InvalidBit]


def _backend_name(b: BackendComponent) -> str:
    return b.name[: -len("Bit")]


def _band(view: TableView) -> float:
    """Height of the band under each cell that holds the alias strips."""
    return STRIP * len(view.expansions) + 2 if view.expansions else 0


def _cell(parent: ET.Element, view: TableView, index: int, x: float, y: float, width: float,
          name_in_cell: bool) -> None:
    entry: TableEntry = view.entries[index]
    source = view.sources[index]
    group = _svg.child(parent, "g", **{"class": "slot", "data-key": entry.key.name, "data-source": source,
                                       "data-tag": entry.tag})
    detail = entry_text(entry) or "no kernel"
    origin = f" (from {entry.origin.name})" if entry.origin is not None and entry.origin != entry.key else ""
    ET.SubElement(group, "title").text = f"{entry.key.name}: {detail}{origin}"
    _svg.child(group, "rect", **{"class": "cell"}, x=x, y=y, width=width, height=CELL_HEIGHT,
               fill=COLOURS[source], stroke="#9a9a9a", stroke_width=0.5)
    colour = "white" if source in _DARK else ("#8a8a8a" if source == MISSING else "black")
    if name_in_cell:
        _svg.text(group, x + 5, y + 13, entry.key.name, font_size=10, font_weight="bold", fill=colour)
        _svg.text(group, x + 5, y + 26, LABELS[source], font_size=10, fill=colour)
    else:
        _svg.text(group, x + width / 2, y + 20, LABELS[source], font_size=10, fill=colour, text_anchor="middle")
    # One strip per alias key with a kernel, in a fixed place, drawn where it can serve the slot.
    for n, (alias, keys) in enumerate(view.expansions.items()):
        if entry.key in keys:
            _svg.child(group, "rect", **{"class": "alias", "data-alias": alias.name}, x=x + 1,
                       y=y + CELL_HEIGHT + 1 + STRIP * n, width=width - 2, height=STRIP, fill=COLOURS[alias.name])


def render(view: TableView) -> ET.Element:
    """The picture of ``view``."""
    per_backend = {}  # (functionality, backend) -> slot index
    others = []
    for index, entry in enumerate(view.entries):
        functionality = to_functionality_key(entry.key)
        if is_per_backend_functionality_key(functionality):
            per_backend[functionality, to_backend_component(entry.key)] = index
        else:
            others.append(index)
    functionalities = list(dict.fromkeys(f for f, _ in per_backend))
    row_height = CELL_HEIGHT + _band(view)
    grid_top = 100
    others_top = grid_top + row_height * len(functionalities) + 40
    legend_top = others_top + row_height * math.ceil(len(others) / OTHER_COLUMNS) + 30
    height = legend_top + 22 * (math.ceil(len(SOURCES) / _LEGEND_COLUMNS) + len(view.expansions)) + MARGIN

    root = _svg.document(WIDTH, height, view.title)
    _svg.text(root, MARGIN, 32, view.title, font_size=18, font_weight="bold")
    registered = ", ".join(k.name + (" (alias)" if k in view.expansions else "") for k in view.registered)
    _svg.text(root, MARGIN, 54, f"kernels on: {registered or 'none'}", font_size=12)

    grid = _svg.child(root, "g", **{"class": "per-backend"})
    left = MARGIN + ROW_HEADER
    for column, backend in enumerate(BACKENDS):
        _svg.text(grid, left + GRID_CELL * (column + 0.5), grid_top - 8, _backend_name(backend), font_size=10,
                  text_anchor="middle")
    for row, functionality in enumerate(functionalities):
        y = grid_top + row_height * row
        _svg.text(grid, MARGIN, y + 20, functionality.name, font_size=11)
        for column, backend in enumerate(BACKENDS):
            _cell(grid, view, per_backend[functionality, backend], left + GRID_CELL * column, y, GRID_CELL, False)

    rest = _svg.child(root, "g", **{"class": "other-slots"})
    _svg.text(rest, MARGIN, others_top - 10, "The other runtime slots, in priority order:", font_size=12)
    for n, index in enumerate(others):
        row, column = divmod(n, OTHER_COLUMNS)
        _cell(rest, view, index, MARGIN + OTHER_CELL * column, others_top + row_height * row, OTHER_CELL, True)

    _legend(root, view, legend_top)
    return root


def _legend(root: ET.Element, view: TableView, top: float) -> None:
    legend = _svg.child(root, "g", **{"class": "legend"})
    for n, source in enumerate(SOURCES):
        row, column = divmod(n, _LEGEND_COLUMNS)
        x, y = MARGIN + column * GRID_WIDTH / _LEGEND_COLUMNS, top + 22 * row
        count = view.sources.count(source)
        item = _svg.child(legend, "g", **{"class": "source", "data-source": source, "data-count": str(count)})
        _svg.child(item, "rect", x=x, y=y, width=16, height=14, fill=COLOURS[source], stroke="#9a9a9a",
                   stroke_width=0.5)
        description = _DESCRIPTIONS.get(source, f"from the alias key {source}")
        _svg.text(item, x + 22, y + 12, f"{LABELS[source]}: {description} ({count})", font_size=11)
    y = top + 22 * math.ceil(len(SOURCES) / _LEGEND_COLUMNS)
    for alias, keys in view.expansions.items():
        filled = view.sources.count(alias.name)
        item = _svg.child(legend, "g", **{"class": "expansion", "data-alias": alias.name,
                                          "data-serves": str(len(keys)), "data-fills": str(filled)})
        _svg.child(item, "rect", x=MARGIN, y=y + 5, width=16, height=STRIP, fill=COLOURS[alias.name])
        _svg.text(item, MARGIN + 22, y + 12, f"strip: {alias.name} can serve {len(keys)} slots and fills {filled}",
                  font_size=11)
        y += 22
