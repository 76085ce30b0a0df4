"""BackendSelect kernels for the catalog's factory operators, made from their schemas.

A factory function (``aten::empty.memory_format``, ``aten::zeros``,
``aten::arange``, ...) may have no tensor arguments: nothing tells the call
path which backend a call is for, except its ``device`` argument.  torch
generates a kernel for each such operator on the BackendSelect key (which
every call includes: see the default TLS) that reads the ``dtype``,
``layout`` and ``device`` arguments, picks the backend key they select
(c10's ``computeDispatchKey``: ``backends.dispatch_key_for_options``), and
redispatches to that key alone (torchgen's ``ComputeBackendSelect``,
RegisterBackendSelect.cpp).  An operator that also has tensor arguments
(``_to_copy``) redispatches to that key joined with its tensors' keys and the
thread's TLS, below BackendSelect.

Which operators: the aten operators (torchgen generates from aten's
native_functions.yaml; torch's prims register BackendSelect kernels of
their own, in Python, which are not reproduced here) whose keyword-only
arguments hold, in a row,
``ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory``
(torchgen's TensorOptions group; each may also be non-optional), except the
``*_like`` and ``new_*`` ones (which take their options from a tensor).
The catalog registers the kernel with the operator's definition, when the
operator is first used (see Note [Catalog operators are defined on first
use] in registry.py), so importing the package pays nothing for it; a
user's BackendSelect kernel overrides it as any kernel overrides another.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from .backends import dispatch_key_for_options
from .keys import DispatchKey
from .schema import BaseTy, BaseType, FunctionSchema, OptionalType

__all__ = ["backend_select_kernel", "tensor_options_positions"]

# torchgen's TensorOptions group: (argument name, base type), in this order.
_TENSOR_OPTIONS = (
    ("dtype", BaseTy.ScalarType),
    ("layout", BaseTy.Layout),
    ("device", BaseTy.Device),
    ("pin_memory", BaseTy.bool),
)


def tensor_options_positions(schema: FunctionSchema) -> Optional[tuple[int, int, int]]:
    """The positions of the dtype, layout and device arguments of an operator
    torch gives a BackendSelect kernel (torchgen's, so only aten operators);
    None for any other operator."""
    name = schema.name.name
    if schema.name.namespace != "aten" or name.endswith("_like") or name.startswith("new_"):
        return None
    arguments = schema.arguments
    for start in range(len(arguments) - len(_TENSOR_OPTIONS) + 1):
        if all(_is_option(arguments[start + i], option) for i, option in enumerate(_TENSOR_OPTIONS)):
            return start, start + 1, start + 2
    return None


def _is_option(argument: Any, option: tuple[str, BaseTy]) -> bool:
    name, base = option
    t = argument.type
    if isinstance(t, OptionalType):
        t = t.elem
    return argument.kwarg_only and argument.name == name and t == BaseType(base)


def backend_select_kernel(schema: FunctionSchema, positions: tuple[int, int, int], handle: Any,
                          engine: Any) -> Callable[..., Any]:
    """The with-keyset kernel torch generates for ``schema`` (an operator
    tensor_options_positions accepts), redispatching through ``handle``."""
    dtype_at, layout_at, device_at = positions
    bind = schema.bind
    keyset_of = engine.DispatchKeySet
    tensor_args = schema.dispatch_layout[0]
    if not tensor_args:
        def backend_select(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            values = bind(args, kwargs)
            key = dispatch_key_for_options(values[dtype_at], values[layout_at], values[device_at])
            return handle.redispatch(keyset_of(key), *args, **kwargs)

        return backend_select

    tensor_key_set = engine.tensor_key_set
    compute_dispatch_key_set = engine.compute_dispatch_key_set
    below_backend_select = keyset_of.full_after(DispatchKey.BackendSelect)
    positions_of_tensors = tuple(position for position, _name, _kind, _required in tensor_args)

    def backend_select_with_tensors(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        values = bind(args, kwargs)
        keys = keyset_of(dispatch_key_for_options(values[dtype_at], values[layout_at], values[device_at]))
        for position in positions_of_tensors:
            value = values[position]
            for tensor in value if isinstance(value, (list, tuple)) else (value,):
                if tensor is not None:
                    keys = keys | tensor_key_set(tensor)
        return handle.redispatch(compute_dispatch_key_set(keys, below_backend_select), *args, **kwargs)

    return backend_select_with_tensors
