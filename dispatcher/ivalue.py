"""Boxed values: ``IValue`` (a tagged value) and ``Stack``, PyTorch's boxed calling convention.

A boxed kernel sees an operator's arguments as a stack of IValues instead of
Python parameters, so one kernel (a fallback, a tracer) can serve every
operator.  ``box`` turns an ordinary call into such a stack, checking each
argument against the schema; ``unbox_arguments`` turns it back.  A boxed
kernel leaves its results on the stack (``box_returns`` pushes a Python
result there), and ``unbox_returns`` makes them ``None``, a value, or a tuple.

Tags follow ``c10::IValue``.  Payloads are plain Python values; typed lists
(IntList, ..., TensorList) hold a tuple of plain elements, generic lists and
tuples a tuple of IValues, as in c10 (``c10::List<int64_t>`` vs
``c10::List<IValue>``).

IValue, Stack and the four box/unbox functions live in the core (compiled,
with a pure-Python twin), since a boxed kernel pays for them on every call.
This module holds what they consult: a converter per schema type, and the
per-schema ``Boxer`` the core caches (``_make_boxer``).

Tensors are recognised by ``dispatcher._core.tensor_key_set`` -- the one test
the call path uses too -- so anything that dispatches as a tensor boxes as one.
"""
from __future__ import annotations

import numbers
import operator
import random
from typing import Any, Callable, Optional

from dispatcher import _core
from dispatcher._core import (
    Boxer,
    IValue,
    Stack,
    box,
    box_returns,
    tensor_key_set,
    unbox_arguments,
    unbox_returns,
)
from dispatcher._ivalue_tag import Mismatch, Tag
from dispatcher.schema import (
    BaseTy,
    BaseType,
    ClassType,
    FunctionSchema,
    ListType,
    OptionalType,
    ParameterizedType,
    TupleType,
    Type,
    TypeVar,
)

__all__ = [
    "IValue",
    "Stack",
    "Tag",
    "box",
    "box_returns",
    "register_value_type",
    "unbox_arguments",
    "unbox_returns",
]


_NONE = IValue(Tag.NONE, None)
# Reading an enum member (Tag.INT) costs ~250 ns on Python 3.11; the
# converters, which run per value, use these module constants instead.
_TENSOR, _DOUBLE, _INT, _BOOL, _COMPLEX = Tag.TENSOR, Tag.DOUBLE, Tag.INT, Tag.BOOL, Tag.COMPLEX


# --------------------------------------------------------------------------
# Python values accepted for the enum-like and opaque types
# --------------------------------------------------------------------------
# Without torch there are no torch.dtype / torch.device objects; a project
# brings its own and registers them.  The defaults: ints (and IntEnums) for the
# enum-like types, strings such as "cpu" for devices, random.Random generators.
_ACCEPTED: dict[Tag, tuple[type, ...]] = {
    Tag.SCALAR_TYPE: (int,),
    Tag.LAYOUT: (int,),
    Tag.MEMORY_FORMAT: (int,),
    Tag.DEVICE: (str,),
    Tag.GENERATOR: (random.Random,),
}


def register_value_type(tag: Tag, cls: type) -> None:
    """Accept instances of ``cls`` where the schema expects ``tag``'s type.

    For ``Tag.SCALAR_TYPE``, ``LAYOUT``, ``MEMORY_FORMAT``, ``DEVICE`` and
    ``GENERATOR``: e.g. ``register_value_type(Tag.DEVICE, MyDevice)``.
    """
    if tag not in _ACCEPTED:
        raise ValueError(
            f"only {', '.join(t.name for t in _ACCEPTED)} take registered types, not {tag!r}"
        )
    if not isinstance(cls, type):
        raise TypeError(f"register_value_type expects a type, got {cls!r}")
    if cls not in _ACCEPTED[tag]:
        _ACCEPTED[tag] += (cls,)
    _CONVERTERS.clear()
    _core.impl._forget_boxers()


# --------------------------------------------------------------------------
# Converters: one function per schema type, Python value -> IValue
# --------------------------------------------------------------------------
def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


Converter = Callable[[Any], IValue]


def _simple(
    tag: Tag,
    test: Callable[[Any], bool],
    convert: Optional[Callable[[Any], Any]] = None,
    exact: Optional[type] = None,
) -> Converter:
    """A converter for values passing ``test``; values of type ``exact`` pass as they are."""

    def conv(v: Any) -> IValue:
        if type(v) is exact:
            return IValue(tag, v)
        if not test(v):
            raise Mismatch(_type_name(v))
        return IValue(tag, v if convert is None else convert(v))

    return conv


def _never(v: Any) -> bool:
    return False


def _is_int(v: Any) -> bool:
    return type(v) is int or isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return type(v) in (float, int) or isinstance(v, numbers.Real) and not isinstance(v, bool)


def _is_complex(v: Any) -> bool:
    return isinstance(v, numbers.Complex) and not isinstance(v, bool)


def _tensor(v: Any) -> IValue:
    if tensor_key_set(v) is None:
        raise Mismatch(_type_name(v))
    return IValue(_TENSOR, v)


def _scalar(v: Any) -> IValue:
    cls = type(v)
    if cls is int:
        return IValue(_INT, v)
    if cls is float:
        return IValue(_DOUBLE, v)
    if cls is bool:
        return IValue(_BOOL, v)
    if cls is complex:
        return IValue(_COMPLEX, v)
    if _is_int(v):
        return IValue(_INT, operator.index(v))
    if _is_real(v):
        return IValue(_DOUBLE, float(v))
    if _is_complex(v):
        return IValue(_COMPLEX, complex(v))
    raise Mismatch(_type_name(v))


def _registered(tag: Tag) -> Converter:
    accepted = _ACCEPTED[tag]
    return _simple(tag, lambda v: isinstance(v, accepted) and type(v) is not bool)


def _base_converter(name: BaseTy) -> Converter:
    if name is BaseTy.Tensor:
        return _tensor
    if name in (BaseTy.int, BaseTy.SymInt):
        return _simple(Tag.INT, _is_int, operator.index, exact=int)
    if name in (BaseTy.float, BaseTy.SymFloat):
        return _simple(Tag.DOUBLE, _is_real, float, exact=float)
    if name in (BaseTy.bool, BaseTy.SymBool):
        return _simple(Tag.BOOL, _never, exact=bool)
    if name in (BaseTy.str, BaseTy.Dimname):
        return _simple(Tag.STRING, _never, exact=str)
    if name is BaseTy.complex:
        return _simple(Tag.COMPLEX, _is_complex, complex)
    if name is BaseTy.Scalar:
        return _scalar
    if name is BaseTy.ScalarType:
        return _registered(Tag.SCALAR_TYPE)
    if name is BaseTy.Layout:
        return _registered(Tag.LAYOUT)
    if name is BaseTy.MemoryFormat:
        return _registered(Tag.MEMORY_FORMAT)
    if name is BaseTy.Device:
        return _registered(Tag.DEVICE)
    if name is BaseTy.Generator:
        return _registered(Tag.GENERATOR)
    if name is BaseTy.NoneType:
        return _simple(Tag.NONE, lambda v: v is None)
    if name is BaseTy.Any:
        return IValue.from_python
    # Storage, Stream, QScheme, Capsule, AnyClassType, AnyEnumType: opaque.
    return _simple(Tag.OBJECT, lambda v: v is not None)


def _optional(inner: Converter) -> Converter:
    def conv(v: Any) -> IValue:
        return _NONE if v is None else inner(v)

    return conv


def _elements(v: Any, convert: Callable[[Any], Any]) -> tuple:
    if type(v) not in (list, tuple):
        raise Mismatch(_type_name(v))
    out = []
    for i, x in enumerate(v):
        try:
            out.append(convert(x))
        except Mismatch as exc:
            raise Mismatch(f"{type(v).__name__} whose element {i} is {exc.received}") from None
    return tuple(out)


def _list_converter(t: ListType) -> Converter:
    elem = t.elem.strip_annotations()
    elem_conv = _converter(elem)
    size = t.size
    typed = {
        BaseTy.int: Tag.INT_LIST, BaseTy.SymInt: Tag.INT_LIST, BaseTy.float: Tag.DOUBLE_LIST,
        BaseTy.SymFloat: Tag.DOUBLE_LIST, BaseTy.bool: Tag.BOOL_LIST, BaseTy.SymBool: Tag.BOOL_LIST,
        BaseTy.Tensor: Tag.TENSOR_LIST,
    }.get(elem.name) if isinstance(elem, BaseType) else None
    if typed is None:
        return lambda v: IValue(Tag.GENERIC_LIST, _elements(v, elem_conv))

    def payload_of(x: Any) -> Any:
        return elem_conv(x).payload

    expands = size is not None and typed is Tag.INT_LIST

    def conv(v: Any) -> IValue:
        # PyTorch accepts one int for a sized int list: stride=2 is [2, 2].
        if expands and _is_int(v):
            return IValue(typed, (operator.index(v),) * size)
        return IValue(typed, _elements(v, payload_of))

    return conv


def _tuple_converter(t: TupleType) -> Converter:
    convs = tuple(_converter(e) for e in t.elems)

    def conv(v: Any) -> IValue:
        if type(v) not in (list, tuple) or len(v) != len(convs):
            got = f"{type(v).__name__} of {len(v)}" if type(v) in (list, tuple) else _type_name(v)
            raise Mismatch(got)
        items = []
        for i, (c, x) in enumerate(zip(convs, v)):
            try:
                items.append(c(x))
            except Mismatch as exc:
                raise Mismatch(f"{type(v).__name__} whose element {i} is {exc.received}") from None
        return IValue(Tag.TUPLE, tuple(items))

    return conv


def _union_converter(t: ParameterizedType) -> Converter:
    convs = tuple(_converter(a) for a in t.args)

    def conv(v: Any) -> IValue:
        for c in convs:
            try:
                return c(v)
            except Mismatch:
                pass
        raise Mismatch(_type_name(v))

    return conv


def _build_converter(t: Type) -> Converter:
    if isinstance(t, BaseType):
        return _base_converter(t.name)
    if isinstance(t, OptionalType):
        return _optional(_converter(t.elem))
    if isinstance(t, ListType):
        return _list_converter(t)
    if isinstance(t, TupleType):
        return _tuple_converter(t)
    if isinstance(t, TypeVar):
        return IValue.from_python
    if isinstance(t, ParameterizedType):
        if t.name == "Union":
            return _union_converter(t)
        if t.name == "Dict":
            return _simple(Tag.OBJECT, lambda v: isinstance(v, dict))
        return _simple(Tag.OBJECT, lambda v: v is not None)  # Future, RRef, Await
    assert isinstance(t, ClassType), t
    return _simple(Tag.OBJECT, lambda v: v is not None)


_CONVERTERS: dict[Type, Converter] = {}


def _converter(t: Type) -> Converter:
    t = t.strip_annotations()
    conv = _CONVERTERS.get(t)
    if conv is None:
        conv = _CONVERTERS[t] = _build_converter(t)
    return conv


# --------------------------------------------------------------------------
# Boxers: what the core's box/unbox functions use for one schema
# --------------------------------------------------------------------------
def _fast_path(t: Type) -> Optional[tuple[Optional[type], Tag]]:
    """(exact Python type, tag) of values that box as they are, if ``t`` has such.

    ``None`` as the type stands for "a tensor".  Optional types share the
    path of their element: None takes the converter's way.
    """
    t = t.strip_annotations()
    if isinstance(t, OptionalType):
        t = t.elem
    if not isinstance(t, BaseType):
        return None
    return _FAST_PATHS.get(t.name)


_FAST_PATHS = {
    BaseTy.Tensor: (None, Tag.TENSOR),
    BaseTy.int: (int, Tag.INT),
    BaseTy.SymInt: (int, Tag.INT),
    BaseTy.Scalar: (int, Tag.INT),
    BaseTy.float: (float, Tag.DOUBLE),
    BaseTy.SymFloat: (float, Tag.DOUBLE),
    BaseTy.bool: (bool, Tag.BOOL),
    BaseTy.SymBool: (bool, Tag.BOOL),
    BaseTy.str: (str, Tag.STRING),
}


def _make_boxer(schema: FunctionSchema) -> Boxer:
    """The core's Boxer for ``schema``: a converter and a fast path per argument and return."""
    if not isinstance(schema, FunctionSchema):
        raise TypeError(f"expected a FunctionSchema, got {type(schema).__name__}")
    arguments = tuple(
        # An argument whose default is None takes None whatever its type
        # ("Tensor x=None"): binding fills that default in.
        _optional(_converter(a.type))
        if a.default is None and not isinstance(a.type, OptionalType)
        else _converter(a.type)
        for a in schema.arguments
    )

    def argument_error(values: tuple) -> TypeError:
        """The TypeError for the first of ``values`` that does not convert."""
        for i, (conv, v) in enumerate(zip(arguments, values)):
            try:
                conv(v)
            except Mismatch as exc:
                arg = schema.arguments[i]
                return TypeError(
                    f"{schema.name}(): argument '{arg.name}' (position {i + 1}) must be "
                    f"{arg.type.strip_annotations()}, not {exc.received}"
                )
        raise AssertionError("argument_error() called for values that convert")

    def return_error(i: int, mismatch: Mismatch) -> TypeError:
        ret = schema.returns[i]
        which = f"return value {i + 1}" + ("" if ret.name is None else f" ('{ret.name}')")
        return TypeError(
            f"{schema.name}(): {which} must be {ret.type.strip_annotations()}, not {mismatch.received}"
        )

    return Boxer(
        schema,
        arguments,
        tuple(_fast_path(a.type) for a in schema.arguments),
        tuple(_converter(r.type) for r in schema.returns),
        tuple(_fast_path(r.type) for r in schema.returns),
        argument_error,
        return_error,
    )
