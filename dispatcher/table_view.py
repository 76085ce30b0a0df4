"""An operator's computed dispatch table as ``python -m dispatcher table`` shows it.

The entries are the engine's (``OperatorEntry.computed_table``: the stored
table, chosen by PyTorch's precedence); this module only classifies each
entry by where it comes from, picks the rows to print, and formats them as
PythonDispatcher does.  ``table_svg`` draws the same view.
"""
from __future__ import annotations

from typing import Iterable, Optional

from ._layout import RUNTIME_SLOT_KEYS
from .keys import DispatchKey, is_alias_key
from .operator_entry import OperatorEntry, TableEntry, aliases_serving
from .python_dispatcher import PythonDispatcher
from .standard_fallbacks import STANDARD_FALLBACK_DEBUG

__all__ = [
    "AMBIGUOUS",
    "DIRECT",
    "FALLBACK",
    "FALLTHROUGH",
    "MISSING",
    "SOURCES",
    "TableView",
    "source_of",
]

# Where an entry comes from (its colour in the picture).  An entry filled
# from an alias key has that key's name as its source.
DIRECT = "direct registration"
FALLBACK = "backend fallback"
FALLTHROUGH = "fallthrough"
MISSING = "missing"
AMBIGUOUS = "ambiguous AutogradOther"
# Every source, in compute_entry's order of precedence.
SOURCES: tuple[str, ...] = (
    DIRECT,
    DispatchKey.CompositeExplicitAutogradNonFunctional.name,
    DispatchKey.CompositeExplicitAutograd.name,
    DispatchKey.CompositeImplicitAutogradNestedTensor.name,
    DispatchKey.CompositeImplicitAutograd.name,
    DispatchKey.Autograd.name,
    DispatchKey.FuncTorchBatchedDecomposition.name,
    FALLBACK,
    FALLTHROUGH,
    AMBIGUOUS,
    MISSING,
)

# The rows printed by default: PythonDispatcher's example runtime keys (one
# per use case), to which the keys holding a kernel of their own are added.
EXAMPLE_KEYS = frozenset(DispatchKey[name] for name in PythonDispatcher.runtime_keys)


def source_of(entry: TableEntry) -> str:
    """Where ``entry`` comes from: one of SOURCES.

    A fallthrough (registered on the key or as its backend fallback) is its
    own source: the call path skips the key whichever registered it.
    """
    kernel = entry.kernel
    if kernel is None:
        return MISSING
    if entry.tag == "ambiguous autogradother":
        return AMBIGUOUS
    if kernel.kernel.is_fallthrough():
        return FALLTHROUGH
    if entry.origin is None:  # what is left of the entries no registration of the operator holds
        return FALLBACK
    return DIRECT if entry.origin == entry.key else entry.origin.name


def entry_text(entry: TableEntry) -> str:
    """The kernel column as PythonDispatcher prints it: the debug text and
    tag, without the text of the standard fallbacks (as torch's leaves out
    its framework fallbacks' locations); "" for a missing entry."""
    kernel = entry.kernel
    if kernel is None:
        return ""
    if kernel.debug.startswith(STANDARD_FALLBACK_DEBUG):
        return f"[{entry.tag}]"
    prefix = "fallthrough " if kernel.kernel.is_fallthrough() else ""
    return f"{prefix}{kernel.debug} [{entry.tag}]"


class TableView:
    """One operator's computed table, each entry with its source, and the
    keys it has kernels on (alias keys with the slots they can serve)."""

    def __init__(self, op: OperatorEntry, title: Optional[str] = None) -> None:
        self.name = op.name
        self.title = title or f"Computed dispatch table of {op.name}"
        self.entries = op.computed_table()
        self.sources = [source_of(entry) for entry in self.entries]
        self.registered = sorted(key for key, kernels in op.kernels.items() if kernels)
        # The alias keys with a kernel, each with the runtime slots it can
        # serve; the sources say which of them it does fill.
        self.expansions: dict[DispatchKey, list[DispatchKey]] = {
            alias: [key for key in RUNTIME_SLOT_KEYS if alias in aliases_serving(key)]
            for alias in self.registered
            if is_alias_key(alias)
        }

    def default_rows(self) -> frozenset[DispatchKey]:
        """PythonDispatcher's example keys and the runtime keys with a kernel."""
        return EXAMPLE_KEYS.union(key for key in self.registered if not is_alias_key(key))

    def text(self, rows: Optional[Iterable[DispatchKey]] = None) -> str:
        """PythonDispatcher's dispatchTable() of ``rows`` (default_rows()), in
        slot order; slots with no entry are left out, as there."""
        shown = self.default_rows() if rows is None else frozenset(rows)
        entries = [entry for entry in self.entries if entry.key in shown and entry.kernel is not None]
        # PythonDispatcher's column is 15 wide, which its keys fit; longer names widen it.
        width = max([15, *(len(entry.key.name) for entry in entries)])
        lines = ["", "Computed Dispatch Table", f"{'key':<{width}} kernel", "---------------------------"]
        lines += [f"{entry.key.name:<{width}} {entry_text(entry)}" for entry in entries]
        return "\n".join(lines) + "\n"
