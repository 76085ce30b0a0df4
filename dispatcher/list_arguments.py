"""A custom operator's kernel gets its list arguments as lists, as torch passes them.

torch hands a Python kernel its arguments through IValues, so whatever sequence
a caller gave for a list argument (a tuple, a range, any
``collections.abc.Sequence``) reaches the kernel as a list, its elements as the
list type has them (ints as floats in a ``float[]``), and one int given for a
sized ``int[N]`` as N copies of it.  This package's engine passes values as
they are (a kernel reached by ``Library.impl`` sees the caller's tuple); the
custom-operator layers (``custom_op``'s kernels and the older CustomOp API's)
convert with ``lists_as_torch_passes_them``, as torch's documentation promises
a custom operator's kernel (``Sequence[int]`` annotations are ``int[]``).
"""
from __future__ import annotations

import collections.abc
from typing import Any, Callable, Optional

from ._ivalue_tag import TYPED_LIST_TAGS, Mismatch
from .ivalue import value_converter
from .schema import FunctionSchema, ListType, OptionalType, Type

__all__ = ["lists_as_torch_passes_them"]

ArgumentsConverter = Callable[[tuple[Any, ...], dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]


def _list_type(t: Type) -> Optional[ListType]:
    t = t.elem if isinstance(t, OptionalType) else t
    return t if isinstance(t, ListType) else None


def _as_list(t: ListType, engine: Any) -> Callable[[Any], Any]:
    convert = value_converter(t, engine)

    def as_list(value: Any) -> Any:
        if value is None or type(value) is list and not value:
            return value
        if isinstance(value, int) and t.size is not None:
            given: Any = value  # converted below: one int for int[N]
        elif isinstance(value, collections.abc.Sequence) and not isinstance(value, (str, bytes)):
            given = list(value)
        else:
            return value  # not a sequence: what the kernel makes of it is its own affair
        try:
            boxed = convert(given)
        except Mismatch:
            return given
        # Typed lists (int[], float[], bool[], Tensor[]) hold the converted
        # elements; other lists hold IValues: their elements as given.
        return list(boxed.payload) if boxed.tag in TYPED_LIST_TAGS else given

    return as_list


def lists_as_torch_passes_them(schema: FunctionSchema, engine: Any) -> Optional[ArgumentsConverter]:
    """A function of a call's ``(args, kwargs)`` giving them with every list
    argument a list, as torch passes it; None when the schema has no list argument."""
    by_position: dict[int, Callable[[Any], Any]] = {}
    by_name: dict[str, Callable[[Any], Any]] = {}
    for i, argument in enumerate(schema.arguments):
        list_type = _list_type(argument.type)
        if list_type is not None:
            by_position[i] = by_name[argument.name] = _as_list(list_type, engine)
    if not by_position:
        return None

    def convert(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if any(i < len(args) for i in by_position):
            args = tuple(by_position[i](v) if i in by_position else v for i, v in enumerate(args))
        if kwargs and any(name in kwargs for name in by_name):
            kwargs = {name: by_name[name](v) if name in by_name else v for name, v in kwargs.items()}
        return args, kwargs

    return convert
