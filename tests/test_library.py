"""dispatcher.Library: what the goldens do not pin down.

Library kinds and their rules, impl before def, overriding, lifetime (close,
``with``, garbage collection), all-or-nothing registration, and the
``define`` / ``impl`` decorators.
"""
from __future__ import annotations

import gc
import itertools
import re
import sys

import pytest

import dispatcher
from dispatcher import DispatchKey, DispatchKeySet, Library, TensorBase, fallthrough_kernel, ops
from dispatcher.compat import torch_C as C
from dispatcher.registry import default_registry as registry

_ns = (f"libtest{i}" for i in itertools.count())
HERE = __file__


@pytest.fixture
def ns():
    return next(_ns)


def line() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def cpu() -> TensorBase:
    return TensorBase(DispatchKeySet([DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU]))


def world() -> tuple:
    """Everything registered, as the dumps show it."""
    ops_state = {q: (C._dispatch_dump(q), C._dispatch_dump_table(q)) for q in registry.all_op_names()}
    fallbacks = {k: getattr(registry.backend_fallback(k), "debug", None) for k in DispatchKey}
    return ops_state, fallbacks, sorted(registry._def_namespaces)


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


def test_an_impl_librarys_key_applies_to_all_its_impls(ns):
    with Library(ns, "DEF") as defs, Library(ns, "IMPL", "CPU") as cpu_impls:
        defs.define("f(Tensor x) -> Tensor")
        defs.define("g(Tensor x) -> Tensor")
        cpu_impls.impl("f", lambda x: "f_cpu")
        cpu_impls.impl("g", lambda x: "g_cpu", "CPU")  # the same key, explicitly: fine
        assert C._dispatch_get_registrations_for_dispatch_key("CPU").count(f"{ns}::f") == 1
        assert (getattr(ops, ns).f.default(cpu()), getattr(ops, ns).g.default(cpu())) == ("f_cpu", "g_cpu")
        with pytest.raises(RuntimeError, match=r'^impl\("f", \.\.\.\): Explicitly provided dispatch key \(XLA\) is '
                           r"inconsistent with the dispatch key of the enclosing TORCH_LIBRARY_IMPL block \(CPU\)\."):
            cpu_impls.impl("f", lambda x: x, "XLA")
        # Without any key a kernel is the catch-all, CompositeImplicitAutograd.
        defs.impl("f", lambda x: "math")
        assert C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CompositeImplicitAutograd")


def test_namespaces_must_match(ns):
    with Library(ns, "FRAGMENT") as lib:
        with pytest.raises(RuntimeError, match=r"^Explicitly provided namespace \(other\) in schema string does not "):
            lib.define("other::f(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match=r'^impl\("other::f", \.\.\.\): Explicitly provided namespace \(other\)'):
            lib.impl("other::f", lambda x: x, "CPU")
        assert lib.define(f"{ns}::f.out(Tensor x) -> Tensor") == "f.out"


def test_the_wildcard_namespace_is_for_fallbacks(ns):
    with Library("_", "IMPL") as wildcard:
        with pytest.raises(RuntimeError, match="TORCH_LIBRARY_IMPL block of the wildcard namespace _ registers only"):
            wildcard.impl("f", lambda x: x, "CPU")
        with pytest.raises(RuntimeError, match=rf"^impl\(\"{ns}::f\", \.\.\.\).*block \(std::nullopt\)\."):
            wildcard.impl(f"{ns}::f", lambda x: x, "CPU")
        with pytest.raises(RuntimeError, match="^fallback\\(\\.\\.\\.\\): no dispatch key"):
            wildcard.fallback(lambda op, stack: None)
        wildcard.fallback(fallthrough_kernel, "PrivateUse3")
        assert registry.has_backend_fallback(DispatchKey.PrivateUse3)
    assert not registry.has_backend_fallback(DispatchKey.PrivateUse3)
    with Library(ns, "IMPL", "XLA") as namespaced:
        with pytest.raises(RuntimeError, match=f'^Fallback can only be registered using library fragment on the '
                           f'global namespace "_" but it is {ns}$'):
            namespaced.fallback(lambda op, stack: None)
    for kind in ("DEF", "FRAGMENT"):
        with pytest.raises(RuntimeError, match="cannot define .* with the wildcard namespace _"):
            Library("_", kind)


def test_library_arguments_are_checked(ns):
    with pytest.raises(ValueError, match="^Unsupported kind: BOGUS$"):
        Library(ns, "BOGUS")
    with pytest.raises(ValueError, match="^aten is a reserved namespace"):
        Library("aten", "FRAGMENT")
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
def test_impl_before_def(ns):
    impls = Library(ns, "FRAGMENT")
    impls.impl("f", lambda x: "cpu", "CPU")
    q = f"{ns}::f"
    assert C._dispatch_dump(q).startswith(f"name: {q}\nschema: (none)\n")
    assert C._dispatch_dump(q) in C._dispatch_find_dangling_impls()
    defs = Library(ns, "FRAGMENT")
    defs.define("f(Tensor x) -> Tensor")
    assert getattr(ops, ns).f.default(cpu()) == "cpu"
    defs.close()  # the kernel stays, the operator is dangling again
    assert C._dispatch_dump(q) in C._dispatch_find_dangling_impls()
    impls.close()
    assert C._dispatch_dump(q) == ""


def test_overriding_newest_wins_and_the_old_kernel_comes_back(ns):
    q = f"{ns}::f"
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "old", "CPU", debug="old kernel")
        newer = Library(ns, "IMPL", "CPU")
        with pytest.warns(UserWarning, match="Overriding a previously registered kernel.*\n.*\n.*\n  dispatch key: CPU\n"
                          "  previous kernel: old kernel\n       new kernel: new kernel"):
            newer.impl("f", lambda x: "new", debug="new kernel")
        assert getattr(ops, ns).f.default(cpu()) == "new"
        assert "CPU: new kernel :: (none) [ boxed unboxed ]\nCPU (inactive): old kernel :: " in C._dispatch_dump(q)
        with pytest.raises(RuntimeError, match="^This is not allowed since there's already a kernel registered from "
                           f"python overriding f's behavior for CPU dispatch key and {ns} namespace.$"):
            lib.impl("f", lambda x: "third", "CPU", allow_override=False)
        newer.close()
        assert getattr(ops, ns).f.default(cpu()) == "old"
        assert "(inactive)" not in C._dispatch_dump(q)


# -- lifetime -------------------------------------------------------------------------------
def test_close_removes_exactly_what_the_library_registered(ns):
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        before = world()
        other = Library(ns, "FRAGMENT")
        other.define("g(Tensor x) -> Tensor")
        other.impl("f", lambda x: "xla", "XLA")
        with pytest.warns(UserWarning, match="Overriding"):
            other.impl("f", lambda x: "cpu2", "CPU", allow_override=True)
        fallbacks = Library("_", "IMPL")
        fallbacks.fallback(lambda op, stack: None, "PrivateUse2")
        assert world() != before
        other.close()
        fallbacks.close()
        assert world() == before
        other.close()  # idempotent
        assert world() == before
    assert f"{ns}::f" not in registry.all_op_names()


def test_with_block_and_garbage_collection_close(ns):
    before = world()
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
    assert world() == before
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    del lib  # reference counting
    assert world() == before
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.cycle = lib
    del lib
    assert f"{ns}::f" in registry.all_op_names()
    gc.collect()  # the cycle collector
    assert world() == before


# -- all or nothing ----------------------------------------------------------------------------
def _fails(expected: type[Exception], fn, *args, **kwargs) -> None:
    before = world()
    with pytest.raises(expected):
        fn(*args, **kwargs)
    assert world() == before


def test_a_failed_registration_changes_nothing(ns):
    with Library(ns, "DEF") as lib, Library("_", "IMPL") as fallbacks:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        fallbacks.fallback(fallthrough_kernel, "Meta")
        _fails(RuntimeError, lib.define, "f(Tensor x, Tensor y) -> Tensor")  # duplicate def
        _fails(RuntimeError, fallbacks.fallback, fallthrough_kernel, "Meta")  # duplicate fallback
        # An alias fallback meets Meta's only after CPU ... PrivateUse3: none of them stays.
        _fails(RuntimeError, fallbacks.fallback, fallthrough_kernel, "CompositeExplicitAutograd")
        _fails(ValueError, lib.impl, "f", lambda x: x, "Bogus")  # bad key name
        _fails(ValueError, lib.define, "g(Tensor x -> Tensor")  # bad schema
        _fails(TypeError, lib.impl, "f", "not callable", "XLA")
        _fails(TypeError, fallbacks.fallback, 42, "XLA")
        _fails(RuntimeError, lib.impl, "other::f", lambda x: x, "XLA")  # wrong namespace
        _fails(RuntimeError, lib.impl, "f", lambda x: x, "CPU", allow_override=False)


# -- decorators --------------------------------------------------------------------------------
def test_define_and_impl_decorators(ns):
    with Library(ns, "FRAGMENT") as lib:
        assert dispatcher.define(f"{ns}::f", "(Tensor x) -> Tensor", lib=lib) == "f"

        @dispatcher.impl(f"{ns}::f", "CPU", lib=lib)
        def f_cpu(x):
            return "cpu"

        @dispatcher.impl(f"{ns}::f", "AutogradCPU", lib=lib, with_keyset=True)
        def f_autograd(keyset, x):
            return ("autograd", getattr(ops, ns).f.default.redispatch(
                keyset & dispatcher.keysets.AFTER_AUTOGRAD_KEYSET, x))

        assert f_cpu(None) == "cpu"  # the decorator returns the function
        assert getattr(ops, ns).f.default(cpu()) == ("autograd", "cpu")
        where = re.escape(HERE)
        assert re.search(f"CPU: registered at {where}:\\d+ :: \\(none\\) \\[ boxed unboxed \\]",
                         C._dispatch_dump(f"{ns}::f"))
    assert C._dispatch_dump(f"{ns}::f") == ""


def test_decorators_without_a_library_register_for_good(ns):
    dispatcher.define(f"{ns}::g", "(Tensor x) -> Tensor")

    @dispatcher.impl(f"{ns}::g", "CPU")
    def g_cpu(x):
        return "cpu"

    gc.collect()
    assert getattr(ops, ns).g.default(cpu()) == "cpu"
    with pytest.raises(ValueError, match="expected a qualified operator name"):
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
