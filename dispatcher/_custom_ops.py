"""torch 2.13's ``torch._custom_ops``: the function face of the CustomOp API
(dispatcher/_custom_op/impl.py), each function taking an operator's
qualified name ("ns::foo").  ``impl``, ``impl_save_for_backward`` and
``impl_backward`` also serve operators defined otherwise (with
``Library.define``): they wrap them in a CustomOp first.  Deprecated, as in
torch, for dispatcher.library's custom_op, register_kernel, register_fake
and register_autograd.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Union

from ._custom_op.impl import (
    _custom_op_with_schema, _find_custom_op, check_is_function, check_name_matches, infer_schema, parse_qualname,
    validate_namespace,
)
from .custom_ops import get_ctx

__all__ = [
    "custom_op",
    "impl",
    "impl_abstract",
    "get_ctx",
    "impl_save_for_backward",
    "impl_backward",
]


def custom_op(qualname: str, func_or_schema: Union[Callable[..., Any], str, None] = None) -> Any:
    """Define operator ``qualname`` ("ns::foo"): from a schema string
    ("(Tensor x) -> Tensor"), or from the annotations of a function named
    ``foo`` (as a decorator, returning the function); its kernels come from
    ``impl`` and the other functions of this module."""
    ns, name = parse_qualname(qualname)
    validate_namespace(ns)

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        check_is_function(func)
        check_name_matches(func, qualname, name)
        schema = infer_schema(func, mutates_args=())
        _custom_op_with_schema(qualname, schema)
        return func

    if func_or_schema is None:
        return inner
    if isinstance(func_or_schema, str):
        _custom_op_with_schema(qualname, func_or_schema)
        return None
    return inner(func_or_schema)


def impl(qualname: str, *, device_types: Union[str, Iterable[str]] = ("cpu", "cuda"),
         func: Optional[Callable[..., Any]] = None) -> Any:
    """Register ``func`` (or the decorated function) as the kernel of ``qualname``
    for ``device_types`` ("cpu", "cuda")."""

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        custom_op = _find_custom_op(qualname, also_check_torch_library=True)
        custom_op.impl(device_types, _stacklevel=3)(func)
        return func

    if func is None:
        return inner
    return inner(func)


def impl_abstract(qualname: str, *, func: Optional[Callable[..., Any]] = None) -> Any:
    """Register ``func`` (or the decorated function) as ``qualname``'s abstract
    implementation: dispatcher.library.register_fake's."""
    from .custom_ops import register_fake

    return register_fake(qualname, func, _stacklevel=2)


def impl_save_for_backward(qualname: str, *, func: Optional[Callable[..., Any]] = None) -> Any:
    """Register ``func(inputs, output)`` (or the decorated function), whose result
    ``impl_backward``'s formula gets as ``saved``."""

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        custom_op = _find_custom_op(qualname, also_check_torch_library=True)
        custom_op.impl_save_for_backward(_stacklevel=3)(func)
        return func

    if func is None:
        return inner
    return inner(func)


def impl_backward(qualname: str, output_differentiability: Optional[list[bool]] = None, *,
                  func: Optional[Callable[..., Any]] = None) -> Any:
    """Register ``func(ctx, saved, *grads)`` (or the decorated function) as
    ``qualname``'s backward formula: it returns a dict from each tensor
    argument's name to its gradient (None, a tensor, or a list of them)."""

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        custom_op = _find_custom_op(qualname, also_check_torch_library=True)
        custom_op.impl_backward(output_differentiability, _stacklevel=3)(func)
        return func

    if func is None:
        return inner
    return inner(func)


def _destroy(qualname: str) -> None:
    """Undefine a CustomOp (for tests)."""
    custom_op = _find_custom_op(qualname)
    custom_op._destroy()
