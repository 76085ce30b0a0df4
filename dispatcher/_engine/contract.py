"""The engine's contract with registration: what registration builds on an
engine and publishes to it, as Protocols.

Registration works with either engine (the compiled one or its pure-Python
twin, chosen at run time: see dispatcher/_engine), so it cannot name the
engine's classes in its types; it names these instead.  Each engine module
satisfies ``Engine`` by its classes of the same names.  Only
dispatcher/publish.py calls the constructors (Note [One writer of engine
state] there); the rest of registration reads the objects through these
types.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

from .._kernel_kind import KernelKind
from ..keys import DispatchKey


class KernelFunction(Protocol):
    """A table entry: a kernel and how to call it."""

    @property
    def kind(self) -> int: ...

    @property
    def fn(self) -> Optional[Callable[..., Any]]: ...

    def is_fallthrough(self) -> bool: ...

    def is_valid(self) -> bool: ...

    def _hold(self, other: "KernelFunction") -> None: ...


class Boxer(Protocol):
    """A schema's boxing and unboxing of arguments and results (dispatcher/ivalue.py makes them)."""

    def box(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...

    def unbox_arguments(self, stack: Any) -> tuple[Any, ...]: ...


class CallShape(Protocol):
    """What a call plan takes from an operator's def (made once per def)."""

    @property
    def schema(self) -> Any: ...

    @property
    def dispatch_args(self) -> tuple[tuple[int, str, int, bool], ...]: ...

    @property
    def positional_span(self) -> int: ...

    @property
    def split_call(self) -> Any: ...

    @property
    def handler_arity(self) -> int: ...

    @property
    def handler_call(self) -> Any: ...


class CallPlan(Protocol):
    """Everything a call of one operator reads: its shape, table and masks."""

    @property
    def shape(self) -> CallShape: ...


class OperatorHandle(Protocol):
    """An operator as calls see it; registration swaps its plan."""

    def _publish(self, plan: CallPlan) -> None: ...

    def _set_owner(self, owner: Any) -> None: ...


class OverloadPacket(Protocol):
    """``ops.ns.name``; registration publishes its overloads."""

    def _publish(self, overloads: tuple[tuple[str, OperatorHandle], ...]) -> None: ...


ReportError = Callable[[KernelKind, DispatchKey], None]

# The contract's types under names of their own: within Engine, whose
# constructors have the same names, those names mean the constructors.
_KernelFunction = KernelFunction
_Boxer = Boxer
_CallShape = CallShape
_CallPlan = CallPlan
_OperatorHandle = OperatorHandle
_OverloadPacket = OverloadPacket


class Engine(Protocol):
    """An engine module (dispatcher._engine.core or its pure twin), as registration uses it."""

    __name__: str
    # The engine's keysets (dispatcher.keysets types them; registration only converts).
    DispatchKeySet: Any

    def KernelFunction(self, kind: int, fn: Optional[Callable[..., Any]], cell: bool = False) -> _KernelFunction: ...

    def CallShape(self, *, schema: Any, dispatch_args: tuple[tuple[int, str, int, bool], ...], positional_span: int,
                  boxer: Optional[_Boxer], bind: Any, split_call: Any, handler_arity: int, handler_call: Any,
                  tags: tuple[str, ...] = (), dispatch_argument_error: Any = None,
                  make_boxer: Optional[Callable[[], _Boxer]] = None) -> _CallShape: ...

    def CallPlan(self, name: str, shape: _CallShape, table: tuple[_KernelFunction, ...], masks: tuple[int, ...],
                 report_error: ReportError) -> _CallPlan: ...

    def OperatorHandle(self, name: str, plan: _CallPlan) -> _OperatorHandle: ...

    def filled_table(self, cells: tuple[_KernelFunction, ...], runs: tuple[tuple[int, int, int], ...],
                     entries: list[_KernelFunction]) -> tuple[_KernelFunction, ...]: ...

    def OverloadPacket(self, qualified_name: str) -> _OverloadPacket: ...

    # Subclassed per registry (dispatcher/publish.py's pending_packet_class).
    PendingOverloadPacket: type

    def settle_packet(self, packet: _OverloadPacket) -> None: ...
