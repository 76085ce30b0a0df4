"""Regenerate subclass_examples_golden.json: torch 2.13 running subclass_examples.py's programs.

Run with a Python that has torch 2.13 (never needed by the tests):

    /work/venv-torch/bin/python tests/golden/generate_subclass_examples_golden.py
"""
import json
import pathlib
import sys

import torch
import torch.utils._pytree as pytree
from torch.overrides import enable_reentrant_dispatch
from torch.utils._mode_utils import no_dispatch
from torch.utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing
from torch.utils.weak import WeakIdKeyDictionary

HERE = pathlib.Path(__file__).parent
OUT = HERE / "subclass_examples_golden.json"
sys.path.insert(0, str(HERE))

from subclass_examples import Lib, run_all  # noqa: E402


def torch_lib() -> Lib:
    return Lib(Tensor=torch.Tensor, tensor=torch.tensor, aten=torch.ops.aten, tree_map=pytree.tree_map,
               TorchDispatchMode=TorchDispatchMode, no_dispatch=no_dispatch,
               return_and_correct_aliasing=return_and_correct_aliasing, WeakIdKeyDictionary=WeakIdKeyDictionary,
               grad=torch.autograd.grad, disabled_torch_function_impl=torch._C._disabled_torch_function_impl,
               enable_reentrant_dispatch=enable_reentrant_dispatch, float64=torch.float64)


def excluded_sets() -> dict:
    """The thread's excluded keys (raw_repr) inside the default __torch_dispatch__
    and inside no_dispatch(), as torch sets them."""
    seen = {}

    def record(name):
        seen[name] = torch._C._dispatch_tls_local_exclude_set().raw_repr()

    record("outside")
    torch._C._disabled_torch_dispatch_impl(lambda: record("default_torch_dispatch"), (), (), {})
    with no_dispatch():
        record("no_dispatch")
    return seen


def main() -> None:
    golden = {"meta": {"torch": torch.__version__}, "examples": run_all(torch_lib()), "excluded": excluded_sets()}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
