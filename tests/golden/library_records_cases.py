"""A program over torch.library's records of Python registrations
(``torch.library._impls`` and ``_defs``, each library's ``_op_impls`` and
``_op_defs``, and the finalizer that takes them out), written once for
``torch.library`` and ``dispatcher.library``: generate_library_records_golden.py
records what torch 2.13 gives, tests/test_library_records.py checks ours.
No imports of either library here.
"""
import gc
import sys
from typing import Any

NS = "h23records"


def _mine(records: Any) -> list[str]:
    return sorted(r for r in records if NS in r)


def program(library: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    gc.collect()  # libraries of earlier code, collected now rather than in the middle
    impls_refs = sys.getrefcount(library._impls)
    lib = library.Library(NS, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.two(Tensor x, Tensor y) -> Tensor")
    seen["defs"] = _mine(library._defs)
    seen["op_defs"] = sorted(lib._op_defs)
    seen["impls_gained_a_reference"] = sys.getrefcount(library._impls) - impls_refs
    seen["op_impls_references"] = sys.getrefcount(lib._op_impls)  # lib, its finalizer, the call's argument
    lib.impl("f", lambda x: x, "CPU")
    lib.impl(f"{NS}::f.two", lambda x, y: x, "Meta")
    lib.impl("f", lambda x: x)
    seen["impls"] = _mine(library._impls)
    seen["op_impls"] = sorted(lib._op_impls)
    keyed = library.Library(NS, "IMPL", "CPU")
    keyed.impl("f.two", lambda x, y: y)
    seen["impls_with_a_keyed_library"] = _mine(library._impls)
    keyed._destroy()
    seen["impls_after_destroy"] = _mine(library._impls)
    saved = lib._op_impls
    seen["library_references"] = sys.getrefcount(lib)
    del lib
    gc.collect()
    seen["saved_op_impls_references"] = sys.getrefcount(saved)
    seen["impls_after_collection"] = _mine(library._impls)
    seen["defs_after_collection"] = _mine(library._defs)
    # A schema naming its namespace: torch 2.13 records the name as written after
    # the library's namespace (its _destroy then fails to split it: torch 2.13's
    # ValueError, so the library is left to its finalizer, which ignores that).
    named = library.Library(NS, "FRAGMENT")
    named.define(f"{NS}::g(Tensor x) -> Tensor")
    seen["op_defs_of_a_namespaced_schema"] = sorted(named._op_defs)
    return seen
