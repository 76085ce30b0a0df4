"""Kernels as the registration side knows them.

A ``Kernel`` says how to call a kernel: its ``kind`` and its Python callable.
An ``AnnotatedKernel`` adds what only debugging needs: the debug text shown
by dumps and the schema inferred for the kernel, if any (c10's
AnnotatedKernel).  The call path reads neither: registration turns each into
its engine's ``KernelFunction`` when it compiles a plan (``function``).
"""
from __future__ import annotations

import sys
from types import CodeType, FrameType
from typing import Any, Callable, Optional, Union

from ._engine.contract import Engine, KernelFunction
from ._frozen import Frozen, slot_setters
from ._kernel_kind import DUMP_STATE, KernelKind
from .publish import kernel_function
from .schema import FunctionSchema

__all__ = [
    "AMBIGUOUS_AUTOGRAD_OTHER",
    "AnnotatedKernel",
    "Kernel",
    "annotated_kernel",
    "KernelKind",
    "fallthrough_kernel",
    "make_fallback_kernel",
    "make_kernel",
    "python_fallback",
    "registration_site",
    "registration_site_later",
    "site_text",
    "signature_text",
]


# A registration's debug text, or where it was made: the caller's code and
# the offset of its call (Note [Registration sites read lazily]).
Site = Union[str, tuple[CodeType, int]]


def fallthrough_kernel() -> None:
    """Register this as a kernel or fallback to make the dispatcher skip the key.

    It is never called: a fallthrough takes its key out of the operator's
    dispatch mask (see Note [Per-backend fallthrough masks] in operator_entry.py).
    torch.library's, with its signature and text.
    """
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Kernel(Frozen):
    """How a table entry is called: a KernelKind and the callable (None for
    fallthrough, missing and ambiguous entries)."""

    __slots__ = _fields = ("kind", "fn")

    kind: KernelKind
    fn: Optional[Callable[..., Any]]

    def __init__(self, kind: KernelKind, fn: Optional[Callable[..., Any]] = None) -> None:
        _set_kind(self, kind)
        _set_fn(self, fn)

    def is_fallthrough(self) -> bool:
        return self.kind == KernelKind.FALLTHROUGH

    def is_valid(self) -> bool:
        return self.kind != KernelKind.MISSING

    def dump_state(self) -> str:
        return DUMP_STATE[self.kind]


_set_kind, _set_fn = slot_setters(Kernel, "kind", "fn")
MISSING = Kernel(KernelKind.MISSING)

# The kinds of most kernels, read once: KernelKind.UNBOXED goes through the
# enum class's __getattr__ hook, several times the cost of a global.
_UNBOXED, _WITH_KEYSET = KernelKind.UNBOXED, KernelKind.WITH_KEYSET


def make_kernel(fn: Callable[..., Any], *, with_keyset: bool = False, boxed: bool = False) -> Kernel:
    """The Kernel for a user callable, validated.  ``with_keyset`` means
    nothing for ``fallthrough_kernel`` (torch ignores it there too)."""
    if fn is fallthrough_kernel:
        if boxed:
            raise ValueError("fallthrough_kernel is never called, so it is not boxed: drop boxed=True")
        return Kernel(KernelKind.FALLTHROUGH)
    if not callable(fn):
        raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
    if with_keyset and boxed:
        raise ValueError("a kernel is either boxed or with_keyset, not both (boxed kernels get the keyset anyway)")
    if boxed:
        return Kernel(KernelKind.BOXED, fn)
    return Kernel(_WITH_KEYSET if with_keyset else _UNBOXED, fn)


def make_fallback_kernel(fn: Callable[..., Any], *, with_keyset: bool = False, boxed: bool = False) -> Kernel:
    """A backend fallback.  torch's convention (its PythonFallbackKernel):
    ``fn(op, *args, **kwargs)``, or ``fn(keyset, op, *args, **kwargs)`` with
    ``with_keyset`` (the keyset first, as for kernels), whose result is the call's.  ``boxed=True``: the
    engine's own, ``fn(op, keyset, stack)``, which pops the arguments from
    the stack and pushes the results."""
    if fn is fallthrough_kernel or boxed:
        return make_kernel(fn, with_keyset=with_keyset, boxed=boxed)
    if not callable(fn):
        raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
    return Kernel(KernelKind.BOXED, python_fallback(fn, with_keyset))


def python_fallback(fn: Callable[..., Any], with_keyset: bool) -> Callable[[Any, Any, Any], None]:
    """``fn`` in torch's fallback convention, as a boxed kernel: the arguments
    are unboxed and passed as torch passes them (see
    FunctionSchema.split_call_without_defaults), the result boxed.  Its
    ``__wrapped__`` is ``fn``, the function ``explain`` names."""
    if with_keyset:
        def fallback_with_keyset(op: Any, keyset: Any, stack: Any) -> None:
            boxer = op.boxer
            args, kwargs = op.schema.split_call_without_defaults(boxer.unbox_arguments(stack))
            boxer.box_returns(fn(keyset, op, *args, **kwargs), stack)

        fallback_with_keyset.__wrapped__ = fn  # type: ignore[attr-defined]
        return fallback_with_keyset

    def fallback(op: Any, keyset: Any, stack: Any) -> None:
        boxer = op.boxer
        args, kwargs = op.schema.split_call_without_defaults(boxer.unbox_arguments(stack))
        boxer.box_returns(fn(op, *args, **kwargs), stack)

    fallback.__wrapped__ = fn  # type: ignore[attr-defined]
    return fallback


class AnnotatedKernel(Frozen):
    """A registered kernel with its debug text and optional inferred schema.

    Identity matters, not value: the same function registered twice is two
    registrations, each removed by its own handle.
    """

    __slots__ = ("kernel", "_debug", "inferred_schema", "_functions")
    _fields = ("kernel", "debug", "inferred_schema")
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    kernel: Kernel
    # The debug text, or where it was registered until the text is first
    # read (Note [Registration sites read lazily]).
    _debug: Site
    # The schema a kernel's signature implies (c10 infers it from a C++
    # function type); its name is a placeholder, only the signature counts.
    inferred_schema: Optional[FunctionSchema]
    # This kernel as each engine's KernelFunction, made once per engine.
    _functions: dict[str, KernelFunction]

    def __init__(self, kernel: Kernel, debug: str, inferred_schema: Optional[FunctionSchema] = None) -> None:
        _set_kernel(self, kernel)
        _set_debug(self, debug)
        _set_inferred_schema(self, inferred_schema)
        _set_functions(self, {})

    @property
    def debug(self) -> str:
        """The text dumps show: ``registered at FILE:LINE`` or what the registration gave."""
        debug = self._debug
        if type(debug) is not str:
            debug = site_text(debug)
            _set_debug(self, debug)
        return debug

    def function(self, engine: Engine) -> KernelFunction:
        """This kernel as ``engine``'s KernelFunction (what a plan's table holds)."""
        function = self._functions.get(engine.__name__)
        if function is None:
            function = self._functions[engine.__name__] = kernel_function(engine, self.kernel.kind, self.kernel.fn)
        return function

    def dump_line(self, key_desc: str, inactive: bool) -> str:
        """One kernel line of OperatorEntry::dumpState."""
        schema = signature_text(self.inferred_schema) if self.inferred_schema is not None else "(none)"
        return (
            f"{key_desc}{' (inactive)' if inactive else ''}: {self.debug} :: {schema} "
            f"[ {DUMP_STATE[self.kernel.kind]}]"
        )


_set_kernel, _set_debug, _set_inferred_schema, _set_functions = slot_setters(
    AnnotatedKernel, "kernel", "_debug", "inferred_schema", "_functions"
)


def annotated_kernel(kind: KernelKind, fn: Optional[Callable[..., Any]], debug: Site) -> AnnotatedKernel:
    """``AnnotatedKernel(Kernel(kind, fn), debug)``, made in one call: the
    two ``__init__`` calls (each through the type's call) cost more than
    the objects (Library.impl makes one per registration, timed beside torch's)."""
    kernel = _new(Kernel)
    _set_kind(kernel, kind)
    _set_fn(kernel, fn)
    annotated = _new(AnnotatedKernel)
    _set_kernel(annotated, kernel)
    _set_debug(annotated, debug)
    _set_inferred_schema(annotated, None)
    _set_functions(annotated, {})
    return annotated


_new = object.__new__


def signature_text(schema: FunctionSchema) -> str:
    """A schema printed without its name, as c10 prints inferred schemas:
    ``(Tensor _0) -> Tensor _0``."""
    return str(schema)[len(str(schema.name)):]


# c10's ambiguousAutogradOtherKernel(): chosen for AutogradOther when a
# CompositeImplicitAutograd kernel exists and so does a kernel for one of
# AutogradOther's backends; calling it raises.
AMBIGUOUS_AUTOGRAD_OTHER = AnnotatedKernel(Kernel(KernelKind.AMBIGUOUS_AUTOGRAD_OTHER), "ambiguous_autogradother")

# The modules that register on a caller's behalf: a registration's site is
# the first frame outside them (so the prototype's own registrations, say,
# show their own file and line).
_REGISTERING_MODULES = frozenset(
    f"dispatcher.{name}"
    for name in ("library", "_library", "kernel", "registry", "operator_entry", "standard_fallbacks", "python_dispatcher", "compat.torch_C",
                 "custom_ops", "vmap_rules", "autocast_rules", "_custom_op.impl", "_custom_op.autograd", "_custom_ops")
)


def registration_site(skip: int = 0) -> str:
    """``registered at FILE:LINE`` of the first caller outside the registering
    modules.  The first ``skip`` callers, known to be in those modules, are
    passed over unseen: looking at a frame makes Python build a frame object
    for it, which costs more than the rest of this function."""
    return site_text(registration_site_later(skip + 1))


# Note [Registration sites read lazily]
# A frame's line number (f_lineno) is worked out by scanning its code's
# line table up to the current instruction: in a long function that costs
# more than the rest of an impl's Python.  Kernels keep instead the code
# object and the offset of the call (f_lasti, what f_lineno is worked out
# from), and AnnotatedKernel.debug makes the text when it is first read --
# by a dump or an error, which most registrations never meet.  The text of
# each site read is kept (_SITE_TEXTS), and a registration at a site read
# before takes its text at once: working out a line from Python walks the
# code's line table, and registrations in a loop share a site.
def registration_site_later(skip: int = 0) -> Site:
    """What registration_site(skip) would say, as a Site to read later with
    site_text (Note [Registration sites read lazily])."""
    try:
        frame: Optional[FrameType] = sys._getframe(1 + skip)
    except ValueError:  # the stack is not that deep
        return "registered at <unknown>"
    while frame is not None and frame.f_globals.get("__name__") in _REGISTERING_MODULES:
        frame = frame.f_back
    if frame is None:
        return "registered at <unknown>"
    code = frame.f_code
    offset = frame.f_lasti
    known = _SITE_TEXTS.get((id(code), offset))  # a site read before (registrations in a loop)
    return known[1] if known is not None and known[0] is code else (code, offset)


def site_text(site: Site) -> str:
    """``registered at FILE:LINE`` of a Site (the line as f_lineno gives it)."""
    if isinstance(site, str):
        return site
    code, offset = site
    # By the code's id, with the code kept to tell a reused id apart: a code
    # object's hash hashes its constants.
    key = (id(code), offset)
    known = _SITE_TEXTS.get(key)
    if known is not None and known[0] is code:
        return known[1]
    line = next((line for start, end, line in code.co_lines() if start <= offset < end), None)
    text = f"registered at {code.co_filename}:{line}"
    if len(_SITE_TEXTS) >= _MAX_SITE_TEXTS:
        _SITE_TEXTS.clear()
    _SITE_TEXTS[key] = code, text
    return text


# (id of a code object, offset) -> (the code, its site's text): see site_text.
_SITE_TEXTS: dict[tuple[int, int], tuple[CodeType, str]] = {}
_MAX_SITE_TEXTS = 4096
