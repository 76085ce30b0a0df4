"""Regenerate python_dispatcher_key_golden.json: torch 2.13's Python dispatcher's
choice of kernel (torch._ops.resolve_key) on python_dispatcher_key_cases.py's
registrations, and whether torch has a backend fallback at each key.

Run with a Python that has torch 2.13 (never needed by the tests):

    /work/venv-torch/bin/python tests/golden/generate_python_dispatcher_key_golden.py
"""
import json
import pathlib
import sys

import torch
from torch._C import DispatchKey
from torch._ops import resolve_key

HERE = pathlib.Path(__file__).parent
OUT = HERE / "python_dispatcher_key_golden.json"
sys.path.insert(0, str(HERE))

from python_dispatcher_key_cases import REGISTRATIONS, RUNTIME_KEYS  # noqa: E402


def choices(lib, i: int, keys) -> dict:
    lib.define(f"f{i}(Tensor x) -> Tensor")
    for key in keys:
        lib.impl(f"f{i}", lambda x: x, key)
    op = getattr(torch.ops.h23pdk, f"f{i}").default
    found = {}
    for name in RUNTIME_KEYS:
        try:
            found[name] = resolve_key(op, DispatchKey.__members__[name]).name
        except Exception as exc:  # noqa: BLE001  (torch's refusal is the answer)
            found[name] = {"raises": [type(exc).__name__, str(exc).replace("h23pdk.f%d.default" % i, "{op}")]}
    return found


def main() -> None:
    lib = torch.library.Library("h23pdk", "DEF")
    golden = {
        "meta": {"torch": torch.__version__},
        "choices": [choices(lib, i, keys) for i, keys in enumerate(REGISTRATIONS)],
        "backend_fallbacks": {name: torch._C._dispatch_has_backend_fallback(DispatchKey.__members__[name])
                              for name in RUNTIME_KEYS},
    }
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
