"""Calling an operator again with the arguments a boxed kernel unboxed.

``dispatcher.unbox_arguments`` returns every argument in schema order, but
an operator (and an unboxed kernel) takes keyword-only arguments only by
name, so ``op(*values)`` fails for schemas with ``*, ...``.

API gap (see the prototype's report): the public API should offer this split
(``unbox_call(schema, stack) -> (args, kwargs)``); the core's own
``call_boxed`` / ``redispatch_boxed`` need it too and fail on keyword-only
arguments today.  Remove this module when it exists.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from dispatcher.schema import FunctionSchema

__all__ = ["call_arguments"]


def call_arguments(schema: "FunctionSchema", values: Sequence[Any]) -> tuple[tuple, dict]:
    """(positional args, keyword-only args by name) for ``values`` bound to ``schema``."""
    args, kwargs = [], {}
    for argument, value in zip(schema.arguments, values):
        if argument.kwarg_only:
            kwargs[argument.name] = value
        else:
            args.append(value)
    return tuple(args), kwargs
