"""The catalog's schemas split into their arguments and returns, for a first use without parsing.

Note [Catalog parts]
A catalog operator's first use defines all its overloads, and parsing their
schemas was most of what that cost: tokenizing each text and walking the
grammar, even where every argument had been parsed before (in another
schema).  ``torch-2.13.parts.txt``, written from ``torch-2.13.txt`` by
``tools/write_catalog_parts.py``, holds each distinct argument and return of
the catalog once (``a`` a positional argument, ``k`` a keyword-only one,
``r`` a return, then its text), and then, for each catalog line in file
order, the numbers of its arguments and of its returns
(``args;returns``, ``...`` for a vararg or varret).  A schema is then its
parts, looked up by number (each parsed by the schema parser the first time
any schema needs it), put together by ``schema.schema_from_parts``, which
gives what ``FunctionSchema.parse`` of the line's text gives
(tests/test_catalog_parts.py checks every line).  A parts file that does not
match its catalog (another number of lines) is not used: the schemas are
parsed, as without it.
"""
from __future__ import annotations

import threading
from typing import Optional, Union

from ..schema import Argument, FunctionSchema, Return, parse_schema_element, schema_from_parts

__all__ = ["CatalogParts", "ELEMENT_KINDS", "format_parts"]

_HEADER = "# parts of "
_SCHEMAS = "# schemas"
# An element's kind: a positional argument, a keyword-only one, a return.
ELEMENT_KINDS = ("a", "k", "r")
_VARIADIC = "..."


# What a read parts file holds: the element texts ("a Tensor self"), the
# schema lines ("0,1;2"), and the elements parsed so far (None: not yet).
_Loaded = tuple[list[str], list[str], list[Optional[Union[Argument, Return]]]]


class CatalogParts:
    """The parts file of one catalog, read when a schema is first asked for."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        # None: not read yet; () once read, if it cannot serve (missing, or not this catalog's).
        self._loaded: Optional[Union[_Loaded, tuple[()]]] = None

    def schema(self, number: int, text: str, lines: int) -> FunctionSchema:
        """The schema of catalog line ``number`` (0 for the first schema),
        whose text is ``text``, of a catalog of ``lines`` schemas: from its
        parts, or parsed if there are none for this catalog."""
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                loaded = self._loaded
                if loaded is None:
                    loaded = self._loaded = _read(self.path, lines)
        if not loaded:
            return FunctionSchema.parse(text)
        argument_numbers, _, return_numbers = loaded[1][number].partition(";")
        arguments, is_vararg = _elements(loaded, argument_numbers)
        returns, is_varret = _elements(loaded, return_numbers)
        return schema_from_parts(text, arguments, returns, is_vararg, is_varret)  # type: ignore[arg-type]


def _elements(loaded: _Loaded, numbers: str) -> tuple[tuple[Union[Argument, Return], ...], bool]:
    """The elements numbered in ``numbers`` ("0,1,..."), and whether a "..." ends them."""
    if not numbers:
        return (), False
    element_texts, _, elements = loaded
    found = []
    variadic = False
    for item in numbers.split(","):
        if item == _VARIADIC:
            variadic = True
            continue
        i = int(item)
        element = elements[i]
        if element is None:
            text = element_texts[i]
            element = elements[i] = parse_schema_element(text[0], text[2:])
        found.append(element)
    return tuple(found), variadic


def _read(path: str, lines: int) -> Union[_Loaded, tuple[()]]:
    try:
        with open(path, encoding="utf-8") as f:
            content = f.read().splitlines()
    except OSError:
        return ()
    try:
        split = content.index(_SCHEMAS)
    except ValueError:
        return ()
    element_texts = content[1:split]
    schema_lines = content[split + 1:]
    if len(schema_lines) != lines:
        return ()
    return element_texts, schema_lines, [None] * len(element_texts)


def format_parts(catalog_name: str, schemas: list[FunctionSchema]) -> str:
    """The parts file of a catalog named ``catalog_name`` whose schemas, in file order, are ``schemas``."""
    numbers: dict[str, int] = {}
    elements: list[str] = []
    schema_lines: list[str] = []

    def number(kind: str, text: str) -> str:
        key = f"{kind} {text}"
        n = numbers.get(key)
        if n is None:
            n = numbers[key] = len(elements)
            elements.append(key)
        return str(n)

    for schema in schemas:
        argument_numbers = [number("k" if a.kwarg_only else "a", str(a)) for a in schema.arguments]
        if schema.is_vararg:
            argument_numbers.append(_VARIADIC)
        return_numbers = [number("r", str(r)) for r in schema.returns]
        if schema.is_varret:
            return_numbers.append(_VARIADIC)
        schema_lines.append(",".join(argument_numbers) + ";" + ",".join(return_numbers))
    return "\n".join([f"{_HEADER}{catalog_name}: written by tools/write_catalog_parts.py; see dispatcher/catalog/parts.py",
                      *elements, _SCHEMAS, *schema_lines]) + "\n"
