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

Tensors are recognised by ``dispatcher._core.tensor_key_set`` -- the one test
the call path uses too -- so anything that dispatches as a tensor boxes as one.
"""
from __future__ import annotations

import enum
import numbers
import operator
import random
from typing import Any, Callable, Optional, Union

from dispatcher._core import tensor_key_set
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


class Tag(enum.IntEnum):
    """What an IValue holds (``c10::IValue::Tag``)."""

    NONE = 0
    TENSOR = 1
    DOUBLE = 2
    INT = 3
    BOOL = 4
    STRING = 5
    COMPLEX = 6
    DEVICE = 7
    SCALAR_TYPE = 8
    LAYOUT = 9
    MEMORY_FORMAT = 10
    GENERATOR = 11
    INT_LIST = 12
    DOUBLE_LIST = 13
    BOOL_LIST = 14
    TENSOR_LIST = 15
    GENERIC_LIST = 16
    TUPLE = 17
    OBJECT = 18


# Reading an enum member (Tag.INT) costs ~250 ns on Python 3.11; the code that
# runs per value uses these module constants instead.
_TENSOR, _DOUBLE, _INT, _BOOL, _STRING, _COMPLEX = (
    Tag.TENSOR, Tag.DOUBLE, Tag.INT, Tag.BOOL, Tag.STRING, Tag.COMPLEX
)
_GENERIC_LIST, _TUPLE, _OBJECT = Tag.GENERIC_LIST, Tag.TUPLE, Tag.OBJECT
_TYPED_LISTS = frozenset({Tag.INT_LIST, Tag.DOUBLE_LIST, Tag.BOOL_LIST, Tag.TENSOR_LIST})
_CONTAINERS = _TYPED_LISTS | {Tag.GENERIC_LIST, Tag.TUPLE}  # payloads to_python() rebuilds


class IValue(tuple):
    """A tagged value: ``IValue(Tag.INT, 3)``.

    A (tag, payload) tuple underneath, so that making one is as cheap as
    Python allows (boxing makes one per argument) and it is immutable.
    """

    __slots__ = ()

    def __new__(cls, tag: Tag, payload: Any) -> "IValue":
        if type(tag) is not Tag:
            raise TypeError(f"an IValue's tag must be a Tag, got {tag!r}")
        return _new(cls, (tag, payload))

    tag = property(operator.itemgetter(0), doc="The Tag.")
    payload = property(operator.itemgetter(1), doc="The value, as described for its tag.")

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    def __repr__(self) -> str:
        return f"IValue(Tag.{self[0].name}, {self[1]!r})"

    def to_python(self) -> Any:
        """The plain Python value: lists come back as fresh lists, tuples as tuples."""
        tag = self.tag
        if tag in _TYPED_LISTS:
            return list(self.payload)
        if tag is _GENERIC_LIST:
            return [iv.to_python() for iv in self.payload]
        if tag is _TUPLE:
            return tuple(iv.to_python() for iv in self.payload)
        return self.payload

    @staticmethod
    def from_python(value: Any) -> "IValue":
        """Box ``value`` with the tag its Python type suggests (for ``Any``, ``t``, ``...``)."""
        if value is None:
            return _NONE
        cls = type(value)
        if cls is bool:
            return _new(IValue, (_BOOL, value))
        if cls is int:
            return _new(IValue, (_INT, value))
        if cls is float:
            return _new(IValue, (_DOUBLE, value))
        if cls is str:
            return _new(IValue, (_STRING, value))
        if cls is complex:
            return _new(IValue, (_COMPLEX, value))
        if tensor_key_set(value) is not None:
            return _new(IValue, (_TENSOR, value))
        if cls is list:
            for tag, test in _LIST_INFERENCE:
                if value and all(test(x) for x in value):
                    return _new(IValue, (tag, tuple(value)))
            return _new(IValue, (_GENERIC_LIST, tuple(map(IValue.from_python, value))))
        if cls is tuple:
            return _new(IValue, (_TUPLE, tuple(map(IValue.from_python, value))))
        return _new(IValue, (_OBJECT, value))


_new = tuple.__new__  # makes an IValue without the tag check, for known-good tags
_NONE = IValue(Tag.NONE, None)
_LIST_INFERENCE = (
    (Tag.BOOL_LIST, lambda x: type(x) is bool),
    (Tag.INT_LIST, lambda x: type(x) is int),
    (Tag.DOUBLE_LIST, lambda x: type(x) is float),
    (Tag.TENSOR_LIST, lambda x: tensor_key_set(x) is not None),
)


class Stack(list):
    """A list of IValues with the stack helpers of ``ATen/core/stack.h``.

    The top of the stack is the end of the list; ``pop()`` is list's.
    ``push`` checks that it is given IValues; the list methods themselves stay
    the raw, unchecked vector interface (as ``std::vector<IValue>`` is in
    PyTorch) for hot code.
    """

    __slots__ = ()

    def push(self, *values: IValue) -> None:
        for v in values:
            if type(v) is not IValue:
                raise TypeError(f"a Stack holds IValues, not {type(v).__name__}")
        self.extend(values)

    def peek(self, i: int, n: int) -> IValue:
        """Item ``i`` of the top ``n`` items (torch::jit::peek(stack, i, N))."""
        if not 0 <= i < n <= len(self):
            raise IndexError(f"cannot peek at item {i} of the top {n} of a stack of {len(self)}")
        return self[len(self) - n + i]

    def pop_n(self, n: int) -> list[IValue]:
        """Remove and return the top ``n`` items, deepest first (torch::jit::pop(stack, N))."""
        self._check_depth(n, "pop")
        items = self[len(self) - n :]
        del self[len(self) - n :]
        return items

    def drop(self, n: int) -> None:
        """Remove the top ``n`` items (torch::jit::drop(stack, n))."""
        self._check_depth(n, "drop")
        del self[len(self) - n :]

    def _check_depth(self, n: int, what: str) -> None:
        if type(n) is not int or n < 0:
            raise ValueError(f"cannot {what} {n!r} items: expected a non-negative int")
        if n > len(self):
            raise IndexError(f"cannot {what} {n} items from a stack of {len(self)}")


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
    _PLANS.clear()


# --------------------------------------------------------------------------
# Converters: one function per schema type, Python value -> IValue
# --------------------------------------------------------------------------
class _Mismatch(Exception):
    """Raised by a converter; ``received`` describes the offending value."""

    def __init__(self, received: str) -> None:
        super().__init__(received)
        self.received = received


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
            return _new(IValue, (tag, v))
        if not test(v):
            raise _Mismatch(_type_name(v))
        return _new(IValue, (tag, v if convert is None else convert(v)))

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
        raise _Mismatch(_type_name(v))
    return _new(IValue, (_TENSOR, v))


def _scalar(v: Any) -> IValue:
    cls = type(v)
    if cls is int:
        return _new(IValue, (_INT, v))
    if cls is float:
        return _new(IValue, (_DOUBLE, v))
    if cls is bool:
        return _new(IValue, (_BOOL, v))
    if cls is complex:
        return _new(IValue, (_COMPLEX, v))
    if _is_int(v):
        return _new(IValue, (_INT, operator.index(v)))
    if _is_real(v):
        return _new(IValue, (_DOUBLE, float(v)))
    if _is_complex(v):
        return _new(IValue, (_COMPLEX, complex(v)))
    raise _Mismatch(_type_name(v))


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
        raise _Mismatch(_type_name(v))
    out = []
    for i, x in enumerate(v):
        try:
            out.append(convert(x))
        except _Mismatch as exc:
            raise _Mismatch(f"{type(v).__name__} whose element {i} is {exc.received}") from None
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
        return lambda v: _new(IValue, (_GENERIC_LIST, _elements(v, elem_conv)))

    def payload_of(x: Any) -> Any:
        return elem_conv(x).payload

    expands = size is not None and typed is Tag.INT_LIST

    def conv(v: Any) -> IValue:
        # PyTorch accepts one int for a sized int list: stride=2 is [2, 2].
        if expands and _is_int(v):
            return _new(IValue, (typed, (operator.index(v),) * size))
        return _new(IValue, (typed, _elements(v, payload_of)))

    return conv


def _tuple_converter(t: TupleType) -> Converter:
    convs = tuple(_converter(e) for e in t.elems)

    def conv(v: Any) -> IValue:
        if type(v) not in (list, tuple) or len(v) != len(convs):
            got = f"{type(v).__name__} of {len(v)}" if type(v) in (list, tuple) else _type_name(v)
            raise _Mismatch(got)
        items = []
        for i, (c, x) in enumerate(zip(convs, v)):
            try:
                items.append(c(x))
            except _Mismatch as exc:
                raise _Mismatch(f"{type(v).__name__} whose element {i} is {exc.received}") from None
        return _new(IValue, (_TUPLE, tuple(items)))

    return conv


def _union_converter(t: ParameterizedType) -> Converter:
    convs = tuple(_converter(a) for a in t.args)

    def conv(v: Any) -> IValue:
        for c in convs:
            try:
                return c(v)
            except _Mismatch:
                pass
        raise _Mismatch(_type_name(v))

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
# Boxing and unboxing against a schema
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


def _compile_boxer(schema: FunctionSchema, convs: tuple[Converter, ...]) -> BoxCall:
    """``box`` for one schema: bind, then one list display of IValues.

    Boxing runs on every call that reaches a boxed kernel.  A loop over
    converters pays a Python call per argument; the generated function
    converts the common cases inline (a tensor, an int for an int, ...) and
    calls the converter only for the rest, which also raises for bad values.
    A call passing exactly the declared arguments, positionally, needs no
    binding.  Like dataclasses, it is generated source: only indices and the
    names of the namespace below go into it, never text from a schema.
    """
    n = len(convs)
    namespace: dict[str, Any] = {
        "Stack": Stack, "_new": _new, "IValue": IValue, "tks": tensor_key_set,
        "bind": schema.bind, "from_python": IValue.from_python,
    }
    items = []
    for i, (conv, a) in enumerate(zip(convs, schema.arguments)):
        namespace[f"c{i}"] = conv
        path = _fast_path(a.type)
        if path is None:
            items.append(f"c{i}(v{i})")
            continue
        exact, tag = path
        namespace[f"g{i}"], namespace[f"t{i}"] = tag, exact
        test = f"tks(v{i}) is not None" if exact is None else f"type(v{i}) is t{i}"
        items.append(f"(_new(IValue, (g{i}, v{i})) if {test} else c{i}(v{i}))")
    all_positional = not schema.is_vararg and not any(a.kwarg_only for a in schema.arguments)
    lines = ["def box_call(args, kwargs):"]
    if all_positional:
        lines.append(f"    values = args if not kwargs and len(args) == {n} else bind(args, kwargs)")
    else:
        lines.append("    values = bind(args, kwargs)")
    if n:
        # bind() returns exactly the declared arguments, plus the extras of a "...".
        lines.append(f"    {', '.join(f'v{i}' for i in range(n))}, = values{f'[:{n}]' if schema.is_vararg else ''}")
    lines.append(f"    stack = Stack([{', '.join(items)}])")
    if schema.is_vararg:
        lines.append(f"    stack.extend(map(from_python, values[{n}:]))")
    lines.append("    return stack")
    exec("\n".join(lines), namespace)
    return namespace["box_call"]


BoxCall = Callable[[Union[tuple, list], Optional[dict]], "Stack"]


class _Plan:
    """Per schema: the converters of its arguments and returns, and its boxer."""

    __slots__ = ("schema", "arguments", "returns", "box_call")

    def __init__(self, schema: FunctionSchema) -> None:
        self.schema = schema
        self.arguments = tuple(
            # An argument whose default is None takes None whatever its type
            # ("Tensor x=None"): binding fills that default in.
            _optional(_converter(a.type))
            if a.default is None and not isinstance(a.type, OptionalType)
            else _converter(a.type)
            for a in schema.arguments
        )
        self.returns = tuple(_converter(r.type) for r in schema.returns)
        self.box_call = _compile_boxer(schema, self.arguments)

    def argument_error(self, values: tuple) -> TypeError:
        """The TypeError for the first of ``values`` that does not convert."""
        for i, (conv, v) in enumerate(zip(self.arguments, values)):
            try:
                conv(v)
            except _Mismatch as exc:
                arg = self.schema.arguments[i]
                return TypeError(
                    f"{self.schema.name}(): argument '{arg.name}' (position {i + 1}) must be "
                    f"{arg.type.strip_annotations()}, not {exc.received}"
                )
        raise AssertionError("argument_error() called for values that convert")

    def return_error(self, i: int, mismatch: _Mismatch) -> TypeError:
        ret = self.schema.returns[i]
        which = f"return value {i + 1}" + ("" if ret.name is None else f" ('{ret.name}')")
        return TypeError(
            f"{self.schema.name}(): {which} must be {ret.type.strip_annotations()}, "
            f"not {mismatch.received}"
        )


# Plans by id(schema): hashing a FunctionSchema runs Python code, id() does not.
# The entry holds the schema, so its id cannot be reused while cached.
_PLANS: dict[int, tuple[FunctionSchema, _Plan]] = {}


def _plan(schema: FunctionSchema) -> _Plan:
    entry = _PLANS.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    if not isinstance(schema, FunctionSchema):
        raise TypeError(f"expected a FunctionSchema, got {type(schema).__name__}")
    plan = _Plan(schema)
    _PLANS[id(schema)] = (schema, plan)
    return plan


def box(schema: FunctionSchema, args: Union[tuple, list], kwargs: Optional[dict] = None) -> Stack:
    """The stack a boxed kernel gets for ``op(*args, **kwargs)``.

    Binds like ``schema.bind`` (TypeError for a bad call), then checks and
    boxes every argument: TypeError names the operator, the argument, its
    position (from 1), the expected and the received type.
    """
    entry = _PLANS.get(id(schema))  # _plan(schema), inlined: this runs per boxed call
    plan = entry[1] if entry is not None and entry[0] is schema else _plan(schema)
    try:
        return plan.box_call(args, kwargs)
    except _Mismatch:
        raise plan.argument_error(schema.bind(args, kwargs)) from None


def _take(stack: Stack, n: Optional[int], schema: FunctionSchema, what: str) -> list:
    """The top ``n`` items of ``stack`` (all of them if None), removed, as Python values."""
    if not isinstance(stack, Stack):
        raise TypeError(f"expected a Stack, got {type(stack).__name__}")
    if n is None:
        n = len(stack)
    elif n > len(stack):
        raise RuntimeError(f"{schema.name}: expected {n} {what} on the stack, found {len(stack)}")
    if not n:
        return []
    items = stack[-n:]
    # Plain payloads inline; containers and non-IValues take the slow way.
    values = [
        iv[1] if type(iv) is IValue and iv[0] not in _CONTAINERS else _python_value(iv, schema)
        for iv in items
    ]
    del stack[-n:]
    return values


def _python_value(iv: Any, schema: FunctionSchema) -> Any:
    if type(iv) is not IValue:
        raise TypeError(f"{schema.name}: the stack holds a {type(iv).__name__}, not an IValue")
    return iv.to_python()


def unbox_arguments(schema: FunctionSchema, stack: Stack) -> tuple:
    """Pop the arguments ``box`` pushed and return them as Python values, in order.

    A ``...`` schema's arguments are the whole stack.
    """
    n = None if schema.is_vararg else len(schema.arguments)
    return tuple(_take(stack, n, schema, "arguments"))


def box_returns(schema: FunctionSchema, result: Any, stack: Stack) -> None:
    """Push an unboxed kernel's ``result`` (None, a value, or a tuple) as IValues.

    Checked against the schema's returns like ``box`` checks arguments.
    """
    plan = _plan(schema)
    n = len(schema.returns)
    if schema.is_varret:
        # "-> ..." (or "-> (Tensor, ...)"): the kernel returns a tuple of all its values.
        if type(result) is not tuple or len(result) < n:
            got = f"a tuple of {len(result)}" if type(result) is tuple else _type_name(result)
            raise TypeError(
                f"{schema.name}() returns a tuple of at least {n} values, but the kernel returned {got}"
            )
        values = result
    elif n == 0:
        if result is not None:
            raise TypeError(f"{schema.name}() returns nothing, but the kernel returned {_type_name(result)}")
        return
    elif n == 1:
        values = (result,)
    elif type(result) is not tuple or len(result) != n:
        got = f"a tuple of {len(result)}" if type(result) is tuple else _type_name(result)
        raise TypeError(f"{schema.name}() returns a tuple of {n}, but the kernel returned {got}")
    else:
        values = result
    i = 0
    try:
        for i, conv in enumerate(plan.returns):
            stack.push(conv(values[i]))
    except _Mismatch as exc:
        raise plan.return_error(i, exc) from None
    for v in values[n:]:
        stack.push(IValue.from_python(v))


def unbox_returns(schema: FunctionSchema, stack: Stack) -> Any:
    """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

    A ``-> ...`` schema's results are the whole stack (always a tuple).
    """
    if schema.is_varret:
        return tuple(_take(stack, None, schema, "return values"))
    n = len(schema.returns)
    if n == 1 and type(stack) is Stack and stack and type(stack[-1]) is IValue:
        iv = stack.pop()  # the common case, without _take's generality
        return iv[1] if iv[0] not in _CONTAINERS else iv.to_python()
    values = _take(stack, n, schema, "return values")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)
