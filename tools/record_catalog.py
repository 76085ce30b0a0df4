"""Write dispatcher/catalog/torch-2.13.txt, the operator catalog, from PyTorch 2.13.

Run under torch 2.13 (never imported by the package):

    /path/to/torch-venv/bin/python tools/record_catalog.py

The schemas are every operator schema torch knows (``_jit_get_all_schemas``),
in PyTorch's canonical printed form (str(FunctionSchema)); this script only
orders them as torch does: by namespace, then by operator name, and each operator's overloads in
the order torch registered them (``torch.ops.ns.name.overloads()``), which
is the order an overload packet tries them in.  A line is a schema, then,
after a tab, the operator's tags (``OpOverload.tags``) if it has any.  The
first line lists the namespaces, so that ``dispatcher.ops`` can create them
without reading the rest; the second, those of them that torch defines in a
DEF library (TORCH_LIBRARY), which a user's DEF library cannot claim again.
"""
from __future__ import annotations

import collections
import pathlib

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "dispatcher" / "catalog" / "torch-2.13.txt"


def main() -> None:
    by_packet: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for schema in torch._C._jit_get_all_schemas():
        _, _, tags = torch._C._get_operation_overload(schema.name, schema.overload_name)
        line = str(schema)
        if tags:
            line += "\t" + " ".join(tag.name for tag in tags)
        by_packet[schema.name][schema.overload_name] = line
    out = []
    namespaces = sorted({q.split("::")[0] for q in by_packet})
    out.append("# namespaces: " + " ".join(namespaces))
    out.append("# namespaces with a DEF library: " + " ".join(n for n in namespaces if _has_def_library(n)))
    for qualified in sorted(by_packet):
        overloads = by_packet[qualified]
        # What OpOverloadPacket.overloads() reads, without going through
        # torch.ops' attribute lookups (which fail for some names here).
        _, order = torch._C._jit_get_operation(qualified)
        ranked = sorted(overloads, key=lambda o: (order.index(o) if o in order else len(order), o))
        out.extend(overloads[o] for o in ranked)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("\n".join(out) + "\n")
    print(f"{len(out) - 2} schemas in {len(namespaces)} namespaces -> {OUT}")


def _has_def_library(ns: str) -> bool:
    """Whether torch already has a TORCH_LIBRARY (DEF) block for ``ns``: a second one fails."""
    if ns in torch.library._reserved_namespaces:
        return True
    try:
        torch.library.Library(ns, "DEF")._destroy()
    except RuntimeError:
        return True
    return False


if __name__ == "__main__":
    main()
