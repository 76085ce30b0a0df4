"""A ``torch`` module over this package, for running PyTorch's own code with
only its imports changed (its documented examples, its test files).

``installed()`` puts ``torch`` and the submodules such code imports in
``sys.modules`` for the duration of a block:

=================================  ==========================================
torch name                         here
=================================  ==========================================
torch.library                      dispatcher.library
torch.ops                          dispatcher.ops (any namespace name: ops.namespace)
torch._C                           dispatcher.compat.torch_C
torch.utils._python_dispatch       dispatcher.dispatch_modes
torch.Tensor, torch.device, Tag,   dispatcher.Tensor, .device, .Tag,
DispatchKey, DispatchKeySet        .DispatchKey, .DispatchKeySet
torch.autocast                     dispatcher.autocast_rules.autocast
tensors, factories, vmap           dispatcher.prototype (randn, tensor, ones,
                                   ..., float32, vmap)
torch.from_numpy, allclose,        numpy through the prototype
*_like, sin, autograd.grad
=================================  ==========================================

It is small on purpose: what the prototype's tensors lack it does not add.
The tests that run code through it say which of that code cannot run and why.
"""
from __future__ import annotations

import contextlib
import sys
import types
from typing import Any, Iterator, Optional

import numpy as np

import dispatcher
import dispatcher.library
import dispatcher.prototype as P
from dispatcher import dispatch_modes, ops
from dispatcher.ops import forget_namespace, namespace
from dispatcher.autocast_rules import autocast
from dispatcher.compat import torch_C

__all__ = ["installed", "torch_module"]


def _like(make: Any) -> Any:
    def like(x: Any, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Any:
        return make(*args, tuple(x.shape), dtype=dtype or x.dtype, device=device or x.device, **kwargs)

    return like


def _grad(outputs: Any, inputs: Any, grad_outputs: Optional[Any] = None) -> tuple[Any, ...]:
    """torch.autograd.grad for one output: its gradients for ``inputs`` (one or a sequence)."""
    listed = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    for x in listed:
        x.grad = None
    P.backward(outputs, grad_outputs)
    return tuple(x.grad for x in listed)


class TorchOps:
    """``torch.ops``: dispatcher.ops, where any namespace name gives a namespace
    (dispatcher.ops.namespace) and ``del torch.ops.<ns>`` drops an empty one."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return namespace(name)

    def __delattr__(self, name: str) -> None:
        forget_namespace(name)

    def load_library(self, path: str) -> None:
        raise NotImplementedError(f"torch.ops.load_library({path!r}) needs C++ extensions (a shared library of "
                                  "C++ kernels), which this package does not have")

    def __repr__(self) -> str:
        return "<torch.ops over dispatcher.ops>"


def torch_module() -> dict[str, types.ModuleType]:
    """The ``torch`` module and its submodules, by their names in sys.modules."""
    torch = types.ModuleType("torch", "A torch module over dispatcher (tests/torch_shim.py)")
    utils = types.ModuleType("torch.utils")
    utils._python_dispatch = dispatch_modes  # type: ignore[attr-defined]
    autograd = types.ModuleType("torch.autograd")
    autograd.grad = _grad  # type: ignore[attr-defined]
    autograd.Function = P.Function  # type: ignore[attr-defined]
    names = {
        "library": dispatcher.library, "ops": TorchOps(), "_C": torch_C, "utils": utils, "autograd": autograd,
        "Tensor": dispatcher.Tensor, "device": dispatcher.device, "dtype": dispatcher.dtype, "Tag": dispatcher.Tag,
        "DispatchKey": dispatcher.DispatchKey, "DispatchKeySet": dispatcher.DispatchKeySet,
        "float16": P.float16, "float32": P.float32, "float64": P.float64, "int64": P.int64, "bool": P.bool_,
        "half": P.float16, "float": P.float32, "double": P.float64, "long": P.int64, "strided": P.tensor_options.strided,
        "sparse_coo": P.tensor_options.sparse_coo, "contiguous_format": P.tensor_options.contiguous_format,
        "channels_last": P.tensor_options.channels_last, "preserve_format": P.tensor_options.preserve_format,
        "autocast": autocast, "no_grad": P.no_grad,
        "randn": P.randn, "tensor": P.tensor, "ones": P.ones, "zeros": P.zeros, "empty": P.empty, "full": P.full,
        "empty_like": _like(lambda size, **kw: P.empty(*size, **kw)),
        "zeros_like": _like(lambda size, **kw: P.zeros(*size, **kw)),
        "ones_like": _like(lambda size, **kw: P.ones(*size, **kw)),
        "full_like": _like(lambda value, size, **kw: P.full(size, value, **kw)),
        "from_numpy": lambda array: P.tensor(np.asarray(array)),
        "allclose": lambda a, b, rtol=1e-05, atol=1e-08: bool(np.allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)),
        "sin": lambda x: ops.aten.sin.default(x),
        "vmap": P.vmap,
    }
    for name, value in names.items():
        setattr(torch, name, value)
    return {"torch": torch, "torch.library": dispatcher.library, "torch._C": torch_C, "torch.utils": utils,
            "torch.utils._python_dispatch": dispatch_modes, "torch.autograd": autograd}


@contextlib.contextmanager
def installed() -> Iterator[types.ModuleType]:
    """``import torch`` (and its submodules above) give the shim inside the block."""
    modules = torch_module()
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        with P.installed():
            yield modules["torch"]
    finally:
        restore_modules(saved)


def restore_modules(saved: dict[str, Optional[types.ModuleType]]) -> None:
    """Put back the sys.modules entries of ``saved`` (None: there was none)."""
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module
