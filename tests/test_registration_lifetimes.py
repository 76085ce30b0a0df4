"""Lifetimes as torch's: a closed library refuses registrations, an operator's
entry goes with its last registration (Note [An entry goes with its last
registration] in dispatcher/registry.py), and defining and removing
operators under ever new names keeps no memory."""
import gc
import sys
import tracemalloc

import pytest

from dispatcher import DispatchKey as K
from dispatcher import Tensor, _engine, custom_op, schema
from dispatcher.library import Library, fallthrough_kernel


def test_a_closed_library_refuses_every_registration_with_torchs_error(world):
    lib = world.library("closed_lib", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.close()
    destroyed = "^Library object has been destroyed$"
    with pytest.raises(AssertionError, match=destroyed):
        lib.define("g(Tensor x) -> Tensor")
    with pytest.raises(AssertionError, match=destroyed):
        lib.impl("f", lambda x: x, "CPU")
    with pytest.raises(AssertionError, match=destroyed):
        lib._def_with_kernel(schema.FunctionSchema.parse("h(Tensor x) -> Tensor"), K.CPU,
                             _annotated(world, lambda x: x), "FROM_SCHEMA")
    fallbacks = world.library("_", "IMPL", "XLA")
    fallbacks.close()
    with pytest.raises(AssertionError, match=destroyed):
        fallbacks.fallback(fallthrough_kernel)
    # Nothing of the refused registrations took effect.
    assert world.registry.find_op("closed_lib::f") is None
    assert world.registry.find_op("closed_lib::g") is None
    assert world.registry.find_op("closed_lib::h") is None
    assert world.registry.backend_fallback(K.XLA) is None
    lib.close()  # still idempotent


def _annotated(world, fn):
    from dispatcher.kernel import AnnotatedKernel, make_kernel

    return AnnotatedKernel(make_kernel(fn), "registered by the test")


def test_the_compat_reset_keeps_the_library_usable(world, compat):
    m = compat._dispatch_library("FRAGMENT", "reset_lib", "")
    m.def_("f(Tensor x) -> Tensor")
    m.reset()
    m.def_("f(Tensor x) -> Tensor")  # c10's Library::reset leaves the library open
    assert world.registry.find_op("reset_lib::f") is not None
    m.reset()


def test_an_entry_goes_with_its_last_registration_in_any_order(world):
    name = "gone::f"
    defs = world.library("gone", "FRAGMENT")
    defs.define("f(Tensor x) -> Tensor")
    kernels = world.library("gone", "IMPL", "CPU")
    kernels.impl("f", lambda x: "cpu")
    handle = world.ops.gone.f.default
    entry = world.registry.find_op(name)
    defs.close()  # the kernel keeps the entry
    assert world.registry.find_op(name) is entry and entry.schema is None
    kernels.close()
    assert world.registry.find_op(name) is None
    assert name not in world.registry._operators and "gone::f" not in world.registry._packets
    assert world.registry.registrations_for_dispatch_key() == sorted(
        n for n in world.registry.registrations_for_dispatch_key() if not n.startswith("gone::"))
    with pytest.raises(RuntimeError, match="gone::f is not defined"):
        handle(world.tensor(K.CPU))


def test_a_failed_registration_leaves_no_entry(world, monkeypatch):
    from dispatcher.operator_entry import OperatorEntry

    def fail(*args, **kwargs):
        raise RuntimeError("injected failure")

    lib = world.library("failed_entry", "FRAGMENT")
    monkeypatch.setattr(OperatorEntry, "set_schema", fail)
    with pytest.raises(RuntimeError, match="injected"):
        lib.define("f(Tensor x) -> Tensor")
    monkeypatch.setattr(OperatorEntry, "register_kernel", fail)
    with pytest.raises(RuntimeError, match="injected"):
        lib.impl("g", lambda x: x, "CPU")
    monkeypatch.undo()
    assert [n for n in world.registry._operators if n.startswith("failed_entry::")] == []
    lib.close()


def _retained_bytes_per_cycle(cycle, warmup: int, cycles: int) -> float:
    """Bytes still allocated after ``cycles`` calls of ``cycle(name)`` under
    fresh names, per call.

    The names are made (and interned) before anything is traced: ``ops``
    sets each operator as an attribute, which interns its name, and the
    interpreter's table of interned strings, allocated untraced at start-up,
    may be resized while the cycles run; its new block would count and its
    old one not.  (The table does not grow with names that come and go: a
    name is dropped from it when the string dies.)  The schema parser's
    caches are bounded (4,096 entries each, then they start over: see
    schema.py) and emptied at both ends, so that what is measured is what
    registration keeps."""
    names = [sys.intern(f"fresh{i}") for i in range(warmup + cycles)]

    def settle() -> int:
        for cache in (schema._SCHEMA_CACHE, schema._NAME_CACHE, schema._ELEMENT_CACHE, schema._WITHOUT_TYPE_VARS):
            cache.clear()
        gc.collect()
        return tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    try:
        for name in names[:warmup]:
            cycle(name)
        before = settle()
        for name in names[warmup:]:
            cycle(name)
        after = settle()
    finally:
        tracemalloc.stop()
    return (after - before) / cycles


def _cycles(world) -> int:
    """10,000 cycles on the compiled engine, what users run; 2,000 on the pure
    twin, whose registration side is the same Python (to bound the suite's time)."""
    return 10_000 if world.engine is _engine.compiled_engine() else 2_000


def test_define_impl_close_under_fresh_names_keeps_no_memory(world):
    ops = world.ops

    def cycle(name: str) -> None:
        lib = world.library("fresh_names", "FRAGMENT")
        lib.define(f"{name}(Tensor x) -> Tensor")
        lib.impl(name, lambda x: x, "CPU")
        lib.impl(name, lambda x: x, "Autograd")
        getattr(ops.fresh_names, name).default(world.tensor(K.CPU))
        lib.close()

    per_cycle = _retained_bytes_per_cycle(cycle, warmup=500, cycles=_cycles(world))
    assert per_cycle <= 64, f"{per_cycle:.0f} bytes kept per define/impl/close cycle"


def test_custom_op_create_destroy_under_fresh_names_keeps_no_memory(in_use, world, monkeypatch):

    def cycle(name: str) -> None:
        @custom_op(f"fresh_custom::{name}", mutates_args=())
        def f(x: Tensor) -> Tensor:
            return x

        f._destroy()

    per_cycle = _retained_bytes_per_cycle(cycle, warmup=500, cycles=_cycles(world))
    assert per_cycle <= 64, f"{per_cycle:.0f} bytes kept per custom_op create/destroy cycle"


def test_register_kernel_that_fails_part_way_changes_nothing(in_use, world, monkeypatch):

    @custom_op("partway::f", mutates_args=(), device_types="cpu", schema="(Tensor x) -> str")
    def f(x):
        return "cpu kernel"

    try:
        before = dict(f._backend_fns), world.registry.find_op("partway::f").dump_state()
        calls = {"n": 0}
        original_impl = Library.impl

        def impl_failing_second(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("injected: the second impl fails")
            return original_impl(self, *args, **kwargs)

        monkeypatch.setattr(Library, "impl", impl_failing_second)
        with pytest.raises(RuntimeError, match="injected"):
            f.register_kernel(("cuda", "meta"), lambda x: "new kernel")
        monkeypatch.setattr(Library, "impl", original_impl)
        assert (dict(f._backend_fns), world.registry.find_op("partway::f").dump_state()) == before
        assert f(world.tensor(K.CPU)) == "cpu kernel"
        with pytest.raises(NotImplementedError, match="Could not run 'partway::f' with arguments from the 'CUDA'"):
            f(world.tensor(K.CUDA))
    finally:
        f._destroy()
