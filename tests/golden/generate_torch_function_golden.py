"""Regenerate torch_function_golden.json: torch 2.13's __torch_function__ layer.

Run with a Python that has torch 2.13 (never needed by the tests):

    /work/venv-torch/bin/python tests/golden/generate_torch_function_golden.py

Runs torch_function_cases.py's cases on torch's tensors, torch.overrides and torch.library.
"""
import json
import pathlib
import sys

import torch
from torch.overrides import TorchFunctionMode, handle_torch_function, has_torch_function, is_tensor_like

HERE = pathlib.Path(__file__).parent
OUT = HERE / "torch_function_golden.json"
sys.path.insert(0, str(HERE))

from torch_function_cases import Lib, run_all  # noqa: E402


def main() -> None:
    lib = Lib(Tensor=torch.Tensor, tensor=torch.tensor, ones=torch.ones, add=torch.add,
              TorchFunctionMode=TorchFunctionMode, DisableTorchFunction=torch._C.DisableTorchFunction,
              DisableTorchFunctionSubclass=torch._C.DisableTorchFunctionSubclass,
              disabled_torch_function_impl=torch._C._disabled_torch_function_impl,
              redispatch_function=torch.overrides.redispatch_function, has_torch_function=has_torch_function,
              handle_torch_function=handle_torch_function, is_tensor_like=is_tensor_like,
              custom_op=torch.library.custom_op)
    golden = {"meta": {"torch": torch.__version__}, **run_all(lib, "torch_function_golden")}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
