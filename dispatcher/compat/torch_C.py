"""``torch._C``'s dispatcher functions, on this package's dispatcher.

Code written against PyTorch's low-level registration and debugging bindings
runs after changing its import line only::

    import dispatcher.compat.torch_C as C      # was: import torch._C as C
    m = C._dispatch_library("FRAGMENT", "myns", "", __file__, 10)
    m.def_("myns::f(Tensor self) -> Tensor")
    m.impl_t_t("f", "CPU")
    print(C._dispatch_dump_table("myns::f"))

It has every ``_dispatch_*`` name of torch 2.13's ``torch._C`` (41: the
list is tests/golden/compat_dispatch_golden.json) and the guards that change
the thread's dispatch key sets (``_AutoDispatchBelowAutograd``,
``_ExcludeDispatchKeyGuard``, ``_IncludeDispatchKeyGuard``,
``_ForceDispatchKeyGuard``, ``_PreserveDispatchKeyGuard``, ...).  A tensor
argument is anything the dispatcher reads a DispatchKeySet from.
``_EnablePythonDispatcher`` switches on the Python dispatcher
(dispatcher/python_dispatcher_key.py); ``_EnablePreDispatch``, which switches
on torch's pre-dispatch tracing (torch.export), raises NotImplementedError
saying so.

Semantics, results and error texts are PyTorch 2.13's (exceptions are
RuntimeError where torch raises RuntimeError), with these differences:

* every registration is all or nothing (torch keeps the part of an alias-key
  fallback registered before a failure);
* inputs on which torch crashes or fails an internal assertion raise a
  RuntimeError that says what is wrong;
* schema and operator-name parse errors, and the errors of arguments that do
  not fit a schema (``_dispatch_call_boxed``), are this package's texts;
* the stored dispatch table is always equal to a recomputation, so
  ``_dispatch_check_invariants`` passes where torch's table goes stale, and the
  ``computed`` queries answer from the up-to-date table;
* ``_dispatch_print_registrations_for_dispatch_key`` prints to ``sys.stdout``
  (torch writes to the process's C stdout), and
  ``_dispatch_set_report_error_callback`` refuses a callback that is not
  callable (torch fails at the call that would use it).

A ``_DispatchModule`` owns its registrations: ``reset()`` removes them, and so
does dropping the last reference to it, as in PyTorch.

The shim works on the registry in use (Note [The registry in use] in
dispatcher/registry.py), the package's default registry unless a
``using_registry`` block names another, which every function reads when it is
called: another ``Dispatcher`` (as the tests use, one per engine) moves the
whole shim there, thread-local sets and tensor types included (they belong to
its engine).
"""
from __future__ import annotations

import functools
import re
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

from .. import ivalue, opaque_types, torch_function, warn_always
from ..operator_tags import Tag
from .._core import DispatchKeySet
from .._kernel_kind import KernelKind
from .._layout import KEY_REPRS, RUNTIME_SLOT_KEYS, table_index
from ..kernel import AnnotatedKernel, Kernel, fallthrough_kernel, python_fallback
from ..keys import NUM_BACKENDS, DispatchKey, is_alias_key
from ..keysets import AUTOGRADOTHER_BACKENDS, get_backend_key_set_from_autograd, is_included_in_alias
from .._library import Library
from ..operator_entry import OperatorEntry
from ..schema import FunctionSchema, OperatorName, SchemaParseError
from ..standard_fallbacks import STANDARD_FALLBACK_DEBUG
from ._framework_fallbacks import TORCH_FALLBACK_SOURCES, torch_fallback_line
from ._common import KeyArg, key_arg, keyset_arg, shim_registry, str_arg
from ._common import dispatch_key_parse as _dispatch_key_parse
from ._common import parse_dispatch_key as _parse_dispatch_key
from ._handles import (
    _dispatch_call_boxed,
    _dispatch_find_schema_or_throw,
    _dispatch_set_report_error_callback,
    _DispatchOperatorHandle,
)
from ._tensors import (
    _any_output_is_alias_to_input_or_output, _any_requires_grad, _dispatch_isTensorSubclassLike,
    _dispatch_key_for_device, _dispatch_key_set, _dispatch_keys,
)
from ._tls import (
    ExcludeDispatchKeyGuard,
    _AutoDispatchBelowADInplaceOrView,
    _AutoDispatchBelowAutograd,
    _DisablePythonDispatcher,
    _DisableTorchDispatch,
    _dispatch_tls_is_dispatch_key_excluded,
    _dispatch_tls_is_dispatch_key_included,
    _dispatch_tls_local_exclude_set,
    _dispatch_tls_local_include_set,
    _dispatch_tls_set_dispatch_key_excluded,
    _dispatch_tls_set_dispatch_key_included,
    _EnablePreDispatch,
    _EnablePythonDispatcher,
    _ExcludeDispatchKeyGuard,
    _ForceDispatchKeyGuard,
    _IncludeDispatchKeyGuard,
    _PreserveDispatchKeyGuard,
    _SetExcludeDispatchKeyGuard,
)

if TYPE_CHECKING:
    from .._engine.contract import KernelFunction

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "DispatchKey",
    "DispatchKeySet",
    "ExcludeDispatchKeyGuard",
    "SafeKernelFunction",
    "Tag",
    "_AutoDispatchBelowADInplaceOrView",
    "_AutoDispatchBelowAutograd",
    "_DisablePythonDispatcher",
    "_DisableTorchDispatch",
    "_DispatchModule",
    "_DispatchOperatorHandle",
    "_disabled_torch_function_impl",
    "_has_torch_function",
    "_has_torch_function_unary",
    "_has_torch_function_variadic",
    "_is_torch_function_mode_enabled",
    "_len_torch_function_stack",
    "_pop_torch_function_stack",
    "_push_on_torch_function_stack",
    "_skip_one_hop_torch_function",
    "_EnablePreDispatch",
    "_EnablePythonDispatcher",
    "_ExcludeDispatchKeyGuard",
    "_ForceDispatchKeyGuard",
    "_IncludeDispatchKeyGuard",
    "_PreserveDispatchKeyGuard",
    "_SafeKernelFunction",
    "_SetExcludeDispatchKeyGuard",
    "_any_output_is_alias_to_input_or_output",
    "_any_requires_grad",
    "_dispatch_autogradother_backends",
    "_dispatch_call_boxed",
    "_dispatch_check_all_invariants",
    "_dispatch_check_invariants",
    "_dispatch_clear_leaked_python_filenames",
    "_dispatch_dump",
    "_dispatch_dump_table",
    "_dispatch_find_dangling_impls",
    "_dispatch_find_schema_or_throw",
    "_dispatch_get_all_op_names",
    "_dispatch_get_backend_keyset_from_autograd",
    "_dispatch_get_computed_kernel_for_dispatch_key",
    "_dispatch_get_registrations_for_dispatch_key",
    "_dispatch_has_backend_fallback",
    "_dispatch_has_computed_kernel_for_dispatch_key",
    "_dispatch_has_kernel",
    "_dispatch_has_kernel_for_any_dispatch_key",
    "_dispatch_has_kernel_for_dispatch_key",
    "_dispatch_isTensorSubclassLike",
    "_dispatch_is_alias_key",
    "_dispatch_is_included_in_alias",
    "_dispatch_kernel_for_dispatch_key_is_fallthrough",
    "_dispatch_key_for_device",
    "_dispatch_key_name",
    "_dispatch_key_parse",
    "_dispatch_key_set",
    "_dispatch_keys",
    "_dispatch_keyset_full",
    "_dispatch_keyset_full_after",
    "_dispatch_keyset_to_string",
    "_dispatch_library",
    "_dispatch_num_backends",
    "_dispatch_print_registrations_for_dispatch_key",
    "_dispatch_pystub",
    "_dispatch_set_report_error_callback",
    "_dispatch_tls_is_dispatch_key_excluded",
    "_dispatch_tls_is_dispatch_key_included",
    "_dispatch_tls_local_exclude_set",
    "_dispatch_tls_local_include_set",
    "_dispatch_tls_set_dispatch_key_excluded",
    "_dispatch_tls_set_dispatch_key_included",
    "_get_warnAlways",
    "_is_opaque_type_registered",
    "_jit_resolve_packet",
    "_parse_dispatch_key",
    "_register_opaque_type",
    "_set_warnAlways",
    "_unregister_opaque_type",
    "parse_schema",
]

_F = TypeVar("_F", bound=Callable[..., Any])


# -- dispatch keys ---------------------------------------------------------------------
def _optional_key(dispatch: KeyArg) -> Optional[DispatchKey]:
    """A ``dispatch`` string of the registration bindings: "" (and Undefined,
    c10's CatchAll) means "the library's key"."""
    if dispatch == "":
        return None
    key = key_arg(dispatch)
    return None if key == DispatchKey.Undefined else key


def _dispatch_key_name(key: KeyArg) -> str:
    return key_arg(key).name


def _dispatch_is_alias_key(key: KeyArg) -> bool:
    return is_alias_key(key_arg(key))


def _dispatch_is_included_in_alias(key: KeyArg, alias: KeyArg) -> bool:
    return is_included_in_alias(key_arg(key), key_arg(alias))


def _dispatch_keyset_full() -> DispatchKeySet:
    return DispatchKeySet.full()


def _dispatch_keyset_full_after(key: KeyArg) -> DispatchKeySet:
    return DispatchKeySet.full_after(key_arg(key))


def _dispatch_has_backend_fallback(key: KeyArg) -> bool:
    return shim_registry().has_backend_fallback(key_arg(key))


def _dispatch_get_backend_keyset_from_autograd(key: KeyArg) -> DispatchKeySet:
    """The backend keys an autograd key guards (empty for any other key)."""
    return get_backend_key_set_from_autograd(key_arg(key))


def _dispatch_keyset_to_string(keyset: DispatchKeySet) -> str:
    return repr(keyset_arg(keyset, None, "_dispatch_keyset_to_string"))


def _dispatch_num_backends() -> int:
    return NUM_BACKENDS


# The backends whose autograd key is AutogradOther (c10::autogradother_backends):
# an attribute in torch._C, not a function.
_dispatch_autogradother_backends = AUTOGRADOTHER_BACKENDS


# -- parsing ---------------------------------------------------------------------------
def _torch_errors(method: _F) -> _F:
    """Parse errors of schemas and names are RuntimeErrors, as torch's."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except SchemaParseError as e:
            raise RuntimeError(str(e)) from e

    return wrapper  # type: ignore[return-value]


_KINDS = ("DEF", "IMPL", "FRAGMENT")
_ALIAS_ANALYSIS = {"": "FROM_SCHEMA", "FROM_SCHEMA": "FROM_SCHEMA", "CONSERVATIVE": "CONSERVATIVE",
                   "PURE_FUNCTION": "PURE_FUNCTION"}


def _alias_analysis(kind: str) -> str:
    try:
        return _ALIAS_ANALYSIS[kind]
    except KeyError:
        raise RuntimeError(f"could not parse {kind}") from None


def _op_name(name: str) -> str:
    """``name`` parsed and printed canonically; a bad name is a RuntimeError, as
    torch's (here, not by _torch_errors: the lookups below take no wrapper)."""
    try:
        return str(OperatorName.parse(name))
    except SchemaParseError as e:
        raise RuntimeError(str(e)) from e


# -- kernels ---------------------------------------------------------------------------
def _identity(tensor: Any) -> Any:
    return tensor


# The schema c10 infers for the C++ kernel ``Tensor (const Tensor&)`` of the
# *_t_t bindings (the name is a placeholder).
_T_T_SCHEMA = FunctionSchema.parse("_(Tensor _0) -> Tensor _0")
_T_T_KERNEL = Kernel(KernelKind.UNBOXED, _identity)
_FALLTHROUGH = Kernel(KernelKind.FALLTHROUGH, None)


def _python_kernel(func: Callable[..., Any], with_keyset: bool) -> Kernel:
    """torch's PythonKernelHolder: a boxed kernel calling ``func(*args, **kwargs)``
    (``func(keyset, ...)`` with ``with_keyset``), the arguments passed as torch
    passes them (FunctionSchema.split_call_without_defaults)."""

    # The operator's own boxer (not one made from its schema), which is its
    # registry's engine's: the shim may be on any registry.
    def kernel(op: Any, keyset: DispatchKeySet, stack: ivalue.Stack) -> None:
        args, kwargs = op.schema.split_call_without_defaults(ivalue.unbox_arguments(op, stack))
        result = func(keyset, *args, **kwargs) if with_keyset else func(*args, **kwargs)
        ivalue.box_returns(op, result, stack)

    return Kernel(KernelKind.BOXED, kernel)


def _python_fallback(func: Callable[..., Any], with_keyset: bool) -> Kernel:
    """torch's PythonFallbackKernel: ``func(op, *args, **kwargs)`` (``func(keyset,
    op, ...)`` with ``with_keyset``), as Library.fallback registers it."""
    return Kernel(KernelKind.BOXED, python_fallback(func, with_keyset))


# -- libraries -------------------------------------------------------------------------
class _DispatchModule:
    """A c10 library, as ``_dispatch_library`` returns it.  Registrations
    without a debug text print ``registered at FILE:LINE`` of the library."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def __repr__(self) -> str:
        return f"<_DispatchModule {self._lib!r}>"

    def _t_t(self, debug: str) -> AnnotatedKernel:
        return AnnotatedKernel(_T_T_KERNEL, debug or self._lib._default_debug(), _T_T_SCHEMA)

    def _python(self, func: Callable[..., Any], kernel: Callable[[Callable[..., Any], bool], Kernel],
                with_keyset: bool) -> AnnotatedKernel:
        if func is fallthrough_kernel:
            return AnnotatedKernel(_FALLTHROUGH, self._lib._default_debug())
        if not callable(func):
            raise TypeError(f"a kernel must be callable, got {type(func).__name__}")
        return AnnotatedKernel(kernel(func, with_keyset), self._lib._default_debug())

    @_torch_errors
    def def_(self, schema: str, alias: str = "") -> "_DispatchModule":
        analysis = _alias_analysis(alias)
        self._lib._def(FunctionSchema.parse(schema), analysis)
        return self

    @_torch_errors
    def def_legacy(self, schema: str) -> "_DispatchModule":
        self._lib._def(FunctionSchema.parse(schema), "CONSERVATIVE", alias_analysis_is_default=True)
        return self

    @_torch_errors
    def def_name_t_t(self, name: str, dispatch: str = "", debug: str = "default_def_name_t_t") -> "_DispatchModule":
        schema = FunctionSchema(OperatorName.parse(name), _T_T_SCHEMA.arguments, _T_T_SCHEMA.returns)
        self._lib._def_with_kernel(schema, _optional_key(dispatch), self._t_t(debug), "CONSERVATIVE")
        return self

    @_torch_errors
    def def_schema_t_t(self, name: str, dispatch: str = "", alias: str = "",
                       debug: str = "default_def_schema_t_t") -> "_DispatchModule":
        analysis = _alias_analysis(alias)
        self._lib._def_with_kernel(FunctionSchema.parse(name), _optional_key(dispatch), self._t_t(debug), analysis)
        return self

    @_torch_errors
    def impl_t_t(self, name: str, dispatch: str = "", debug: str = "impl_t_t") -> "_DispatchModule":
        self._lib._impl(name, _optional_key(dispatch), self._t_t(debug))
        return self

    @_torch_errors
    def impl(self, name: str, dispatch: KeyArg, func: Callable[..., Any], with_keyset: bool = False) -> None:
        key = key_arg(dispatch)
        kernel = self._python(func, _python_kernel, with_keyset)
        self._lib._impl(name, None if key == DispatchKey.Undefined else key, kernel)

    def fallback(self, dispatch: KeyArg, func: Callable[..., Any], with_keyset: bool = False) -> None:
        key = key_arg(dispatch)
        kernel = self._python(func, _python_fallback, with_keyset)
        self._lib._fallback(None if key == DispatchKey.Undefined else key, kernel)

    def fallback_fallthrough(self, dispatch: KeyArg = "") -> "_DispatchModule":
        self._lib._fallback(_optional_key(dispatch), AnnotatedKernel(_FALLTHROUGH, self._lib._default_debug()))
        return self

    def reset(self) -> None:
        """Remove everything this library registered; it stays usable, as c10's."""
        self._lib._reset()


def _dispatch_library(kind: str, name: str, dispatch: str, file: str = "/dev/null",
                      linenum: int = 0) -> _DispatchModule:
    """A library of ``kind`` (DEF, IMPL, FRAGMENT) for namespace ``name``
    (``_``: every namespace, for fallbacks), created at ``file:linenum``."""
    if kind not in _KINDS:
        raise RuntimeError(f"could not parse {kind}")
    key = _optional_key(dispatch)
    return _DispatchModule(Library._at_site(name, kind, key, f"registered at {file}:{linenum}", registry=shim_registry()))


# -- queries ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SafeKernelFunction:
    """A computed table entry, as ``_dispatch_get_computed_kernel_for_dispatch_key`` returns it."""

    kernel: KernelFunction  # the engine's KernelFunction in the slot
    debug: str
    op_handle: _DispatchOperatorHandle  # the operator it is an entry of
    # The operator's registration it runs, while that registration lasts
    # (None: a kernel that is no registration of the operator's, a backend fallback say).
    registration: Optional[AnnotatedKernel] = None

    def __repr__(self) -> str:
        return f"SafeKernelFunction(debug='{self.debug}')"

    def call_boxed(self, keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        """Run this kernel itself, whatever the dispatcher would choose for
        ``keyset`` (which the kernel gets), on the boxed arguments.  Once its
        registration is removed (its library closed), it raises RuntimeError, as torch's."""
        handle = self.op_handle
        if self.registration is not None and not _still_registered(handle.entry, self.registration):
            raise RuntimeError(f"SafeKernelFunction has been invalidated {self.debug}")
        ks = keyset_arg(keyset, handle.registry.engine, "call_boxed")
        kernel = self.kernel
        kind = kernel.kind

        def run(op: Any, stack: Any) -> None:
            fn = kernel.fn
            if kind == KernelKind.AMBIGUOUS_AUTOGRAD_OTHER:
                handle.entry.report_error(KernelKind(kind), DispatchKey.AutogradOther)
            if fn is None:
                # A fallthrough: its key is skipped, never run (torch fails an internal assertion).
                raise RuntimeError(f"{op.name()}: a fallthrough kernel cannot be called; the dispatcher skips its key")
            if kind == KernelKind.BOXED:
                fn(op, ks, stack)
                return
            call_args, call_kwargs = op.schema.split_call(op.boxer.unbox_arguments(stack))
            if kind == KernelKind.WITH_OPERATOR:
                op.boxer.box_returns(fn(op, ks, call_args, call_kwargs), stack)
                return
            if kind == KernelKind.WITH_KEYSET:
                call_args = (ks, *call_args)
            op.boxer.box_returns(fn(*call_args, **call_kwargs), stack)

        return handle.boxed(run, args, kwargs)


# torch._C's name of the class.
_SafeKernelFunction = SafeKernelFunction


def _still_registered(op: OperatorEntry, registration: AnnotatedKernel) -> bool:
    return any(k is registration for kernels in op.kernels.values() for k in kernels)


def _find(name: str) -> Optional[OperatorEntry]:
    # The registry's names are canonical (str of a parsed name), so a text
    # found as it is needs no parsing; any other is parsed (and may not parse).
    registry = shim_registry()
    op = registry.find_op(name) if type(name) is str else None
    return op if op is not None else registry.find_op(_op_name(name))


def _find_or_throw(name: str) -> OperatorEntry:
    op = _find(name)
    if op is None:
        raise RuntimeError(f"operator {name} does not exist")
    return op


def _dispatch_dump(name: str) -> str:
    op = _find(name)
    return "" if op is None else op.dump_state()


# A dump-table line of one of this package's standard fallbacks (dispatcher/standard_fallbacks.py).
_STANDARD_FALLBACK_LINE = re.compile(
    rf"^(\w+): (?:fallthrough )?{STANDARD_FALLBACK_DEBUG} \(standard \w+ fall(?:through|back)\) \[backend fallback\]$"
)


def _as_torch_prints_it(line: str) -> Optional[str]:
    """A dump-table line as torch prints its slot: a standard fallback's as torch's
    framework fallback there, or None where torch has none (AutogradHIP, ...)."""
    match = _STANDARD_FALLBACK_LINE.match(line)
    if match is None:
        return line
    key = match.group(1)
    return torch_fallback_line(key) if key in TORCH_FALLBACK_SOURCES else None


def _dispatch_dump_table(name: str) -> str:
    """The operator's computed table as torch prints it: the slots of this
    package's standard fallbacks read as torch's framework fallbacks do
    (``AutogradCPU: registered at .../VariableFallbackKernel.cpp:66 [backend
    fallback]``); the package's own ``dump_computed_table`` says more."""
    op = _find(name)
    if op is None:
        return ""
    # Only a fallback's line can be a standard fallback's: the registry's
    # fallback lines are rewritten, once per state of its fallbacks.
    return op.dump_computed_table(_torch_fallback_lines(op.registry))


# Registry -> (its fallback_lines, them as torch prints them).  The registry
# replaces the tuple whole when a fallback changes: the cache holds it, and
# tells a new state by identity.
_TORCH_FALLBACK_LINES: "weakref.WeakKeyDictionary[Any, tuple[tuple[str, ...], tuple[str, ...]]]" = weakref.WeakKeyDictionary()


def _torch_fallback_lines(registry: Any) -> tuple[str, ...]:
    lines = registry.fallback_lines
    cached = _TORCH_FALLBACK_LINES.get(registry)
    if cached is None or cached[0] is not lines:
        torch_lines = []
        for line in lines:
            as_torch = _as_torch_prints_it(line[:-1]) if line else ""
            torch_lines.append("" if not as_torch else as_torch + "\n")
        cached = _TORCH_FALLBACK_LINES[registry] = (lines, tuple(torch_lines))
    return cached[1]


def _dispatch_check_invariants(name: str) -> None:
    op = _find(name)
    if op is not None:
        try:
            op.check_invariants()
        except AssertionError as e:
            raise RuntimeError(str(e)) from e


def _dispatch_has_kernel(name: str) -> bool:
    """Whether the operator exists (has a def or a kernel)."""
    return _find(name) is not None


def _dispatch_has_kernel_for_dispatch_key(name: str, dispatch: KeyArg) -> bool:
    return _find_or_throw(name).has_kernel_for_dispatch_key(key_arg(dispatch))


def _dispatch_has_kernel_for_any_dispatch_key(name: str, keyset: DispatchKeySet) -> bool:
    return _find_or_throw(name).has_kernel_for_any_dispatch_key(keyset)


def _dispatch_kernel_for_dispatch_key_is_fallthrough(name: str, dispatch: KeyArg) -> bool:
    """Whether the kernel registered directly for the key is a fallthrough."""
    op = _find_or_throw(name)  # torch 2.13 crashes on an unknown operator
    key = key_arg(dispatch)
    kernel = op.kernel_for(key)
    if kernel is None:
        raise RuntimeError(f"no kernel for {key} on {op.name}")
    return kernel.kernel.is_fallthrough()


def _runtime_slot(op: OperatorEntry, key: DispatchKey) -> KernelFunction:
    # Any key has a table slot in c10, as its keyset's runtime index: a
    # functionality key (Dense) shares its first backend's (CPU).
    if is_alias_key(key):
        raise RuntimeError("Alias keys do not have runtime kernel registrations.")
    return op.computed_kernel(RUNTIME_SLOT_KEYS[table_index(KEY_REPRS[key])])


def _dispatch_has_computed_kernel_for_dispatch_key(name: str, dispatch: KeyArg) -> bool:
    op = _find_or_throw(name)
    return _runtime_slot(op, key_arg(dispatch)).is_valid()


def _dispatch_get_computed_kernel_for_dispatch_key(name: str, dispatch: KeyArg) -> SafeKernelFunction:
    """The table entry for the key's slot, with the debug text of the kernel
    the precedence rules choose for the key itself (as c10 reports it)."""
    op = _find_or_throw(name)
    key = key_arg(dispatch)
    entry = _runtime_slot(op, key)
    if not entry.is_valid():
        raise RuntimeError(f"no kernel for {key} for {op.name}")
    if op.schema is None:
        op_name = OperatorName.parse(op.name)
        raise RuntimeError(
            f"Could not find schema for {op_name.qualified_name}.{op_name.overload_name} but we found an "
            "implementation; did you forget to def() the operator?"
        )
    annotated, _rule = op.compute_entry(key)
    registration = annotated if annotated is not None and _still_registered(op, annotated) else None
    return SafeKernelFunction(entry, "" if annotated is None else annotated.debug,
                              _DispatchOperatorHandle(shim_registry(), op), registration)


def _dispatch_get_registrations_for_dispatch_key(dispatch_key: str = "") -> list[str]:
    """Names of the operators with a kernel for the key (all operators for "")."""
    return shim_registry().registrations_for_dispatch_key(None if dispatch_key == "" else _dispatch_key_parse(dispatch_key))


def _dispatch_print_registrations_for_dispatch_key(dispatch_key: str = "") -> None:
    """Print the names of the operators with a kernel for the key (all
    operators for ""), one a line."""
    for name in _dispatch_get_registrations_for_dispatch_key(dispatch_key):
        print(name)


def _dispatch_get_all_op_names() -> list[str]:
    """The names (``ns::op`` or ``ns::op.overload``) of every operator with a def or a kernel."""
    return shim_registry().all_op_names()


def _dispatch_find_dangling_impls() -> list[str]:
    """The dumps of the operators that have kernels but no def."""
    return [op.dump_state() for op in shim_registry().find_dangling_impls()]


def _dispatch_check_all_invariants() -> None:
    """Check every operator's stored table against a recomputation."""
    try:
        shim_registry().check_invariants()
    except AssertionError as e:
        raise RuntimeError(str(e)) from e


def _dispatch_pystub(name: str, overload_name: str) -> Optional[tuple[str, str]]:
    """The Python module to import for the operator's fake kernel, and the
    context that asked for it, as C++ libraries set them with
    ``m.set_python_module`` (torch: None when there is none).  Nothing here
    can set one (there are no C++ libraries), so there is never one."""
    str_arg(name, "_dispatch_pystub", "name")
    str_arg(overload_name, "_dispatch_pystub", "overload_name")
    return None


def _dispatch_clear_leaked_python_filenames() -> None:
    """torch frees the file names its Python registrations had to leak (C++
    keeps them as raw strings); this package's debug texts are Python
    strings that are freed with their registrations, so there is nothing to free."""


# -- packets -------------------------------------------------------------------------
def _jit_resolve_packet(op_name: str, *args: Any, **kwargs: Any) -> str:
    """The overload name (``"default"`` for the unnamed one) a call of the
    packet ``op_name`` ("ns::name") with these arguments runs, chosen as the
    call chooses it, without running it; RuntimeError when none accepts them."""
    namespace, _, name = str_arg(op_name, "_jit_resolve_packet", "op_name").partition("::")
    packet = shim_registry().packet(f"{namespace}::{name}") if namespace and name else None
    if packet is None:
        raise RuntimeError(f"Overloaded torch operator invoked from Python failed to match any schema:\n"
                           f"no operator named {op_name}")
    try:
        handle = shim_registry().engine.resolve_overload(packet, args, kwargs)
    except TypeError as exc:
        raise RuntimeError(f"Overloaded torch operator invoked from Python failed to match any schema:\n{exc}") from None
    return str(handle._overloadname)


def parse_schema(schema: str) -> FunctionSchema:
    """torch._C.parse_schema: ``schema`` parsed (type variables allowed, as in torch)."""
    return FunctionSchema.parse(str_arg(schema, "parse_schema", "schema"))


# -- opaque types and the warn_always flag -----------------------------------------
def _register_opaque_type(name: str) -> None:
    """torch._C._register_opaque_type: ``name`` parses as PyObject in schemas (dispatcher.opaque_types)."""
    opaque_types.register_opaque_type(str_arg(name, "_register_opaque_type", "name"))


def _unregister_opaque_type(name: str) -> None:
    opaque_types.unregister_opaque_type(str_arg(name, "_unregister_opaque_type", "name"))


def _is_opaque_type_registered(name: str) -> bool:
    return opaque_types.is_opaque_type_registered(str_arg(name, "_is_opaque_type_registered", "name"))


_set_warnAlways = warn_always.set_warn_always  # noqa: N816  (torch's names)
_get_warnAlways = warn_always.is_warn_always_enabled  # noqa: N816


# -- the __torch_function__ layer (dispatcher/torch_function.py) ---------------------
DisableTorchFunction = torch_function.DisableTorchFunction
DisableTorchFunctionSubclass = torch_function.DisableTorchFunctionSubclass
_disabled_torch_function_impl = torch_function.disabled_torch_function_impl
_has_torch_function = torch_function.has_torch_function
_has_torch_function_unary = torch_function.has_torch_function_unary
_has_torch_function_variadic = torch_function.has_torch_function_variadic
_is_torch_function_mode_enabled = torch_function.is_torch_function_mode_enabled
_skip_one_hop_torch_function = torch_function.redispatch_function
_push_on_torch_function_stack = torch_function.push_mode
_pop_torch_function_stack = torch_function.pop_mode
_len_torch_function_stack = torch_function.mode_stack_len
