"""The Dispatcher singleton: operators by name, backend fallbacks, registration.

Mirrors c10's ``Dispatcher``.  Every registration returns a handle (a
zero-argument callable) that undoes exactly that registration; ``Library``
keeps them.  All changes happen under one lock, and each one validates before
it mutates, so a failed registration leaves the dispatcher unchanged.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

from . import call_checks
from ._core import ENGINE
from .catalog import TORCH_2_13, Catalog, CatalogOverload
from .errors import DispatcherValueError
from ._layout import FULL_REPR, KEY_REPRS, RUNTIME_SLOT_KEYS, SLOT_OF_KEY, table_index
from ._backend_select import backend_select_kernel, tensor_options_positions
from .kernel import MISSING, AnnotatedKernel, Kernel, KernelKind
from .keys import NUM_BACKENDS, DispatchKey, is_runtime_key
from .operator_entry import (
    BACKEND_FALLBACK,
    Deferred,
    OperatorEntry,
    RegisteredSchema,
    TableLayout,
    check_inferred_schema,
    layout_signature,
    table_line,
    update_fallthrough_masks,
)
from ._engine.contract import KernelFunction
from .publish import (fallback_cell, kernel_function, overload_packet, pending_packet, pending_packet_class, settle_packet,
                      undefined_plan)
from .schema import FunctionSchema, OperatorName

__all__ = ["Dispatcher", "RegistrationHandle", "default_registry", "live_registries", "registry_in_use", "using_registry"]

# Note [Registration handles]
# What undoes one registration: a record (undo, a, b), which Dispatcher.undo
# runs as undo(a, b, deferred) while it holds the lock and defers refreshes
# (Note [Deferred refreshes]) for a whole batch, so that a handle neither
# takes the lock nor publishes a plan of its own: it notes the operator to
# refresh in ``deferred``, the deferral's dict, without a call.  A record, not
# a closure: closing a library is a registration step timed against torch's
# C++, and a record costs one Python call to undo (a kernel's is the entry's
# own method).
RegistrationHandle = tuple[Callable[[Any, Any, Deferred], None], Any, Any]

# Registries keep at most this many TableLayouts: one per combination of
# keys with kernels, of which a program uses a few dozen.
_MAX_LAYOUTS = 4096

# Read on every impl: DispatchKey.Undefined goes through the enum class's
# __getattr__ hook, several times the cost of a global.
_UNDEFINED = DispatchKey.Undefined


class Dispatcher:
    """The registry of one engine's operators (see dispatcher/_engine)."""

    # The line dump_table prints for each slot of an operator with no kernels
    # ("" where there is no fallback): see Note [Stored table lines] in
    # operator_entry.py.  A tuple, replaced whole by _set_fallback (readers
    # read a snapshot; the compat shim tells a new state by identity).
    fallback_lines: tuple[str, ...] = ("",) * len(RUNTIME_SLOT_KEYS)
    # The operators whose refresh waits for the end of a deferral; None when
    # not deferring (see defer()).
    deferred: Optional[Deferred] = None

    def __init__(self, engine: Any, catalog: Optional[Catalog] = None) -> None:
        # The engine module (dispatcher/_engine): what registration makes on it
        # is typed by its contract (dispatcher/_engine/contract.py) in
        # dispatcher/publish.py; its other readers (TLS, keysets) use the module.
        self.engine = engine
        # Operators this registry knows without a define(): see dispatcher/catalog.
        self.catalog = catalog
        # The ns::name of the catalog operators defined so far (on first use),
        # each added once all its overloads are (Note [Catalog operators are
        # defined on first use]); and those being defined, under the lock.
        self._from_catalog: set[str] = set()
        self._defining_from_catalog: set[str] = set()
        self.missing = kernel_function(engine, MISSING.kind, None)
        self.undefined_plan = undefined_plan(engine)
        self._lock = threading.RLock()
        self._operators: dict[str, OperatorEntry] = {}
        self._fallbacks: list[Optional[AnnotatedKernel]] = [None] * len(RUNTIME_SLOT_KEYS)
        # Slot -> the fallbacks a newer one replaced there, newest first (Note [Overridable fallbacks]).
        self._replaced_fallbacks: dict[int, list[AnnotatedKernel]] = {}
        # What a slot holds for an operator that has nothing better there:
        # the slot's fallback cell, whose kernel is the slot's fallback
        # (Note [Fallback cells] in dispatcher/_engine/core.py); and the masks
        # of an operator with no kernels, which holds this very tuple (Note
        # [Shared fallback tables] in operator_entry.py) and these masks.
        self.fallback_table: tuple[KernelFunction, ...] = tuple(fallback_cell(engine) for _ in RUNTIME_SLOT_KEYS)
        self.fallback_masks: tuple[int, ...] = (FULL_REPR,) * NUM_BACKENDS
        # The slots whose fallback changed during a deferral: their cells take it at its end.
        self._cells_to_fill: dict[int, None] = {}
        # Signature -> TableLayout (Note [Table layouts] in operator_entry.py).
        self._layouts: dict[tuple[tuple[DispatchKey, bool], ...], TableLayout] = {}
        # (the layout before, the key registered to, whether its kernel is
        # fallthrough) -> the layout after (Note [Layout steps] in operator_entry.py);
        # None before: no kernels.  Emptied with _layouts.
        self.layout_steps: dict[tuple[Optional[TableLayout], DispatchKey, bool], TableLayout] = {}
        # ns::name -> the overload names defined for it, in definition order.
        self._overloads: dict[str, list[str]] = {}
        # ns::name -> its engine OverloadPacket (ops.ns.name), made at the
        # name's first def and dropped with its last (Note [An entry goes
        # with its last registration]).
        self._packets: dict[str, Any] = {}
        # ns::name -> ops.ns.name of a catalog operator read but not defined
        # yet, which its definition publishes the overloads on (Note [Packets of
        # operators not defined yet] in dispatcher/_engine/core.py); and their
        # class, whose packets define themselves in this registry (through a
        # weak reference: the class does not keep the registry alive).
        self._pending_packets: dict[str, Any] = {}
        self._pending_packet_class: type[Any] = pending_packet_class(engine, _define_in(weakref.ref(self)))
        # Told ns::name after its overloads change (OpNamespaces, in ops.py).
        self._overload_watchers: list[Callable[[str, Any], None]] = []
        # Namespaces with a DEF library, and where that library was created.
        self._def_namespaces: dict[str, str] = {}
        # defer()'s context, one for all deferrals: it counts how deep they nest.
        self._deferral = _Deferral(self)
        _LIVE.add(self)
        call_checks.subscribe(self)  # Note [Who hears the switch]

    @property
    def lock(self) -> threading.RLock:
        """The lock every change of this registry holds."""
        return self._lock

    # Note [Deferred refreshes]
    # Each registration or removal refills the operator's table (Note [Table
    # layouts] in operator_entry.py) and publishes its plan.  Removing a
    # whole library would so refill and publish an operator once per
    # registration it made; under defer(), operators are only noted, and
    # each one refreshes and publishes once, when the outermost deferral
    # ends; a fallback changed meanwhile goes into its cell then too (Note
    # [Fallback cells] in dispatcher/_engine/core.py).  The lock is held
    # throughout, and calls keep the state of before the deferral until
    # then: they never see a state between two removals.  (Until then the
    # operators' tables, which dumps print and check_invariants checks, are
    # those of before the deferral too.)
    def defer(self) -> "_Deferral":
        """A context that holds the lock and defers refreshes to its end."""
        return self._deferral

    def undo(self, handles: list[RegistrationHandle]) -> None:
        """Undo the registrations of ``handles``, last first, each operator
        refreshed once: defer()'s work, without its context manager (a
        library's close is a registration step timed against torch's)."""
        lock = self._lock
        lock.acquire()
        try:
            outermost = self.deferred is None  # else the enclosing deferral's end refreshes
            deferred = self.deferred = {} if self.deferred is None else self.deferred
            try:
                for undo, a, b in reversed(handles):
                    undo(a, b, deferred)
            finally:
                if outermost:
                    self._end_deferral()
        finally:
            lock.release()

    def _end_deferral(self) -> None:
        """The outermost deferral's end (under the lock): refresh each operator
        it noted, once, and forget those left without registrations."""
        deferred = self.deferred
        assert deferred is not None
        self.deferred = None
        for slot in self._cells_to_fill:
            self.fallback_table[slot]._hold(self.function_of(self._fallbacks[slot]))
        self._cells_to_fill.clear()
        for op in deferred:
            op.refresh()
            if not op.in_use():
                self._forget(op)

    # Note [An entry goes with its last registration]
    # As in c10, an operator's entry is deleted when its last def or kernel
    # is removed, and with it everything it holds (its table, its plan, the
    # report-error callback): a process that defines and removes operators
    # under ever new names keeps nothing of them.  Its OperatorHandle, which
    # user code may still hold (ops.ns.op.default), keeps the undefined plan
    # its last refresh published, so calling it says, by name, that the
    # operator is not defined; a later def of the name makes a new entry and
    # a new handle, which ops.ns.op then gives.  (c10's handle would dangle.)
    def _forget(self, op: OperatorEntry) -> None:
        if self._operators.get(op.name) is op:
            del self._operators[op.name]

    # -- lookup ------------------------------------------------------------------
    def find_op(self, name: str) -> Optional[OperatorEntry]:
        op = self._operators.get(name)
        if op is None or op.schema is None:
            self._define_from_catalog(name.split(".", 1)[0])
            op = self._operators.get(name)  # whoever defined it, this thread or another
        return op if op is not None and op.in_use() else None

    def find_defined(self, name: str) -> Optional[OperatorEntry]:
        """The entry of ``name`` if it is defined (no catalog lookup)."""
        op = self._operators.get(name)
        return op if op is not None and op.schema is not None else None

    # Note [Catalog operators are defined on first use]
    # A catalog operator (dispatcher/catalog) behaves as defined from the
    # start, but is defined, with all its overloads, only when something
    # first looks it up by name: find_op, packet, or a def of the same name,
    # which then fails as a duplicate, as in torch.  ``ops.ns.name`` only
    # hands out its packet (catalog_packet), whose first read of an overload
    # defines that overload alone, and whose other uses define the rest
    # (Note [Packets of operators not defined yet] in
    # dispatcher/_engine/core.py).  Its defs belong to the registry, not to
    # a library: nothing removes them.
    def _define_from_catalog(self, qualified_name: str, overload: Optional[str] = None) -> None:
        """Define ``ns::name`` from the catalog if it is there and not yet
        defined (by the time this returns, whichever thread defines it): all
        its overloads, or only ``overload`` (an attribute name of its packet,
        "default" for the unnamed overload) if the catalog has it (Note
        [Packets of operators not defined yet] in dispatcher/_engine/core.py)."""
        catalog = self.catalog
        if catalog is None or qualified_name in self._from_catalog:
            return
        # The namespace first: the header alone answers for a user's operator,
        # whose define must not pay for reading the whole catalog.
        if qualified_name.partition("::")[0] not in catalog.namespaces:
            return
        overloads = catalog.overloads(qualified_name)
        if not overloads:
            return
        wanted = overloads if overload is None else _only(overloads, overload)
        # All parsed before any is defined (Note [Catalog parts] in
        # dispatcher/catalog/parts.py), unless the name is being defined: the
        # definition's own lookups (each overload's register_def) get here.
        defining = qualified_name in self._defining_from_catalog
        todo = () if defining else self._undefined(wanted)
        schemas = catalog.parsed(todo) if todo else None
        with self._lock:
            # A thread that finds the name in neither set defines it; one that
            # got here meanwhile waited on the lock and finds it done.  The
            # definitions' own lookups (register_def's) find it being defined.
            if qualified_name in self._from_catalog or qualified_name in self._defining_from_catalog:
                return
            left = self._undefined(wanted)
            if not left:  # the one overload asked for: another thread defined it
                return
            if schemas is None or left != todo:  # (parsed schemas are cached: no text is parsed twice)
                schemas = catalog.parsed(left)
            self._defining_from_catalog.add(qualified_name)
            complete = False
            try:
                for schema, line in zip(schemas, left):
                    self.register_def(schema, catalog.origin, tags=line.tags, publish_overloads=False)
                    self._register_backend_select(schema, catalog.origin)
                complete = wanted is overloads or not self._undefined(overloads)
            finally:
                self._defining_from_catalog.discard(qualified_name)
                # Defined one by one, the overloads are still listed in torch's order.
                defined = self._overloads.get(qualified_name)
                if defined is not None and len(defined) > len(left):
                    in_order = [line.overload_name for line in overloads]
                    self._overloads[qualified_name] = ([name for name in in_order if name in defined]
                                                       + [name for name in defined if name not in in_order])
                # The packet published once per definition, settled (no longer
                # pending) once all are there, before the watchers hear of it.
                self._overloads_changed(qualified_name, settle=complete)
            if complete:
                # Published last: the unlocked test above must not see the name
                # before its definitions are all there.
                self._from_catalog.add(qualified_name)

    def _undefined(self, overloads: tuple[CatalogOverload, ...]) -> tuple[CatalogOverload, ...]:
        """Those of the catalog's ``overloads`` not defined in this registry."""
        operators = self._operators
        return tuple([line for line in overloads
                      if (op := operators.get(line.operator_name)) is None or op.schema is None])

    def _register_backend_select(self, schema: FunctionSchema, origin: str) -> None:
        """A catalog factory operator's BackendSelect kernel, as torch
        generates one (see dispatcher/_backend_select.py); it stays, as the def does."""
        positions = tensor_options_positions(schema)
        if positions is None:
            return
        op = self._operators[str(schema.name)]
        kernel = backend_select_kernel(schema, positions, op.handle, self.engine)
        self.register_impl(schema.name, DispatchKey.BackendSelect,
                           AnnotatedKernel(Kernel(KernelKind.WITH_KEYSET, kernel), f"{origin}: BackendSelect kernel"))

    def overload_names(self, qualified_name: str) -> list[str]:
        """Overload names of the defined operators called ``ns::name``, in definition order."""
        return list(self._overloads.get(qualified_name, ()))

    def packet(self, qualified_name: str) -> Any:
        """The OverloadPacket of ``ns::name`` if an overload of it is defined, else None."""
        # The packet, not _overloads, says a name is defined: a def in
        # progress on another thread lists its overload before it publishes
        # the packet; the catalog's definition waits for it.
        packet = self._packets.get(qualified_name)
        if packet is None or type(packet) is self._pending_packet_class:
            self._define_from_catalog(qualified_name)  # or another thread does, while this one waits
            packet = self._packets.get(qualified_name)
        return packet

    def catalog_packet(self, qualified_name: str) -> Any:
        """``ops.ns.name`` of ``ns::name``: its OverloadPacket if an overload is
        defined; for a catalog operator not defined yet, a packet that defines
        it when first needed (Note [Packets of operators not defined yet] in
        dispatcher/_engine/core.py), the same one until then; else None."""
        packet = self._packets.get(qualified_name)
        if packet is not None:
            return packet
        catalog = self.catalog
        if catalog is None or not catalog.has(qualified_name):
            return None
        with self._lock:
            packet = self._packets.get(qualified_name)
            if packet is None:
                packet = self._pending_packets.get(qualified_name)
                if packet is None:
                    # The watchers hear of it when its overloads are defined (nothing changed yet).
                    packet = self._pending_packets[qualified_name] = pending_packet(self._pending_packet_class,
                                                                                   qualified_name)
        return packet

    def packet_names(self) -> list[str]:
        """The ``ns::name`` of every packet with a defined overload."""
        return list(self._overloads)

    def watch_overloads(self, watcher: Callable[[str, Any], None]) -> None:
        """Call ``watcher(ns::name, packet)`` after the overloads of ``ns::name``
        change; ``packet`` is None when none is left."""
        with self._lock:
            self._overload_watchers.append(watcher)

    def _overloads_changed(self, qualified_name: str, settle: bool = False) -> None:
        # Under the lock: publish the packet's overloads, then tell the
        # watchers; ``settle``: every overload of a catalog operator is defined
        # (Note [Packets of operators not defined yet] in dispatcher/_engine/core.py).
        packet = self._packets.get(qualified_name)
        overloads = self._overloads.get(qualified_name)
        if packet is None:
            # A catalog operator's packet handed out before its definition gets its overloads.
            packet = self._pending_packets.pop(qualified_name, None) if overloads else None
            if packet is None:
                packet = overload_packet(self.engine, qualified_name)
            self._packets[qualified_name] = packet
        if overloads:
            operators = self._operators
            packet._publish(tuple([
                (overload or "default", operators[f"{qualified_name}.{overload}" if overload else qualified_name].handle)
                for overload in overloads
            ]))
            if settle and type(packet) is self._pending_packet_class:
                settle_packet(self.engine, packet)
        else:
            packet._publish(())  # whoever still holds it gets "not defined" (Note [An entry goes with its last registration])
            del self._packets[qualified_name]
            packet = None  # the watchers' word for "no overloads"
        for watcher in self._overload_watchers:
            watcher(qualified_name, packet)

    def op_or_throw(self, name: str) -> OperatorEntry:
        op = self.find_op(name)
        if op is None:
            raise RuntimeError(f"Could not find operator {name}")
        return op

    def all_op_names(self) -> list[str]:
        """The operators in use, and the catalog's whether defined yet or not."""
        with self._lock:
            names = {name for name, op in self._operators.items() if op.in_use()}
        if self.catalog is not None:
            names.update(self.catalog.operator_names())
        return sorted(names)

    def backend_fallback(self, key: DispatchKey) -> Optional[AnnotatedKernel]:
        """The fallback of ``key``'s table slot.  Any key has one, as in c10:
        a functionality key (Dense) that of its first backend (CPU), an alias
        key that of Undefined (which never has a fallback)."""
        slot = SLOT_OF_KEY.get(key)  # a runtime key's own slot, without working out its index
        return self._fallbacks[table_index(KEY_REPRS[key]) if slot is None else slot]

    def has_backend_fallback(self, key: DispatchKey) -> bool:
        return self.backend_fallback(key) is not None

    # -- libraries ---------------------------------------------------------------
    def claim_namespace(self, ns: str, debug: str) -> RegistrationHandle:
        """A DEF library owns its namespace: only one may exist at a time."""
        with self._lock:
            previous = self._def_namespaces.get(ns)
            if previous is None and self.catalog is not None and ns in self.catalog.def_namespaces:
                previous = self.catalog.origin
            if previous is not None:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  "
                    "If you were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                    "(which can be duplicated).  If you really intended to define operators for a "
                    "single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                    "explicitly indicate this.  Previous registration of TORCH_LIBRARY was "
                    f"{previous}; latest registration was {debug}"
                )
            self._def_namespaces[ns] = debug
        return self._release_namespace, ns, None

    def _release_namespace(self, ns: str, _: None, deferred: Deferred) -> None:
        del self._def_namespaces[ns]

    # -- def ---------------------------------------------------------------------
    def register_def(self, schema: FunctionSchema, debug: str, alias_analysis: str = "FROM_SCHEMA",
                     alias_analysis_is_default: bool = False, tags: tuple[str, ...] = (),
                     publish_overloads: bool = True) -> RegistrationHandle:
        """Define ``schema``'s operator.  ``publish_overloads=False`` leaves the
        packet (ops.ns.name) to the caller, who publishes it after its last def."""
        with self._lock:
            return self.register_def_locked(schema, debug, alias_analysis, alias_analysis_is_default, tags,
                                            publish_overloads)

    def register_def_locked(self, schema: FunctionSchema, debug: str, alias_analysis: str = "FROM_SCHEMA",
                            alias_analysis_is_default: bool = False, tags: tuple[str, ...] = (),
                            publish_overloads: bool = True) -> RegistrationHandle:
        """register_def for a caller that holds the lock (Library, which keeps
        the handle under it: one lock taken instead of two)."""
        operator_name = schema.name
        name = operator_name._text  # str(schema.name), without the call
        qualified_name = operator_name.qualified_name
        self._define_from_catalog(qualified_name)  # so that a second def of it fails
        op = self._operators.get(name)
        if op is not None and op.schema is not None:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name and overload name "
                "multiple times. Each overload's schema should only be registered with a single "
                f"call to def(). Duplicate registration: {debug}. Original registration: "
                f"{op.schema.debug}"
            )
        registered = RegisteredSchema(schema, debug, alias_analysis, alias_analysis_is_default, tags)
        if op is not None:
            # Kernels registered before the def must fit it (c10 checks
            # them before it stores the schema).
            for key in sorted(op.kernels):
                for kernel in op.kernels[key]:
                    check_inferred_schema(name, registered, kernel)
        else:
            op = OperatorEntry(name, self)
        op.set_schema(registered)
        self._operators[name] = op  # an entry is listed once it holds a registration
        self._overloads.setdefault(qualified_name, []).append(operator_name.overload_name)
        if publish_overloads:
            self._overloads_changed(qualified_name)
        return self._undo_def, op, registered

    def _undo_def(self, op: OperatorEntry, registered: RegisteredSchema, deferred: Deferred) -> None:
        assert op.schema is registered, f"{op.name}: schema removed twice"
        op.clear_schema(deferred)
        name = registered.schema.name
        qualified_name = name.qualified_name
        overloads = self._overloads[qualified_name]
        overloads.remove(name.overload_name)
        if not overloads:
            del self._overloads[qualified_name]
        self._overloads_changed(qualified_name)

    # -- impl --------------------------------------------------------------------
    def register_impl(self, name: OperatorName, key: DispatchKey, kernel: AnnotatedKernel) -> RegistrationHandle:
        """Register ``kernel`` for operator ``name`` at ``key`` (runtime or alias).

        The operator need not be defined yet (impl before def, as in c10).
        """
        with self._lock:
            return self.register_impl_locked(name, key, kernel)

    def register_impl_locked(self, name: OperatorName, key: DispatchKey, kernel: AnnotatedKernel) -> RegistrationHandle:
        """register_impl for a caller that holds the lock (Library, which keeps
        the handle under it: one lock taken instead of two, in an impl timed beside torch's)."""
        if key == _UNDEFINED:
            raise DispatcherValueError("cannot register a kernel for Undefined; use CompositeImplicitAutograd for a catch-all")
        op_name = name._text  # str(name), without the call
        op = self._operators.get(op_name)
        if op is None:
            op = OperatorEntry(op_name, self)
        if op.schema is not None and kernel.inferred_schema is not None:
            check_inferred_schema(op_name, op.schema, kernel)
        op.register_kernel(key, kernel)  # warns, as c10 does, if it overrides a kernel
        self._operators[op_name] = op  # an entry is listed once it holds a registration
        return op.remove_kernel, key, kernel

    # -- fallbacks -----------------------------------------------------------------
    # Note [Overridable fallbacks]
    # A key has one backend fallback: a second registration is an error, as
    # in c10 -- except on AutogradPrivateUse1, where c10 lets an out-of-tree
    # backend replace the framework's autograd fallback (its
    # Dispatcher::registerFallback skips the check for that key).  There the
    # newest fallback wins; the ones it replaced are kept, newest first, and
    # the newest left comes back when the winner is removed.  (c10 instead
    # empties the slot when any of them is removed, leaving no fallback at all.)
    OVERRIDABLE_FALLBACK_KEYS = frozenset({DispatchKey.AutogradPrivateUse1})

    def check_fallback(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        """Raise what register_fallback would raise for ``key`` and ``kernel``, registering nothing."""
        if not is_runtime_key(key) or key == DispatchKey.Undefined:
            raise DispatcherValueError(f"cannot register a backend fallback for {key.name}: it is not a runtime key")
        previous = self._fallbacks[SLOT_OF_KEY[key]]
        if previous is not None and key not in self.OVERRIDABLE_FALLBACK_KEYS:
            raise RuntimeError(
                f"Tried to register multiple backend fallbacks for the same dispatch key {key.name}; "
                f"previous registration {previous.debug}, new registration {kernel.debug}"
            )

    def register_fallback(self, key: DispatchKey, kernel: AnnotatedKernel) -> RegistrationHandle:
        """A backend fallback: the kernel of ``key``'s slot for every operator
        that has nothing better there (see Note [Overridable fallbacks])."""
        slot = SLOT_OF_KEY.get(key)
        with self.defer():  # the slot's cell takes the kernel at its end (_set_fallback)
            self.check_fallback(key, kernel)
            assert slot is not None
            previous = self._fallbacks[slot]
            if previous is not None:
                self._replaced_fallbacks.setdefault(slot, []).insert(0, previous)
            self._set_fallback(key, kernel)
        return self._undo_fallback, key, kernel

    def _undo_fallback(self, key: DispatchKey, kernel: AnnotatedKernel, deferred: Deferred) -> None:
        slot = SLOT_OF_KEY[key]
        if self._fallbacks[slot] is kernel:
            replaced = self._replaced_fallbacks.get(slot)
            self._set_fallback(key, replaced.pop(0) if replaced else None)
        else:  # replaced by a newer one, which stays
            replaced = self._replaced_fallbacks[slot]
            assert any(k is kernel for k in replaced), f"fallback for {key.name} removed twice"
            replaced[:] = [k for k in replaced if k is not kernel]

    def _set_fallback(self, key: DispatchKey, kernel: Optional[AnnotatedKernel]) -> None:
        slot = SLOT_OF_KEY[key]
        function = self.function_of(kernel)
        masks_change = self.function_of(self._fallbacks[slot]).is_fallthrough() != function.is_fallthrough()
        self._fallbacks[slot] = kernel
        # Every operator whose slot takes the fallback calls the new one once
        # the cell has it (Note [Fallback cells] in dispatcher/_engine/core.py):
        # no operator is visited, unless the masks change or checked calls
        # wrap kernels.  The cell changes at the deferral's end, with the
        # operators' refreshes (Note [Deferred refreshes]): register_fallback
        # and undo always run in one.
        assert self.deferred is not None
        self._cells_to_fill[slot] = None
        lines = list(self.fallback_lines)
        lines[slot] = table_line(key.name, kernel, BACKEND_FALLBACK)
        self.fallback_lines = tuple(lines)
        if masks_change or call_checks.checked_calls_enabled():
            masks = list(self.fallback_masks)
            update_fallthrough_masks(masks, key, function.is_fallthrough())
            self.fallback_masks = tuple(masks)
            self._layouts.clear()  # their masks are those of the previous fallbacks
            self.layout_steps.clear()
            # A copy: a refresh allocates, and a Library that the garbage collector
            # finalizes then closes itself on this thread, which may delete entries.
            for op in list(self._operators.values()):
                op.refresh()

    def layout(self, kernels: Any) -> TableLayout:
        """The TableLayout of an operator with ``kernels`` (Note [Table layouts] in operator_entry.py)."""
        signature = layout_signature(kernels)
        layout = self._layouts.get(signature)
        if layout is None:
            if len(self._layouts) >= _MAX_LAYOUTS:
                self._layouts.clear()
                self.layout_steps.clear()
            fallthrough_fallbacks = [self.function_of(f).is_fallthrough() for f in self._fallbacks]
            layout = self._layouts[signature] = TableLayout(kernels, [k for k, fallthrough in signature if fallthrough],
                                                            fallthrough_fallbacks, self.fallback_masks)
        return layout

    def function_of(self, kernel: Optional[AnnotatedKernel]) -> Any:
        """What a plan's table holds for ``kernel`` (None: no kernel)."""
        return self.missing if kernel is None else kernel.function(self.engine)

    def republish_plans(self) -> None:
        """Publish every operator's plan again (checked calls were switched on or off)."""
        with self._lock:
            for op in list(self._operators.values()):  # a copy, as _set_fallback's
                op.republish()

    # -- debugging -------------------------------------------------------------------
    def check_invariants(self, name: Optional[str] = None) -> None:
        with self._lock:
            ops = [self.op_or_throw(name)] if name is not None else list(self._operators.values())
            for op in ops:
                op.check_invariants()

    def find_dangling_impls(self) -> list[OperatorEntry]:
        """Operators with kernels but no def."""
        with self._lock:
            return [op for op in self._operators.values() if op.schema is None and op.in_use()]

    def registrations_for_dispatch_key(self, key: Optional[DispatchKey] = None) -> list[str]:
        """Names of the operators with a kernel registered for ``key`` (all if None)."""
        with self._lock:
            return sorted(
                name
                for name, op in self._operators.items()
                if op.in_use() and (key is None or op.has_kernel_for_dispatch_key(key))
            )


def _only(overloads: tuple[CatalogOverload, ...], name: str) -> tuple[CatalogOverload, ...]:
    """The catalog overload whose packet attribute is ``name`` ("default" for
    the unnamed one), alone; all ``overloads`` if none is (a name that is no
    overload needs the whole set: its AttributeError lists them)."""
    wanted = "" if name == "default" else name
    for line in overloads:
        if line.overload_name == wanted:
            return (line,)
    return overloads


def _define_in(registry: "weakref.ref[Dispatcher]") -> Callable[[str, Optional[str]], None]:
    """What a registry's pending packets call to define their overloads (its
    _define_from_catalog, through ``registry``, a weak reference)."""
    def define(qualified_name: str, overload: Optional[str] = None) -> None:
        dispatcher = registry()
        if dispatcher is None:
            raise RuntimeError(f"the registry of {qualified_name}'s packet no longer exists")
        dispatcher._define_from_catalog(qualified_name, overload)
    return define


# Every Dispatcher, weakly: an OperatorHandle does not know its registry
# (the call path has no use for it), so dispatcher.explain asks each.
_LIVE: "weakref.WeakSet[Dispatcher]" = weakref.WeakSet()


def live_registries() -> list[Dispatcher]:
    """Every Dispatcher that still exists (the default one first)."""
    return [default_registry, *(r for r in list(_LIVE) if r is not default_registry)]


class _Deferral:
    """Dispatcher.defer(): see Note [Deferred refreshes].  One per dispatcher,
    entered by one thread at a time (it takes the lock first), nested ones
    counted: the outermost one refreshes."""

    __slots__ = ("_dispatcher", "_depth")

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher
        self._depth = 0

    def __enter__(self) -> None:
        dispatcher = self._dispatcher
        dispatcher._lock.acquire()
        if self._depth == 0:
            dispatcher.deferred = {}
        self._depth += 1

    def __exit__(self, *exc_info: object) -> None:
        dispatcher = self._dispatcher
        try:
            self._depth -= 1
            if self._depth == 0:
                dispatcher._end_deferral()
        finally:
            dispatcher._lock.release()


# The registry behind dispatcher.Library, dispatcher.ops and the compat shim.
default_registry = Dispatcher(ENGINE, TORCH_2_13)

# Note [The registry in use]
# The package-level functions that are given no registry -- custom_op and
# torch.library's module functions (custom_ops.py, optests.py), the compat
# shim (compat/torch_C.py), dispatch modes (dispatch_modes.py) -- work on one
# registry, the registry in use: the default one, unless a ``with
# using_registry(r):`` block says otherwise (a test's registry on the other
# engine, say).  Process-wide, as registries are: threads started inside the
# block use it too.  Blocks nest.
_in_use: list[Dispatcher] = []
_in_use_lock = threading.Lock()


def registry_in_use() -> Dispatcher:
    """The registry of the package-level functions (Note [The registry in use])."""
    return _in_use[-1] if _in_use else default_registry


@contextmanager
def using_registry(registry: Dispatcher) -> Iterator[Dispatcher]:
    """Make ``registry`` the one in use while the block runs (Note [The registry in use])."""
    if not isinstance(registry, Dispatcher):
        raise TypeError(f"using_registry() takes a Dispatcher, not {type(registry).__name__}")
    with _in_use_lock:
        _in_use.append(registry)
    try:
        yield registry
    finally:
        with _in_use_lock:
            # The last entry of this registry: blocks on several threads may end in any order.
            del _in_use[len(_in_use) - 1 - _in_use[::-1].index(registry)]
