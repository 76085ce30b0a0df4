"""Regenerate weak_pytree_golden.json: torch 2.13's weak references to tensors and its pytree.

Run with a Python that has torch 2.13 (never needed by the tests):

    /work/venv-torch/bin/python tests/golden/generate_weak_pytree_golden.py

Runs weak_pytree_cases.py's cases on torch tensors, torch.utils.weak and
torch.utils._pytree (the pure-Python pytree, torch's default), with
``Point`` registered as a node.
"""
import json
import pathlib
import sys

import torch
import torch.utils._pytree as pytree
from torch.utils.weak import WeakIdKeyDictionary, WeakIdRef

HERE = pathlib.Path(__file__).parent
OUT = HERE / "weak_pytree_golden.json"
sys.path.insert(0, str(HERE))

from weak_pytree_cases import Lib, Point, point_flatten, point_unflatten, pytree_cases, weak_cases  # noqa: E402


class Wrapper(torch.Tensor):
    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, device=elem.device)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def main() -> None:
    pytree.register_pytree_node(Point, point_flatten, point_unflatten)
    lib = Lib(tensor=torch.tensor, subclass=Wrapper, WeakIdRef=WeakIdRef, WeakIdKeyDictionary=WeakIdKeyDictionary,
              pytree=pytree)
    golden = {"meta": {"torch": torch.__version__}, "weak": weak_cases(lib), "pytree": pytree_cases(lib)}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
