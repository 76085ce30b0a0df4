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

from .backends import dispatch_key_for_options, get_privateuse1_backend_name
from .keys import DispatchKey
from .schema import NO_DEFAULT, BaseTy, BaseType, FunctionSchema, OptionalType

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
    if not schema.has_argument("pin_memory"):
        return None  # the group's last argument: most operators, told apart without a walk
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


class _KeyCache:
    """``dispatch_key_for_options`` memoised: a factory's options take few
    values (``device="cpu"``, ``dtype=None``, ...), and parsing a device string
    each call cost more than the rest of the kernel.  The PrivateUse1 name is
    part of the key, since renaming it changes what a device string means;
    unhashable options (a list passed by mistake) are not cached, and options
    that select no backend raise every time, as they did."""

    __slots__ = ("_keysets", "_keyset_of")

    # Distinct options seen before the cache stops growing (a caller passing
    # ever-new device objects must not grow it without bound).
    LIMIT = 256

    def __init__(self, keyset_of: Any) -> None:
        self._keysets: dict[tuple[Any, ...], Any] = {}
        self._keyset_of = keyset_of

    def keyset(self, dtype: Any, layout: Any, device: Any) -> Any:
        """The keyset of the one backend key the options select."""
        options = (dtype, layout, device, get_privateuse1_backend_name())
        try:
            return self._keysets[options]
        except KeyError:
            keyset = self._keyset_of(dispatch_key_for_options(dtype, layout, device))
            if len(self._keysets) < self.LIMIT:
                self._keysets[options] = keyset
            return keyset
        except TypeError:  # unhashable: computed as it is
            return self._keyset_of(dispatch_key_for_options(dtype, layout, device))


def _options_reader(schema: FunctionSchema, positions: tuple[int, int, int]) -> Callable[..., Any]:
    """``read(args, kwargs)``: the (dtype, layout, device) values of a call,
    read from the keywords where the options are (they are keyword-only), or
    None when the call is not one that plainly binds (surplus positionals, an
    unknown keyword, a required argument missing): then the caller binds,
    which raises what Python would."""
    sig_names = [a.name for a in schema.arguments]
    n_positional = next((i for i, a in enumerate(schema.arguments) if a.kwarg_only), len(sig_names))
    names = frozenset(sig_names[n_positional:])
    required = [a.name for a in schema.arguments[n_positional:] if a.default is NO_DEFAULT]
    n_required = sum(1 for a in schema.arguments[:n_positional] if a.default is NO_DEFAULT)
    (dtype_name, dtype_default), (layout_name, layout_default), (device_name, device_default) = (
        (schema.arguments[at].name, schema.arguments[at].default) for at in positions)
    plain = not schema.is_vararg

    def read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[tuple[Any, Any, Any]]:
        if not (plain and n_required <= len(args) <= n_positional and kwargs.keys() <= names):
            return None
        for name in required:
            if name not in kwargs:
                return None
        return (kwargs.get(dtype_name, dtype_default), kwargs.get(layout_name, layout_default),
                kwargs.get(device_name, device_default))

    return read


def backend_select_kernel(schema: FunctionSchema, positions: tuple[int, int, int], handle: Any,
                          engine: Any) -> Callable[..., Any]:
    """The with-keyset kernel torch generates for ``schema`` (an operator
    tensor_options_positions accepts), redispatching through ``handle``.

    A factory without tensor arguments reads its options from the keywords
    (``_options_reader``) without binding the whole call; the backend the
    options select is memoised (``_KeyCache``)."""
    dtype_at, layout_at, device_at = positions
    bind = schema.bind
    read = _options_reader(schema, positions)
    keys_for = _KeyCache(engine.DispatchKeySet).keyset
    tensor_args = schema.dispatch_layout[0]
    redispatch = handle.redispatch

    if not tensor_args:
        def backend_select(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            options = read(args, kwargs)
            if options is None:
                values = bind(args, kwargs)  # raises for a call the schema does not take
                options = values[dtype_at], values[layout_at], values[device_at]
            return redispatch(keys_for(*options), *args, **kwargs)

        return backend_select

    tensor_key_set = engine.tensor_key_set
    compute_dispatch_key_set = engine.compute_dispatch_key_set
    below_backend_select = engine.DispatchKeySet.full_after(DispatchKey.BackendSelect)
    positions_of_tensors = tuple(position for position, _name, _kind, _required in tensor_args)

    def backend_select_with_tensors(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        values = bind(args, kwargs)  # the tensors are wanted too
        keys = keys_for(values[dtype_at], values[layout_at], values[device_at])
        for position in positions_of_tensors:
            value = values[position]
            for tensor in value if isinstance(value, (list, tuple)) else (value,):
                if tensor is not None:
                    keys = keys | tensor_key_set(tensor)
        return redispatch(compute_dispatch_key_set(keys, below_backend_select), *args, **kwargs)

    return backend_select_with_tensors
