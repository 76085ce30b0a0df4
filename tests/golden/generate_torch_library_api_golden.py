#!/usr/bin/env python
"""Generate ``torch_library_api_golden.json``: torch 2.13's torch.library API, by name and signature.

Run with a Python that has ``torch==2.13.0`` installed (never the project's)::

    /work/venv-torch/bin/python tests/golden/generate_torch_library_api_golden.py

Recorded:

* ``all``: ``torch.library.__all__``, in its order;
* ``signatures``: for each name of ``__all__`` that is a function, and for
  the public functions torch.library has beside them (``register_autograd``,
  ``register_kernel``, ``opcheck``), and for the methods of ``Library``
  (``Library.<name>``): each parameter's name, kind and default (the
  default's ``repr`` when it is a plain value, ``"<object>"`` otherwise;
  absent when there is none).

``tests/test_library_api.py`` checks ``dispatcher.library`` against it.
"""
from __future__ import annotations

import inspect
import json
import os

import torch.library

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "torch_library_api_golden.json")
BESIDE_ALL = ["register_autograd", "register_kernel", "opcheck"]
LIBRARY_METHODS = ["__init__", "define", "impl", "fallback", "_register_torch_dispatch_rule"]


def default_of(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, tuple) and all(isinstance(v, (str, int)) for v in value):
        return repr(value)
    return "<object>"


def signature_of(fn):
    params = []
    for p in inspect.signature(fn).parameters.values():
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = default_of(p.default)
        params.append(entry)
    return params


def main():
    signatures = {}
    for name in [*torch.library.__all__, *BESIDE_ALL]:
        value = getattr(torch.library, name)
        if inspect.isfunction(value):
            signatures[name] = signature_of(value)
    for name in LIBRARY_METHODS:
        signatures[f"Library.{name}"] = signature_of(getattr(torch.library.Library, name))
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "all": list(torch.library.__all__), "signatures": signatures}, f,
                  indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
