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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from . import keysets
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
_CEA = K.CompositeExplicitAutograd
_CEANF = K.CompositeExplicitAutogradNonFunctional


@dataclass(frozen=True)
class RegisteredSchema:
    """A def(): the schema, where it was registered, its alias analysis kind."""

    schema: FunctionSchema
    debug: str
    alias_analysis: str = "FROM_SCHEMA"
    alias_analysis_is_default: bool = False


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


def _autograd_slots_depending_on(k: DispatchKey) -> tuple[DispatchKey, ...]:
    # The autograd keys whose entry asks "is there a kernel for one of my
    # backends?" (has_backend_kernel in compute_entry) about k.
    return tuple(
        a
        for a in RUNTIME_SLOT_KEYS
        if keysets.AUTOGRAD_DISPATCH_KEYSET.has(to_functionality_key(a))
        and not is_alias_key(k)
        and keysets.get_backend_key_set_from_autograd(a).has(k)
    )


@dataclass(frozen=True)
class _SlotInfo:
    """What compute_entry needs to know about a runtime slot, computed once."""

    in_ceanf: bool
    in_cea: bool
    in_cia_nested: bool
    in_cia: bool
    in_autograd: bool
    in_batched: bool
    backend_bits: int  # raw get_backend_key_set_from_autograd(slot)


def _slot_info(k: DispatchKey) -> _SlotInfo:
    undefined = k == K.Undefined
    return _SlotInfo(
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


_SLOT_INFO = {k: _slot_info(k) for k in RUNTIME_SLOT_KEYS}
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
_SLOTS_CHANGED_BY: dict[DispatchKey, tuple[DispatchKey, ...]] = {
    k: ((k,) if k in SLOT_OF_KEY else ()) + _autograd_slots_depending_on(k)
    for k in DispatchKey
    if not is_alias_key(k)
}


class OperatorEntry:
    """Registrations of one operator (by qualified name) and its runtime table."""

    def __init__(self, name: str, dispatcher: "Dispatcher") -> None:
        self.name = name
        self.schema: Optional[RegisteredSchema] = None
        # Newest first; the first kernel of a key is the active one.
        self.kernels: dict[DispatchKey, list[AnnotatedKernel]] = {}
        self._dispatcher = dispatcher
        # With no kernels, every slot is its backend fallback: start from the
        # dispatcher's copy of that table instead of computing 137 entries.
        self._table: list[Any] = list(dispatcher.fallback_table)
        # Note [Per-backend fallthrough masks]
        # c10 keeps, per backend, the keys that are not fallthrough for this
        # operator; a call ANDs its keyset with the mask of its highest
        # backend, so fallthrough keys are never visited.  A fallthrough on
        # a per-backend key (AutogradCPU) only affects its backend's mask; one
        # on another key (Python) affects them all.
        self._masks: list[int] = list(dispatcher.fallback_masks)
        # What a plan takes from the def: see _schema_plan_parts.
        self._schema_parts: Optional[_SchemaParts] = None
        self.handle = dispatcher.engine.OperatorHandle(name, self._plan())

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
        slot = _SLOT_INFO.get(key) or _slot_info(key)

        # Composite kernels serve Undefined too: a call with no tensor arguments
        # (and no TLS keys) lands there.
        for alias, included in ((_CEANF, slot.in_ceanf), (_CEA, slot.in_cea)):
            if included and kernels.get(alias):
                return kernels[alias][0], "default backend kernel"

        # An autograd key only takes a composite-implicit kernel when its
        # backends have no kernel of their own (else autograd would bypass it).
        has_backend_kernel = bool(kernels.get(_CEA)) or (
            slot.backend_bits != 0 and self._has_kernel_in(slot.backend_bits)
        )

        # Unlike the math kernel below, c10 gives the nested kernel no
        # has_backend_kernel test: a NestedTensorCPU kernel does not keep
        # it from AutogradNestedTensor.
        nested = kernels.get(K.CompositeImplicitAutogradNestedTensor)
        if slot.in_cia_nested and nested:
            return nested[0], "nested kernel"

        math = kernels.get(_CIA)
        if slot.in_cia and math:
            # Note [Ambiguity in AutogradOther kernel]: AutogradOther serves
            # many backends; with a kernel for one of them, c10 cannot tell
            # whether the composite kernel or autograd-of-that-kernel is
            # meant, and makes calling it an error.
            if key == K.AutogradOther and self._has_kernel_in(_AUTOGRADOTHER_BACKEND_BITS):
                return AMBIGUOUS_AUTOGRAD_OTHER, "ambiguous autogradother"
            if not has_backend_kernel:
                return math[0], "math kernel"

        for alias, included, tag in (
            (K.Autograd, slot.in_autograd, "autograd kernel"),
            (K.FuncTorchBatchedDecomposition, slot.in_batched, "batched kernel"),
        ):
            if included and kernels.get(alias):
                return kernels[alias][0], tag

        fallback = self._dispatcher.backend_fallback(key)
        if fallback is not None:
            return fallback, "backend fallback"
        return None, "missing"

    # -- updates -------------------------------------------------------------------
    def refresh_slots(self, changed_key: DispatchKey) -> None:
        """Recompute the slots a kernel change on ``changed_key`` can affect
        (see Note [Which slots a registration changes]) and publish them."""
        if is_alias_key(changed_key):
            slots = RUNTIME_SLOT_KEYS
        else:
            slots = _SLOTS_CHANGED_BY[changed_key]
        for key in slots:
            self._update_slot(key)
        self._publish()

    def refresh_fallback_slot(self, key: DispatchKey) -> None:
        """A backend fallback of ``key`` changed: only its own slot can change."""
        self._update_slot(key)
        self._publish()

    def _update_slot(self, key: DispatchKey) -> None:
        annotated, _tag = self.compute_entry(key)
        kernel = self._dispatcher.function_of(annotated)
        self._table[SLOT_OF_KEY[key]] = kernel
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
        self.handle._publish(self._plan())

    def set_schema(self, schema: Optional[RegisteredSchema]) -> None:
        """Define (or, with None, undefine) the operator: all or nothing."""
        parts = None if schema is None else _schema_plan_parts(schema.schema, self._dispatcher.engine)
        previous = self.schema, self._schema_parts
        self.schema, self._schema_parts = schema, parts
        try:
            plan = self._plan()
        except BaseException:
            self.schema, self._schema_parts = previous
            raise
        self.handle._publish(plan)

    # -- registration --------------------------------------------------------------
    def register_kernel(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        self.kernels.setdefault(key, []).insert(0, kernel)
        self.refresh_slots(key)

    def deregister_kernel(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        kernels = self.kernels[key]
        # By identity: the same function registered twice is two registrations.
        index = next(i for i, k in enumerate(kernels) if k is kernel)
        del kernels[index]
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
        lines = []
        for key in RUNTIME_SLOT_KEYS:
            annotated, tag = self.compute_entry(key)
            if annotated is not None:
                prefix = "fallthrough " if annotated.kernel.is_fallthrough() else ""
                lines.append(f"{key.name}: {prefix}{annotated.debug} [{tag}]")
        return "".join(line + "\n" for line in lines)

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
        """The stored table and masks equal a recomputation from scratch."""
        masks = [FULL_REPR] * NUM_BACKENDS
        for key in RUNTIME_SLOT_KEYS:
            annotated, _tag = self.compute_entry(key)
            expected = self._dispatcher.function_of(annotated)
            actual = self._table[SLOT_OF_KEY[key]]
            if actual is not expected:
                raise AssertionError(
                    f"{self.name}: table entry for {key.name} is {actual!r}, recomputation gives {expected!r}"
                )
            update_fallthrough_masks(masks, key, expected.is_fallthrough())
        if masks != self._masks:
            raise AssertionError(f"{self.name}: fallthrough masks are out of date")
        for key, kernels in self.kernels.items():
            if not kernels:
                raise AssertionError(f"{self.name}: empty kernel list for {key.name}")


@dataclass(frozen=True)
class _SchemaParts:
    """What a call plan takes from a def, computed once per def."""

    schema: FunctionSchema
    dispatch_args: tuple[tuple[int, str, int, bool], ...]
    positional_span: int
    boxer: Any


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
