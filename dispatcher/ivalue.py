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

IValue, Stack and Boxer live in the engine (dispatcher/_engine/core.py),
since a boxed kernel pays for them on every call.  This module makes what
they consult: a converter per schema type (per engine, since each engine
has its own IValue), and the Boxer of a schema (``make_boxer``), which
registration puts in the operator's call plan.

Tensors are recognised by the engine's ``tensor_key_set`` -- the one test
the call path uses too -- so anything that dispatches as a tensor boxes as one.
"""
from __future__ import annotations

import numbers
import operator
import random
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional

from dispatcher._core import ENGINE as _engine
from dispatcher._engine import loaded_engines
from dispatcher._core import DispatchKeySet, IValue, Stack
from dispatcher._ivalue_tag import Mismatch, IValueTag
from dispatcher._numbers_as_tensors import NUMBER_TYPES, allows_numbers_as_tensors
from dispatcher.call_checks import ArgumentCheck
from dispatcher.errors import DispatcherTypeError
from dispatcher.value_types import device
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

if TYPE_CHECKING:
    from dispatcher._engine.core import Boxer

__all__ = [
    "IValue",
    "Stack",
    "IValueTag",
    "box",
    "box_returns",
    "register_value_type",
    "unbox_arguments",
    "unbox_returns",
]


# Reading an enum member (IValueTag.INT) costs ~250 ns on Python 3.11; the
# converters, which run per value, use these module constants instead.
_TENSOR, _DOUBLE, _INT, _BOOL, _COMPLEX = IValueTag.TENSOR, IValueTag.DOUBLE, IValueTag.INT, IValueTag.BOOL, IValueTag.COMPLEX


# --------------------------------------------------------------------------
# Python values accepted for the enum-like and opaque types
# --------------------------------------------------------------------------
# Without torch there are no torch.dtype objects; a project brings its own
# and registers them.  The defaults: ints (and IntEnums) for the enum-like
# types, dispatcher.device and strings such as "cpu" for devices (a kernel
# gets what was passed, unconverted), random.Random generators.
_ACCEPTED: dict[IValueTag, tuple[type, ...]] = {
    IValueTag.SCALAR_TYPE: (int,),
    IValueTag.LAYOUT: (int,),
    IValueTag.MEMORY_FORMAT: (int,),
    IValueTag.DEVICE: (str, device),
    IValueTag.GENERATOR: (random.Random,),
}


def register_value_type(tag: IValueTag, cls: type) -> None:
    """Accept instances of ``cls`` where the schema expects ``tag``'s type.

    For ``IValueTag.SCALAR_TYPE``, ``LAYOUT``, ``MEMORY_FORMAT``, ``DEVICE`` and
    ``GENERATOR``: e.g. ``register_value_type(IValueTag.DEVICE, MyDevice)``.
    """
    if tag not in _ACCEPTED:
        raise ValueError(
            f"only {', '.join(t.name for t in _ACCEPTED)} take registered types, not {tag!r}"
        )
    if not isinstance(cls, type):
        raise TypeError(f"register_value_type expects a type, got {cls!r}")
    if cls not in _ACCEPTED[tag]:
        _ACCEPTED[tag] += (cls,)
        # A packet may have chosen another overload for values of this type.
        for engine in loaded_engines():
            engine.forget_overload_choices()


# --------------------------------------------------------------------------
# Converters: one function per schema type, Python value -> IValue
# --------------------------------------------------------------------------
def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


Converter = Callable[[Any], IValue]


def _never(v: Any) -> bool:
    return False


def _is_int(v: Any) -> bool:
    return type(v) is int or isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return type(v) in (float, int) or isinstance(v, numbers.Real) and not isinstance(v, bool)


# torch.ops takes True where an int or a float is expected (as 1, 1.0).
def _is_int_or_bool(v: Any) -> bool:
    return isinstance(v, numbers.Integral)


def _as_int(v: Any) -> int:
    return int(operator.index(v))


def _is_real_or_bool(v: Any) -> bool:
    return isinstance(v, numbers.Real)


def _is_complex(v: Any) -> bool:
    return isinstance(v, numbers.Complex) and not isinstance(v, bool)


def _elements(v: Any, convert: Callable[[Any], Any]) -> tuple[Any, ...]:
    if type(v) not in (list, tuple):
        raise Mismatch(_type_name(v))
    out = []
    for i, x in enumerate(v):
        try:
            out.append(convert(x))
        except Mismatch as exc:
            raise Mismatch(f"{type(v).__name__} whose element {i} is {exc.received}") from None
    return tuple(out)


# A signature's argument types (each with whether the argument takes None
# for its default) and return types: what its converters depend on.
# (argument types, whether each takes None; return types; whether numbers go where it says Tensor)
_SignatureTypes = tuple[tuple[tuple[Type, bool], ...], tuple[Type, ...], bool]


class _SignatureConverters(NamedTuple):
    arguments: tuple[Converter, ...]
    argument_fast_paths: tuple[Optional[tuple[Optional[type], IValueTag]], ...]
    return_converters: tuple[Converter, ...]
    return_fast_paths: tuple[Optional[tuple[Optional[type], IValueTag]], ...]


class _Converters:
    """The converters of one engine: one function per schema type, Python value -> IValue.

    Every engine has its own IValue type, so each gets its own converters
    (``_converters_for``); they are cached per schema type.
    """

    def __init__(self, engine: Any) -> None:
        self.IValue: type[IValue] = engine.IValue
        self.tensor_key_set: Callable[[object], DispatchKeySet | None] = engine.tensor_key_set
        self.none: IValue = engine.IValue(IValueTag.NONE, None)
        self._cache: dict[Type, Converter] = {}
        self._signatures: dict[_SignatureTypes, _SignatureConverters] = {}

    def for_signature(self, schema: FunctionSchema) -> "_SignatureConverters":
        """The converters and fast paths of ``schema``'s arguments and returns.

        Made once per signature (most operators share a few, "(Tensor self,
        Tensor other) -> Tensor" say): every def makes a Boxer.
        """
        # An argument whose default is None takes None whatever its type
        # ("Tensor x=None"): binding fills that default in.
        # An operator that takes numbers as tensors (x * 2 is mul.Tensor) has
        # its Tensor arguments box a number as the scalar it is: its kernels,
        # boxed ones too, get the number (dispatcher/_numbers_as_tensors.py).
        key = (tuple([(a.type, a.default is None and not isinstance(a.type, OptionalType)) for a in schema.arguments]),
               tuple([r.type for r in schema.returns]), allows_numbers_as_tensors(str(schema.name)))
        found = self._signatures.get(key)
        if found is None:
            arguments = tuple([self.optional(self._argument_converter(t, key[2])) if takes_none
                               else self._argument_converter(t, key[2]) for t, takes_none in key[0]])
            found = self._signatures[key] = _SignatureConverters(
                arguments, tuple([_fast_path(t) for t, _ in key[0]]),
                tuple([self.converter(t) for t in key[1]]), tuple([_fast_path(t) for t in key[1]]))
        return found

    def _argument_converter(self, t: Type, numbers_as_tensors: bool) -> Converter:
        if numbers_as_tensors:
            base = t.strip_annotations()
            if isinstance(base, BaseType) and base.name is BaseTy.Tensor:
                return self._tensor_or_number
            if isinstance(base, OptionalType) and isinstance(base.elem, BaseType) and base.elem.name is BaseTy.Tensor:
                return self.optional(self._tensor_or_number)
        return self.converter(t)

    def _tensor_or_number(self, v: Any) -> IValue:
        if isinstance(v, NUMBER_TYPES) and self.tensor_key_set(v) is None:
            return self._scalar(v)
        return self._tensor(v)

    def _simple(
        self,
        tag: IValueTag,
        test: Callable[[Any], bool],
        convert: Optional[Callable[[Any], Any]] = None,
        exact: Optional[type] = None,
    ) -> Converter:
        """A converter for values passing ``test``; values of type ``exact`` pass as they are."""

        def conv(v: Any) -> IValue:
            if type(v) is exact:
                return self.IValue(tag, v)
            if not test(v):
                raise Mismatch(_type_name(v))
            return self.IValue(tag, v if convert is None else convert(v))

        return conv

    def _tensor(self, v: Any) -> IValue:
        if self.tensor_key_set(v) is None:
            raise Mismatch(_type_name(v))
        return self.IValue(_TENSOR, v)

    def _scalar(self, v: Any) -> IValue:
        cls = type(v)
        if cls is int:
            return self.IValue(_INT, v)
        if cls is float:
            return self.IValue(_DOUBLE, v)
        if cls is bool:
            return self.IValue(_BOOL, v)
        if cls is complex:
            return self.IValue(_COMPLEX, v)
        if _is_int(v):
            return self.IValue(_INT, operator.index(v))
        if _is_real(v):
            return self.IValue(_DOUBLE, float(v))
        if _is_complex(v):
            return self.IValue(_COMPLEX, complex(v))
        raise Mismatch(_type_name(v))

    def _registered(self, tag: IValueTag) -> Converter:
        # Read at each call: register_value_type may add types later.
        return self._simple(tag, lambda v: isinstance(v, _ACCEPTED[tag]) and type(v) is not bool)

    def _base_converter(self, name: BaseTy) -> Converter:
        if name is BaseTy.Tensor:
            return self._tensor
        if name in (BaseTy.int, BaseTy.SymInt):
            return self._simple(IValueTag.INT, _is_int_or_bool, _as_int, exact=int)
        if name in (BaseTy.float, BaseTy.SymFloat):
            return self._simple(IValueTag.DOUBLE, _is_real_or_bool, float, exact=float)
        if name in (BaseTy.bool, BaseTy.SymBool):
            return self._simple(IValueTag.BOOL, _never, exact=bool)
        if name in (BaseTy.str, BaseTy.Dimname):
            return self._simple(IValueTag.STRING, _never, exact=str)
        if name is BaseTy.complex:
            return self._simple(IValueTag.COMPLEX, _is_complex, complex)
        if name is BaseTy.Scalar:
            return self._scalar
        if name is BaseTy.ScalarType:
            return self._registered(IValueTag.SCALAR_TYPE)
        if name is BaseTy.Layout:
            return self._registered(IValueTag.LAYOUT)
        if name is BaseTy.MemoryFormat:
            return self._registered(IValueTag.MEMORY_FORMAT)
        if name is BaseTy.Device:
            return self._registered(IValueTag.DEVICE)
        if name is BaseTy.Generator:
            return self._registered(IValueTag.GENERATOR)
        if name is BaseTy.NoneType:
            return self._simple(IValueTag.NONE, lambda v: v is None)
        if name is BaseTy.Any:
            return self.IValue.from_python
        if name is BaseTy.PyObject:  # an opaque type (dispatcher.opaque_types): any object, as it is
            return self._simple(IValueTag.OBJECT, lambda v: True)
        # Storage, Stream, QScheme, Capsule, AnyClassType, AnyEnumType: opaque.
        return self._simple(IValueTag.OBJECT, lambda v: v is not None)

    def optional(self, inner: Converter) -> Converter:
        def conv(v: Any) -> IValue:
            return self.none if v is None else inner(v)

        return conv

    def _list_converter(self, t: ListType) -> Converter:
        elem = t.elem.strip_annotations()
        elem_conv = self.converter(elem)
        size = t.size
        typed = {
            BaseTy.int: IValueTag.INT_LIST, BaseTy.SymInt: IValueTag.INT_LIST, BaseTy.float: IValueTag.DOUBLE_LIST,
            BaseTy.SymFloat: IValueTag.DOUBLE_LIST, BaseTy.bool: IValueTag.BOOL_LIST, BaseTy.SymBool: IValueTag.BOOL_LIST,
            BaseTy.Tensor: IValueTag.TENSOR_LIST,
        }.get(elem.name) if isinstance(elem, BaseType) else None
        if typed is None:
            return lambda v: self.IValue(IValueTag.GENERIC_LIST, _elements(v, elem_conv))

        def payload_of(x: Any) -> Any:
            return elem_conv(x).payload

        expanded_size = size if typed is IValueTag.INT_LIST else None

        def conv(v: Any) -> IValue:
            # PyTorch accepts one int for a sized int list: stride=2 is [2, 2].
            if expanded_size is not None and _is_int(v):
                return self.IValue(typed, (operator.index(v),) * expanded_size)
            return self.IValue(typed, _elements(v, payload_of))

        return conv

    def _tuple_converter(self, t: TupleType) -> Converter:
        convs = tuple(self.converter(e) for e in t.elems)

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
            return self.IValue(IValueTag.TUPLE, tuple(items))

        return conv

    def _union_converter(self, t: ParameterizedType) -> Converter:
        convs = tuple(self.converter(a) for a in t.args)

        def conv(v: Any) -> IValue:
            for c in convs:
                try:
                    return c(v)
                except Mismatch:
                    pass
            raise Mismatch(_type_name(v))

        return conv

    def _build_converter(self, t: Type) -> Converter:
        if isinstance(t, BaseType):
            return self._base_converter(t.name)
        if isinstance(t, OptionalType):
            return self.optional(self.converter(t.elem))
        if isinstance(t, ListType):
            return self._list_converter(t)
        if isinstance(t, TupleType):
            return self._tuple_converter(t)
        if isinstance(t, TypeVar):
            return self.IValue.from_python
        if isinstance(t, ParameterizedType):
            if t.name == "Union":
                return self._union_converter(t)
            if t.name == "Dict":
                return self._simple(IValueTag.OBJECT, lambda v: isinstance(v, dict))
            return self._simple(IValueTag.OBJECT, lambda v: v is not None)  # Future, RRef, Await
        assert isinstance(t, ClassType), t
        return self._simple(IValueTag.OBJECT, lambda v: v is not None)

    def converter(self, t: Type) -> Converter:
        t = t.strip_annotations()
        conv = self._cache.get(t)
        if conv is None:
            conv = self._cache[t] = self._build_converter(t)
        return conv


# --------------------------------------------------------------------------
# Boxers: what the core's box/unbox functions use for one schema
# --------------------------------------------------------------------------
def _fast_path(t: Type) -> Optional[tuple[Optional[type], IValueTag]]:
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
    BaseTy.Tensor: (None, IValueTag.TENSOR),
    BaseTy.int: (int, IValueTag.INT),
    BaseTy.SymInt: (int, IValueTag.INT),
    BaseTy.Scalar: (int, IValueTag.INT),
    BaseTy.float: (float, IValueTag.DOUBLE),
    BaseTy.SymFloat: (float, IValueTag.DOUBLE),
    BaseTy.bool: (bool, IValueTag.BOOL),
    BaseTy.SymBool: (bool, IValueTag.BOOL),
    BaseTy.str: (str, IValueTag.STRING),
}


def _converters_for(engine: Any) -> _Converters:
    converters = _CONVERTERS_BY_ENGINE.get(engine.__name__)
    if converters is None:
        converters = _CONVERTERS_BY_ENGINE[engine.__name__] = _Converters(engine)
    return converters


_CONVERTERS_BY_ENGINE: dict[str, _Converters] = {}


def value_converter(t: Type, engine: Any) -> Converter:
    """``engine``'s converter of values of schema type ``t`` to IValues: a value that
    does not fit raises ``Mismatch`` (what dispatcher.kernel_results builds on)."""
    return _converters_for(engine).converter(t)


def make_boxer(schema: FunctionSchema, engine: Any) -> Boxer:
    """``engine``'s Boxer for ``schema``: a converter and a fast path per
    argument and return, and the schema's binding and error wording."""
    return _make_boxer(schema, engine, checked=False)[0]


def make_checked_boxer(schema: FunctionSchema, engine: Any) -> tuple[Boxer, ArgumentCheck]:
    """``engine``'s Boxer for ``schema`` that binds and words its errors as
    torch does, and the ArgumentCheck it uses (see dispatcher.call_checks)."""
    boxer, check = _make_boxer(schema, engine, checked=True)
    assert check is not None
    return boxer, check


def _make_boxer(schema: FunctionSchema, engine: Any, checked: bool) -> tuple[Boxer, Optional[ArgumentCheck]]:
    if not isinstance(schema, FunctionSchema):
        raise TypeError(f"expected a FunctionSchema, got {type(schema).__name__}")
    signature = _converters_for(engine).for_signature(schema)
    arguments = signature.arguments

    def argument_error(values: tuple[Any, ...]) -> TypeError:
        """The TypeError for the first of ``values`` that does not convert."""
        for i, (conv, v) in enumerate(zip(arguments, values)):
            try:
                conv(v)
            except Mismatch as exc:
                arg = schema.arguments[i]
                return DispatcherTypeError(
                    f"{schema.name}(): argument '{arg.name}' (position {i + 1}) must be "
                    f"{arg.type.strip_annotations()}, not {exc.received}"
                )
        raise AssertionError("argument_error() called for values that convert")

    def return_error(i: int, mismatch: Mismatch) -> TypeError:
        ret = schema.returns[i]
        which = f"return value {i + 1}" + ("" if ret.name is None else f" ('{ret.name}')")
        return DispatcherTypeError(
            f"{schema.name}(): {which} must be {ret.type.strip_annotations()}, not {mismatch.received}"
        )

    bind: Callable[..., tuple[Any, ...]] = schema.bind
    # Without keyword-only arguments, a call passing every argument positionally needs no binding.
    positional = not schema.is_vararg and not any(a.kwarg_only for a in schema.arguments)
    check = None
    if checked:
        check = ArgumentCheck(schema, arguments)
        bind, argument_error, positional = check.bind, check.argument_error, False  # torch checks every call
    boxer: Boxer = engine.Boxer(
        str(schema.name),
        arguments,
        signature.argument_fast_paths,
        signature.return_converters,
        signature.return_fast_paths,
        positional,
        schema.is_vararg,
        schema.is_varret,
        bind,
        argument_error,
        return_error,
    )
    return boxer, check


# -- boxing by schema or by operator ------------------------------------------------------
# Note [Boxers by schema]
# An operator's plan holds its schema's Boxer, so the call path never looks
# one up.  The four functions below also take a FunctionSchema, as torch's
# do; its Boxer is kept in a small cache by the schema's id.  A Boxer holds
# its schema (through ``bind``), so the cache is bounded: it keeps the
# schemas last used, not every schema ever boxed.
_BOXER_CACHE_SIZE = 64
_boxers_by_schema: dict[int, tuple[FunctionSchema, Boxer]] = {}


def _boxer(schema_or_op: Any) -> Boxer:
    boxer: Boxer | None = getattr(schema_or_op, "boxer", None)
    if boxer is not None:
        return boxer
    if not isinstance(schema_or_op, FunctionSchema):
        raise TypeError(
            f"expected a FunctionSchema or a defined operator's handle, got {type(schema_or_op).__name__}"
        )
    cached = _boxers_by_schema.get(id(schema_or_op))
    if cached is not None and cached[0] is schema_or_op:
        return cached[1]
    boxer = make_boxer(schema_or_op, _engine)
    if len(_boxers_by_schema) >= _BOXER_CACHE_SIZE:
        del _boxers_by_schema[next(iter(_boxers_by_schema))]
    _boxers_by_schema[id(schema_or_op)] = (schema_or_op, boxer)
    return boxer


def box(schema: Any, args: Any, kwargs: Optional[dict[str, Any]] = None) -> Stack:
    """The stack a boxed kernel gets for ``op(*args, **kwargs)``.

    ``schema`` is a FunctionSchema or an operator's handle (faster: see
    Note [Boxers by schema]).  Binds like ``schema.bind`` (TypeError for a
    bad call), then checks and boxes every argument: TypeError names the
    operator, the argument, its position (from 1), the expected and the
    received type.
    """
    return _boxer(schema).box(args, kwargs)


def unbox_arguments(schema: Any, stack: Stack) -> tuple[Any, ...]:
    """Pop the arguments ``box`` pushed and return them as Python values, in order.

    A ``...`` schema's arguments are the whole stack.
    """
    return _boxer(schema).unbox_arguments(stack)


def box_returns(schema: Any, result: Any, stack: Stack) -> None:
    """Push an unboxed kernel's ``result`` (None, a value, or a tuple) as IValues.

    Checked against the schema's returns like ``box`` checks arguments; a bad
    result leaves the stack as it was.
    """
    _boxer(schema).box_returns(result, stack)


def unbox_returns(schema: Any, stack: Stack) -> Any:
    """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

    A ``-> ...`` schema's results are the whole stack (always a tuple).
    """
    return _boxer(schema).unbox_returns(stack)
