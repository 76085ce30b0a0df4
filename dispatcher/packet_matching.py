"""What a packet call (``ops.aten.mul(t, 2)``) accepts for each argument type, as torch 2.13's.

torch resolves a packet call in its JIT (``invokeOperatorFromPython``): it
tries the overloads in order and converts each argument with ``toIValue``,
whose rules are pybind11's conversions plus the JIT's own.  They take more
than a boxed call of one overload does, and in places less; this module
gives the engine those rules (Note [Packet argument rules] in
dispatcher/_engine/core.py) as a conversion of the arguments into what the
boxed test then accepts or refuses:

================  =============================================================
schema type       a packet also takes (converted for the boxed test)
================  =============================================================
bool              an int, float or complex (pybind11 asks for its truth value)
int, SymInt,      a bool
ScalarType, ...
float             an int or a bool
complex           an int, float or bool
Tensor            a bool, int, float or complex, for the operators torch allows
                  numbers as tensors (dispatcher/_numbers_as_tensors.py)
int[N]            a single int (repeated N times); SymInt[N] does not take one
Tensor?[]         a tensor (the JIT iterates it into its rows); Tensor[] does not
str[]             a str (the JIT iterates it into its characters)
Device            a str only if it names a device ("cpu", "cuda:0"); any other
                  str fails the whole call, as torch's device parser does
__torch__ class   no tensor, number, str or list (they are script objects)
AnyEnumType       an enum member only
Storage           nothing this package has (there are no storages)
================  =============================================================

Every rule reads the value's type only, as the engine's remembered choices
require (Note [Overload choice by argument types]).  Test:
tests/test_overload_choice.py, against torch's answers for 17,000 argument
patterns over the whole aten catalog.
"""
from __future__ import annotations

import enum
from typing import Any, Optional

from ._numbers_as_tensors import NUMBER_TYPES, allows_numbers_as_tensors
from .backends import parse_device
from .schema import Argument, BaseTy, BaseType, ClassType, FunctionSchema, ListType, OptionalType, Type

__all__ = ["packet_arguments"]

_NUMBERS = NUMBER_TYPES
_INT_LIKE = (BaseTy.int, BaseTy.SymInt, BaseTy.ScalarType, BaseTy.Layout, BaseTy.MemoryFormat)


def _refuse(argument: Argument, value: Any) -> TypeError:
    return TypeError(f"argument '{argument.name}' must be {argument.type}, not {type(value).__name__}")


def _convert(argument: Argument, value: Any, numbers_as_tensors: bool, tensor_type: type) -> Any:
    kind: Type = argument.type
    if isinstance(kind, OptionalType):
        if value is None:
            return value
        kind = kind.elem
    tp = type(value)
    if isinstance(kind, ClassType):
        _check_script_object(argument, value, tensor_type)
        return value
    if isinstance(kind, BaseType):
        name = kind.name
        if name is BaseTy.bool and tp in (int, float, complex):
            return bool(value)
        if name in _INT_LIKE and tp is bool:
            return int(value)
        if name is BaseTy.float and tp in (int, bool):
            return float(value)
        if name is BaseTy.complex and tp in (int, float, bool):
            return complex(value)
        if name is BaseTy.Tensor and numbers_as_tensors and tp in _NUMBERS:
            return tensor_type()  # stands for the wrapped-number tensor torch makes; the kernel gets the number
        if name is BaseTy.Device and tp is str:
            try:
                parse_device(value)
            except (TypeError, ValueError, RuntimeError) as exc:
                # Not a refusal that moves on to the next overload: torch's
                # device parser raises out of the whole packet call.
                raise RuntimeError(str(exc)) from None
        if name is BaseTy.AnyEnumType and not isinstance(value, enum.Enum):
            raise _refuse(argument, value)
        if name is BaseTy.Storage:
            raise _refuse(argument, value)
        return value
    if isinstance(kind, ListType):
        elem = kind.elem
        if isinstance(elem, ClassType) and isinstance(value, (list, tuple)):
            for item in value:
                _check_script_object(argument, item, tensor_type)
        if isinstance(elem, BaseType) and elem.name is BaseTy.str and tp is str:
            return list(value)  # the JIT iterates a str into its characters
        if isinstance(elem, BaseType) and elem.name is BaseTy.int and kind.size and tp is int:
            return [value] * kind.size
        if isinstance(elem, BaseType) and elem.name is BaseTy.SymInt and tp in (int, bool):
            raise _refuse(argument, value)
        if (isinstance(elem, OptionalType) and isinstance(elem.elem, BaseType) and elem.elem.name is BaseTy.Tensor
                and isinstance(value, tensor_type)):
            return [value]
    return value


def _check_script_object(argument: Argument, value: Any, tensor_type: type) -> None:
    """A TorchScript class argument takes a script object; this package has
    none, and refuses what is certainly not one."""
    if value is None or isinstance(value, (*_NUMBERS, str, list, tuple, tensor_type)):
        raise _refuse(argument, value)


def packet_arguments(qualified_name: str, schema: FunctionSchema, args: tuple[Any, ...],
                     kwargs: Optional[dict[str, Any]], tensor_type: type) -> tuple[tuple[Any, ...], Optional[dict[str, Any]]]:
    """``args`` and ``kwargs`` as the boxed test of ``schema`` should see them
    for a call of the packet ``qualified_name`` (see the module's docstring);
    TypeError for arguments torch's packet refuses for this overload."""
    numbers_as_tensors = allows_numbers_as_tensors(qualified_name)
    arguments = schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    converted = tuple(
        _convert(positional[i], value, numbers_as_tensors, tensor_type) if i < len(positional) else value
        for i, value in enumerate(args)
    )
    if kwargs:
        by_name = {a.name: a for a in arguments}
        kwargs = {
            name: _convert(by_name[name], value, numbers_as_tensors, tensor_type) if name in by_name else value
            for name, value in kwargs.items()
        }
    return converted, kwargs
