"""One operator's registrations and its computed runtime dispatch table.

The logic of c10's ``OperatorEntry``: kernels registered per dispatch key
(alias keys included, newest first), and for every runtime slot the kernel
chosen by PyTorch 2.13's precedence (``compute_entry``).  After every change
the entry compiles the table, the per-backend fallthrough masks and what the
def gives (dispatch arguments, Boxer) into one CallPlan and publishes it to
the operator's engine ``OperatorHandle``: the call path never reads anything
in this module.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Optional

from . import keysets
from ._frozen import Frozen
from ._kernel_kind import KernelKind
from ._layout import FULL_BACKEND_MASK, FULL_REPR, KEY_REPRS, RUNTIME_SLOT_KEYS, SLOT_OF_KEY
from .kernel import AMBIGUOUS_AUTOGRAD_OTHER, AnnotatedKernel, signature_text
from .keys import (
    NUM_BACKENDS,
    BackendComponent,
    DispatchKey,
    is_alias_key,
    is_per_backend_functionality_key,
    to_backend_component,
    to_functionality_key,
)
from .ivalue import make_boxer
from .schema import Argument, FunctionSchema, ListType, Return, TensorArgKind, Type

if TYPE_CHECKING:
    from ._engine.core import KernelFunction
    from .registry import Dispatcher

K = DispatchKey

_CIA = K.CompositeImplicitAutograd
_CIA_NESTED = K.CompositeImplicitAutogradNestedTensor
_CEA = K.CompositeExplicitAutograd
_CEANF = K.CompositeExplicitAutogradNonFunctional
_AUTOGRAD = K.Autograd
_BATCHED = K.FuncTorchBatchedDecomposition

# compute_entry's tag for a slot that takes its backend fallback.
BACKEND_FALLBACK = "backend fallback"


class RegisteredSchema(Frozen):
    """A def(): the schema, where it was registered, its alias analysis kind."""

    __slots__ = _fields = ("schema", "debug", "alias_analysis", "alias_analysis_is_default")

    schema: FunctionSchema
    debug: str
    alias_analysis: str
    alias_analysis_is_default: bool

    def __init__(self, schema: FunctionSchema, debug: str, alias_analysis: str = "FROM_SCHEMA",
                 alias_analysis_is_default: bool = False) -> None:
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "debug", debug)
        object.__setattr__(self, "alias_analysis", alias_analysis)
        object.__setattr__(self, "alias_analysis_is_default", alias_analysis_is_default)


def _type_text(t: Type) -> str:
    # c10 compares types without alias annotations, and a list's size
    # (int[2]) belongs to the argument, not to its type.
    t = t.strip_annotations()
    if isinstance(t, ListType) and t.size is not None:
        t = ListType(t.elem)
    return str(t)


def schema_difference(expected: FunctionSchema, inferred: FunctionSchema) -> Optional[str]:
    """Why a kernel's inferred schema does not fit a def (c10's
    findSchemaDifferences), or None if it does; names do not matter."""
    if len(expected.arguments) != len(inferred.arguments):
        return f"The number of arguments is different. {len(expected.arguments)} vs {len(inferred.arguments)}."
    if len(expected.returns) != len(inferred.returns):
        return f"The number of returns is different. {len(expected.returns)} vs {len(inferred.returns)}."
    sides: tuple[tuple[str, Sequence[Argument | Return], Sequence[Argument | Return]], ...] = (
        ("argument", expected.arguments, inferred.arguments),
        ("return", expected.returns, inferred.returns),
    )
    for what, left, right in sides:
        for i, (a, b) in enumerate(zip(left, right), start=1):
            if _type_text(a.type) != _type_text(b.type):
                return f"Type mismatch in {what} {i}: {_type_text(a.type)} vs {_type_text(b.type)}."
    return None


def check_inferred_schema(name: str, schema: RegisteredSchema, kernel: AnnotatedKernel) -> None:
    """Raise c10's error if ``kernel`` was inferred a schema that ``schema`` contradicts."""
    if kernel.inferred_schema is None:
        return
    reason = schema_difference(schema.schema, kernel.inferred_schema)
    if reason is not None:
        raise RuntimeError(
            "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n"
            f"  operator: {name}\n"
            f"  expected schema: {schema.schema}\n"
            f"    {schema.debug}\n"
            f"  inferred schema: {signature_text(kernel.inferred_schema)}\n"
            f"    {kernel.debug}\n"
            f"  reason: {reason}"
        )


class _SlotInfo(Frozen):
    """What compute_entry needs to know about a runtime slot."""

    __slots__ = _fields = ("in_ceanf", "in_cea", "in_cia_nested", "in_cia", "in_autograd", "in_batched",
                           "backend_bits")

    in_ceanf: bool
    in_cea: bool
    in_cia_nested: bool
    in_cia: bool
    in_autograd: bool
    in_batched: bool
    backend_bits: int  # raw get_backend_key_set_from_autograd(slot)

    def __init__(self, in_ceanf: bool, in_cea: bool, in_cia_nested: bool, in_cia: bool, in_autograd: bool,
                 in_batched: bool, backend_bits: int) -> None:
        for name, value in zip(self._fields, (in_ceanf, in_cea, in_cia_nested, in_cia, in_autograd, in_batched,
                                              backend_bits)):
            object.__setattr__(self, name, value)


# Filled as keys are first asked about: computing all 137 slots at import
# took longer than the rest of the import.
_SLOT_INFO: dict[DispatchKey, _SlotInfo] = {}


def _slot_info(k: DispatchKey) -> _SlotInfo:
    info = _SLOT_INFO.get(k)
    if info is None:
        undefined = k == K.Undefined
        info = _SLOT_INFO[k] = _SlotInfo(
            # Note [Undefined in dispatchTable_]: the composite kernels also
            # serve Undefined, which no alias key set can hold.
            in_ceanf=undefined or keysets.is_included_in_alias(k, _CEANF),
            in_cea=undefined or keysets.is_included_in_alias(k, _CEA),
            in_cia_nested=not undefined and keysets.is_included_in_alias(k, K.CompositeImplicitAutogradNestedTensor),
            in_cia=undefined or keysets.is_included_in_alias(k, _CIA),
            in_autograd=keysets.is_included_in_alias(k, K.Autograd),
            in_batched=keysets.is_included_in_alias(k, K.FuncTorchBatchedDecomposition),
            backend_bits=keysets.get_backend_key_set_from_autograd(k).raw_repr(),
        )
    return info


_AUTOGRADOTHER_BACKEND_BITS = keysets.AUTOGRADOTHER_BACKENDS.raw_repr()

# Note [Which slots a registration changes]
# compute_entry(slot) reads the kernels of: the slot's own key, the alias keys
# (for slots in their runtime sets, and Undefined), and - for autograd slots -
# the keys of the backends they guard.  So a kernel change on runtime key k
# can only change slot k and the autograd slots that guard k; a change on an
# alias key may change any slot.  c10 refreshes a slightly smaller set
# (it misses e.g. AutogradOther after a SparseCPU kernel arrives, and the
# autograd slots after a CompositeExplicitAutograd kernel), which leaves its
# stored table briefly out of step with what dump_table computes; refreshing
# every dependent slot keeps the table equal to a recomputation from scratch,
# whatever the order of registrations.
# A functionality key without a slot (Dense, SparseCsr) changes no slot of
# its own, but it counts as a backend kernel for the autograd slots whose
# backend set has its functionality (AutogradOther for SparseCsr).

# The slots that guard backends (has_backend_kernel in compute_entry), with
# the raw keyset of the backends each guards: the autograd slots, but for
# those guarding none (AutogradHIP, ...), which no kernel change reaches.
_BACKEND_GUARDS: tuple[tuple[DispatchKey, int], ...] = tuple(
    (a, bits) for a in RUNTIME_SLOT_KEYS if (bits := keysets.get_backend_key_set_from_autograd(a).raw_repr())
)
# Filled as keys are first registered to (see _slot_info).
_SLOTS_CHANGED_BY: dict[DispatchKey, tuple[DispatchKey, ...]] = {}


def _slots_changed_by(k: DispatchKey) -> tuple[DispatchKey, ...]:
    """The slots a kernel change on key ``k`` can change, in slot order."""
    slots = _SLOTS_CHANGED_BY.get(k)
    if slots is None:
        if is_alias_key(k):
            slots = RUNTIME_SLOT_KEYS
        else:
            bits = KEY_REPRS[k]  # a guard holds k if it holds all of k's bits, as DispatchKeySet.has
            own = (k,) if k in SLOT_OF_KEY else ()
            slots = own + tuple(a for a, guarded in _BACKEND_GUARDS if guarded & bits == bits)
        _SLOTS_CHANGED_BY[k] = slots
    return slots


class OperatorEntry:
    """Registrations of one operator (by qualified name) and its runtime table."""

    def __init__(self, name: str, dispatcher: "Dispatcher") -> None:
        self.name = name
        self.schema: Optional[RegisteredSchema] = None
        # Newest first; the first kernel of a key is the active one.
        self.kernels: dict[DispatchKey, list[AnnotatedKernel]] = {}
        self._dispatcher = dispatcher
        # With no kernels, every slot is its backend fallback: start from the
        # dispatcher's copies of that table instead of computing 137 entries.
        self._table: list[Any] = list(dispatcher.fallback_table)
        # Note [Stored table lines]
        # For each slot, the line dump_table prints for the entry compute_entry
        # chose ("" for a missing one), kept with the table by _update_slot:
        # dumping joins them instead of recomputing every slot.
        self._lines: list[str] = list(dispatcher.fallback_lines)
        # Note [Per-backend fallthrough masks]
        # c10 keeps, per backend, the keys that are not fallthrough for this
        # operator; a call ANDs its keyset with the mask of its highest
        # backend, so fallthrough keys are never visited.  A fallthrough on
        # a per-backend key (AutogradCPU) only affects its backend's mask; one
        # on another key (Python) affects them all.
        self._masks: list[int] = list(dispatcher.fallback_masks)
        # Note [Out-of-use entries are refreshed when used again]
        # An entry with no def and no kernels holds exactly the dispatcher's
        # fallback table, and nothing can call it (a plan without a schema
        # only raises).  Backend fallback changes skip such entries, which
        # stay forever (Note [Operator entries live forever]) and would
        # otherwise make every fallback registration slower; one that missed
        # a change is marked stale and takes the dispatcher's copies again
        # when a def or a kernel puts it back in use.
        self._stale = False
        # What a plan takes from the def: see _schema_plan_parts.
        self._schema_parts: Optional[_SchemaParts] = None
        self._handle: Any = None

    @property
    def handle(self) -> Any:
        """The engine OperatorHandle that calls go through, made (with a plan
        of the current table) when first asked for: until then there is no
        plan to publish, so an entry that registration creates and updates
        before anything looks its handle up compiles one plan, not one per change."""
        handle = self._handle
        if handle is None:
            with self._dispatcher.lock:
                handle = self._handle
                if handle is None:
                    handle = self._handle = self._dispatcher.engine.OperatorHandle(self.name, self._plan())
        return handle

    # -- queries ---------------------------------------------------------------
    def kernel_for(self, key: DispatchKey) -> Optional[AnnotatedKernel]:
        kernels = self.kernels.get(key)
        return kernels[0] if kernels else None

    def has_kernel_for_dispatch_key(self, key: DispatchKey) -> bool:
        return bool(self.kernels.get(key))

    def has_kernel_for_any_dispatch_key(self, ks: Any) -> bool:
        return self._has_kernel_in(ks.raw_repr())

    def in_use(self) -> bool:
        """Defined or holding kernels; see Note [Operator entries live forever]."""
        return self.schema is not None or bool(self.kernels)

    def computed_kernel(self, key: DispatchKey) -> KernelFunction:
        return self._table[SLOT_OF_KEY[key]]

    def non_fallthrough_mask(self, backend: BackendComponent = BackendComponent.CPUBit) -> Any:
        index = max(int(backend) - 1, 0)
        return self._dispatcher.engine.DispatchKeySet.from_raw_repr(self._masks[index])

    # -- the precedence ------------------------------------------------------------
    def _has_kernel_in(self, bits: int) -> bool:
        """c10's hasKernelForAnyDispatchKey on a raw keyset.  Alias keys have
        no bits (repr 0) and so never count, as c10 requires."""
        for key, kernels in self.kernels.items():
            r = KEY_REPRS[key]
            if r and r & bits == r and kernels:
                return True
        return False

    def compute_entry(self, key: DispatchKey) -> tuple[Optional[AnnotatedKernel], str]:
        """The kernel for runtime slot ``key`` and the tag dump_table prints
        (c10's computeDispatchTableEntryWithDebug); (None, "missing") if none."""
        kernels = self.kernels
        direct = kernels.get(key)
        if direct:
            return direct[0], "kernel"
        # A key without a slot of its own (Dense) is computed too, as c10
        # does for _dispatch_get_computed_kernel_for_dispatch_key's debug text.
        slot = _slot_info(key)

        # Composite kernels serve Undefined too: a call with no tensor arguments
        # (and no TLS keys) lands there.
        if slot.in_ceanf and (found := kernels.get(_CEANF)):
            return found[0], "default backend kernel"
        if slot.in_cea and (found := kernels.get(_CEA)):
            return found[0], "default backend kernel"

        # Unlike the math kernel below, c10 gives the nested kernel no
        # has_backend_kernel test: a NestedTensorCPU kernel does not keep
        # it from AutogradNestedTensor.
        if slot.in_cia_nested and (found := kernels.get(_CIA_NESTED)):
            return found[0], "nested kernel"

        if slot.in_cia and (found := kernels.get(_CIA)):
            # Note [Ambiguity in AutogradOther kernel]: AutogradOther serves
            # many backends; with a kernel for one of them, c10 cannot tell
            # whether the composite kernel or autograd-of-that-kernel is
            # meant, and makes calling it an error.
            if key == K.AutogradOther and self._has_kernel_in(_AUTOGRADOTHER_BACKEND_BITS):
                return AMBIGUOUS_AUTOGRAD_OTHER, "ambiguous autogradother"
            # An autograd key only takes a composite-implicit kernel when its
            # backends have no kernel of their own (else autograd would bypass it).
            has_backend_kernel = bool(kernels.get(_CEA)) or (
                slot.backend_bits != 0 and self._has_kernel_in(slot.backend_bits)
            )
            if not has_backend_kernel:
                return found[0], "math kernel"

        if slot.in_autograd and (found := kernels.get(_AUTOGRAD)):
            return found[0], "autograd kernel"
        if slot.in_batched and (found := kernels.get(_BATCHED)):
            return found[0], "batched kernel"

        fallback = self._dispatcher.backend_fallback(key)
        if fallback is not None:
            return fallback, BACKEND_FALLBACK
        return None, "missing"

    # -- updates -------------------------------------------------------------------
    def refresh_slots(self, changed_key: DispatchKey) -> None:
        """Recompute the slots a kernel change on ``changed_key`` can affect
        (see Note [Which slots a registration changes]) and publish them."""
        self.refresh(_slots_changed_by(changed_key))

    def fallback_changed(self, key: DispatchKey) -> None:
        """The backend fallback of ``key`` changed: only its own slot can change
        (an entry out of use only notes it: see Note [Out-of-use entries are
        refreshed when used again])."""
        if self.in_use():
            self.refresh((key,))
        else:
            self._stale = True

    def refresh(self, keys: Iterable[DispatchKey]) -> None:
        """Recompute the slots of ``keys`` and publish the plan, or, while the
        dispatcher defers (see Note [Deferred refreshes] in registry.py), leave
        that to the end of the deferral."""
        deferred = self._dispatcher.deferred
        if deferred is not None:
            deferred.setdefault(self, set()).update(keys)
            return
        if self.kernels:
            for key in keys:
                self._update_slot(key)
        else:
            # Every slot is its backend fallback: the dispatcher has them.
            self._take_fallback_table()
        self._publish()

    def _take_fallback_table(self) -> None:
        dispatcher = self._dispatcher
        self._table[:] = dispatcher.fallback_table
        self._lines[:] = dispatcher.fallback_lines
        self._masks[:] = dispatcher.fallback_masks
        self._stale = False

    def _update_slot(self, key: DispatchKey) -> None:
        annotated, tag = self.compute_entry(key)
        slot = SLOT_OF_KEY[key]
        dispatcher = self._dispatcher
        if annotated is None or tag == BACKEND_FALLBACK:
            # The dispatcher's entry for the slot, made when the fallback was registered.
            kernel = dispatcher.fallback_table[slot]
            line = dispatcher.fallback_lines[slot]
        else:
            kernel = annotated.function(dispatcher.engine)
            line = table_line(key, annotated, tag)
        self._table[slot] = kernel
        self._lines[slot] = line
        update_fallthrough_masks(self._masks, key, kernel.is_fallthrough())

    # -- the call plan -------------------------------------------------------------
    def _plan(self) -> Any:
        """Compile what a call needs (see Note [One plan per operator] in
        dispatcher/_engine/core.py); raises, changing nothing, if it cannot."""
        make_plan = self._dispatcher.engine.CallPlan
        parts = self._schema_parts
        if parts is None:
            return make_plan(self.name, None, tuple(self._table), tuple(self._masks), (), -1, None, None, None,
                        self.report_error)
        return make_plan(self.name, parts.schema, tuple(self._table), tuple(self._masks), parts.dispatch_args,
                    parts.positional_span, parts.boxer, parts.schema.bind, parts.schema.split_call,
                    self.report_error)

    def _publish(self) -> None:
        if self._handle is not None:
            self._handle._publish(self._plan())

    def set_schema(self, schema: Optional[RegisteredSchema]) -> None:
        """Define (or, with None, undefine) the operator: all or nothing."""
        parts = None if schema is None else _schema_plan_parts(schema.schema, self._dispatcher.engine)
        if self._stale:
            self._take_fallback_table()
        previous = self.schema, self._schema_parts
        self.schema, self._schema_parts = schema, parts
        if self._dispatcher.deferred is not None:
            self.refresh(())  # publish at the end of the deferral
            return
        try:
            plan = None if self._handle is None else self._plan()
        except BaseException:
            self.schema, self._schema_parts = previous
            raise
        if plan is not None:
            self._handle._publish(plan)

    # -- registration --------------------------------------------------------------
    def register_kernel(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        if self._stale:
            self._take_fallback_table()
        self.kernels.setdefault(key, []).insert(0, kernel)
        self.refresh_slots(key)

    def deregister_kernel(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        kernels = self.kernels[key]
        # By identity (AnnotatedKernel's equality): the same function
        # registered twice is two registrations.
        kernels.remove(kernel)
        if not kernels:
            del self.kernels[key]
        self.refresh_slots(key)

    # -- debugging ----------------------------------------------------------------
    def dump_state(self) -> str:
        """c10's OperatorEntry::dumpState (torch._C._dispatch_dump)."""
        lines = [f"name: {self.name}"]
        if self.schema is not None:
            s = self.schema
            lines.append(f"schema: {s.schema}")
            lines.append(f"debug: {s.debug}")
            default = " (default)" if s.alias_analysis_is_default else ""
            lines.append(f"alias analysis kind: {s.alias_analysis}{default}")
        else:
            lines.append("schema: (none)")
        for key in sorted(self.kernels):
            desc = key.name + ("[alias]" if is_alias_key(key) else "")
            for i, kernel in enumerate(self.kernels[key]):
                lines.append(kernel.dump_line(desc, inactive=i > 0))
        return "\n".join(lines) + "\n"

    def dump_computed_table(self) -> str:
        """c10's OperatorEntry::dumpComputedTable (torch._C._dispatch_dump_table)."""
        return "".join(self._lines)

    def list_all_dispatch_keys(self) -> str:
        """The runtime keys with a valid entry, as c10's listAllDispatchKeys prints them."""
        keys = [k.name for k in RUNTIME_SLOT_KEYS[1:] if self._table[SLOT_OF_KEY[k]].is_valid()]
        return "[" + ", ".join(keys) + "]"

    def report_error(self, kind: KernelKind, key: DispatchKey) -> None:
        """Raise the error of calling a missing or ambiguous entry (c10's reportError)."""
        if kind == KernelKind.AMBIGUOUS_AUTOGRAD_OTHER:
            raise RuntimeError(
                f"{self.name} has kernels registered to both CompositeImplicitAutograd and a backend mapped "
                "to AutogradOther. This makes the backend kernel unreachable; the dispatcher will always "
                "prefer the CompositeImplicitAutograd lowering (see Note: [Ambiguity in AutogradOther kernel]). "
                "If you want to override CompositeImplicitAutograd, please open an issue to request a "
                "dedicated Autograd dispatch key for the backend.\nIf you only want to run inference instead "
                "of training, in C++, add `c10::InferenceMode mode;` before model.forward(). Note this guard "
                "is only available in C++ but not Python at present.\nCanonical state\n~~~~~~~~~~~\n"
                f"{self.dump_state()}\n\n"
            )
        if key == K.Undefined:
            raise NotImplementedError(
                "There were no tensor arguments to this function (e.g., you passed an empty list of "
                f"Tensors), but no fallback function is registered for schema {self.name}.  This usually "
                "means that this function requires a non-empty list of Tensors, or that you (the operator "
                "writer) forgot to register a fallback function.  Available functions are "
                f"{self.list_all_dispatch_keys()}.\n\n{self.dump_computed_table()}"
            )
        raise NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{key.name}' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build). If you are a Facebook employee using "
            "PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible resolutions. "
            f"'{self.name}' is only available for these backends: {self.list_all_dispatch_keys()}."
            f"\n\n{self.dump_computed_table()}"
        )

    def check_invariants(self) -> None:
        """The stored table, lines and masks equal a recomputation from scratch
        (a stale entry's once it is back in use: see Note [Out-of-use entries
        are refreshed when used again])."""
        if self._stale:
            if self.in_use():
                raise AssertionError(f"{self.name}: in use but stale")
            return
        masks = [FULL_REPR] * NUM_BACKENDS
        for key in RUNTIME_SLOT_KEYS:
            annotated, tag = self.compute_entry(key)
            expected = self._dispatcher.function_of(annotated)
            slot = SLOT_OF_KEY[key]
            actual = self._table[slot]
            if actual is not expected:
                raise AssertionError(
                    f"{self.name}: table entry for {key.name} is {actual!r}, recomputation gives {expected!r}"
                )
            if self._lines[slot] != table_line(key, annotated, tag):
                raise AssertionError(f"{self.name}: the dump line of {key.name} is out of date")
            update_fallthrough_masks(masks, key, expected.is_fallthrough())
        if masks != self._masks:
            raise AssertionError(f"{self.name}: fallthrough masks are out of date")
        for key, kernels in self.kernels.items():
            if not kernels:
                raise AssertionError(f"{self.name}: empty kernel list for {key.name}")


def table_line(key: DispatchKey, annotated: Optional[AnnotatedKernel], tag: str) -> str:
    """The line dump_table prints for slot ``key`` holding ``annotated``,
    chosen as ``tag`` (see compute_entry); "" for a missing entry."""
    if annotated is None:
        return ""
    prefix = "fallthrough " if annotated.kernel.is_fallthrough() else ""
    return f"{key.name}: {prefix}{annotated.debug} [{tag}]\n"


class _SchemaParts(Frozen):
    """What a call plan takes from a def, computed once per def."""

    __slots__ = _fields = ("schema", "dispatch_args", "positional_span", "boxer")

    schema: FunctionSchema
    dispatch_args: tuple[tuple[int, str, int, bool], ...]
    positional_span: int
    boxer: Any

    def __init__(self, schema: FunctionSchema, dispatch_args: tuple[tuple[int, str, int, bool], ...],
                 positional_span: int, boxer: Any) -> None:
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "dispatch_args", dispatch_args)
        object.__setattr__(self, "positional_span", positional_span)
        object.__setattr__(self, "boxer", boxer)


def _schema_plan_parts(schema: FunctionSchema, engine: Any) -> _SchemaParts:
    dispatch_args = tuple(
        # A required tensor argument that is missing is the caller's mistake,
        # reported as Python would (through schema.bind).
        (a.position, a.name, int(a.kind), not schema.arguments[a.position].has_default)
        for a in schema.dispatch_args
    )
    # When every dispatch argument is a required Tensor that can be passed
    # positionally: how many positional arguments a call needs to pass them
    # all (the compiled engine's fastest extraction loop); -1 otherwise.
    span = 0
    for position, _name, kind, required in dispatch_args:
        if kind != TensorArgKind.TENSOR or not required or schema.arguments[position].kwarg_only:
            span = -1
            break
        span = max(span, position + 1)
    return _SchemaParts(schema, dispatch_args, span, make_boxer(schema, engine))


def _mask_update(key: DispatchKey) -> tuple[int, int, range]:
    # (bits to set, functionality bits to clear, backends whose mask changes)
    bits = KEY_REPRS[key]
    if is_per_backend_functionality_key(to_functionality_key(key)):
        backend = int(to_backend_component(key))
        return bits, bits & ~FULL_BACKEND_MASK, range(backend - 1, backend)
    return bits, bits & ~FULL_BACKEND_MASK, range(NUM_BACKENDS)


# The Undefined slot has no bit to mask.
_MASK_UPDATES: dict[DispatchKey, tuple[int, int, range]] = {
    k: _mask_update(k) for k in RUNTIME_SLOT_KEYS if k != K.Undefined
}


def update_fallthrough_masks(masks: list[int], key: DispatchKey, fallthrough: bool) -> None:
    """c10's DispatchKeyExtractor::setOperatorHasFallthroughForKey, per backend.

    See Note [Per-backend fallthrough masks].  Only functionality bits are
    ever cleared (Note [Removing keys keeps the backend bits] in
    dispatcher/_engine/core.py).
    """
    update = _MASK_UPDATES.get(key)
    if update is None:
        return
    set_bits, clear_bits, backends = update
    for i in backends:
        masks[i] = masks[i] & ~clear_bits if fallthrough else masks[i] | set_bits
