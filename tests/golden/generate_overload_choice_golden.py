#!/usr/bin/env python
"""Generate ``overload_choice_golden.json``: which overload torch 2.13's packets
(``torch.ops.aten.<name>(...)``) choose, for generated argument patterns.

Run with a Python that has ``torch==2.13.0`` installed (never the project's)::

    /work/venv-torch/bin/python tests/golden/generate_overload_choice_golden.py

For every aten operator name of the catalog (torch 2.13's schemas), each
overload's required positional arguments give a *pattern* (``pattern_for``:
a tensor ``"T"``, an int ``2``, a float ``2.5``, a Scalar ``3``, a bool, a
str ``"a"``, an int list, a tensor list), and each pattern one variant per
argument with that argument swapped for a value of another kind
(``SWAPS``: a number where a tensor goes, a tensor where an int goes, ...).
Overloads with an argument of another type (Generator, Device, ...) give
no pattern.  Each distinct pattern is resolved as the packet call resolves
it (``torch._C._jit_resolve_packet``); recorded: the overload's name, or
``null`` when the packet refuses the arguments.  ``tests/test_overload_choice.py`` replays every pattern.
"""
from __future__ import annotations

import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "overload_choice_golden.json")
SCHEMAS = os.path.join(HERE, "..", "..", "dispatcher", "catalog", "torch-2.13.txt")

VALUES = {
    "Tensor": "T", "Optional[Tensor]": "T",
    "int": 2, "SymInt": 2, "Optional[int]": 2, "Optional[SymInt]": 2,
    "float": 2.5, "Optional[float]": 2.5,
    "number": 3, "Optional[number]": 3,
    "bool": True, "Optional[bool]": True,
    "str": "a", "Optional[str]": "a",
    "List[int]": [1, 1], "List[SymInt]": [1, 1], "Optional[List[int]]": [1, 1], "Optional[List[SymInt]]": [1, 1],
    "List[Tensor]": ["T", "T"], "List[Optional[Tensor]]": ["T", "T"],
    "List[float]": [1.5], "Optional[List[float]]": [1.5],
}
# What replaces a value of each kind in the variants (by the value's JSON text).
SWAPS = {
    '"T"': [2, 2.5, True, "a"],
    "2": [2.5, "T", True],
    "2.5": [2, "T"],
    "3": ["T", 2.5],
    "true": [2],
    '"a"': [2],
    "[1, 1]": [2, "T"],
    '["T", "T"]': ["T"],
    "[1.5]": [2],
}


def pattern_for(schema):
    args = []
    for arg in schema.arguments:
        if arg.kwarg_only:
            if not arg.has_default_value():
                return None
            continue
        if arg.has_default_value():
            break
        value = VALUES.get(str(arg.type))
        if value is None:
            return None
        args.append(value)
    return args


def variants(pattern):
    yield pattern
    for i, value in enumerate(pattern):
        for other in SWAPS.get(json.dumps(value), ()):
            yield pattern[:i] + [other] + pattern[i + 1:]


def value_of(token):
    if token == "T":
        return torch.ones(2)
    if isinstance(token, list):
        return [value_of(t) for t in token]
    return token


def choice(name, pattern):
    """torch's packet choice (torch._C._jit_resolve_packet, the matching the
    packet call itself does, without running the operator): the overload's
    name, or None when no overload accepts the arguments."""
    try:
        return torch._C._jit_resolve_packet(f"aten::{name}", *[value_of(t) for t in pattern]) or "default"
    except RuntimeError:
        return None


def main():
    names = []
    with open(SCHEMAS) as f:
        for line in f:
            qualified = line.split("(", 1)[0]
            ns, _, rest = qualified.partition("::")
            name = rest.partition(".")[0]
            if ns == "aten" and name not in names:
                names.append(name)
    golden = {}
    for name in names:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        patterns = {}
        for overload in packet.overloads():
            pattern = pattern_for(getattr(packet, overload)._schema)
            if pattern is None:
                continue
            for variant in variants(pattern):
                patterns.setdefault(json.dumps(variant), variant)
        if patterns:
            golden[name] = [[pattern, choice(name, pattern)] for pattern in patterns.values()]
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "choices": golden}, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    print(len(golden), "packets,", sum(len(v) for v in golden.values()), "patterns")


if __name__ == "__main__":
    main()
