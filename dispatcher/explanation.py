"""``dispatcher.explain`` (this module: dispatcher.explanation): why a call reaches the kernel it reaches.

``explain(op, *args, **kwargs)`` follows a call through the steps the engine
takes (Note [One plan per operator] in dispatcher/_engine/core.py), without
running a kernel:

1. the keyset of each dispatch argument, and their union;
2. this thread's TLS: ``(union | included) - excluded``;
3. the operator's fallthrough mask for the keyset's highest backend;
4. the table slot of the highest key left, and the entry there.

It says why the slot holds that entry with the ``Rule`` that
``OperatorEntry.compute_entry`` returns: the function that computes the table
gives the reason too, so the two cannot disagree.  ``run=True`` then makes
the call and explains every kernel it reached, redispatches included (see
dispatcher/_explain_trace.py).  ``explain_keyset(op, keys)`` explains a call
whose dispatch arguments carry ``keys``.

The value classes are frozen dataclasses (this module is imported on first
use of ``dispatcher.explain``, so ``dataclasses`` costs ``import dispatcher`` nothing).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union

from ._engine import loaded_engines
from ._kernel_kind import KernelKind
from ._layout import RUNTIME_SLOT_KEYS, SLOT_OF_KEY
from .keys import BackendComponent, DispatchKey
from .operator_entry import FALLBACK, OperatorEntry, Rule
from .registry import Dispatcher, default_registry, live_registries

if TYPE_CHECKING:
    from ._core import DispatchKeySet
    from ._explain_trace import TraceLine

__all__ = ["DispatchArgument", "Entry", "Explanation", "Hop", "explain", "explain_keyset"]

_RUNNABLE = (KernelKind.UNBOXED, KernelKind.WITH_KEYSET, KernelKind.BOXED, KernelKind.WITH_OPERATOR)
# CallPlan.dispatch_args kinds (dispatcher/_engine/core.py, ARG_*).
_TENSOR, _OPTIONAL_TENSOR, _TENSOR_LIST, _OPTIONAL_TENSOR_LIST = range(4)


@dataclass(frozen=True)
class DispatchArgument:
    """A dispatch-relevant argument of the call and the keys it carries
    (``keyset`` None: omitted, or None for an optional tensor)."""

    name: str
    position: int  # 0-based, in the schema
    keyset: Optional[DispatchKeySet]


@dataclass(frozen=True)
class Entry:
    """What one table slot of an operator holds, and why."""

    operator: str
    key: DispatchKey  # the slot's runtime key
    slot: int
    kind: KernelKind
    kernel: Optional[Callable[..., Any]]  # what a call runs; None for fallthrough, missing, ambiguous
    rule: Rule  # the precedence step that put it there (operator_entry.compute_entry)
    why: str  # the rule's sentence, for this key
    # The debug text of the registration that put it there ("registered at
    # FILE:LINE" unless the registration gave its own); None without one.
    registered: Optional[str]

    @property
    def runs(self) -> bool:
        """Whether a call reaching this slot runs a kernel (else it raises)."""
        return self.kind in _RUNNABLE

    def summary(self) -> str:
        """The entry in a few words: ``mul_cpu (with keyset) [kernel]``."""
        return f"{_kernel_text(self.kind, self.kernel)} [{self.rule.tag}]"

    def __str__(self) -> str:
        return "\n".join(self._lines(""))

    def _lines(self, indent: str, head: str = "", why: bool = True) -> list[str]:
        """The entry after ``head``, the registration and (with ``why``) the
        rule's sentence on a line of its own."""
        first = f"{indent}{head}{self.key.name} (table slot {self.slot}): {self.summary()}"
        lines = [first if self.registered is None else f"{first}, {self.registered}"]
        if why:
            lines.append(f"{indent}  why: {self.why}")
        return lines


@dataclass(frozen=True)
class Hop:
    """One kernel a run reached: a call or a redispatch, ``depth`` levels
    inside the first (``entry`` None if the operator is gone from every registry)."""

    what: str  # "call" or "redispatch"
    operator: str
    key: DispatchKey
    depth: int
    entry: Optional[Entry]

    def __str__(self) -> str:
        return "\n".join(self._lines(""))

    def _lines(self, indent: str) -> list[str]:
        indent += "  " * self.depth
        if self.entry is None:
            return [f"{indent}[{self.what}] {self.operator} at {self.key.name}: (no longer registered)"]
        return self.entry._lines(indent, f"[{self.what}] {self.operator} at ")


@dataclass(frozen=True)
class Explanation:
    """What a call of ``operator`` does, step by step (see the module's docstring).

    ``tls_added`` and ``tls_removed`` are the keys the TLS include and exclude
    sets added to and removed from the union; ``mask`` is the operator's
    non-fallthrough mask for ``mask_backend``, the keyset's highest backend;
    ``skipped`` the entries of the keys the mask took out (fallthroughs);
    ``keyset`` what is left, whose highest key selects ``entry``.
    With ``ran``: ``hops``, and the call's ``result`` or ``error``.
    """

    operator: str
    arguments: tuple[DispatchArgument, ...]
    union: DispatchKeySet
    tls_included: DispatchKeySet
    tls_excluded: DispatchKeySet
    tls_added: tuple[DispatchKey, ...]
    tls_removed: tuple[DispatchKey, ...]
    mask_backend: BackendComponent
    mask: DispatchKeySet
    skipped: tuple[Entry, ...]
    keyset: DispatchKeySet
    entry: Entry
    ran: bool = False
    hops: tuple[Hop, ...] = ()
    result: Any = None
    error: Optional[Exception] = None

    def _with_run(self, hops: tuple[Hop, ...], result: Any, error: Optional[Exception]) -> Explanation:
        """This explanation with what running the call did."""
        return replace(self, ran=True, hops=hops, result=result, error=error)

    @property
    def key(self) -> DispatchKey:
        """The key the call dispatches to."""
        return self.entry.key

    @property
    def kernel(self) -> Optional[Callable[..., Any]]:
        """The kernel a call runs first (None: it raises instead)."""
        return self.entry.kernel

    def __str__(self) -> str:
        lines = [f"{self.operator}: dispatch of a call (TLS as on this thread now)"]
        lines += [
            f"  argument {a.name} (position {a.position + 1}): "
            + ("no tensor" if a.keyset is None else repr(a.keyset))
            for a in self.arguments
        ]
        lines += [
            f"  union of the arguments: {self.union!r}",
            f"  TLS included {self.tls_included!r}: adds {_names(self.tls_added)}",
            f"  TLS excluded {self.tls_excluded!r}: removes {_names(self.tls_removed)}",
        ]
        # A keyset without a backend takes CPU's mask, as the engine does.
        backend = self.mask_backend.name if self.mask_backend != BackendComponent.InvalidBit else "CPUBit (no backend)"
        lines.append(
            f"  fallthrough mask for backend {backend}: skips {_names(tuple(e.key for e in self.skipped))}"
        )
        for skipped in self.skipped:
            # A backend fallback that falls through needs no reason; any other fallthrough does.
            lines += skipped._lines("    ", why=skipped.rule is not FALLBACK)
        lines.append(f"  dispatch keyset: {self.keyset!r}")
        if self.entry.key == DispatchKey.Undefined:
            lines.append("  no key is left: the call dispatches to Undefined's slot")
        lines += self.entry._lines("  ", "dispatches to ")
        lines.append(f"  {_outcome(self.entry)}")
        if self.ran:
            lines.append("  ran:")
            for hop in self.hops:
                lines += hop._lines("    ")
            if not self.hops:
                lines.append("    (no kernel was reached)")
            if self.error is not None:
                lines.append(f"    raised {type(self.error).__name__}: {_first_line(str(self.error))}")
            else:
                lines.append(f"    returned {self.result!r}")
        return "\n".join(lines)


def _names(keys: tuple[DispatchKey, ...]) -> str:
    return ", ".join(k.name for k in keys) if keys else "nothing"


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def _kernel_text(kind: KernelKind, kernel: Optional[Callable[..., Any]]) -> str:
    if kind == KernelKind.FALLTHROUGH:
        return "fallthrough"
    if kind == KernelKind.MISSING:
        return "no kernel"
    if kind == KernelKind.AMBIGUOUS_AUTOGRAD_OTHER:
        return "the ambiguous-AutogradOther error"
    registered = getattr(kernel, "__wrapped__", None) if kind == KernelKind.BOXED else None
    if registered is not None:  # a fallback in torch's convention, fn(op, *args, **kwargs): kernel.python_fallback
        return f"{_function_name(registered)} (Python fallback)"
    name = _function_name(kernel)
    return {KernelKind.WITH_KEYSET: f"{name} (with keyset)", KernelKind.BOXED: f"{name} (boxed)",
            KernelKind.WITH_OPERATOR: f"{name} (with operator)"}.get(kind, name)


def _function_name(fn: Optional[Callable[..., Any]]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _outcome(entry: Entry) -> str:
    if entry.runs:
        return f"a call runs {_kernel_text(entry.kind, entry.kernel)}"
    if entry.kind == KernelKind.FALLTHROUGH:
        return f"a call raises RuntimeError: {entry.key.name} falls through, and no key is left below it"
    if entry.kind == KernelKind.AMBIGUOUS_AUTOGRAD_OTHER:
        return "a call raises RuntimeError: the AutogradOther entry is ambiguous"
    return f"a call raises NotImplementedError: no kernel for {entry.key.name}"


# -- explaining -------------------------------------------------------------------------
def explain(op: Any, /, *args: Any, run: bool = False, **kwargs: Any) -> Explanation:
    """Explain the call ``op(*args, **kwargs)``: its keys, the TLS, the
    fallthrough mask, the slot, the kernel there and why (see the module's
    docstring).  ``op`` is an operator overload (``ops.ns.name.overload``) or
    its name (``"ns::name.overload"``, in the package's registry).  With
    ``run=True`` the call is made and every kernel it reaches explained;
    what it raises is kept in ``error``, not raised.  (``run`` is taken by
    explain: an operator argument called so cannot be passed by keyword.)
    """
    if type(run) is not bool:
        raise TypeError(f"explain: run must be True or False, got {run!r}")
    registry, entry, handle = _resolve(op)
    engine = registry.engine
    arguments = _dispatch_arguments(engine, entry, args, kwargs)
    union = engine.DispatchKeySet()
    for argument in arguments:
        if argument.keyset is not None:
            union = union | argument.keyset
    explanation = _explain(registry, entry, arguments, union)
    if not run:
        return explanation
    # Imported when first needed: most processes never run an explanation.
    from ._explain_trace import traced_call

    lines, result, error = traced_call(engine, lambda: handle(*args, **kwargs))
    return explanation._with_run(_hops(registry, lines), result, error)


def explain_keyset(op: Any, keys: Union[DispatchKeySet, Iterable[Union[DispatchKey, str]]]) -> Explanation:
    """Explain a call of ``op`` whose dispatch arguments' keys union to
    ``keys`` (a DispatchKeySet, or keys or their names), with this thread's TLS."""
    registry, entry, _handle = _resolve(op)
    return _explain(registry, entry, (), _as_keyset(registry.engine, keys))


def _resolve(op: Any) -> tuple[Dispatcher, OperatorEntry, Any]:
    """The registry, operator entry and handle ``op`` names."""
    if isinstance(op, str):
        entry = default_registry.find_op(op)
        if entry is None or entry.schema is None:
            raise ValueError(f"explain: no operator {op!r} is defined (name it 'namespace::name.overload')")
        return default_registry, entry, entry.handle
    if _engine_instance(op, "OverloadPacket"):
        raise TypeError(
            f"explain takes one overload, not the packet {op.qualified_name}: pass one of "
            + ", ".join(f"ops.{op.qualified_name.replace('::', '.')}.{o}" for o in op.overloads())
        )
    if not _engine_instance(op, "OperatorHandle"):
        raise TypeError(f"explain takes an operator (ops.ns.name.overload) or its name, got {type(op).__name__}")
    entry = op._owner  # the entry that made the handle (OperatorEntry._new_handle)
    if entry is not None and entry.schema is not None:
        return entry.registry, entry, op
    raise RuntimeError(f"explain: operator {op.name()} is not defined (a call would raise)")


def _engine_instance(value: Any, name: str) -> bool:
    """Whether ``value`` is an instance of class ``name`` of either engine."""
    return any(isinstance(value, getattr(engine, name)) for engine in loaded_engines())


def _dispatch_arguments(engine: Any, entry: OperatorEntry, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> tuple[DispatchArgument, ...]:
    """Each dispatch argument and its keys, found where the engine finds them
    (``_extract_bits``), with its errors' meaning."""
    assert entry.schema is not None  # _resolve returns defined operators
    found = []
    for position, name, kind, required in entry.schema.schema.dispatch_layout[0]:
        if position < len(args):
            value = args[position]
        elif name in kwargs:
            value = kwargs[name]
        elif required:
            raise TypeError(f"explain: {entry.name}() missing required argument: '{name}'")
        else:
            found.append(DispatchArgument(name, position, None))
            continue
        found.append(DispatchArgument(name, position, _value_keys(engine, entry.name, name, position, kind, value)))
    return tuple(found)


def _value_keys(engine: Any, op: str, name: str, position: int, kind: int, value: Any) -> Optional[DispatchKeySet]:
    if kind == _OPTIONAL_TENSOR and value is None:
        return None
    if kind in (_TENSOR, _OPTIONAL_TENSOR):
        return _tensor_keys(engine, op, name, position, value, "a tensor" if kind == _TENSOR else "a tensor or None")
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"explain: {op}: argument '{name}' (position {position + 1}) must be a list of tensors, "
                        f"not {type(value).__name__}")
    keys: DispatchKeySet = engine.DispatchKeySet()
    for item in value:
        if item is None and kind == _OPTIONAL_TENSOR_LIST:
            continue
        keys = keys | _tensor_keys(engine, op, name, position, item, "a tensor")
    return keys


def _tensor_keys(engine: Any, op: str, name: str, position: int, value: Any, expected: str) -> DispatchKeySet:
    keys: Optional[DispatchKeySet] = engine.tensor_key_set(value)
    if keys is None:
        raise TypeError(f"explain: {op}: argument '{name}' (position {position + 1}) must be {expected}, "
                        f"not {type(value).__name__}")
    return keys


def _as_keyset(engine: Any, keys: Any) -> DispatchKeySet:
    # A keyset of either engine, or what DispatchKeySet() takes.
    if _engine_instance(keys, "DispatchKeySet"):
        result: DispatchKeySet = engine.DispatchKeySet.from_raw_repr(keys.raw_repr())
        return result
    if isinstance(keys, (str, DispatchKey)):
        keys = [keys]
    try:
        result = engine.DispatchKeySet(list(keys))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"explain_keyset: {exc}") from None
    return result


def _explain(registry: Dispatcher, op: OperatorEntry, arguments: tuple[DispatchArgument, ...],
             union: DispatchKeySet) -> Explanation:
    engine = registry.engine
    included, excluded = engine.tls_local_include_set(), engine.tls_local_exclude_set()
    with_included = union | included
    with_tls: DispatchKeySet = engine.compute_dispatch_key_set(union)
    backend = with_tls.highest_backend()
    mask = op.non_fallthrough_mask(backend)
    keyset = with_tls & mask
    skipped = [k for k in with_tls if not keyset.has(k)]
    # The mask took out every key whose slot falls through but those with no
    # bit to take out (Undefined): the engine raises there (_skip_fallthroughs).
    entry = _entry(registry, op, RUNTIME_SLOT_KEYS[keyset.dispatch_table_index()])
    return Explanation(
        op.name, arguments, union, included, excluded,
        tuple(k for k in with_included if not union.has(k)),
        tuple(k for k in with_included if not with_tls.has(k)),
        backend, mask, tuple(_entry(registry, op, k) for k in skipped), keyset, entry,
    )


def _entry(registry: Dispatcher, op: OperatorEntry, key: DispatchKey) -> Entry:
    """Slot ``key`` of ``op``: compute_entry's kernel and Rule, as the plan holds it."""
    annotated, rule = op.compute_entry(key)
    function = registry.function_of(annotated)
    kind: KernelKind = function.kind
    registered = None if annotated is None or kind == KernelKind.AMBIGUOUS_AUTOGRAD_OTHER else annotated.debug
    return Entry(op.name, key, SLOT_OF_KEY[key], kind, function.fn, rule, rule.why.format(key=key.name), registered)


def _hops(registry: Dispatcher, lines: list[TraceLine]) -> tuple[Hop, ...]:
    # Depths are the engine's nesting, which starts deeper inside another traced call.
    base = min((line.depth for line in lines), default=0)
    return tuple(
        Hop(line.what, line.operator, line.key, line.depth - base,
            _hop_entry(registry, line.operator, line.key))
        for line in lines
    )


def _hop_entry(registry: Dispatcher, name: str, key: DispatchKey) -> Optional[Entry]:
    # The explained operator's registry first: another on the same engine may
    # have an operator of the same name.
    for candidate in (registry, *live_registries()):
        if candidate.engine is registry.engine:
            op = candidate.find_op(name)
            if op is not None:
                return _entry(candidate, op, key)
    return None
