"""The operator catalog: every operator schema of PyTorch 2.13, defined on first use.

``torch-2.13.txt`` (written by ``tools/record_catalog.py`` under torch) holds
the 4374 schemas torch 2.13 knows, in its canonical printed form, grouped by
operator name, each operator's overloads in torch's registration order, with
their tags.  A registry given a ``Catalog`` (the default registry is) treats
them as defined by a library of its own: ``ops.aten.add.Tensor``,
``find_op("aten::add.Tensor")`` and ``Library("aten", "IMPL")`` find them,
and a second definition gets torch's duplicate-definition error.

Note [The catalog is read on first use]
Importing the package must not pay for 4374 schemas: the catalog reads its
file's two header lines (the namespaces, so that ``ops.aten`` can exist, and
those torch defines in a DEF library) when asked for them, the rest when
first asked for an operator (only to find each name's lines: an operator's
CatalogOverloads are made when it is asked for), and makes an overload's
schema only when the registry defines it -- from the catalog's parts file if
it has one (Note [Catalog parts] in parts.py), else by parsing it.  (The
registry defines an operator's overloads when something first needs them:
Note [Packets of operators not defined yet] in dispatcher/_engine/core.py.)
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Optional

from ..schema import FunctionSchema
from .parts import CatalogParts

__all__ = ["Catalog", "CatalogOverload", "TORCH_2_13"]

_NAMESPACES_HEADER = "# namespaces: "
_DEF_NAMESPACES_HEADER = "# namespaces with a DEF library: "


class CatalogOverload:
    """One catalog line: a schema's text and its operator tags; ``number``
    counts the catalog's schemas in file order, from 0; ``operator_name``,
    ``ns::name.overload`` (``ns::name`` for the unnamed overload) as the
    registry keys it, and ``overload_name`` ("" for the unnamed one), taken
    from the text."""

    __slots__ = ("schema", "tags", "number", "operator_name", "overload_name")

    def __init__(self, schema: str, tags: tuple[str, ...], number: int = -1) -> None:
        self.schema = schema
        self.tags = tags
        self.number = number
        self.operator_name = schema.partition("(")[0]
        self.overload_name = self.operator_name.partition(".")[2]

    def __repr__(self) -> str:
        return f"CatalogOverload({self.schema!r}, tags={self.tags!r})"


class Catalog:
    """The schemas of one catalog file, by ``ns::name``; see the module docstring."""

    def __init__(self, path: str, origin: str, parts_path: Optional[str] = None) -> None:
        self.path = path
        # Its schemas split into parts (Note [Catalog parts] in parts.py), if it has them.
        self._parts = None if parts_path is None else CatalogParts(parts_path)
        # What a dump prints as the def's "registered at" (torch names its RegisterSchema.cpp).
        self.origin = origin
        self._lock = threading.Lock()
        self._header: Optional[tuple[tuple[str, ...], frozenset[str]]] = None
        # Once read (_read): the schema lines, and each ns::name's positions among them.
        self._lines: list[str] = []
        self._by_name: Optional[dict[str, Sequence[int]]] = None
        # ns::name -> its CatalogOverloads, made when first asked for.
        self._overloads: dict[str, tuple[CatalogOverload, ...]] = {}

    def __repr__(self) -> str:
        return f"Catalog({os.path.basename(self.path)})"

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces with catalog operators."""
        return self._headers()[0]

    @property
    def def_namespaces(self) -> frozenset[str]:
        """The namespaces torch defines in a DEF library (TORCH_LIBRARY): a
        user's DEF library of one of them gets torch's "only a single
        TORCH_LIBRARY" error."""
        return self._headers()[1]

    def _headers(self) -> tuple[tuple[str, ...], frozenset[str]]:
        if self._header is None:
            with open(self.path, encoding="utf-8") as f:
                self._header = _parse_headers(f.readline(), f.readline(), self.path)
        return self._header

    def overloads(self, qualified_name: str) -> tuple[CatalogOverload, ...]:
        """The overloads of ``ns::name`` in torch's order; () if the catalog has none."""
        made = self._overloads.get(qualified_name)
        if made is None:
            positions = self._index().get(qualified_name)
            if positions is None:
                return ()
            lines = self._lines
            # Two threads may both make them: equal tuples, one kept.
            made = self._overloads[qualified_name] = tuple([_overload(lines[i], i) for i in positions])
        return made

    def has(self, qualified_name: str) -> bool:
        """Whether the catalog has an operator ``ns::name`` (nothing of it is made)."""
        return qualified_name.partition("::")[0] in self.namespaces and qualified_name in self._index()

    def parsed(self, overloads: tuple[CatalogOverload, ...]) -> list[FunctionSchema]:
        """The schemas of ``overloads`` (this catalog's), as FunctionSchema.parse
        gives them: from the catalog's parts if it has them (Note [Catalog parts])."""
        parts = self._parts
        if parts is None:
            return [FunctionSchema.parse(o.schema) for o in overloads]
        count = len(self._lines)
        # (A CatalogOverload made by hand has no line number: its text is parsed.)
        return [parts.schema(o.number, o.schema, count) if o.number >= 0 else FunctionSchema.parse(o.schema)
                for o in overloads]

    def names(self) -> list[str]:
        """Every ``ns::name`` of the catalog, in file order."""
        return list(self._index())

    def operator_names(self) -> list[str]:
        """Every ``ns::name.overload`` (``ns::name`` for a default overload), in file order."""
        return [schema[:schema.index("(")] for schema in self.schemas()]

    def schemas(self) -> list[str]:
        """Every schema text of the catalog, in file order."""
        index = self._index()
        lines = self._lines
        return [lines[i].partition("\t")[0] for positions in index.values() for i in positions]

    def _index(self) -> dict[str, Sequence[int]]:
        index = self._by_name
        if index is None:
            with self._lock:
                index = self._by_name
                if index is None:
                    self._lines, index = _read(self.path)
                    self._by_name = index
        return index


def _overload(line: str, number: int) -> CatalogOverload:
    schema, _, tags = line.partition("\t")
    return CatalogOverload(schema, tuple(tags.split()), number)


def _parse_headers(first: str, second: str, path: str) -> tuple[tuple[str, ...], frozenset[str]]:
    if not first.startswith(_NAMESPACES_HEADER) or not second.startswith(_DEF_NAMESPACES_HEADER):
        raise ValueError(f"{path}: the first two lines must be {_NAMESPACES_HEADER!r}... and "
                         f"{_DEF_NAMESPACES_HEADER!r}...")
    namespaces = tuple(first[len(_NAMESPACES_HEADER):].split())
    claimed = frozenset(second[len(_DEF_NAMESPACES_HEADER):].split())
    if not claimed <= set(namespaces):
        raise ValueError(f"{path}: DEF namespaces {sorted(claimed - set(namespaces))} are not catalog namespaces")
    return namespaces, claimed


def _read(path: str) -> tuple[list[str], dict[str, Sequence[int]]]:
    """The schema lines of the catalog file, and the positions among them of
    each ``ns::name``'s, by name in file order.  (Read at the first use of any
    catalog operator: `import dispatcher.prototype` pays for it, so the lines
    are only split into names here, each operator's CatalogOverloads made
    when it is asked for.)"""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    namespaces = set(_parse_headers(lines[0], lines[1], path)[0])
    del lines[:2]
    # The name is everything before the overload's "." or the "(": cheap
    # to find without parsing, which waits for the operator's first use.
    names = [line[:line.index("(")].partition(".")[0] for line in lines]
    if not {name.partition("::")[0] for name in set(names)} <= namespaces:
        number, qualified = next((n, q) for n, q in enumerate(names) if q.partition("::")[0] not in namespaces)
        raise ValueError(f"{path}:{number + 3}: {qualified} is not in a namespace of the first line")
    # Each name's first and last line, found without a Python loop (dict keeps
    # the first insertion's order and the last value); the catalog writes an
    # operator's overloads together, so they are the lines between.
    last = dict(zip(names, range(len(names))))
    first = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))
    if sum(last.values()) - sum(first.values()) + len(last) == len(names):
        return lines, {name: range(first[name], end + 1) for name, end in last.items()}
    grouped: dict[str, list[int]] = {}  # overloads apart from each other: a file not written by the tool
    for number, name in enumerate(names):
        grouped.setdefault(name, []).append(number)
    return lines, {name: tuple(positions) for name, positions in grouped.items()}


# os.path, not pathlib: importing pathlib would cost `import dispatcher` ~5 ms.
TORCH_2_13 = Catalog(
    os.path.join(os.path.dirname(__file__), "torch-2.13.txt"),
    "registered by the torch 2.13 operator catalog (dispatcher/catalog/torch-2.13.txt)",
    os.path.join(os.path.dirname(__file__), "torch-2.13.parts.txt"),
)
