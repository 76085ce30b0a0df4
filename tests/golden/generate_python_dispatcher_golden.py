#!/usr/bin/env python
"""Generate ``python_dispatcher_golden.json`` from torch 2.13's ``torch._python_dispatcher``.

Run with a Python that has ``torch==2.13.0`` installed::

    /path/to/torchenv/bin/python tests/golden/generate_python_dispatcher_golden.py

For every subset of ``PythonDispatcher.supported_keys`` (registered in
``supported_keys`` order), plus ~50 subsets registered in a shuffled order and a
few lists with unsupported / legacy names or duplicates, a fresh
``PythonDispatcher`` is created, ``register(keys)`` is called, and either the
error text or the four outputs (``dispatchTable``, ``registrations``,
``rawRegistrations``, ``rawDispatchTable``) are recorded.  To keep the file
small, ``rawDispatchTable`` is stored as indices into a shared ``line_table``
(see REGISTRATION.md); everything else is verbatim.
"""

from __future__ import annotations

import json
import os
import random

import torch
import torch._C as C
from torch._python_dispatcher import PythonDispatcher

SEED = 2_13_1
N_SHUFFLED = 50
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "python_dispatcher_golden.json")
QUALNAME = f"{PythonDispatcher.namespace}::{PythonDispatcher.name}"

line_table: list[str] = []
line_index: dict[str, int] = {}


def intern_lines(text):
    out = []
    for line in text.split("\n"):
        i = line_index.get(line)
        if i is None:
            i = line_index[line] = len(line_table)
            line_table.append(line)
        out.append(i)
    assert "\n".join(line_table[i] for i in out) == text
    return out


def outputs(d):
    return {
        "dispatchTable": d.dispatchTable(),
        "registrations": d.registrations(),
        "rawRegistrations": d.rawRegistrations(),
        "rawDispatchTable_lines": intern_lines(d.rawDispatchTable()),
    }


def run(keys, order):
    assert C._dispatch_dump(QUALNAME) == "", "previous PythonDispatcher still alive"
    d = PythonDispatcher()
    rec = {"keys": list(keys), "order": order}
    try:
        d.register(list(keys))
    except Exception as e:  # noqa: BLE001
        rec["error_type"] = type(e).__name__
        rec["error"] = str(e)
        # register() checks duplicates and the CIA+CEA pair first, then registers key by key and
        # raises at the first unsupported one: record what was left registered
        rec["after_error"] = outputs(d)
    else:
        rec["error"] = None
        rec.update(outputs(d))
    d.ref.reset()
    del d
    assert C._dispatch_dump(QUALNAME) == ""
    return rec


def main():
    rng = random.Random(SEED)
    supported = list(PythonDispatcher.supported_keys)
    probe = PythonDispatcher()
    keys_out = probe.keys()
    probe.ref.reset()
    del probe

    subsets = []
    for mask in range(1 << len(supported)):
        subsets.append([k for i, k in enumerate(supported) if mask >> i & 1])
    results = [run(s, "supported_keys") for s in subsets]

    shuffled = []
    cands = [s for s in subsets if len(s) >= 3]
    for s in rng.sample(cands, N_SHUFFLED):
        s = list(s)
        while True:
            rng.shuffle(s)
            if s != [k for k in supported if k in s]:
                break
        r = run(s, "shuffled")
        ref = results[sum(1 << supported.index(k) for k in s)]
        strip = lambda x: {k: v for k, v in x.items() if k not in ("keys", "order")}  # noqa: E731
        r["same_as_supported_order"] = strip(r) == strip(ref)
        shuffled.append(r)

    extra_lists = [
        ["Math"], ["DefaultBackend"], ["QuantizedCPU"], ["CompositeExplicitAutogradNonFunctional"],
        ["CompositeImplicitAutogradNestedTensor"], ["FuncTorchBatchedDecomposition"], ["CUDA"],
        ["AutogradCUDA"], ["Undefined"], [""], ["cpu"],
        ["CPU", "Math"], ["CPU", "XLA", "DefaultBackend"], ["Math", "CPU"],
        ["CPU", "CPU"], ["Math", "Math"], ["CompositeImplicitAutograd", "CompositeImplicitAutograd"],
        ["Math", "CompositeImplicitAutograd", "CompositeExplicitAutograd"],
        ["CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd", "CPU"],
        ["AutogradCPU", "CompositeExplicitAutograd", "QuantizedCPU", "XLA"],
    ]
    extra = [run(s, "as given") for s in extra_lists]

    out = {
        "meta": {
            "torch_version": torch.__version__,
            "generator": "tests/golden/generate_python_dispatcher_golden.py",
            "seed": SEED,
            "qualname": QUALNAME,
            "note": "rawDispatchTable text == '\\n'.join(line_table[i] for i in rawDispatchTable_lines); "
                    "file:line texts under /__w/pytorch/pytorch/ are torch's own framework registrations "
                    "(verbatim).",
        },
        "namespace": PythonDispatcher.namespace,
        "name": PythonDispatcher.name,
        "runtime_keys": list(PythonDispatcher.runtime_keys),
        "alias_keys": list(PythonDispatcher.alias_keys),
        "supported_keys": supported,
        "keys": list(keys_out),
        "subsets": results,
        "shuffled": shuffled,
        "extra": extra,
        "line_table": line_table,
    }
    out["counts"] = {
        "subsets": len(results),
        "subsets_ok": sum(1 for r in results if r["error"] is None),
        "subsets_error": sum(1 for r in results if r["error"] is not None),
        "shuffled": len(shuffled),
        "extra": len(extra),
        "line_table": len(line_table),
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, separators=(",", ":"))
        f.write("\n")
    print(json.dumps(out["counts"]), "bytes:", os.path.getsize(OUT))


if __name__ == "__main__":
    main()
