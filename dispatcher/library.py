"""torch.library's face: every name of torch 2.13's ``torch.library.__all__``,
with torch's signatures (tests/golden/torch_library_api_golden.json).

``Library``, ``define``, ``impl`` and ``fallthrough_kernel`` are the
registration machinery's (dispatcher/_library.py); the custom-operator
functions are custom_ops.py's (and opcheck, infer_schema their modules'),
imported on first use; the rules of register_torch_dispatch, register_vmap
and register_autocast are written by Library, vmap_rules.py and
autocast_rules.py.  Code written for torch.library ports by changing its
import to ``import dispatcher.library as library``.
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Union

from ._lazy import lazy_attributes
from ._library import KeyArg, Library, _F, _library_for, _parse_qualname, define, fallthrough_kernel, impl
from ._library import _defs, _impls  # noqa: F401  (torch.library._impls and _defs: code written for torch reads them)
from .autocast_rules import add_autocast_kernel, autocast_key_for_device
from .registry import registry_in_use
from .vmap_rules import add_vmap_rule

if TYPE_CHECKING:  # imported on first use: see _LAZY
    from .custom_ops import (
        CustomOpDef as CustomOpDef,
        custom_op as custom_op,
        get_ctx as get_ctx,
        register_autograd as register_autograd,
        register_fake as register_fake,
        register_kernel as register_kernel,
    )
    from .optests import opcheck as opcheck
    from .schema_inference import infer_schema as infer_schema

# torch 2.13's torch.library.__all__ (tests/golden/torch_library_api_golden.json), in its order.
__all__ = [
    "Library",
    "impl",
    "define",
    "fallthrough_kernel",
    "impl_abstract",
    "register_autocast",
    "register_fake",
    "register_torch_dispatch",
    "register_vmap",
    "get_ctx",
    "get_kernel",
    "custom_op",
    "triton_op",
    "wrap_triton",
    "infer_schema",
]


# -- the rest of torch.library ------------------------------------------------------------
# torch.library's custom-operator functions live in custom_ops.py (and
# opcheck, infer_schema in their modules), imported on first use: they need
# inspect and logging, which ``import dispatcher`` does without.
_LAZY = {
    "CustomOpDef": "custom_ops",
    "custom_op": "custom_ops",
    "get_ctx": "custom_ops",
    "register_autograd": "custom_ops",
    "register_fake": "custom_ops",
    "register_kernel": "custom_ops",
    "infer_schema": "schema_inference",
    "opcheck": "optests",
}


__getattr__ = lazy_attributes(__name__, _LAZY, globals())


def _resolve_for_registration(op: object, api_name: str) -> tuple[str, Optional[Library]]:
    """torch's _resolve_op_for_registration: the operator's name, and, for a
    CustomOpDef, the library its registrations belong to."""
    from .custom_ops import CustomOpDef, _resolve_op_for_registration

    resolved = _resolve_op_for_registration(op, api_name)
    if isinstance(resolved, CustomOpDef):
        return resolved._qualname, resolved._lib
    return resolved, None


def register_torch_dispatch(op: Any, torch_dispatch_class: Any, func: Optional[Callable[..., Any]] = None, /, *,
                            lib: Optional[Library] = None) -> Any:
    """Register ``func`` as ``op``'s rule under ``torch_dispatch_class``, a tensor
    subclass with ``__torch_dispatch__`` or a TorchDispatchMode: a call of
    ``op`` that would reach that class's ``__torch_dispatch__`` runs
    ``func(cls_or_mode, func, types, args, kwargs)`` instead.  Usable as a
    decorator.  As torch.library.register_torch_dispatch."""
    qualname, opdef_lib = _resolve_for_registration(op, "register_torch_dispatch")

    def register(func: _F) -> _F:
        namespace, op_name = _parse_qualname(qualname)
        use_lib = lib or opdef_lib or _library_for(namespace, None)
        use_lib._register_torch_dispatch_rule(op_name, torch_dispatch_class, func)
        return func

    if func is None:
        return register
    return register(func)


def register_vmap(op: Any, func: Optional[Callable[..., Any]] = None, /, *, lib: Optional[Library] = None) -> Any:
    """Register ``func(info, in_dims, *args, **kwargs) -> (output, out_dims)`` as
    ``op``'s batching rule under vmap (a FuncTorchBatched kernel; see
    dispatcher/vmap_rules.py).  Usable as a decorator, which, as torch's,
    returns None.  As torch.library.register_vmap."""
    from .custom_ops import check_vmap_schema

    qualname, opdef_lib = _resolve_for_registration(op, "register_vmap")
    library = lib or opdef_lib
    check_vmap_schema((library._registry if library else registry_in_use()).op_or_throw(qualname).handle.schema)

    def register(func: Callable[..., Any]) -> None:  # returns None, as torch's does
        namespace, op_name = _parse_qualname(qualname)
        add_vmap_rule(library or _library_for(namespace, None), op_name, func)

    if func is None:
        return register
    return register(func)


def register_autocast(op: Any, device_type: str, cast_inputs: Any, /, *, lib: Optional[Library] = None) -> None:
    """Register ``op``'s autocast kernel for ``device_type``: under autocast (see
    dispatcher.autocast_rules.autocast), floating-point tensor arguments (not
    float64) of that device type are cast to ``cast_inputs`` and the operator
    runs with autocast off.  As torch.library.register_autocast."""
    qualname, opdef_lib = _resolve_for_registration(op, "register_autocast")
    autocast_key_for_device(device_type)  # a device type without autocast fails before anything else
    namespace, op_name = _parse_qualname(qualname)
    add_autocast_kernel(lib or opdef_lib or _library_for(namespace, None), op_name, device_type, cast_inputs)


def get_kernel(op: Any, dispatch_key: KeyArg) -> Any:
    """The kernel the dispatcher computed for ``op`` (a name with its overload,
    an operator handle or a CustomOpDef) at ``dispatch_key``: a
    SafeKernelFunction whose ``call_boxed(keyset, *args, **kwargs)`` runs it.
    RuntimeError if the operator does not exist.  As torch.library.get_kernel."""
    from .compat import torch_C

    qualname, _ = _resolve_for_registration(op, "get_kernel")
    return torch_C._dispatch_get_computed_kernel_for_dispatch_key(qualname, dispatch_key)


def impl_abstract(qualname: Any, func: Optional[Callable[..., Any]] = None, *, lib: Optional[Library] = None,
                  _stacklevel: int = 1) -> Any:
    """The name ``register_fake`` had before torch 2.4; the same function."""
    from .custom_ops import register_fake

    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel + 1)


_NEEDS_TRITON = ("{}: Triton kernels are compiled and launched by torch.compile (Inductor) on GPUs; "
                 "this package has neither, so there is nothing to register or run them with")


def triton_op(name: str, fn: Optional[Callable[..., Any]] = None, /, *, mutates_args: Union[str, Iterable[str]],
              schema: Optional[str] = None) -> Callable[..., Any]:
    """torch.library.triton_op's signature; it needs Triton and torch.compile: NotImplementedError."""
    raise NotImplementedError(_NEEDS_TRITON.format("triton_op"))


def wrap_triton(triton_kernel: Callable[..., Any], /) -> Any:
    """torch.library.wrap_triton's signature; it needs Triton and torch.compile: NotImplementedError."""
    raise NotImplementedError(_NEEDS_TRITON.format("wrap_triton"))


@contextlib.contextmanager
def _scoped_library(*args: Any, **kwargs: Any) -> Iterator[Library]:
    """torch.library's ``_scoped_library`` (not in its ``__all__``, used across
    torch's tests): a Library for the block, destroyed as it ends."""
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()
