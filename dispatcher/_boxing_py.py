"""Pure-Python twin of the compiled core's boxing (csrc/_boxing.pxi): IValue, Stack, Boxer.

Part of the core because a boxed kernel pays for boxing on every call: the
compiled version makes an IValue without running Python code.  What is
slow and rare -- converting unusual values, building a Boxer from a schema,
wording errors -- stays in ``dispatcher.ivalue``, which hands a Boxer its
converters.  Keep this file and csrc/_boxing.pxi in step.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

from ._ivalue_tag import CONTAINER_TAGS, TYPED_LIST_TAGS, Mismatch, Tag

__all__ = ["Boxer", "IValue", "Stack", "box", "box_returns", "unbox_arguments", "unbox_returns"]


def _tensor_key_set(value: Any) -> Any:
    # _core_py imports this module before it defines tensor_key_set: the
    # first call imports it and replaces this function with it.
    from ._core_py import tensor_key_set

    global _tensor_key_set
    _tensor_key_set = tensor_key_set
    return tensor_key_set(value)


class IValue:
    """A tagged value: ``IValue(Tag.INT, 3)``; immutable.

    Payloads are plain Python values; typed lists (IntList, ..., TensorList)
    hold a tuple of plain elements, generic lists and tuples a tuple of
    IValues, as in c10 (``c10::List<int64_t>`` vs ``c10::List<IValue>``).
    """

    __slots__ = ("tag", "payload")

    def __init__(self, tag: Tag, payload: Any) -> None:
        if type(tag) is not Tag:
            raise TypeError(f"an IValue's tag must be a Tag, got {tag!r}")
        _set_tag(self, tag)
        _set_payload(self, payload)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"IValue is immutable: cannot set '{name}'")

    def __eq__(self, other: object) -> Any:
        if type(other) is not IValue:
            return NotImplemented
        # Identity first, as tuples compare items: a tensor payload equals itself.
        return self.tag == other.tag and (self.payload is other.payload or bool(self.payload == other.payload))

    def __hash__(self) -> int:
        return hash((self.tag, self.payload))

    def __reduce__(self) -> tuple:
        return IValue, (self.tag, self.payload)

    def __repr__(self) -> str:
        return f"IValue(Tag.{self.tag.name}, {self.payload!r})"

    def to_python(self) -> Any:
        """The plain Python value: lists come back as fresh lists, tuples as tuples."""
        tag = self.tag
        if tag in TYPED_LIST_TAGS:
            return list(self.payload)
        if tag is Tag.GENERIC_LIST:
            return [iv.to_python() for iv in self.payload]
        if tag is Tag.TUPLE:
            return tuple(iv.to_python() for iv in self.payload)
        return self.payload

    @staticmethod
    def from_python(value: Any) -> "IValue":
        """Box ``value`` with the tag its Python type suggests (for ``Any``, ``t``, ``...``)."""
        if value is None:
            return _NONE
        cls = type(value)
        if cls is bool:
            return _ivalue(Tag.BOOL, value)
        if cls is int:
            return _ivalue(Tag.INT, value)
        if cls is float:
            return _ivalue(Tag.DOUBLE, value)
        if cls is str:
            return _ivalue(Tag.STRING, value)
        if cls is complex:
            return _ivalue(Tag.COMPLEX, value)
        if _tensor_key_set(value) is not None:
            return _ivalue(Tag.TENSOR, value)
        if cls is list:
            if value:
                for tag, element_type in _LIST_INFERENCE:
                    if all(type(x) is element_type for x in value):
                        return _ivalue(tag, tuple(value))
                if all(_tensor_key_set(x) is not None for x in value):
                    return _ivalue(Tag.TENSOR_LIST, tuple(value))
            return _ivalue(Tag.GENERIC_LIST, tuple(map(IValue.from_python, value)))
        if cls is tuple:
            return _ivalue(Tag.TUPLE, tuple(map(IValue.from_python, value)))
        return _ivalue(Tag.OBJECT, value)


_set_tag = IValue.tag.__set__  # type: ignore[attr-defined]
_set_payload = IValue.payload.__set__  # type: ignore[attr-defined]
_new_object = object.__new__


def _ivalue(tag: Tag, payload: Any) -> IValue:
    # An IValue for a tag known to be good: no check.
    iv = _new_object(IValue)
    _set_tag(iv, tag)
    _set_payload(iv, payload)
    return iv


_NONE = _ivalue(Tag.NONE, None)
# A non-empty list whose elements all have one of these exact types is a typed list.
_LIST_INFERENCE = ((Tag.BOOL_LIST, bool), (Tag.INT_LIST, int), (Tag.DOUBLE_LIST, float))


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

    def pop_n(self, n: int) -> list:
        """Remove and return the top ``n`` items, deepest first (torch::jit::pop(stack, N))."""
        _check_depth(self, n, "pop")
        items = self[len(self) - n :]
        del self[len(self) - n :]
        return items

    def drop(self, n: int) -> None:
        """Remove the top ``n`` items (torch::jit::drop(stack, n))."""
        _check_depth(self, n, "drop")
        del self[len(self) - n :]


def _check_depth(stack: Stack, n: Any, what: str) -> None:
    if type(n) is not int or n < 0:
        raise ValueError(f"cannot {what} {n!r} items: expected a non-negative int")
    if n > len(stack):
        raise IndexError(f"cannot {what} {n} items from a stack of {len(stack)}")


# How one value boxes: (kind, exact type, tag, converter).
_CONVERT, _TENSOR, _EXACT = range(3)


def _steps(converters: tuple, fast_paths: tuple) -> tuple:
    if len(converters) != len(fast_paths):
        raise ValueError("a Boxer takes one fast path per converter")
    for fast in fast_paths:
        if fast is not None and (type(fast) is not tuple or len(fast) != 2 or type(fast[1]) is not Tag
                                 or not (fast[0] is None or isinstance(fast[0], type))):
            raise TypeError(f"a fast path is None or (exact type or None, Tag), not {fast!r}")
    steps = []
    for convert, fast in zip(converters, fast_paths):
        if fast is None:
            steps.append((_CONVERT, None, None, convert))
        else:
            exact, tag = fast
            steps.append((_TENSOR if exact is None else _EXACT, exact, tag, convert))
    return tuple(steps)


def _box_value(step: tuple, value: Any) -> IValue:
    kind, exact, tag, convert = step
    if kind == _EXACT and type(value) is exact or kind == _TENSOR and _tensor_key_set(value) is not None:
        return _ivalue(tag, value)
    return convert(value)


class Boxer:
    """How the calls of one schema box and unbox.

    ``dispatcher.ivalue`` makes one per schema (the core caches it by schema:
    see ``box``): a converter per argument and per return, each with its fast
    path, and the functions that word a mismatch as a TypeError --
    ``argument_error(values)`` and ``return_error(i, mismatch)``.  A fast path
    is ``(exact type, tag)`` for values that box as they are (the type None
    stands for "a tensor"), or None: always convert.
    """

    __slots__ = ("schema", "_arguments", "_returns", "_positional", "_argument_error", "_return_error")

    def __init__(
        self,
        schema: Any,
        argument_converters: tuple,
        argument_fast_paths: tuple,
        return_converters: tuple,
        return_fast_paths: tuple,
        argument_error: Callable[[tuple], TypeError],
        return_error: Callable[[int, Mismatch], TypeError],
    ) -> None:
        if len(argument_converters) != len(schema.arguments) or len(return_converters) != len(schema.returns):
            raise ValueError(f"a Boxer for {schema.name} takes one converter per argument and per return")
        self.schema = schema
        self._arguments = _steps(argument_converters, argument_fast_paths)
        self._returns = _steps(return_converters, return_fast_paths)
        # A call passing exactly the declared arguments, positionally, needs no binding.
        self._positional = not schema.is_vararg and not any(a.kwarg_only for a in schema.arguments)
        self._argument_error = argument_error
        self._return_error = return_error

    def box(self, args: Union[tuple, list], kwargs: Optional[dict] = None) -> Stack:
        """The stack a boxed kernel gets for ``op(*args, **kwargs)``."""
        n = len(self._arguments)
        if self._positional and not kwargs and type(args) is tuple and len(args) == n:
            values = args
        else:
            values = self.schema.bind(args, kwargs)  # exactly the declared arguments, plus a "..."'s extras
            if type(values) is not tuple or len(values) < n:
                raise RuntimeError(f"{self.schema.name}: bind() returned {values!r}, not the bound arguments")
        try:
            stack = Stack([_box_value(step, v) for step, v in zip(self._arguments, values)])
        except Mismatch:
            raise self._argument_error(values) from None
        stack.extend(map(IValue.from_python, values[n:]))
        return stack

    def unbox_arguments(self, stack: Stack) -> tuple:
        """Pop the arguments ``box`` pushed; a ``...`` schema's arguments are the whole stack."""
        return _take(stack, None if self.schema.is_vararg else len(self._arguments), self.schema, "arguments")

    def box_returns(self, result: Any, stack: Stack) -> None:
        """Push a kernel's ``result`` (None, a value, or a tuple) as IValues."""
        if not isinstance(stack, Stack):
            raise TypeError(f"expected a Stack, got {type(stack).__name__}")
        values = _returned_values(self.schema, len(self._returns), result)
        boxed = []
        for i, step in enumerate(self._returns):
            try:
                boxed.append(_box_value(step, values[i]))
            except Mismatch as exc:
                raise self._return_error(i, exc) from None
        boxed.extend(map(IValue.from_python, values[len(self._returns) :]))
        stack.extend(boxed)  # all or nothing: a bad return leaves the stack as it was

    def unbox_returns(self, stack: Stack) -> Any:
        """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

        A ``-> ...`` schema's results are the whole stack (always a tuple).
        """
        if self.schema.is_varret:
            return _take(stack, None, self.schema, "return values")
        values = _take(stack, len(self._returns), self.schema, "return values")
        if not values:
            return None
        return values[0] if len(values) == 1 else values


def _returned_values(schema: Any, n: int, result: Any) -> tuple:
    """``result`` as the tuple of values the schema's returns describe."""
    if schema.is_varret:
        # "-> ..." (or "-> (Tensor, ...)"): the kernel returns a tuple of all its values.
        if type(result) is not tuple or len(result) < n:
            raise TypeError(
                f"{schema.name}() returns a tuple of at least {n} values, "
                f"but the kernel returned {_described(result)}"
            )
        return result
    if n == 0:
        if result is not None:
            raise TypeError(f"{schema.name}() returns nothing, but the kernel returned {_type_name(result)}")
        return ()
    if n == 1:
        return (result,)
    if type(result) is not tuple or len(result) != n:
        raise TypeError(f"{schema.name}() returns a tuple of {n}, but the kernel returned {_described(result)}")
    return result


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _described(result: Any) -> str:
    return f"a tuple of {len(result)}" if type(result) is tuple else _type_name(result)


def _take(stack: Any, n: Optional[int], schema: Any, what: str) -> tuple:
    """The top ``n`` items of ``stack`` (all of them if None), removed, as Python values."""
    if not isinstance(stack, Stack):
        raise TypeError(f"expected a Stack, got {type(stack).__name__}")
    if n is None:
        n = len(stack)
    elif n > len(stack):
        raise RuntimeError(f"{schema.name}: expected {n} {what} on the stack, found {len(stack)}")
    if not n:
        return ()
    items = stack[-n:]
    for iv in items:
        if type(iv) is not IValue:
            raise TypeError(f"{schema.name}: the stack holds a {type(iv).__name__}, not an IValue")
    del stack[-n:]
    return tuple(iv.payload if iv.tag not in CONTAINER_TAGS else iv.to_python() for iv in items)


# -- boxing by schema ------------------------------------------------------------------
# Boxers by id(schema): hashing a FunctionSchema runs Python code, id() does not.
# The Boxer holds its schema, so the id cannot be reused while it is cached.
_boxers: dict = {}


def _boxer_for(schema: Any) -> Boxer:
    boxer = _boxers.get(id(schema))
    if boxer is None or boxer.schema is not schema:
        from . import ivalue  # imported late: ivalue imports the core

        boxer = _boxers[id(schema)] = ivalue._make_boxer(schema)
    return boxer


def _forget_boxers() -> None:
    """Drop every cached Boxer (the values a type accepts have changed)."""
    _boxers.clear()


def box(schema: Any, args: Union[tuple, list], kwargs: Optional[dict] = None) -> Stack:
    """The stack a boxed kernel gets for ``op(*args, **kwargs)``.

    Binds like ``schema.bind`` (TypeError for a bad call), then checks and
    boxes every argument: TypeError names the operator, the argument, its
    position (from 1), the expected and the received type.
    """
    return _boxer_for(schema).box(args, kwargs)


def unbox_arguments(schema: Any, stack: Stack) -> tuple:
    """Pop the arguments ``box`` pushed and return them as Python values, in order.

    A ``...`` schema's arguments are the whole stack.
    """
    return _boxer_for(schema).unbox_arguments(stack)


def box_returns(schema: Any, result: Any, stack: Stack) -> None:
    """Push an unboxed kernel's ``result`` (None, a value, or a tuple) as IValues.

    Checked against the schema's returns like ``box`` checks arguments; a bad
    result leaves the stack as it was.
    """
    _boxer_for(schema).box_returns(result, stack)


def unbox_returns(schema: Any, stack: Stack) -> Any:
    """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

    A ``-> ...`` schema's results are the whole stack (always a tuple).
    """
    return _boxer_for(schema).unbox_returns(stack)
