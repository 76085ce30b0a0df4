"""The one writer of engine state: every object registration publishes to an
engine is made here.

Note [One writer of engine state]
Registration (registry.py, operator_entry.py, kernel.py) decides what each
operator's calls do; the engine (dispatcher/_engine) only reads immutable
objects: kernel functions, call shapes, call plans, and the handles and
packets whose plan or overloads registration swaps.  Those objects are made
by the functions of this module, and nowhere else, against the engine's
contract (dispatcher/_engine/contract.py), so that what the engine is told
can be read in one place.  (Boxers are made by dispatcher/ivalue.py, the
boxing layer, which knows how each type converts; a shape here takes one.)
Every function runs under the registry's lock, held by its caller: what it
makes is published by a single swap (OperatorHandle._publish,
OverloadPacket._publish), which calls on other threads see whole or not at
all.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Optional

from ._engine.contract import Boxer, CallPlan, CallShape, Engine, KernelFunction, OperatorHandle, OverloadPacket, ReportError
from ._kernel_kind import KernelKind
from ._layout import FULL_REPR, RUNTIME_SLOT_KEYS
from .call_checks import checked_kernel
from .ivalue import make_boxer, make_checked_boxer
from .keys import NUM_BACKENDS, DispatchKey
from .schema import FunctionSchema

__all__ = [
    "call_plan", "call_shape", "fallback_cell", "checked_call_shape", "checked_table", "kernel_function", "operator_handle",
    "overload_packet", "pending_packet", "pending_packet_class", "settle_packet", "undefined_plan",
]


def kernel_function(engine: Engine, kind: KernelKind, fn: Optional[Callable[..., Any]]) -> KernelFunction:
    """A table entry of ``engine`` calling ``fn`` as ``kind`` says (None: no kernel)."""
    return engine.KernelFunction(kind, fn)


def fallback_cell(engine: Engine) -> KernelFunction:
    """A table slot's fallback cell of ``engine``, empty (Note [Fallback cells] in dispatcher/_engine/core.py)."""
    return engine.KernelFunction(KernelKind.MISSING, None, cell=True)


def call_shape(engine: Engine, schema: FunctionSchema, tags: tuple[str, ...]) -> CallShape:
    """What ``engine``'s call plans take from a def of ``schema``, made once per def;
    its Boxer when first needed (Note [Boxers made on first use] in dispatcher/_engine/core.py)."""
    dispatch_args, span = schema.dispatch_layout
    return engine.CallShape(schema=schema, dispatch_args=dispatch_args, positional_span=span,
                            boxer=None, bind=schema.bind, split_call=schema.split_call,
                            handler_arity=schema.handler_arity, handler_call=schema.handler_call, tags=tags,
                            make_boxer=partial(make_boxer, schema, engine))


def checked_call_shape(engine: Engine, shape: CallShape, schema: FunctionSchema,
                       tags: tuple[str, ...]) -> tuple[CallShape, Boxer]:
    """``shape`` as checked calls take it (dispatcher/call_checks.py): torch's
    binding and texts, with the checking Boxer, which checked_table's kernels use too."""
    boxer, check = make_checked_boxer(schema, engine)
    checked = engine.CallShape(
        schema=schema, dispatch_args=shape.dispatch_args, positional_span=shape.positional_span, boxer=boxer,
        bind=check.bind, split_call=shape.split_call, handler_arity=shape.handler_arity,
        handler_call=shape.handler_call, tags=tags, dispatch_argument_error=check.dispatch_argument_error,
    )
    return checked, boxer


def checked_table(engine: Engine, table: tuple[KernelFunction, ...], boxer: Boxer,
                  schema: FunctionSchema) -> tuple[KernelFunction, ...]:
    """``table`` with each plain kernel (unboxed or with-keyset) wrapped to
    get its arguments checked and converted by ``boxer`` and passed as torch
    passes them (FunctionSchema.split_call_without_defaults)."""
    # Per entry, what the checked table holds for it: an entry filling many
    # slots (an alias key's kernel) is looked at, and wrapped, once.
    checked: dict[int, KernelFunction] = {}
    out = []
    for entry in table:
        function = checked.get(id(entry))
        if function is None:
            kind = entry.kind
            if kind != KernelKind.UNBOXED and kind != KernelKind.WITH_KEYSET:
                function = entry
            else:
                assert entry.fn is not None
                function = engine.KernelFunction(
                    kind, checked_kernel(entry.fn, boxer, schema.split_call_without_defaults, kind == KernelKind.WITH_KEYSET)
                )
            checked[id(entry)] = function
        out.append(function)
    return tuple(out)


def call_plan(engine: Engine, name: str, shape: CallShape, table: tuple[KernelFunction, ...], masks: tuple[int, ...],
              report_error: ReportError) -> CallPlan:
    """What a call of operator ``name`` reads (Note [One plan per operator] in dispatcher/_engine/core.py)."""
    return engine.CallPlan(name, shape, table, masks, report_error)


def undefined_plan(engine: Engine) -> CallPlan:
    """A plan for every operator without a def (Note [One plan while
    undefined] in operator_entry.py): each Dispatcher makes one, its undefined_plan."""
    shape = engine.CallShape(schema=None, dispatch_args=(), positional_span=-1, boxer=None, bind=None, split_call=None,
                             handler_arity=-1, handler_call=None)
    table = (engine.KernelFunction(KernelKind.MISSING, None),) * len(RUNTIME_SLOT_KEYS)
    return engine.CallPlan("(an undefined operator)", shape, table, (FULL_REPR,) * NUM_BACKENDS, _reports_nothing)


def _reports_nothing(kind: KernelKind, key: DispatchKey) -> None:
    raise AssertionError(f"an undefined operator's plan has no {kind.name} entry for {key.name} to report")


def operator_handle(engine: Engine, name: str, plan: CallPlan, owner: Any) -> OperatorHandle:
    """The handle calls of operator ``name`` go through, with ``plan``;
    ``owner`` (its OperatorEntry) answers its has_kernel questions."""
    handle = engine.OperatorHandle(name, plan)
    handle._set_owner(owner)
    return handle


def overload_packet(engine: Engine, qualified_name: str) -> OverloadPacket:
    """``ops.ns.name`` for ``ns::name``, its overloads published by the registry."""
    return engine.OverloadPacket(qualified_name)


def pending_packet_class(engine: Engine, define: Callable[[str, Optional[str]], None]) -> type:
    """A registry's class of packets not defined yet (Note [Packets of
    operators not defined yet] in dispatcher/_engine/core.py):
    ``define(ns::name, overload=None)`` defines one overload (its attribute
    name) of one of them, or all, in that registry."""
    pending: type = engine.PendingOverloadPacket
    return type(pending.__name__, (pending,), {"__slots__": (), "__module__": pending.__module__,
                                               "_define_pending": staticmethod(define)})


def pending_packet(pending_class: type, qualified_name: str) -> OverloadPacket:
    """``ops.ns.name`` for catalog operator ``ns::name`` before its definition:
    an instance of ``pending_class`` (pending_packet_class's)."""
    packet: OverloadPacket = pending_class(qualified_name)
    return packet


def settle_packet(engine: Engine, packet: OverloadPacket) -> None:
    """``packet``, pending until now, has all its overloads published: its
    class of its own (Note [Packets of operators not defined yet])."""
    engine.settle_packet(packet)
