"""The PythonDispatcher key's fallback: torch's "Python dispatcher".

torch registers a fallback on the PythonDispatcher key at startup (its
PythonFallbackKernel.cpp), and ``torch._C._EnablePythonDispatcher()``
includes the key in the thread's TLS (dispatcher/compat/_tls.py).  From then
on every call of the thread reaches the fallback first, which does in Python
what the computed table does in C++ (torch/_ops.py: ``OpOverload._get_dispatch``
and ``resolve_key``): take the call's highest key below PythonDispatcher,
choose the kernel for it by c10's precedence rules from the operator's
registrations (a kernel at the key itself; CompositeExplicitAutograd...;
CompositeImplicitAutograd unless a backend kernel exists; Autograd;
FuncTorchBatchedDecomposition; else the key's backend fallback), and run
that kernel (``callBoxedForDispatchKey``, not a redispatch: the kernel's own
redispatches keep PythonDispatcher, whose bit every "after" keyset keeps,
and come back here).  torch's tool for checking that the Python
implementation agrees with the C++ one; here it agrees with the computed
table by construction, as the tests check.

The kernel runs with the keyset the fallback got (torch recomputes it from
the arguments and the TLS, which for a first call is the same set).
"""
from __future__ import annotations

from typing import Any, Callable

from ._kernel_kind import KernelKind
from .keys import DispatchKey
from .keysets import AUTOGRADOTHER_BACKENDS, get_backend_key_set_from_autograd, is_included_in_alias

__all__ = ["python_dispatcher_fallback", "resolve_key"]

K = DispatchKey


def resolve_key(entry: Any, key: DispatchKey, has_backend_fallback: Callable[[DispatchKey], bool]) -> DispatchKey:
    """torch._ops.resolve_key: the key whose kernel serves runtime key ``key`` of
    the operator ``entry`` (an OperatorEntry): ``key`` itself, an alias key,
    or ``key`` again for its backend fallback.  NotImplementedError when there is none."""
    has = entry.has_kernel_for_dispatch_key
    # 1. A kernel registered at the key itself.
    if has(key):
        return key
    # 2.1, 2.2. CompositeExplicitAutogradNonFunctional, then CompositeExplicitAutograd.
    for alias in (K.CompositeExplicitAutogradNonFunctional, K.CompositeExplicitAutograd):
        if (key == K.Undefined or is_included_in_alias(key, alias)) and has(alias):
            return alias
    has_backend_kernel = (entry.has_kernel_for_any_dispatch_key(get_backend_key_set_from_autograd(key))
                          or has(K.CompositeExplicitAutograd))
    # 2.3. CompositeImplicitAutograd(NestedTensor), unless a backend kernel exists.
    alias = K.CompositeImplicitAutogradNestedTensor
    if key != K.Undefined and is_included_in_alias(key, alias) and has(alias) and not has_backend_kernel:
        return alias
    alias = K.CompositeImplicitAutograd
    if (key == K.Undefined or is_included_in_alias(key, alias)) and has(alias):
        if key == K.AutogradOther and entry.has_kernel_for_any_dispatch_key(AUTOGRADOTHER_BACKENDS):
            raise RuntimeError("ambiguous autogradother kernel")
        if not has_backend_kernel:
            return alias
    # 2.4, 2.5. Autograd, then FuncTorchBatchedDecomposition.
    for alias in (K.Autograd, K.FuncTorchBatchedDecomposition):
        if is_included_in_alias(key, alias) and has(alias):
            return alias
    # The key's backend fallback: calling at the key runs it.
    if has_backend_fallback(key):
        return key
    raise NotImplementedError(f"could not find kernel for {entry.handle} at dispatch key DispatchKey.{key.name}")


def python_dispatcher_fallback(registry: Any) -> Callable[[Any, Any, tuple, dict], Any]:
    """The PythonDispatcher fallback of ``registry`` (a WITH_OPERATOR kernel:
    ``fn(op, keyset, args, kwargs)``)."""

    def has_backend_fallback(key: DispatchKey) -> bool:
        return registry.has_backend_fallback(key)

    def fallback(op: Any, keyset: Any, args: tuple, kwargs: dict) -> Any:
        entry = registry.find_op(op._name)
        key = keyset.remove(K.PythonDispatcher).highest_priority_key()
        resolved = resolve_key(entry, key, has_backend_fallback)
        annotated = entry.kernel_for(resolved) if entry.has_kernel_for_dispatch_key(resolved) else None
        if annotated is None:
            annotated = registry.backend_fallback(resolved)
        kernel = annotated.kernel
        return _call(kernel.kind, kernel.fn, op, keyset, args, kwargs)

    return fallback


def _call(kind: KernelKind, fn: Any, op: Any, keyset: Any, args: tuple, kwargs: dict) -> Any:
    """Run one kernel as its kind takes a call (KernelKind)."""
    if kind == KernelKind.UNBOXED:
        return fn(*args, **kwargs)
    if kind == KernelKind.WITH_KEYSET:
        return fn(keyset, *args, **kwargs)
    if kind == KernelKind.WITH_OPERATOR:
        return fn(op, keyset, args, kwargs)
    if kind == KernelKind.BOXED:
        boxer = op.boxer
        stack = boxer.box(args, kwargs)
        fn(op, keyset, stack)
        return boxer.unbox_returns(stack)
    # A fallthrough is masked out of the call's keyset before it gets here; torch fails an assertion.
    raise RuntimeError(f"{op._name}: the Python dispatcher found no kernel it can run ({kind.name}) for keyset {keyset}")
