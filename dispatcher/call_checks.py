"""Checked calls: arguments checked and converted against the schema, as torch does, on request.

torch converts every Python call of an operator to IValues before it
dispatches (its ``createStackForSchema``): a wrong count, an unknown keyword
or a value of the wrong type is an error naming the operator, and a kernel
gets converted values (``True`` for an ``int`` is ``1``, ``2`` for a
``float`` is ``2.0``, a tuple for a list is a list) with the arguments that
equal their defaults left out.  The dispatcher skips all that for plain
kernels: they get the arguments as passed, which is what keeps a call near
the cost of a direct one (boxed kernels and fallbacks get converted values
either way).  Checked calls do torch's work, with torch's error texts, and
cost what it costs (several microseconds a call); they are off unless asked
for::

    with dispatcher.checked_calls():
        ops.myns.f.default(x, "2")   # RuntimeError (a DispatcherTypeError):
                                     # myns::f() Expected a value of type 'int' for argument 'n' ...

or for the whole process, with ``DISPATCHER_CHECK_CALLS=1`` in the
environment or ``set_checked_calls(True)``.

How: switching them on publishes every operator's call plan again (see Note
[One plan per operator] in dispatcher/_engine/core.py), with each plain
kernel wrapped in a function that boxes and unboxes its arguments with a
checking Boxer, and with the plan's binding and its error for a dispatch
argument that is not a tensor worded as torch's; switching them off
publishes the plain plans again.  The call path itself never tests a flag,
so calls cost nothing more while checking is off.  A switch is process-wide
(every thread's calls are checked), as the environment variable is.

The texts are torch 2.13's (``tests/golden/torch_library_golden.json``)
but for the last line of a type error, which torch fills with its C++
binding library's cast error and which here says what did not convert.
Kernels get a Device argument as it was passed (a string, or a
``dispatcher.device``; torch gives a ``torch.device``); a device string
that does not parse is torch's error.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

from ._env import env_flag
from ._ivalue_tag import Mismatch
from .backends import parse_device
from .errors import DispatcherTypeError
from .schema import NO_DEFAULT, BaseTy, BaseType, FunctionSchema, ListType, OptionalType, ParameterizedType, TupleType, Type

__all__ = ["checked_calls", "checked_calls_enabled", "set_checked_calls"]

_lock = threading.RLock()
_enabled_for_process = env_flag("DISPATCHER_CHECK_CALLS")
_depth = 0  # how many checked_calls() blocks are open


def checked_calls_enabled() -> bool:
    """Whether calls are checked now."""
    return _enabled_for_process or _depth > 0


def set_checked_calls(enabled: bool) -> None:
    """Check every call from now on (or, with False, no longer outside a
    ``checked_calls()`` block).  ``DISPATCHER_CHECK_CALLS=1`` sets it at import."""
    global _enabled_for_process
    with _lock:
        before = _enabled_for_process
        _enabled_for_process = bool(enabled)
        _switch(before, _depth)


@contextmanager
def checked_calls() -> Iterator[None]:
    """Check every call made while the block runs (on every thread)."""
    global _depth
    with _lock:
        _depth += 1
        _switch(_enabled_for_process, _depth - 1)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            # The block has ended whatever happens: were a failure to publish
            # the plain plans again to count it open, checking would stay on
            # for good (every later block's end would leave it open too).
            _switch(_enabled_for_process, _depth + 1, roll_back=False)


def _switch(enabled_before: bool, depth_before: int, roll_back: bool = True) -> None:
    """Publish the plans again if checking changed; if that fails, go back to
    the state before (and its plans), so that a failure changes nothing.
    Without ``roll_back`` (a block's end, which cannot be undone) the failure
    is raised and the state stays the new one; plans left checking calls are
    published again when checking next changes."""
    global _enabled_for_process, _depth
    if checked_calls_enabled() == (enabled_before or depth_before > 0):
        return
    try:
        _republish()
    except BaseException:
        if roll_back:
            _enabled_for_process, _depth = enabled_before, depth_before
            _republish()
        raise


# Note [Who hears the switch]
# Every registry publishes its plans again when checking is switched: each
# one, when made, subscribes its republish_plans here, weakly (a registry
# that is gone unsubscribes itself).  The switch knows nothing of
# registries, so this low-level module imports nothing above it.
_subscribers: "weakref.WeakSet[Any]" = weakref.WeakSet()


def subscribe(registry: Any) -> None:
    """Have ``registry.republish_plans()`` called whenever checking is switched on or off."""
    _subscribers.add(registry)


def _republish() -> None:
    for registry in list(_subscribers):
        registry.republish_plans()


# -- torch's texts ------------------------------------------------------------------------------
def torch_type_name(t: Type) -> str:
    """A schema type as torch's error texts print it (TorchScript's ``repr_str``):
    ``List[int]``, ``Optional[Tensor]``, ``number`` for Scalar, ``int`` for the
    enum-like types."""
    t = t.strip_annotations()
    if isinstance(t, OptionalType):
        return f"Optional[{torch_type_name(t.elem)}]"
    if isinstance(t, ListType):
        return f"List[{torch_type_name(t.elem)}]"
    if isinstance(t, TupleType):
        return f"Tuple[{', '.join(torch_type_name(e) for e in t.elems)}]"
    if isinstance(t, ParameterizedType):
        return f"{t.name}[{', '.join(torch_type_name(a) for a in t.args)}]"
    if isinstance(t, BaseType):
        return _BASE_NAMES.get(t.name, t.name.name)
    return str(t)


_BASE_NAMES = {
    BaseTy.SymInt: "int", BaseTy.SymFloat: "float", BaseTy.SymBool: "bool", BaseTy.Scalar: "number",
    BaseTy.ScalarType: "int", BaseTy.Layout: "int", BaseTy.MemoryFormat: "int", BaseTy.QScheme: "int",
    BaseTy.Dimname: "str",
}


def _is_device(t: Type) -> bool:
    t = t.strip_annotations()
    if isinstance(t, OptionalType):
        t = t.elem
    return t == BaseType(BaseTy.Device)


class ArgumentCheck:
    """torch's checks of a call's arguments against one schema, with its texts.

    ``bind`` does what torch's ``createStackForSchema`` does before it
    dispatches, in its order: the count, then each positional argument's
    type, then the keywords (and the arguments missing); it returns the
    bound arguments, as ``FunctionSchema.bind``.  ``argument_error`` and
    ``dispatch_argument_error`` word a value that does not convert.
    """

    def __init__(self, schema: FunctionSchema, converters: tuple[Callable[[Any], Any], ...]) -> None:
        self.schema = schema
        self.converters = converters
        self.who = f"{schema.name.qualified_name}()"
        self.declaration = str(schema)

    def type_error(self, i: int, value: Any, received: Optional[str] = None) -> DispatcherTypeError:
        argument = self.schema.arguments[i]
        found = type(value).__name__
        return DispatcherTypeError(
            f"{self.who} Expected a value of type '{torch_type_name(argument.type)}' for argument '{argument.name}' "
            f"but instead found type '{found}'.\nPosition: {i}\nValue: {value!r}\n"
            f"Declaration: {self.declaration}\nCast error details: {received or found} does not convert to "
            f"{argument.type.strip_annotations()}"
        )

    def check(self, i: int, value: Any) -> None:
        """Raise torch's error if argument ``i``'s ``value`` does not convert."""
        try:
            self.converters[i](value)
        except Mismatch as exc:
            raise self.type_error(i, value, exc.received) from None
        if isinstance(value, str) and _is_device(self.schema.arguments[i].type):
            parse_device(value)  # torch converts the string to a device here: its error if it does not parse

    def argument_error(self, values: tuple[Any, ...]) -> DispatcherTypeError:
        for i, value in enumerate(values[:len(self.converters)]):
            try:
                self.converters[i](value)
            except Mismatch as exc:
                return self.type_error(i, value, exc.received)
        raise AssertionError("argument_error() called for values that convert")

    def dispatch_argument_error(self, i: int, value: Any) -> DispatcherTypeError:
        """For the engine: dispatch argument ``i`` (in the schema's dispatch
        arguments) holds ``value``, which is not what it must be."""
        position = self.schema.dispatch_layout[0][i][0]
        return self.type_error(position, value)

    def bind(self, args: Any, kwargs: Any = None) -> tuple[Any, ...]:
        schema, who, declaration = self.schema, self.who, self.declaration
        if schema.is_vararg:
            return schema.bind(args, kwargs)
        kwargs = kwargs or {}
        arguments = schema.arguments
        given = len(args) + len(kwargs)
        if given > len(arguments):
            raise DispatcherTypeError(
                f"{who} expected at most {len(arguments)} argument(s) but received {given} argument(s). "
                f"Declaration: {declaration}"
            )
        for i, value in enumerate(args):
            if arguments[i].kwarg_only:
                raise DispatcherTypeError(
                    f"{who} takes {i} positional argument(s) but {len(args)} was/were given.  Declaration: {declaration}"
                )
            self.check(i, value)
        consumed = 0
        for i in range(len(args), len(arguments)):
            argument = arguments[i]
            if argument.name in kwargs:
                self.check(i, kwargs[argument.name])
                consumed += 1
            elif argument.default is NO_DEFAULT:
                raise DispatcherTypeError(
                    f"{who} is missing value for argument '{argument.name}'. Declaration: {declaration}"
                )
        if consumed != len(kwargs):
            names = {a.name for a in arguments}
            for key in kwargs:
                if key not in names:
                    raise DispatcherTypeError(f"Unknown keyword argument '{key}' for operator "
                                              f"'{schema.name.qualified_name}'. Schema: {declaration}")
            for argument in arguments:
                if argument.name in kwargs:
                    raise DispatcherTypeError(f"Argument '{argument.name}' specified both as positional and keyword "
                                              f"argument. Schema: {declaration}")
        return schema.bind(args, kwargs)


# -- checked kernels ---------------------------------------------------------------------------
def checked_kernel(fn: Callable[..., Any], boxer: Any, split: Callable[[Any], tuple[tuple[Any, ...], dict[str, Any]]],
                    with_keyset: bool) -> Callable[..., Any]:
    """``fn`` called with its arguments checked and converted by ``boxer``
    (dispatcher/publish.py's checked_table makes a table of such kernels)."""
    if with_keyset:
        def checked_with_keyset(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            call_args, call_kwargs = split(boxer.unbox_arguments(boxer.box(args, kwargs)))
            return fn(keyset, *call_args, **call_kwargs)

        return checked_with_keyset

    def checked(*args: Any, **kwargs: Any) -> Any:
        call_args, call_kwargs = split(boxer.unbox_arguments(boxer.box(args, kwargs)))
        return fn(*call_args, **call_kwargs)

    return checked
