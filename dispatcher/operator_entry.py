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

import threading
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any, Callable, NamedTuple, Optional, Protocol, Union

from . import keysets
from ._frozen import Frozen, slot_setters
from ._kernel_kind import DUMP_STATE, KernelKind
from ._layout import FULL_BACKEND_MASK, FULL_REPR, KEY_REPRS, RUNTIME_SLOT_KEYS, SLOT_OF_KEY
from .kernel import AMBIGUOUS_AUTOGRAD_OTHER, AnnotatedKernel, signature_text
from .keys import (
    NUM_BACKENDS,
    BackendComponent,
    DispatchKey,
    is_alias_key,
    is_per_backend_functionality_key,
    parse_dispatch_key,
    to_backend_component,
    to_functionality_key,
)
from . import publish
from ._engine.contract import Boxer, CallPlan, CallShape, Engine, KernelFunction, OperatorHandle
from .call_checks import checked_calls_enabled
from .schema import Argument, FunctionSchema, ListType, Return, Type

class EntryOwner(Protocol):
    """What an OperatorEntry reads of the registry that owns it (registry.py's
    Dispatcher): a Protocol, so that the entry needs nothing above it."""

    engine: Engine
    undefined_plan: CallPlan
    fallback_table: tuple[KernelFunction, ...]
    fallback_masks: tuple[int, ...]
    fallback_lines: tuple[str, ...]
    deferred: Optional["Deferred"]
    layout_steps: dict[tuple[Optional["TableLayout"], DispatchKey, bool], "TableLayout"]

    @property
    def lock(self) -> threading.RLock: ...

    def backend_fallback(self, key: DispatchKey) -> Optional[AnnotatedKernel]: ...

    def function_of(self, kernel: Optional[AnnotatedKernel]) -> KernelFunction: ...

    def layout(self, kernels: Mapping[DispatchKey, tuple[AnnotatedKernel, ...]]) -> "TableLayout": ...

K = DispatchKey

_CIA = K.CompositeImplicitAutograd
_CIA_NESTED = K.CompositeImplicitAutogradNestedTensor
_CEA = K.CompositeExplicitAutograd
_CEANF = K.CompositeExplicitAutogradNonFunctional
_AUTOGRAD = K.Autograd
_BATCHED = K.FuncTorchBatchedDecomposition

# compute_entry's tag for a slot that takes its backend fallback.
BACKEND_FALLBACK = "backend fallback"

class TableEntry(NamedTuple):
    """One runtime slot of an operator's computed table (see computed_table)."""

    key: DispatchKey  # the slot's runtime key
    kernel: Optional[AnnotatedKernel]  # None: missing
    tag: str  # as dump_table prints it: "kernel", "math kernel", ..., BACKEND_FALLBACK; "missing"
    # The key whose registration fills the slot: the slot's own key or an
    # alias key; None for a backend fallback, a missing entry and the
    # ambiguous AutogradOther entry, which no registration of the operator holds.
    origin: Optional[DispatchKey]


class Rule(Frozen):
    """Which step of PyTorch's precedence (c10's computeDispatchTableEntryWithDebug)
    chose a slot's entry: ``compute_entry`` returns one with the entry, so the
    table and ``dispatcher.explain`` give the same reason.  ``tag`` is what
    dump_table prints after the kernel; ``why`` says it as a sentence, with
    ``{key}`` standing for the slot's key; ``alias``, the alias key whose
    kernel the rule gives the slot (None: the slot's own kernel, a fallback
    or no kernel)."""

    __slots__ = _fields = ("name", "tag", "why", "alias")

    name: str
    tag: str
    why: str
    alias: Optional[DispatchKey]

    def __init__(self, name: str, tag: str, why: str, alias: Optional[DispatchKey] = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "tag", tag)
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "alias", alias)


# Said of an autograd slot when a CompositeImplicitAutograd kernel exists but
# its backends (or CompositeExplicitAutograd) have a kernel of their own.
_MATH_PASSED_OVER = (
    "the CompositeImplicitAutograd kernel does not serve {key}: a backend {key} guards (or "
    "CompositeExplicitAutograd) has a kernel of its own, which autograd must not bypass"
)
_NO_EXPLICIT = "no kernel is registered to {key}, CompositeExplicitAutogradNonFunctional or CompositeExplicitAutograd"

# In precedence order; the *_OVER_MATH rules are the ones that can follow a
# CompositeImplicitAutograd kernel passed over at an autograd slot.
DIRECT = Rule("direct", "kernel", "a kernel registered to {key} itself: a direct registration beats every alias key")
CEANF = Rule(
    "ceanf", "default backend kernel",
    "no kernel is registered to {key}; it is one of CompositeExplicitAutogradNonFunctional's keys, "
    "the first alias key in precedence", _CEANF,
)
CEA = Rule(
    "cea", "default backend kernel",
    "no kernel is registered to {key} or CompositeExplicitAutogradNonFunctional; "
    "it is one of CompositeExplicitAutograd's keys", _CEA,
)
CIA_NESTED = Rule(
    "cia_nested", "nested kernel",
    f"{_NO_EXPLICIT}; it is one of CompositeImplicitAutogradNestedTensor's keys, which comes before "
    "CompositeImplicitAutograd", _CIA_NESTED,
)
CIA = Rule("cia", "math kernel", f"{_NO_EXPLICIT}; it is one of CompositeImplicitAutograd's keys", _CIA)
CIA_AUTOGRAD = Rule(
    "cia_autograd", "math kernel",
    f"{_NO_EXPLICIT}; it is one of CompositeImplicitAutograd's keys, and the autograd key {{key}} takes the "
    "composite because no backend it guards has a kernel of its own (autograd comes from the decomposition)", _CIA,
)
AUTOGRAD = Rule(
    "autograd", "autograd kernel",
    "no kernel is registered to {key} or to a composite alias key covering it; it is one of the Autograd "
    "alias key's keys", _AUTOGRAD,
)
AUTOGRAD_OVER_MATH = Rule(
    "autograd_over_math", "autograd kernel",
    f"{_MATH_PASSED_OVER}; {{key}} is one of the Autograd alias key's keys", _AUTOGRAD,
)
BATCHED = Rule(
    "batched", "batched kernel",
    "no kernel is registered to {key}; it is FuncTorchBatchedDecomposition's key", _BATCHED,
)
FALLBACK = Rule(
    "fallback", BACKEND_FALLBACK,
    "this operator has no kernel for {key}, directly or by an alias key; the backend fallback registered "
    "for {key} serves every operator without one",
)
FALLBACK_OVER_MATH = Rule(
    "fallback_over_math", BACKEND_FALLBACK,
    f"{_MATH_PASSED_OVER}; nothing else covers {{key}}, so its backend fallback serves it",
)
MISSING = Rule(
    "missing", "missing",
    "no kernel is registered to {key} or to an alias key covering it, and {key} has no backend fallback",
)
MISSING_OVER_MATH = Rule(
    "missing_over_math", "missing",
    f"{_MATH_PASSED_OVER}; no Autograd kernel covers {{key}} and it has no backend fallback",
)
AMBIGUOUS = Rule(
    "ambiguous", "ambiguous autogradother",
    "AutogradOther serves many backends, and this operator has a CompositeImplicitAutograd kernel and a "
    "kernel for one of AutogradOther's backends: c10 cannot tell which autograd should use "
    "(Note [Ambiguity in AutogradOther kernel])",
)
RULES: tuple[Rule, ...] = (
    DIRECT, CEANF, CEA, CIA_NESTED, CIA, CIA_AUTOGRAD, AUTOGRAD, AUTOGRAD_OVER_MATH, BATCHED, FALLBACK,
    FALLBACK_OVER_MATH, MISSING, MISSING_OVER_MATH, AMBIGUOUS,
)


class RegisteredSchema(Frozen):
    """A def(): the schema, where it was registered, its alias analysis kind,
    its operator tags (names of ``dispatcher.Tag`` members)."""

    __slots__ = _fields = ("schema", "debug", "alias_analysis", "alias_analysis_is_default", "tags")

    schema: FunctionSchema
    debug: str
    alias_analysis: str
    alias_analysis_is_default: bool
    tags: tuple[str, ...]

    def __init__(self, schema: FunctionSchema, debug: str, alias_analysis: str = "FROM_SCHEMA",
                 alias_analysis_is_default: bool = False, tags: tuple[str, ...] = ()) -> None:
        _set_schema(self, schema)
        _set_debug(self, debug)
        _set_alias_analysis(self, alias_analysis)
        _set_alias_analysis_is_default(self, alias_analysis_is_default)
        _set_tags(self, tags)


# One per def: see slot_setters.
_set_schema, _set_debug, _set_alias_analysis, _set_alias_analysis_is_default, _set_tags = slot_setters(
    RegisteredSchema, "schema", "debug", "alias_analysis", "alias_analysis_is_default", "tags"
)


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


class KeyFacts:
    """What registration asks about a dispatch key, worked out once per key
    (``_facts``): its names and slot, what compute_entry reads about it, and
    how the kernel in its slot sets the fallthrough masks."""

    __slots__ = ("key", "name", "dump_name", "slot", "in_ceanf", "in_cea", "in_cia_nested", "in_cia",
                 "in_autograd", "in_batched", "backend_bits", "mask_update")

    key: DispatchKey
    name: str
    dump_name: str  # as dump_state prints it: an alias key marked [alias]
    slot: Optional[int]  # the key's runtime slot; None for a key without one (Dense, alias keys)
    in_ceanf: bool
    in_cea: bool
    in_cia_nested: bool
    in_cia: bool
    in_autograd: bool
    in_batched: bool
    backend_bits: int  # raw get_backend_key_set_from_autograd(key)
    # (bits to set, functionality bits to clear, backends whose mask changes):
    # see update_masks.  None without a slot, and for Undefined, which has no bit to mask.
    mask_update: Optional[tuple[int, int, range]]

    def __init__(self, key: DispatchKey) -> None:
        undefined = key == K.Undefined
        self.key = key
        self.name = key.name
        self.dump_name = _dump_name(key)
        self.slot = SLOT_OF_KEY.get(key)
        # Note [Undefined in dispatchTable_]: the composite kernels also
        # serve Undefined, which no alias key set can hold.
        self.in_ceanf = undefined or keysets.is_included_in_alias(key, _CEANF)
        self.in_cea = undefined or keysets.is_included_in_alias(key, _CEA)
        self.in_cia_nested = not undefined and keysets.is_included_in_alias(key, _CIA_NESTED)
        self.in_cia = undefined or keysets.is_included_in_alias(key, _CIA)
        self.in_autograd = keysets.is_included_in_alias(key, _AUTOGRAD)
        self.in_batched = keysets.is_included_in_alias(key, _BATCHED)
        self.backend_bits = keysets.get_backend_key_set_from_autograd(key).raw_repr()
        self.mask_update = None if self.slot is None or undefined else _mask_update(key)

    def update_masks(self, masks: list[int], fallthrough: bool) -> None:
        """c10's DispatchKeyExtractor::setOperatorHasFallthroughForKey, per
        backend: the key's slot now holds a ``fallthrough`` kernel or not.

        See Note [Per-backend fallthrough masks].  Only functionality bits are
        ever cleared (Note [Removing keys keeps the backend bits] in
        dispatcher/_engine/core.py).
        """
        update = self.mask_update
        if update is not None:
            set_bits, clear_bits, backends = update
            for i in backends:
                masks[i] = masks[i] & ~clear_bits if fallthrough else masks[i] | set_bits


def _mask_update(key: DispatchKey) -> tuple[int, int, range]:
    bits = KEY_REPRS[key]
    if is_per_backend_functionality_key(to_functionality_key(key)):
        backend = int(to_backend_component(key))
        return bits, bits & ~FULL_BACKEND_MASK, range(backend - 1, backend)
    return bits, bits & ~FULL_BACKEND_MASK, range(NUM_BACKENDS)


# Filled as keys are first asked about: computing every key's facts at
# import took longer than the rest of the import.
_FACTS: dict[DispatchKey, KeyFacts] = {}


def _dump_name(key: DispatchKey) -> str:
    """A key as dump_state prints it: an alias key marked [alias]."""
    return f"{key.name}[alias]" if is_alias_key(key) else key.name


# Per key, the heads of its kernels' lines in dump_state: the active
# kernel's and the others' ("(inactive)"), made once (a dump is timed beside torch's).
_DUMP_HEADS = {key: (f"{_dump_name(key)}: ", f"{_dump_name(key)} (inactive): ") for key in DispatchKey}


def _facts(key: DispatchKey) -> KeyFacts:
    facts = _FACTS.get(key)
    if facts is None:
        facts = _FACTS[key] = KeyFacts(key)
    return facts


_AUTOGRADOTHER_BACKEND_BITS = keysets.AUTOGRADOTHER_BACKENDS.raw_repr()


def _has_kernel_in(present: Collection[DispatchKey], bits: int) -> bool:
    """c10's hasKernelForAnyDispatchKey on a raw keyset: whether a key of
    ``present`` (the keys with kernels) is in ``bits``.  Alias keys have no
    bits (repr 0) and so never count, as c10 requires."""
    for key in present:
        r = KEY_REPRS[key]
        if r and r & bits == r:
            return True
    return False


def choose_origin(present: Collection[DispatchKey], slot: KeyFacts) -> tuple[Optional[DispatchKey], Rule]:
    """The precedence of c10's computeDispatchTableEntryWithDebug for the slot
    of ``slot``'s key, given only which keys have kernels (``present``): the
    key whose active kernel fills the slot (the slot's own or an alias key)
    and the Rule that chose it; None with AMBIGUOUS for the ambiguous
    AutogradOther entry, and None with FALLBACK or FALLBACK_OVER_MATH when
    no registration of the operator covers the slot (its backend fallback,
    or nothing, serves it: the entry's compute_entry tells which)."""
    key = slot.key
    if key in present:
        return key, DIRECT

    # Composite kernels serve Undefined too: a call with no tensor arguments
    # (and no TLS keys) lands there.
    if slot.in_ceanf and _CEANF in present:
        return _CEANF, CEANF
    if slot.in_cea and _CEA in present:
        return _CEA, CEA

    # Unlike the math kernel below, c10 gives the nested kernel no
    # has_backend_kernel test: a NestedTensorCPU kernel does not keep
    # it from AutogradNestedTensor.
    if slot.in_cia_nested and _CIA_NESTED in present:
        return _CIA_NESTED, CIA_NESTED

    math_passed_over = False
    if slot.in_cia and _CIA in present:
        # Note [Ambiguity in AutogradOther kernel]: AutogradOther serves
        # many backends; with a kernel for one of them, c10 cannot tell
        # whether the composite kernel or autograd-of-that-kernel is
        # meant, and makes calling it an error.
        if key == K.AutogradOther and _has_kernel_in(present, _AUTOGRADOTHER_BACKEND_BITS):
            return None, AMBIGUOUS
        # An autograd key only takes a composite-implicit kernel when its
        # backends have no kernel of their own (else autograd would bypass it).
        has_backend_kernel = _CEA in present or (slot.backend_bits != 0 and _has_kernel_in(present, slot.backend_bits))
        if not has_backend_kernel:
            return _CIA, CIA_AUTOGRAD if slot.in_autograd else CIA
        math_passed_over = True

    if slot.in_autograd and _AUTOGRAD in present:
        return _AUTOGRAD, AUTOGRAD_OVER_MATH if math_passed_over else AUTOGRAD
    if slot.in_batched and _BATCHED in present:
        return _BATCHED, BATCHED
    return None, FALLBACK_OVER_MATH if math_passed_over else FALLBACK


# Note [Table layouts]
# Which registration fills each slot of an operator's table depends only on
# which keys have kernels (choose_origin), and its fallthrough masks only on
# that, on which of those kernels are fallthrough and on the registry's
# fallbacks.  A TableLayout is that worked out once for all 137 slots: where
# each slot takes its entry from, as runs of consecutive slots filled by
# the same kernel, the dump lines' facts, the masks.  Filling a table is
# then a copy of the registry's fallback cells with one slice assignment
# per run, whatever key a registration is on: an alias key's 50-100 slots
# (a few runs: the keys it serves are mostly neighbours) cost about what a
# backend key's one does.  The
# registry keeps the layouts it has made (Dispatcher.layout), keyed by the
# keys with kernels and their fallthrough flags, and forgets them all when
# a fallback changes the masks.  Operators whose kernels sit on the same
# keys, as most of a library's do, share one.  Every slot is refilled on
# every change, so the table always equals a recomputation from scratch
# whatever the order of registrations (c10 refreshes a smaller set of slots
# and can leave its stored table briefly out of step with dump_table).
class TableLayout:
    """The table of an operator whose kernels sit on ``present`` (with those
    of ``fallthrough`` fallthrough), for a registry whose fallbacks are
    fallthrough in the slots ``fallthrough_fallbacks`` says and whose
    kernel-less masks are ``fallback_masks``: see Note [Table layouts]."""

    __slots__ = ("origins", "runs", "ambiguous", "lines", "dump_parts", "masks")

    origins: tuple[DispatchKey, ...]  # the keys whose active kernels the table holds, in the order runs count them
    # (start, stop, n): slots start..stop-1 hold the entry of origins[n]
    # (n == len(origins): the ambiguous entry); the other slots their fallback cells.
    runs: tuple[tuple[int, int, int], ...]
    ambiguous: bool  # whether a run holds the ambiguous entry
    # Per slot not filled by its fallback: (slot index, key name, origin key
    # -- None for the ambiguous entry --, Rule).  See Note [Stored table lines].
    lines: tuple[tuple[int, str, Optional[DispatchKey], Rule], ...]
    # The same as table_line's parts: (slot index, "Key: ", n as in runs,
    # " [tag]\n"), the kernel's text going between (dump_computed_table).
    dump_parts: tuple[tuple[int, str, int, str], ...]
    masks: tuple[int, ...]

    def __init__(self, present: Collection[DispatchKey], fallthrough: Collection[DispatchKey],
                 fallthrough_fallbacks: Sequence[bool], fallback_masks: Sequence[int]) -> None:
        origins = tuple(present)
        position = {key: i for i, key in enumerate(origins)}
        ambiguous = len(origins)
        picks: list[Optional[int]] = [None] * len(RUNTIME_SLOT_KEYS)  # per slot: its entry's n, None for its cell
        lines = []
        masks = list(fallback_masks)
        for index, key in enumerate(RUNTIME_SLOT_KEYS):
            slot = _facts(key)
            origin, rule = choose_origin(present, slot)
            if origin is not None:
                picks[index] = position[origin]
                is_fallthrough = origin in fallthrough
            elif rule is AMBIGUOUS:
                picks[index] = ambiguous
                is_fallthrough = False
            else:
                continue  # the fallback cell: the masks start as the fallbacks make them
            lines.append((index, slot.name, origin, rule))
            if is_fallthrough != fallthrough_fallbacks[index]:
                slot.update_masks(masks, is_fallthrough)
        self.origins = origins
        self.runs = tuple((start, stop, n) for start, stop, n in _runs(picks) if n is not None)
        self.ambiguous = ambiguous in picks
        self.dump_parts = tuple((index, f"{name}: ", ambiguous if origin is None else position[origin], f" [{rule.tag}]\n")
                                for index, name, origin, rule in lines)
        self.lines = tuple(lines)
        self.masks = tuple(masks)


def _runs(picks: list[Optional[int]]) -> Iterator[tuple[int, int, Optional[int]]]:
    """(start, stop, value) of each run of equal values in ``picks``."""
    start = 0
    for value, run in groupby(picks):
        stop = start + sum(1 for _ in run)
        yield start, stop, value
        start = stop


def layout_signature(kernels: Mapping[DispatchKey, tuple[AnnotatedKernel, ...]]) -> tuple[tuple[DispatchKey, bool], ...]:
    """What a TableLayout depends on of an operator's kernels: each key with
    kernels, and whether its active kernel is a fallthrough."""
    return tuple([(key, registered[0].kernel.kind is _FALLTHROUGH) for key, registered in kernels.items()])


# Read once: KernelKind.FALLTHROUGH goes through the enum class's __getattr__ hook.
_FALLTHROUGH = KernelKind.FALLTHROUGH


# A deferral's operators, each to refresh once at its end (Note [Deferred
# refreshes] in registry.py): a dict as an ordered set.
Deferred = dict["OperatorEntry", None]


class OperatorEntry:
    """Registrations of one operator (by qualified name) and its runtime table."""

    def __init__(self, name: str, dispatcher: EntryOwner) -> None:
        self.name = name
        self.schema: Optional[RegisteredSchema] = None
        # Newest first; the first kernel of a key is the active one.  Replaced
        # whole, never changed in place (Note [Entries are read as snapshots]).
        self.kernels: dict[DispatchKey, tuple[AnnotatedKernel, ...]] = {}
        self._dispatcher = dispatcher
        # Note [Entries are read as snapshots]
        # Registration runs under the dispatcher's lock; everything else that
        # reads an entry -- the error of a call that finds no kernel, dumps,
        # explain, the has_kernel lookups -- takes no lock and may run while
        # another thread registers.  So what they read is never changed in
        # place: kernels (a dict of tuples), the table (a tuple), the stored
        # lines (a dict) are each replaced whole by a registration, and a
        # reader that takes one of them once reads one consistent state.
        #
        # Note [Shared fallback tables]
        # With no kernels, every slot is its backend fallback: an entry without
        # kernels holds the dispatcher's tuple of its fallback cells (Note
        # [Fallback cells] in dispatcher/_engine/core.py), which costs nothing
        # to take.  Either way the table is the tuple the plan holds.
        self._table: tuple[KernelFunction, ...] = dispatcher.fallback_table
        # Note [Stored table lines]
        # For each slot whose entry is not its backend fallback, what
        # dump_table prints for it: the key's name, the kernel compute_entry
        # chose and its tag (see table_line).  The table's layout has them
        # (Note [Table layouts]), with the kernels it was filled from: both
        # are kept here, as one snapshot (None while there are no kernels),
        # and _stored_lines reads them.  Dumping formats these (and takes the
        # dispatcher's fallback_lines for the other slots) instead of
        # recomputing every slot; registering formats no line.
        self._filled: Optional[tuple[TableLayout, Mapping[DispatchKey, tuple[AnnotatedKernel, ...]]]] = None
        # Note [Per-backend fallthrough masks]
        # c10 keeps, per backend, the keys that are not fallthrough for this
        # operator; a call ANDs its keyset with the mask of its highest
        # backend, so fallthrough keys are never visited.  A fallthrough on
        # a per-backend key (AutogradCPU) only affects its backend's mask; one
        # on another key (Python) affects them all.
        self._masks: tuple[int, ...] = dispatcher.fallback_masks
        # What a plan takes from the def (made once per def: see _call_shape),
        # and what a checked plan (dispatcher/call_checks.py) takes instead,
        # with its checking Boxer, made when first needed.
        self._shape: CallShape = dispatcher.undefined_plan.shape
        self._checked_shape: Optional[tuple[CallShape, Boxer]] = None
        self._handle: Optional[OperatorHandle] = None
        # torch._C._dispatch_set_report_error_callback's: see report_error.
        self._report_error_callback: Optional[Callable[[str], object]] = None

    @property
    def registry(self) -> EntryOwner:
        """The registry this operator belongs to."""
        return self._dispatcher

    @property
    def handle(self) -> Any:  # the engine's OperatorHandle (Any: users call it)
        """The engine OperatorHandle that calls go through, made (with a plan
        of the current table) when first asked for or by the def (whose
        packet asks for it at once): until then there is no plan to publish,
        so an entry that registration creates and updates before anything
        looks its handle up compiles one plan, not one per change."""
        handle = self._handle
        if handle is None:
            with self._dispatcher.lock:
                handle = self._handle
                if handle is None:
                    handle = self._new_handle(self._plan())
        return handle

    def _new_handle(self, plan: CallPlan) -> OperatorHandle:
        # The owner: OpOverload.has_kernel_for_dispatch_key asks this entry.
        handle = self._handle = publish.operator_handle(self._dispatcher.engine, self.name, plan, self)
        return handle

    # -- queries ---------------------------------------------------------------
    def kernel_for(self, key: DispatchKey) -> Optional[AnnotatedKernel]:
        kernels = self.kernels.get(key)
        return kernels[0] if kernels else None

    def has_kernel_for_dispatch_key(self, key: Union[DispatchKey, str]) -> bool:
        return bool(self.kernels.get(parse_dispatch_key(key) if isinstance(key, str) else key))

    def has_kernel_for_any_dispatch_key(self, ks: Any) -> bool:
        return _has_kernel_in(self.kernels, ks.raw_repr())

    def in_use(self) -> bool:
        """Defined or holding kernels; see Note [An entry goes with its last registration] in registry.py."""
        return self.schema is not None or bool(self.kernels)

    def computed_kernel(self, key: DispatchKey) -> KernelFunction:
        return self._table[SLOT_OF_KEY[key]]

    def non_fallthrough_mask(self, backend: BackendComponent = BackendComponent.CPUBit) -> Any:
        index = max(int(backend) - 1, 0)
        return self._dispatcher.engine.DispatchKeySet.from_raw_repr(self._masks[index])

    # -- the precedence ------------------------------------------------------------
    def compute_entry(self, key: DispatchKey) -> tuple[Optional[AnnotatedKernel], Rule]:
        """The kernel for runtime slot ``key`` and the Rule that chose it
        (c10's computeDispatchTableEntryWithDebug); None and MISSING (or
        MISSING_OVER_MATH) if there is none."""
        # A key without a slot of its own (Dense) is computed too, as c10
        # does for _dispatch_get_computed_kernel_for_dispatch_key's debug text.
        return self._compute_entry(_facts(key))

    def _compute_entry(self, slot: KeyFacts) -> tuple[Optional[AnnotatedKernel], Rule]:
        kernels = self.kernels
        origin, rule = choose_origin(kernels, slot)
        if origin is not None:
            return kernels[origin][0], rule
        if rule is AMBIGUOUS:
            return AMBIGUOUS_AUTOGRAD_OTHER, rule
        fallback = self._dispatcher.backend_fallback(slot.key)
        if fallback is not None:
            return fallback, rule
        return None, MISSING_OVER_MATH if rule is FALLBACK_OVER_MATH else MISSING

    # -- updates -------------------------------------------------------------------
    def refresh(self, layout: Optional[TableLayout] = None) -> None:
        """Fill the table from its layout (Note [Table layouts]; ``layout`` if
        the caller knows it, see Note [Layout steps]) and publish the plan,
        or, while the dispatcher defers (see Note [Deferred refreshes] in
        registry.py), leave that to the end of the deferral."""
        dispatcher = self._dispatcher
        deferred = dispatcher.deferred
        if deferred is not None:
            deferred[self] = None
            return
        kernels = self.kernels
        if kernels:
            if layout is None:
                layout = dispatcher.layout(kernels)
            engine = dispatcher.engine
            entries = []
            for key in layout.origins:  # a loop: a comprehension is a call of its own, for one or two keys
                entries.append(kernels[key][0].function(engine))
            if layout.ambiguous:
                entries.append(AMBIGUOUS_AUTOGRAD_OTHER.function(engine))
            # Note [Entries are read as snapshots]
            self._table, self._filled, self._masks = (engine.filled_table(dispatcher.fallback_table, layout.runs, entries),
                                                      (layout, kernels), layout.masks)
        else:
            # Every slot is its backend fallback: the dispatcher has them.
            self._table, self._filled, self._masks = dispatcher.fallback_table, None, dispatcher.fallback_masks
        handle = self._handle
        if handle is not None:
            if self.schema is not None and not checked_calls_enabled():  # _plan's usual case, without its call
                handle._publish(publish.call_plan(dispatcher.engine, self.name, self._shape, self._table, self._masks,
                                                  self.report_error))
            else:
                handle._publish(self._plan())

    # -- the call plan -------------------------------------------------------------
    def _plan(self) -> CallPlan:
        """Compile what a call needs (see Note [One plan per operator] in
        dispatcher/_engine/core.py); raises, changing nothing, if it cannot."""
        schema = self.schema
        if schema is None:
            # Note [One plan while undefined]
            # Every call path reads a plan's schema first and raises "not
            # defined" (naming the handle) when it has none, so the plan of an
            # undefined operator needs neither the current table nor the
            # operator: the dispatcher's one undefined_plan serves every
            # undefined operator (impls before the def, after a destroy), and
            # removing a def compiles no plan.
            return self._dispatcher.undefined_plan
        engine = self._dispatcher.engine
        if checked_calls_enabled():
            return self._checked_plan(schema, engine)
        return publish.call_plan(engine, self.name, self._shape, self._table, self._masks, self.report_error)

    def _checked_plan(self, schema: RegisteredSchema, engine: Engine) -> CallPlan:
        """The plan while calls are checked (see dispatcher/call_checks.py):
        plain kernels wrapped, torch's binding and texts."""
        if self._checked_shape is None:
            self._checked_shape = publish.checked_call_shape(engine, self._shape, schema.schema, schema.tags)
        shape, boxer = self._checked_shape
        # Without kernels every slot is its fallback cell, and a fallback is
        # boxed (or a fallthrough): nothing to wrap.
        table = self._table if self._filled is None else publish.checked_table(engine, self._table, boxer, schema.schema)
        return publish.call_plan(engine, self.name, shape, table, self._masks, self.report_error)

    def republish(self) -> None:
        """Publish the plan again (checked calls were switched on or off)."""
        if self._handle is not None and self.schema is not None:
            self._handle._publish(self._plan())

    def set_schema(self, schema: RegisteredSchema) -> None:
        """Define the operator: all or nothing (a def whose plan cannot be made changes nothing)."""
        shape = publish.call_shape(self._dispatcher.engine, schema.schema, schema.tags)
        previous = self.schema, self._shape, self._checked_shape
        self.schema, self._shape, self._checked_shape = schema, shape, None
        if self._dispatcher.deferred is not None:
            self.refresh()  # publish at the end of the deferral
            return
        handle = self._handle
        try:
            plan = self._plan()
        except BaseException:
            self.schema, self._shape, self._checked_shape = previous
            raise
        if handle is not None:
            handle._publish(plan)
        else:
            self._new_handle(plan)

    def clear_schema(self, deferred: Deferred) -> None:
        """Undefine the operator (Dispatcher.undo: see Note [Registration handles]
        in registry.py), its refresh noted in the deferral's ``deferred``."""
        self.schema, self._shape, self._checked_shape = None, self._dispatcher.undefined_plan.shape, None
        deferred[self] = None

    # -- registration --------------------------------------------------------------
    def register_kernel(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        """Make ``kernel`` the active kernel of ``key`` (c10's registerKernel)."""
        kernels = self.kernels.get(key, ())
        # c10 does not warn of a Meta kernel's override (Python meta functions
        # override C++ ones, and a second register_fake stacks a Meta kernel).
        if kernels and key is not DispatchKey.Meta:
            # First: a warning made an error changes nothing.
            self._warn_override(key, kernels[0], kernel)
        previous = self.kernels
        filled = self._filled
        before = previous, self._table, filled, self._masks
        self.kernels = {**previous, key: (kernel,) + kernels}  # Note [Entries are read as snapshots]
        # Note [Layout steps]
        # Only key's active kernel changed: when the table was filled from
        # the kernels before (no deferral pending), the new layout is the
        # one that followed the old one the last time the same key got a
        # kernel as fallthrough (or not) as this one, if any operator took
        # that step since the registry last emptied its layouts.  The keys
        # keep their order in the kernels dict (a new key comes last), so
        # the step always leads to the layout of the same signature
        # (layout_signature): a lookup instead of a walk over the kernels.
        step = None
        layout = None
        if self._dispatcher.deferred is None and (filled[1] is previous if filled is not None else not previous):
            step = (None if filled is None else filled[0], key, kernel.kernel.kind is _FALLTHROUGH)
            layout = self._dispatcher.layout_steps.get(step)
        try:
            self.refresh(layout)
        except BaseException:  # all or nothing: a plan that cannot be published leaves no kernel behind
            self.kernels, self._table, self._filled, self._masks = before
            raise
        if layout is None and step is not None:
            assert self._filled is not None
            self._dispatcher.layout_steps[step] = self._filled[0]

    def _warn_override(self, key: DispatchKey, previous: AnnotatedKernel, kernel: AnnotatedKernel) -> None:
        schema = self.schema
        warnings.warn(
            "Overriding a previously registered kernel for the same operator and the same dispatch key\n"
            f"  operator: {self.name if schema is None else schema.schema}\n"
            f"    {'no debug info' if schema is None else schema.debug}\n  dispatch key: {key.name}\n"
            f"  previous kernel: {previous.debug}\n       new kernel: {kernel.debug}",
            UserWarning,
            # Here, register_kernel, Dispatcher.register_impl_locked, Library._impl,
            # Library.impl: the warning names the line that called impl().
            stacklevel=6,
        )

    def remove_kernel(self, key: DispatchKey, kernel: AnnotatedKernel,
                      deferred: Deferred) -> None:
        """Undo a register_kernel (Dispatcher.undo: see Note [Registration
        handles] in registry.py), its refresh noted in the deferral's ``deferred``."""
        # By identity (AnnotatedKernel's equality): the same function
        # registered twice is two registrations.
        registered = self.kernels[key]
        position = registered.index(kernel)
        kernels = dict(self.kernels)  # Note [Entries are read as snapshots]
        left = kernels[key] = registered[:position] + registered[position + 1:]
        if not left:
            del kernels[key]
        self.kernels = kernels
        deferred[self] = None

    def set_report_error_callback(self, callback: Callable[[str], object]) -> None:
        """Have ``callback(key_name)`` raise the error of a call that finds no kernel (see report_error)."""
        self._report_error_callback = callback

    # -- debugging ----------------------------------------------------------------
    def computed_table(self) -> list[TableEntry]:
        """Every runtime slot's entry, in slot order, as the stored table holds
        it (what dump_computed_table prints), with where each comes from."""
        entries = []
        lines = self._stored_lines()
        for index, key in enumerate(RUNTIME_SLOT_KEYS):
            stored = lines.get(index)
            if stored is None:  # the slot holds its backend fallback (Note [Stored table lines])
                fallback = self._dispatcher.backend_fallback(key)
                entries.append(TableEntry(key, fallback, "missing" if fallback is None else BACKEND_FALLBACK, None))
            else:
                _name, kernel, rule = stored
                entries.append(TableEntry(key, kernel, rule.tag, key if rule is DIRECT else rule.alias))
        return entries

    def _stored_lines(self) -> dict[int, tuple[str, AnnotatedKernel, Rule]]:
        """Slot index -> (key name, kernel, Rule) of each slot not filled by its
        backend fallback (Note [Stored table lines])."""
        filled = self._filled
        if filled is None:
            return {}
        layout, kernels = filled
        return {index: (name, AMBIGUOUS_AUTOGRAD_OTHER if origin is None else kernels[origin][0], rule)
                for index, name, origin, rule in layout.lines}

    def dump_state(self) -> str:
        """c10's OperatorEntry::dumpState (torch._C._dispatch_dump)."""
        s = self.schema
        if s is None:
            lines = [f"name: {self.name}\nschema: (none)"]
        else:
            default = " (default)" if s.alias_analysis_is_default else ""
            lines = [f"name: {self.name}\nschema: {s.schema}\ndebug: {s.debug}\n"
                     f"alias analysis kind: {s.alias_analysis}{default}"]
        kernels = self.kernels
        for key in sorted(kernels):
            head, inactive_head = _DUMP_HEADS[key]
            for kernel in kernels[key]:
                inferred = kernel.inferred_schema
                schema = "(none)" if inferred is None else signature_text(inferred)
                debug = kernel._debug  # the slot, read as the debug property would once it holds the text
                if type(debug) is not str:
                    debug = kernel.debug
                lines.append(f"{head}{debug} :: {schema} [ {DUMP_STATE[kernel.kernel.kind]}]")
                head = inactive_head
        lines.append("")
        return "\n".join(lines)

    def dump_computed_table(self, fallback_lines: Optional[Sequence[str]] = None) -> str:
        """c10's OperatorEntry::dumpComputedTable (torch._C._dispatch_dump_table);
        ``fallback_lines``, if given, in place of the dispatcher's for the
        slots that take their fallback (the compat shim prints torch's)."""
        lines = list(self._dispatcher.fallback_lines if fallback_lines is None else fallback_lines)
        filled = self._filled
        if filled is not None:
            # table_line of each stored line, from parts its layout made once.
            layout, kernels = filled
            texts = [_kernel_text(kernels[key][0]) for key in layout.origins]
            texts.append(_kernel_text(AMBIGUOUS_AUTOGRAD_OTHER))
            for index, head, n, tail in layout.dump_parts:
                lines[index] = head + texts[n] + tail
        return "".join(lines)

    def list_all_dispatch_keys(self) -> str:
        """The runtime keys with a valid entry, as c10's listAllDispatchKeys prints them."""
        table = self._table
        keys = [k.name for k in RUNTIME_SLOT_KEYS[1:] if table[SLOT_OF_KEY[k]].is_valid()]
        return "[" + ", ".join(keys) + "]"

    def report_error(self, kind: KernelKind, key: DispatchKey) -> None:
        """Raise the error of calling a missing or ambiguous entry (c10's reportError).

        A missing entry's error is the report-error callback's if the operator
        has one (torch._C._dispatch_set_report_error_callback): it is called
        with the key's name and is to raise.  (The ambiguous entry is a kernel
        that raises in c10, so its error is always the dispatcher's.)
        """
        callback = self._report_error_callback
        if callback is not None and kind == KernelKind.MISSING:
            callback(key.name)
            # torch fails an internal assertion here.
            raise RuntimeError(
                f"the report-error callback of {self.name} returned instead of raising an error "
                f"for the call that found no kernel for {key.name}"
            )
        if kind == KernelKind.AMBIGUOUS_AUTOGRAD_OTHER:
            # torch's text goes on about C++'s InferenceMode; the first sentence is its.
            raise RuntimeError(
                f"{self.name} has kernels registered to both CompositeImplicitAutograd and a backend mapped "
                "to AutogradOther. This makes the backend kernel unreachable; the dispatcher will always "
                "prefer the CompositeImplicitAutograd lowering (see Note: [Ambiguity in AutogradOther kernel]). "
                "A kernel registered to AutogradOther itself says which is meant; or take one of the two "
                "kernels away.\nCanonical state\n~~~~~~~~~~~\n"
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
        # torch's text adds its selective builds and a note for Facebook's mobile engineers.
        raise NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{key.name}' backend. No kernel is registered "
            f"for '{self.name}' there, and no alias key's kernel or backend fallback serves that key. "
            f"'{self.name}' is only available for these backends: {self.list_all_dispatch_keys()}."
            f"\n\n{self.dump_computed_table()}"
        )

    def check_invariants(self) -> None:
        """The stored table, lines and masks equal a recomputation from scratch."""
        masks = [FULL_REPR] * NUM_BACKENDS
        lines = self._stored_lines()
        cells = self._dispatcher.fallback_table
        for index, key in enumerate(RUNTIME_SLOT_KEYS):
            slot = _facts(key)
            annotated, rule = self._compute_entry(slot)
            function = self._dispatcher.function_of(annotated)
            from_fallback = annotated is None or rule.tag == BACKEND_FALLBACK
            # A slot served by its fallback holds the dispatcher's fallback cell (Note [Fallback cells]).
            expected = cells[index] if from_fallback else function
            actual = self._table[index]
            if actual is not expected:
                raise AssertionError(
                    f"{self.name}: table entry for {slot.name} is {actual!r}, recomputation gives {expected!r}"
                )
            if from_fallback and (actual.kind != function.kind or actual.fn is not function.fn):
                raise AssertionError(f"{self.name}: the fallback cell of {slot.name} holds {actual!r}, not {function!r}")
            # A line is table_line of (key name, kernel, tag): compared as those,
            # not formatted (a test-suite checks after every registration).
            # A slot without a stored line prints the dispatcher's fallback
            # line, which _set_fallback keeps with the fallback itself.
            stored = lines.get(index)
            if stored is None:
                in_date = from_fallback
            else:
                in_date = stored[0] == slot.name and stored[1] is annotated and stored[2].tag == rule.tag
            if not in_date:
                raise AssertionError(f"{self.name}: the dump line of {slot.name} is out of date")
            slot.update_masks(masks, function.is_fallthrough())
        if masks != list(self._masks):
            raise AssertionError(f"{self.name}: fallthrough masks are out of date")
        for key, kernels in self.kernels.items():
            if not kernels:
                raise AssertionError(f"{self.name}: empty kernel list for {key.name}")


def _kernel_text(annotated: AnnotatedKernel) -> str:
    """What table_line prints of a kernel."""
    debug = annotated._debug  # as dump_state reads it
    if type(debug) is not str:
        debug = annotated.debug
    return f"fallthrough {debug}" if annotated.kernel.kind is _FALLTHROUGH else debug


def table_line(key_name: str, annotated: Optional[AnnotatedKernel], tag: str) -> str:
    """The line dump_table prints for the slot of the key named ``key_name``
    holding ``annotated``, chosen by a Rule tagged ``tag`` (see compute_entry); "" for a
    missing entry."""
    if annotated is None:
        return ""
    prefix = "fallthrough " if annotated.kernel.is_fallthrough() else ""
    return f"{key_name}: {prefix}{annotated.debug} [{tag}]\n"


def aliases_serving(key: DispatchKey) -> tuple[DispatchKey, ...]:
    """The alias keys whose kernels compute_entry considers for ``key``'s
    slot, in its order of precedence (the alias expansions, with the
    composite keys also serving Undefined: Note [Undefined in dispatchTable_])."""
    facts = _facts(key)
    candidates = ((_CEANF, facts.in_ceanf), (_CEA, facts.in_cea), (_CIA_NESTED, facts.in_cia_nested),
                  (_CIA, facts.in_cia), (_AUTOGRAD, facts.in_autograd), (_BATCHED, facts.in_batched))
    return tuple(alias for alias, serves in candidates if serves)


def update_fallthrough_masks(masks: list[int], key: DispatchKey, fallthrough: bool) -> None:
    """``key``'s slot now holds a ``fallthrough`` kernel or not: see KeyFacts.update_masks."""
    _facts(key).update_masks(masks, fallthrough)
