"""Regenerate python_key_golden.json: torch 2.13's Python key, for tests/test_python_key.py.

Run with a Python that has torch 2.13 (never needed by the tests):

    /tmp/torchenv/bin/python tests/golden/generate_python_key_golden.py

Records

* ``scenarios``: the events of python_key_cases.py's scenarios run on torch
  tensors, with torch.library operators and torch's TorchDispatchMode:
  which handler ran for which call, the ``types`` it got, the thread's
  include/exclude sets inside it, the mode on top of the stack, what
  ``torch._C._RestorePythonTLSSnapshot`` restores, and the errors;
* ``examples``: python_key_examples.py's four worked examples (a logging
  mode, a fake-tensor mode, a wrapper subclass, a subclass and a mode
  together) run on torch tensors; tests/test_python_key_examples.py runs
  them on dispatcher.prototype's.
"""
import json
import pathlib
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

HERE = pathlib.Path(__file__).parent
OUT = HERE / "python_key_golden.json"
sys.path.insert(0, str(HERE))

from python_key_cases import Api, scenarios  # noqa: E402
from python_key_examples import Lib, examples  # noqa: E402

C = torch._C


def make_subclass(cls, elem):
    t = torch.Tensor._make_subclass(cls, elem)
    t.elem = elem.clone()
    return t


def keyset(names):
    out = C.DispatchKeySet(getattr(C.DispatchKey, names[0]))
    for name in names[1:]:
        out = out | C.DispatchKeySet(getattr(C.DispatchKey, name))
    return out


def torch_api() -> Api:
    return Api(
        library=torch.library.Library,
        ops=torch.ops,
        tensor=lambda: torch.ones(2),
        TensorBase=torch.Tensor,
        make_subclass=make_subclass,
        TorchDispatchMode=TorchDispatchMode,
        current_mode=_get_current_dispatch_mode,
        include_set=lambda: repr(C._dispatch_tls_local_include_set()),
        exclude_set=lambda: repr(C._dispatch_tls_local_exclude_set()),
        exclude_guard=lambda names: C._ExcludeDispatchKeyGuard(keyset(names)),
        include_guard=lambda name: C._IncludeDispatchKeyGuard(getattr(C.DispatchKey, name)),
        restore_snapshot=C._RestorePythonTLSSnapshot,
        after_autograd=C._after_autograd_keyset,
    )


# -- the four worked examples of python_key_examples.py, on torch tensors --
class TorchWrapperBase(torch.Tensor):
    """A wrapper subclass made as ``cls(elem)``, holding ``elem`` as .elem."""

    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

    def __init__(self, elem):
        self.elem = elem


def torch_lib() -> Lib:
    return Lib(
        custom_op=torch.library.custom_op,
        library=torch.library.Library,
        ops=torch.ops,
        TorchDispatchMode=TorchDispatchMode,
        TensorAnnotation=torch.Tensor,
        Tensor=torch.Tensor,
        tensor=torch.tensor,
        from_numpy=torch.from_numpy,
        empty_like=torch.empty_like,
        meta_like=lambda a: torch.empty_like(a, device="meta"),
        dtype_name=lambda t: str(t.dtype).removeprefix("torch."),
        device_name=lambda t: t.device.type,
        forget_data=lambda t: None,  # a torch tensor's data cannot be taken away
        WrapperBase=TorchWrapperBase,
    )


def main() -> None:
    golden = {
        "meta": {"torch": torch.__version__},
        "scenarios": scenarios(torch_api(), "pk"),
        "examples": examples(torch_lib()),
    }
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
