"""Tests for the behaviour no test pinned down, found by mutation testing.

From the mutation findings of 2026-11-23: each test here fails under the
mutant named in its docstring, which survived the whole suite before.  The
tests of ops, calls and TLS run on both engines (conftest.py's ``world`` and
``core``); those of the registry's checks and of schema printing, which no
engine takes part in, on the default registry.
"""
from __future__ import annotations

import warnings

import pytest

from dispatcher import DispatchKey
from dispatcher.kernel import AnnotatedKernel, make_fallback_kernel
from dispatcher.registry import default_registry as registry
from dispatcher.schema import AliasInfo, FunctionSchema

K = DispatchKey


def cpu(world):
    return world.tensor(K.CPU, K.ADInplaceOrView, K.AutogradCPU)


# -- registry ---------------------------------------------------------------------------
def test_register_fallback_rejects_undefined():
    """Mutant: register_fallback accepts Undefined (the Library layer maps
    "Undefined" to "no key", so only a direct call reaches the check)."""
    kernel = AnnotatedKernel(make_fallback_kernel(lambda op, *args, **kwargs: None), "test_mutation_gaps")
    handle = None
    try:
        with pytest.raises(ValueError, match="Undefined"):
            handle = registry.register_fallback(K.Undefined, kernel)
    finally:
        if handle is not None:  # the mutant registered it: leave the dispatcher clean
            registry.undo([handle])
    assert registry.backend_fallback(K.Undefined) is None


# -- library lifetime and ops -------------------------------------------------------------
def test_closing_a_def_library_removes_its_operators_from_ops(world):
    """Mutant: deregistering a def leaves its overload name listed."""
    ns = "mutgap"
    lib = world.library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    packet = getattr(world.ops, ns).f
    assert packet.overloads() == ["default", "out"]
    lib.close()
    with pytest.raises(AttributeError, match="'ops.mutgap' object has no attribute 'f'"):
        getattr(world.ops, ns).f
    assert packet.overloads() == []
    with pytest.raises(AttributeError, match=f"no operator named {ns}::f is defined"):
        packet(cpu(world))


def test_define_close_define_lists_the_overload_once(world):
    """Mutant: as above; a second define of the name lists it twice."""
    ns = "mutgap"
    for _ in range(3):
        with world.library(ns, "DEF") as lib:
            lib.define("f(Tensor x) -> Tensor")
            lib.impl("f", lambda x: "cpu", "CPU")
            assert getattr(world.ops, ns).f.overloads() == ["default"]
            assert getattr(world.ops, ns).f(cpu(world)) == "cpu"
    assert world.registry.overload_names(f"{ns}::f") == []


def test_impl_without_override_on_a_keyed_impl_library_raises(world):
    """Mutant: impl(allow_override=False) checks CompositeImplicitAutograd,
    not the IMPL library's own key, and so only warns."""
    ns = "mutgap"
    with world.library(ns, "DEF") as defs, world.library(ns, "IMPL", "CPU") as impls:
        defs.define("f(Tensor x) -> Tensor")
        impls.impl("f", lambda x: "first", allow_override=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an override warning instead of the error is the bug
            with pytest.raises(
                RuntimeError,
                match="^This is not allowed since there's already a kernel registered from python overriding "
                f"f's behavior for CPU dispatch key and {ns} namespace.$",
            ):
                impls.impl("f", lambda x: "second", allow_override=False)
        assert getattr(world.ops, ns).f.default(cpu(world)) == "first"


# -- schema printing ----------------------------------------------------------------------
def test_alias_after_set_equal_to_before_set_reordered_is_not_printed():
    """Mutant: the after-set is compared to the before-set in order, not as a set."""
    schema = FunctionSchema.parse("ns::f(Tensor(a|b -> b|a) x) -> Tensor(b|a)")
    assert str(schema) == "ns::f(Tensor(a|b) x) -> Tensor(b|a)"
    assert str(AliasInfo(("a", "b"), True, ("b", "a"))) == "(a|b!)"
    assert str(AliasInfo(("a", "b"), False, ("b", "c"))) == "(a|b -> b|c)"


# -- thread-local state ---------------------------------------------------------------------
# DispatchKeySet(AutogradCPU) is the AutogradFunctionality bit and the CPU
# backend bit.  The guard adds both; on exit torch 2.13 puts the set back as
# it was on entry (pytorch/pytorch#178536: a snapshot restored exactly), so
# the CPU bit goes too, and so does a key the block set itself.
_CPU_BIT = 0x1
_DEFAULT_INCLUDED = 0x404000000  # BackendSelect, ADInplaceOrView
_AUTOGRAD_FUNCTIONALITY = 0x1000000000


def test_include_guard_restores_the_set_exactly_on_exit(core):
    """Mutant: the guard's exit removes only the functionality bits it added
    (leaving the CPU backend bit), or only the keys it added (keeping one the
    block set).  The raw values are torch 2.13's."""
    before = core.tls_local_include_set()
    assert before.raw_repr() == _DEFAULT_INCLUDED
    try:
        with core.IncludeDispatchKeyGuard(core.DispatchKeySet(K.AutogradCPU)):
            inside = core.tls_local_include_set().raw_repr()
            assert inside == _DEFAULT_INCLUDED | _AUTOGRAD_FUNCTIONALITY | _CPU_BIT
        assert core.tls_local_include_set().raw_repr() == _DEFAULT_INCLUDED
        with core.ExcludeDispatchKeyGuard(core.DispatchKeySet(K.CPU)):
            core.tls_set_local_include_set(core.tls_local_include_set() | core.DispatchKeySet(K.Python))
            with core.IncludeDispatchKeyGuard(core.DispatchKeySet(K.Meta)):
                core.tls_set_local_include_set(core.tls_local_include_set() | core.DispatchKeySet(K.Functionalize))
            assert core.tls_local_include_set() == before | core.DispatchKeySet(K.Python)
        assert core.tls_local_exclude_set().raw_repr() & _CPU_BIT == 0
    finally:
        core.tls_set_local_include_set(before)
    assert core.tls_local_include_set().raw_repr() == _DEFAULT_INCLUDED
