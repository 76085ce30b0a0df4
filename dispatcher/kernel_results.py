"""A custom operator's kernel results, checked against its schema's returns and converted as torch does.

torch calls a Python kernel (a ``custom_op``'s function, its fake
implementation, its autograd wrapper) from C++, and pushes what it returns
onto the dispatcher's stack as IValues (``pushPyOutToStack`` in
torch/csrc/autograd/python_variable.cpp), always, whether or not arguments
are checked:

* no returns: the result must be None ("Expected PythonKernelHolder for
  ns::op to return None but it returned something else instead.");
* one return: the result is converted to the return's type;
* several: the result must be a sequence ("Object of type 'int' is not an
  instance of 'sequence'"), each element converted to its return's type.

A conversion that fails is torch's ``toIValue`` error: "Unable to cast 5 to
Tensor" for a tensor, "Cannot cast a to number" for a Scalar, and for the
other types its C++ binding library's cast error, "Unable to cast Python
instance of type <class 'str'> to C++ type" followed in torch by '?' and a
note on how to get details -- here by the return's type and which return of
which operator it is.  What converts comes back converted, as from torch: 3
for a float is 3.0, a tuple for a list is a list, True for an int is 1, and
a bool return takes any value with a truth value (1, 2.5, None -> False).
torch does take None for a Tensor (an undefined tensor).

One difference on purpose: torch does not compare a sequence's length with
the number of returns (it pushes what it gets, and with more values than
returns reads past them), so a wrong length is refused here with its own
text.  The converters are dispatcher.ivalue's, the boxing code's.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, Optional

from ._ivalue_tag import Mismatch
from .call_checks import torch_type_name
from .ivalue import value_converter
from .schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type

__all__ = ["result_check"]

ValueCheck = Callable[[Any], Any]

_TENSOR = BaseType(BaseTy.Tensor)
_SCALAR = BaseType(BaseTy.Scalar)
_BOOLS = (BaseType(BaseTy.bool), BaseType(BaseTy.SymBool))


def result_check(schema: FunctionSchema, engine: Any) -> Callable[[Any], Any]:
    """The function that checks a kernel result of ``schema``'s operator (of ``engine``,
    whose tensors it recognises) and returns it converted, raising torch's errors."""
    name = str(schema.name)
    returns = schema.returns
    if schema.is_varret:
        return _unchecked  # "-> ...": any values (custom operators have no such schemas)
    if not returns:
        def check_none(result: Any) -> Any:
            if result is not None:
                raise RuntimeError(
                    f"Expected PythonKernelHolder for {name} to return None but it returned something else instead."
                )
            return None

        return check_none
    checks = tuple(_value_check(r.type, f"return {i} of {schema}", engine) for i, r in enumerate(returns))
    if len(checks) == 1:
        return checks[0]
    n = len(checks)

    def check_sequence_of_n(result: Any) -> None:
        if type(result) is not tuple and type(result) is not list and not isinstance(result, Sequence):
            raise TypeError(f"Object of type '{type(result).__name__}' is not an instance of 'sequence'")
        if len(result) != n:
            raise RuntimeError(
                f"Expected the kernel of {name} to return {n} values, as its schema says ({schema}), "
                f"but it returned a {type(result).__name__} of {len(result)} instead."
            )

    if all(r.type.strip_annotations() == _TENSOR for r in returns):
        # The common case, with no conversion to make: a tuple of tensors comes back as it is.
        tensor_key_set = engine.tensor_key_set
        check_tensor = checks[0]

        def check_tensors(result: Any) -> Any:
            if type(result) is not tuple or len(result) != n:
                check_sequence_of_n(result)
            for value in result:
                if value is not None and tensor_key_set(value) is None:
                    check_tensor(value)  # raises torch's error
            return result if type(result) is tuple else tuple(result)

        return check_tensors

    def check_sequence(result: Any) -> Any:
        check_sequence_of_n(result)
        return tuple([check(value) for check, value in zip(checks, result)])

    return check_sequence


def _unchecked(result: Any) -> Any:
    return result


def _value_check(t: Type, where: str, engine: Any) -> ValueCheck:
    """The check and conversion of a value of type ``t`` (``where`` names it in errors)."""
    t = t.strip_annotations()
    if isinstance(t, OptionalType):
        inner = _value_check(t.elem, where, engine)

        def check_optional(value: Any) -> Any:
            return None if value is None else inner(value)

        return check_optional
    if t == _TENSOR:
        return _tensor_check(engine)
    if isinstance(t, ListType) and t.elem.strip_annotations() == OptionalType(_TENSOR):
        return _optional_tensors_check(t, where, engine)
    if t == _SCALAR:
        return _scalar_check(engine)
    if t in _BOOLS:
        return _bool_check(t, where)
    if isinstance(t, ListType) and t.size is not None:
        t = ListType(t.elem)  # a sized list's single int stands for a list in arguments only
    if isinstance(t, BaseType) and t.name in _AS_THEY_ARE:
        return _converted(t, where, value_converter(t, engine), _AS_THEY_ARE[t.name])
    return _converted(t, where, value_converter(t, engine))


def _cast_error(t: Type, where: str, value: Any, received: str) -> RuntimeError:
    detail = "" if received == type(value).__name__ or received == "None" else f": {received}"
    return RuntimeError(
        f"Unable to cast Python instance of type {type(value)!r} to C++ type '{torch_type_name(t)}' "
        f"({where}{detail})"
    )


# The types whose values of exactly this Python type need no conversion.
_AS_THEY_ARE = {BaseTy.int: int, BaseTy.SymInt: int, BaseTy.float: float, BaseTy.SymFloat: float, BaseTy.str: str}


def _converted(t: Type, where: str, convert: Callable[[Any], Any], as_it_is: Optional[type] = None) -> ValueCheck:
    def check(value: Any) -> Any:
        if type(value) is as_it_is:
            return value
        try:
            return convert(value).to_python()
        except Mismatch as exc:
            raise _cast_error(t, where, value, exc.received) from None

    return check


def _tensor_check(engine: Any) -> ValueCheck:
    tensor_key_set = engine.tensor_key_set

    def check_tensor(value: Any) -> Any:
        # None is an undefined tensor to torch: it passes, and comes back None.
        if value is None or tensor_key_set(value) is not None:
            return value
        raise RuntimeError(f"Unable to cast {value} to Tensor")

    return check_tensor


def _optional_tensors_check(t: ListType, where: str, engine: Any) -> ValueCheck:
    """Tensor?[]: a generic list to torch, converted element by element (a typed list,
    such as Tensor[], is cast whole, and its error names the list)."""
    element = _tensor_check(engine)

    def check_optional_tensors(value: Any) -> Any:
        if type(value) is not list and type(value) is not tuple:
            raise _cast_error(t, where, value, type(value).__name__)
        return [element(item) for item in value]

    return check_optional_tensors


def _scalar_check(engine: Any) -> ValueCheck:
    convert = value_converter(_SCALAR, engine)

    def check_scalar(value: Any) -> Any:
        try:
            return convert(value).to_python()
        except Mismatch:
            raise RuntimeError(f"Cannot cast {value} to number") from None

    return check_scalar


def _bool_check(t: Type, where: str) -> ValueCheck:
    def check_bool(value: Any) -> Any:
        # torch's binding library takes None (False) and anything with a truth
        # value of its own (numbers, tensors), but not a str or a list.
        if type(value) is bool:
            return value
        if value is None or hasattr(type(value), "__bool__"):
            return bool(value)
        raise _cast_error(t, where, value, type(value).__name__)

    return check_bool
