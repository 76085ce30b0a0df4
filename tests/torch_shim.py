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
torch.Stream                       dispatcher.streams.Stream
torch.Storage, UntypedStorage,     dispatcher.prototype.storage
TypedStorage
torch.strided, sparse_csr, ...,    dispatcher.prototype.tensor_options
contiguous_format, channels_last
tensors, factories, vmap,          dispatcher.prototype (randn, tensor, ones,
no_grad, inference_mode, dtypes    ..., float32, bfloat16, uint64, vmap, no_grad)
torch.save, load, serialization    dispatcher.prototype.serialization
torch.utils.data                   dispatcher.prototype.data
torch.from_numpy, allclose,        numpy through the prototype
*_like, sin, autograd.grad
torch.overrides, its _C names      dispatcher.torch_function (the factories and
                                   functions above check __torch_function__)
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
from dispatcher.prototype import data, serialization
from dispatcher import dispatch_modes, ops, torch_function, warn_always
from dispatcher.prototype.torch_function_methods import checked_function
from dispatcher.ops import forget_namespace, namespace
from dispatcher.autocast_rules import autocast
from dispatcher.compat import torch_C
from dispatcher.streams import Stream

__all__ = ["installed", "torch_module"]


def _layouts_and_memory_formats() -> dict[str, Any]:
    """torch.strided, torch.sparse_csr, ..., torch.contiguous_format, torch.channels_last, ..."""
    options = P.tensor_options
    return {value._name.removeprefix("torch."): value for value in vars(options).values()
            if isinstance(value, options.OptionValue)}


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


# torch.* functions of tensors (and factories, which modes see): they check __torch_function__ first.
_CHECKED_FUNCTIONS = ("randn", "tensor", "ones", "zeros", "empty", "full", "empty_like", "zeros_like", "ones_like",
                      "full_like", "rand", "randperm", "arange", "from_numpy", "allclose", "sin")


def overrides_module() -> types.ModuleType:
    """``torch.overrides`` (dispatcher.torch_function's names, by torch's)."""
    overrides = types.ModuleType("torch.overrides")
    for name in ("BaseTorchFunctionMode", "TorchFunctionMode", "handle_torch_function", "has_torch_function",
                 "is_tensor_like", "redispatch_function"):
        setattr(overrides, name, getattr(torch_function, name))
    overrides.has_torch_function_unary = torch_function.has_torch_function_unary  # type: ignore[attr-defined]
    overrides.has_torch_function_variadic = torch_function.has_torch_function_variadic  # type: ignore[attr-defined]
    overrides._get_overloaded_args = torch_function.get_overloaded_args  # type: ignore[attr-defined]
    overrides.enable_reentrant_dispatch = dispatch_modes.enable_reentrant_dispatch  # type: ignore[attr-defined]
    return overrides


def torch_module() -> dict[str, types.ModuleType]:
    """The ``torch`` module and its submodules, by their names in sys.modules."""
    torch = types.ModuleType("torch", "A torch module over dispatcher (tests/torch_shim.py)")
    utils = types.ModuleType("torch.utils")
    utils._python_dispatch = dispatch_modes  # type: ignore[attr-defined]
    utils.data = data  # type: ignore[attr-defined]
    autograd = types.ModuleType("torch.autograd")
    autograd.grad = P.grad  # type: ignore[attr-defined]
    autograd.Function = P.Function  # type: ignore[attr-defined]
    linalg = types.ModuleType("torch.linalg")
    linalg.lstsq = P.linalg.lstsq  # type: ignore[attr-defined]
    names = {
        "library": dispatcher.library, "ops": TorchOps(), "_C": torch_C, "utils": utils, "autograd": autograd,
        "linalg": linalg,
        "Tensor": dispatcher.Tensor, "device": dispatcher.device, "dtype": dispatcher.dtype, "Tag": dispatcher.Tag,
        "DispatchKey": dispatcher.DispatchKey, "DispatchKeySet": dispatcher.DispatchKeySet,
        "float16": P.float16, "float32": P.float32, "float64": P.float64, "int64": P.int64, "bool": P.bool_,
        "half": P.float16, "float": P.float32, "double": P.float64, "long": P.int64, "strided": P.tensor_options.strided,
        **_layouts_and_memory_formats(),
        "Stream": Stream,
        "Storage": P.storage.TypedStorage, "TypedStorage": P.storage.TypedStorage,
        "UntypedStorage": P.storage.UntypedStorage,
        "autocast": autocast,
        "rand": P.rand, "randperm": P.randperm, "arange": P.arange, "int32": P.int32, "int": P.int32,
        "_efficientzerotensor": P.zero_tensors.efficientzerotensor,
        "complex64": P.complex64, "cfloat": P.complex64,
        "uint8": P.uint8, "int8": P.int8, "int16": P.int16, "short": P.int16, "bfloat16": P.bfloat16,
        "uint16": P.uint16, "uint32": P.uint32, "uint64": P.uint64, "promote_types": P.dtypes.promote_types,
        "randn": P.randn, "tensor": P.tensor, "ones": P.ones, "zeros": P.zeros, "empty": P.empty, "full": P.full,
        "empty_like": P.empty_like, "zeros_like": P.zeros_like, "ones_like": P.ones_like, "full_like": P.full_like,
        "from_numpy": lambda array: P.tensor(np.asarray(array)),
        "allclose": lambda a, b, rtol=1e-05, atol=1e-08: bool(np.allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)),
        "sin": lambda x: ops.aten.sin.default(x),
        "vmap": P.vmap, "no_grad": P.no_grad, "inference_mode": P.inference_mode,
        "is_inference_mode_enabled": P.is_inference_mode_enabled,
        "save": serialization.save, "load": serialization.load, "serialization": serialization,
        "set_warn_always": warn_always.set_warn_always, "is_warn_always_enabled": warn_always.is_warn_always_enabled,
    }
    for name in _CHECKED_FUNCTIONS:
        names[name] = checked_function(names[name])
    names["overrides"] = overrides = overrides_module()
    for name, value in names.items():
        setattr(torch, name, value)
    return {"torch": torch, "torch.overrides": overrides, "torch.library": dispatcher.library, "torch._C": torch_C, "torch.utils": utils,
            "torch.utils._python_dispatch": dispatch_modes, "torch.autograd": autograd,
            "torch.serialization": serialization, "torch.utils.data": data}


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
