"""dispatcher.Library: what the goldens do not pin down.

Library kinds and their rules, impl before def, overriding, lifetime (close,
``with``, garbage collection), all-or-nothing registration, and the
``define`` / ``impl`` decorators.

The tests that call operators, register fallbacks or change what calls see
(closing, garbage collection, failed registrations) run on both engines, each
with a registry of its own (conftest.py's ``world``); those about the rules
and texts of registration, which no engine takes part in, and the decorators
that register for good, use the default registry.
"""
from __future__ import annotations

import gc
import itertools
import re
import sys

import pytest

import dispatcher
from dispatcher import DispatchKey, Library, fallthrough_kernel, ops
from dispatcher.compat import torch_C as C

_ns = (f"libtest{i}" for i in itertools.count())
HERE = __file__


@pytest.fixture
def ns():
    return next(_ns)


def line() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def cpu(world):
    return world.tensor(DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU)


def dump(world, name: str) -> str:
    """torch._C._dispatch_dump of ``name``, on ``world``'s registry."""
    op = world.registry.find_op(name)
    return "" if op is None else op.dump_state()


def dangling(world) -> list[str]:
    """torch._C._dispatch_find_dangling_impls, on ``world``'s registry."""
    return [op.dump_state() for op in world.registry.find_dangling_impls()]


def state(world) -> tuple:
    """Everything registered, as the dumps show it."""
    ops_state = {q: (dump(world, q), world.registry.find_op(q).dump_computed_table()) for q in world.registry.all_op_names()}
    fallbacks = {k: getattr(world.registry.backend_fallback(k), "debug", None) for k in DispatchKey}
    return ops_state, fallbacks, sorted(world.registry._def_namespaces)


# -- kinds ------------------------------------------------------------------------------------
def test_one_def_library_per_namespace(ns):
    first_line = line() + 1
    first = Library(ns, "DEF")
    with pytest.raises(RuntimeError) as info:
        second_line = line() + 1
        Library(ns, "DEF")
    assert str(info.value) == (
        f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your "
        "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, consider "
        "using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define operators for a "
        "single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  "
        f"Previous registration of TORCH_LIBRARY was registered at {HERE}:{first_line}; latest registration was "
        f"registered at {HERE}:{second_line}"
    )
    # FRAGMENTs may join it; once it is closed, another DEF may take the namespace.
    with Library(ns, "FRAGMENT") as fragment:
        fragment.define("f(Tensor x) -> Tensor")
    first.close()
    Library(ns, "DEF").close()


def test_no_define_in_an_impl_library(ns):
    where = line() + 1
    lib = Library(ns, "IMPL", "CPU")
    with pytest.raises(RuntimeError) as info:
        lib.define("f(Tensor x) -> Tensor")
    assert str(info.value) == (
        'def("f"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  All def()s should be placed '
        "in the (unique) TORCH_LIBRARY block for their namespace.  (Error occurred while processing "
        f"TORCH_LIBRARY_IMPL block at {HERE}:{where})"
    )


def test_an_impl_librarys_key_applies_to_all_its_impls(world, ns):
    with world.library(ns, "DEF") as defs, world.library(ns, "IMPL", "CPU") as cpu_impls:
        defs.define("f(Tensor x) -> Tensor")
        defs.define("g(Tensor x) -> Tensor")
        cpu_impls.impl("f", lambda x: "f_cpu")
        cpu_impls.impl("g", lambda x: "g_cpu", "CPU")  # the same key, explicitly: fine
        assert world.registry.registrations_for_dispatch_key(DispatchKey.CPU).count(f"{ns}::f") == 1
        assert (getattr(world.ops, ns).f.default(cpu(world)), getattr(world.ops, ns).g.default(cpu(world))) == ("f_cpu", "g_cpu")
        with pytest.raises(RuntimeError, match=r'^impl\("f", \.\.\.\): Explicitly provided dispatch key \(XLA\) is '
                           r"inconsistent with the dispatch key of the enclosing TORCH_LIBRARY_IMPL block \(CPU\)\."):
            cpu_impls.impl("f", lambda x: x, "XLA")
        # Without any key a kernel is the catch-all, CompositeImplicitAutograd.
        defs.impl("f", lambda x: "math")
        assert world.registry.find_op(f"{ns}::f").has_kernel_for_dispatch_key(DispatchKey.CompositeImplicitAutograd)


def test_namespaces_must_match(ns):
    with Library(ns, "FRAGMENT") as lib:
        with pytest.raises(RuntimeError, match=r"^Explicitly provided namespace \(other\) in schema string does not "):
            lib.define("other::f(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match=r'^impl\("other::f", \.\.\.\): Explicitly provided namespace \(other\)'):
            lib.impl("other::f", lambda x: x, "CPU")
        assert lib.define(f"{ns}::f.out(Tensor x) -> Tensor") == "f"


def test_the_wildcard_namespace_is_for_fallbacks(world, ns):
    with world.library("_", "IMPL") as wildcard:
        with pytest.raises(RuntimeError, match="TORCH_LIBRARY_IMPL block of the wildcard namespace _ registers only"):
            wildcard.impl("f", lambda x: x, "CPU")
        with pytest.raises(RuntimeError, match=rf"^impl\(\"{ns}::f\", \.\.\.\).*block \(std::nullopt\)\."):
            wildcard.impl(f"{ns}::f", lambda x: x, "CPU")
        with pytest.raises(RuntimeError, match="^fallback\\(\\.\\.\\.\\): no dispatch key"):
            wildcard.fallback(lambda op, *args, **kwargs: None)
        wildcard.fallback(fallthrough_kernel, "PrivateUse3")
        assert world.registry.has_backend_fallback(DispatchKey.PrivateUse3)
    assert not world.registry.has_backend_fallback(DispatchKey.PrivateUse3)
    with world.library(ns, "IMPL", "XLA") as namespaced:
        with pytest.raises(RuntimeError, match=f'^Fallback can only be registered using library fragment on the '
                           f'global namespace "_" but it is {ns}$'):
            namespaced.fallback(lambda op, *args, **kwargs: None)
    for kind in ("DEF", "FRAGMENT"):
        with pytest.raises(RuntimeError, match="cannot define .* with the wildcard namespace _"):
            world.library("_", kind)


def test_library_arguments_are_checked(ns):
    with pytest.raises(ValueError, match="^Unsupported kind: BOGUS$"):
        Library(ns, "BOGUS")
    with pytest.raises(ValueError, match="^prim is a reserved namespace"):
        Library("prim", "FRAGMENT")
    with pytest.raises(ValueError, match="namespace must be an identifier"):
        Library("not valid", "IMPL")
    with pytest.raises(RuntimeError, match="TORCH_LIBRARY block takes no dispatch key"):
        Library(ns, "DEF", "CPU")
    with pytest.raises(ValueError, match="could not parse dispatch key: Bogus"):
        Library(ns, "IMPL", "Bogus")
    with pytest.raises(RuntimeError, match="^Invalid alias_analysis type PURE_FUNCTION$"):
        Library(ns, "FRAGMENT").define("f(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION")
    # Legacy key names are accepted here (not by the torch._C shim).
    with Library(ns, "IMPL", "Math") as lib:
        assert lib.dispatch_key is DispatchKey.CompositeImplicitAutograd


# -- impl before def, overriding -----------------------------------------------------------
def test_impl_before_def(world, ns):
    impls = world.library(ns, "FRAGMENT")
    impls.impl("f", lambda x: "cpu", "CPU")
    q = f"{ns}::f"
    assert dump(world, q).startswith(f"name: {q}\nschema: (none)\n")
    assert dump(world, q) in dangling(world)
    defs = world.library(ns, "FRAGMENT")
    defs.define("f(Tensor x) -> Tensor")
    assert getattr(world.ops, ns).f.default(cpu(world)) == "cpu"
    defs.close()  # the kernel stays, the operator is dangling again
    assert dump(world, q) in dangling(world)
    impls.close()
    assert dump(world, q) == ""


def test_overriding_newest_wins_and_the_old_kernel_comes_back(world, ns):
    q = f"{ns}::f"
    with world.library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "old", "CPU", debug="old kernel")
        newer = world.library(ns, "IMPL", "CPU")
        with pytest.warns(UserWarning, match="Overriding a previously registered kernel.*\n.*\n.*\n  dispatch key: CPU\n"
                          "  previous kernel: old kernel\n       new kernel: new kernel"):
            newer.impl("f", lambda x: "new", debug="new kernel")
        assert getattr(world.ops, ns).f.default(cpu(world)) == "new"
        assert "CPU: new kernel :: (none) [ boxed unboxed ]\nCPU (inactive): old kernel :: " in dump(world, q)
        with pytest.raises(RuntimeError, match="^This is not allowed since there's already a kernel registered from "
                           f"python overriding f's behavior for CPU dispatch key and {ns} namespace.$"):
            lib.impl("f", lambda x: "third", "CPU", allow_override=False)
        newer.close()
        assert getattr(world.ops, ns).f.default(cpu(world)) == "old"
        assert "(inactive)" not in dump(world, q)


# -- lifetime -------------------------------------------------------------------------------
def test_close_removes_exactly_what_the_library_registered(world, ns):
    with world.library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        before = state(world)
        other = world.library(ns, "FRAGMENT")
        other.define("g(Tensor x) -> Tensor")
        other.impl("f", lambda x: "xla", "XLA")
        with pytest.warns(UserWarning, match="Overriding"):
            other.impl("f", lambda x: "cpu2", "CPU", allow_override=True)
        fallbacks = world.library("_", "IMPL")
        fallbacks.fallback(lambda op, *args, **kwargs: None, "PrivateUse2")
        assert state(world) != before
        other.close()
        fallbacks.close()
        assert state(world) == before
        other.close()  # idempotent
        assert state(world) == before
    assert f"{ns}::f" not in world.registry.all_op_names()


def test_with_block_and_garbage_collection_close(world, ns):
    before = state(world)
    with world.library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
    assert state(world) == before
    lib = world.library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    del lib  # reference counting
    assert state(world) == before
    lib = world.library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.cycle = lib
    del lib
    assert f"{ns}::f" in world.registry.all_op_names()
    gc.collect()  # the cycle collector
    assert state(world) == before


def test_calls_during_a_deferral_see_the_plan_of_before_it(world, ns):
    # Note [Deferred refreshes]: closing a library removes its registrations
    # under one deferral; calls see none of the states in between.
    lib = world.library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "math", "CompositeImplicitAutograd")
    f = getattr(world.ops, ns).f.default
    with world.registry.defer():
        world.registry.undo([lib._handles.pop()])  # the math kernel
        assert f(cpu(world)) == "cpu"
        world.registry.undo([lib._handles.pop()])  # the CPU kernel
        assert f(cpu(world)) == "cpu"  # still the plan of before the deferral
    with pytest.raises(NotImplementedError, match=f"Could not run '{ns}::f' with arguments from the 'CPU' backend"):
        f(cpu(world))
    world.registry.check_invariants(f"{ns}::f")
    lib.close()
    world.registry.check_invariants()


def test_an_operator_defined_again_has_the_fallbacks_registered_meanwhile(world, ns):
    with world.library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
    assert world.registry.find_op(f"{ns}::f") is None  # Note [An entry goes with its last registration]
    def xla_fallback(op, x):
        return x  # f(x) -> x

    with world.library("_", "IMPL") as fallbacks:
        fallbacks.fallback(xla_fallback, "XLA")
        world.registry.check_invariants()
        with world.library(ns, "DEF") as lib:
            lib.define("f(Tensor x) -> Tensor")
            xla = world.tensor(DispatchKey.XLA)
            assert getattr(world.ops, ns).f.default(xla) is xla
            assert "XLA: registered at" in world.registry.find_op(f"{ns}::f").dump_computed_table()
            world.registry.check_invariants(f"{ns}::f")
    with world.library(ns, "FRAGMENT") as lib:
        lib.impl("f", lambda x: "cpu", "CPU")  # back in use by a kernel alone
        assert "\nXLA: " not in "\n" + world.registry.find_op(f"{ns}::f").dump_computed_table()
        world.registry.check_invariants(f"{ns}::f")


# -- all or nothing ----------------------------------------------------------------------------
def _fails(world, expected: type[Exception], fn, *args, **kwargs) -> None:
    before = state(world)
    with pytest.raises(expected):
        fn(*args, **kwargs)
    assert state(world) == before


def test_a_failed_registration_changes_nothing(world, ns):
    with world.library(ns, "DEF") as lib, world.library("_", "IMPL") as fallbacks:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        fallbacks.fallback(fallthrough_kernel, "Meta")
        _fails(world, RuntimeError, lib.define, "f(Tensor x, Tensor y) -> Tensor")  # duplicate def
        _fails(world, RuntimeError, fallbacks.fallback, fallthrough_kernel, "Meta")  # duplicate fallback
        # An alias fallback meets Meta's only after CPU ... PrivateUse3: none of them stays.
        _fails(world, RuntimeError, fallbacks.fallback, fallthrough_kernel, "CompositeExplicitAutograd")
        _fails(world, ValueError, lib.impl, "f", lambda x: x, "Bogus")  # bad key name
        _fails(world, ValueError, lib.define, "g(Tensor x -> Tensor")  # bad schema
        _fails(world, TypeError, lib.impl, "f", "not callable", "XLA")
        _fails(world, TypeError, fallbacks.fallback, 42, "XLA")
        _fails(world, RuntimeError, lib.impl, "other::f", lambda x: x, "XLA")  # wrong namespace
        _fails(world, RuntimeError, lib.impl, "f", lambda x: x, "CPU", allow_override=False)


# -- decorators --------------------------------------------------------------------------------
def test_define_and_impl_decorators(world, ns):
    with world.library(ns, "FRAGMENT") as lib:
        assert dispatcher.define(f"{ns}::f", "(Tensor x) -> Tensor", lib=lib) is None  # as torch's

        @dispatcher.impl(f"{ns}::f", "CPU", lib=lib)
        def f_cpu(x):
            return "cpu"

        @dispatcher.impl(lib, "f", "AutogradCPU")  # torch's older form: impl(lib, name, dispatch_key)
        def f_autograd(x):
            return ("autograd", "f_autograd")

        assert f_cpu(None) == "cpu"  # the decorator returns the function
        assert getattr(world.ops, ns).f.default(cpu(world)) == ("autograd", "f_autograd")
        where = re.escape(HERE)
        assert re.search(f"CPU: registered at {where}:\\d+ :: \\(none\\) \\[ boxed unboxed \\]", dump(world, f"{ns}::f"))
    assert dump(world, f"{ns}::f") == ""


def test_decorators_without_a_library_register_for_good(ns):
    # They register with the default registry's own library (there is no
    # other), so this one runs on the default engine.
    dispatcher.define(f"{ns}::g", "(Tensor x) -> Tensor")

    @dispatcher.impl(f"{ns}::g", "CPU")
    def g_cpu(x):
        return "cpu"

    gc.collect()
    cpu = dispatcher.TensorBase(dispatcher.DispatchKeySet([DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU]))
    assert getattr(ops, ns).g.default(cpu) == "cpu"
    with pytest.raises(ValueError, match="Expected `qualname` to be of the form \"namespace::name\", but got g"):
        dispatcher.define("g", "(Tensor x) -> Tensor")


def test_debug_texts_name_the_registration_call(ns):
    with Library(ns, "FRAGMENT") as lib:
        define_line = line() + 1
        lib.define("f(Tensor x) -> Tensor")
        impl_line = line() + 1
        lib.impl("f", lambda x: x, "CPU")
        assert C._dispatch_dump(f"{ns}::f") == (
            f"name: {ns}::f\nschema: {ns}::f(Tensor x) -> Tensor\ndebug: registered at {HERE}:{define_line}\n"
            f"alias analysis kind: FROM_SCHEMA\nCPU: registered at {HERE}:{impl_line} :: (none) [ boxed unboxed ]\n"
        )
