"""The aten operators the prototype implements, by name.

The operators are torch's own (``dispatcher.ops.aten``, from the catalog
of torch 2.13's schemas): the prototype defines none, it registers kernels
for them, one module per dispatch key (kernels_cpu, meta, composite,
inplace_or_view, autograd, toy_device, vmap).  Code calls them as torch code
does, ``aten.add.Tensor(x, y)``; ``overload("add.Tensor")`` is the same
handle, for the modules that register kernels from a list of names.
"""
from __future__ import annotations

from dispatcher import OperatorHandle, ops

__all__ = ["aten", "overload"]

aten = ops.aten


def overload(name: str) -> OperatorHandle:
    """The handle of aten operator ``name``, an overload name such as ``"add.Tensor"`` or ``"neg"``."""
    base, _, overload_name = name.partition(".")
    return getattr(getattr(aten, base), overload_name or "default")
