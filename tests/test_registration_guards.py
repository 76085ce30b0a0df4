"""What the registration side, custom ops and the Python key promise, each pinned by a test.

From the mutation findings of 2026-11-27 (../shared/findings/2026-11-27-mutation):
each test here fails under the mutant of the finding its docstring names,
which survived the whole suite before.  The rollback promises ("a failed
registration changes nothing") are tested by fault injection: a step is made
to raise part way and the dispatcher must be as it was -- the entry, its
table, its packet, the dumps.  The registry's own tests run on both engines
(``world``); those of custom ops on the default registry with prototype
tensors, as tests/test_custom_ops.py does.  ``python .ci/mutate.py`` re-runs
the mutants.
"""
from __future__ import annotations

import sys
import threading
import warnings

import pytest

import dispatcher.prototype as P
from dispatcher import DispatchKey as K
from dispatcher import Library, Tensor, custom_op, device, ops, register_fake
from dispatcher import call_checks, publish
from dispatcher.compat import torch_C as C
from dispatcher.custom_ops import OPDEFS, get_ctx
from dispatcher.dispatch_modes import RestorePythonTLSSnapshot, TorchDispatchMode
from dispatcher.kernel import AnnotatedKernel, make_kernel
from dispatcher.operator_tags import Tag
from dispatcher.registry import registry_in_use, using_registry
from dispatcher.schema import OperatorName
from dispatcher.schema_inference import normalize_tags

from .test_registration_threads import run_together


def t(data):
    return P.tensor(data, dtype=P.float32)


def meta(*shape):
    return P.empty(*shape, device="meta")


# -- the report-error callback -----------------------------------------------------------------
def test_the_ambiguous_autograd_other_error_is_the_dispatchers_not_the_callbacks(world, compat):
    """The report-error callback reports missing kernels only (finding 1): the
    ambiguous AutogradOther entry is a kernel that raises in c10, so calling it
    raises the dispatcher's error even when the operator has a callback.

    torch 2.13's answer, with ``torch.ones(2).to_mkldnn()`` (keys MkldnnCPU,
    ADInplaceOrView, AutogradOther) and the callback set by
    ``torch._C._dispatch_set_report_error_callback``: an operator with a
    CompositeImplicitAutograd and a MkldnnCPU kernel raises "... has kernels
    registered to both CompositeImplicitAutograd ..." and the callback is not
    called; an operator with only a CPU kernel calls it with 'MkldnnCPU'."""
    mkldnn = world.tensor(K.MkldnnCPU, K.ADInplaceOrView, K.AutogradOther)
    lib = world.library("guard_ambiguous")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "math", "CompositeImplicitAutograd")
    lib.impl("f", lambda x: "mkldnn", "MkldnnCPU")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: "cpu", "CPU")
    reported = []

    def callback(key):
        reported.append(key)
        raise ValueError("raised by the callback")

    for name in ("f", "g"):
        C._dispatch_set_report_error_callback(C._dispatch_find_schema_or_throw(f"guard_ambiguous::{name}", ""),
                                              callback)
    with pytest.raises(RuntimeError, match="has kernels registered to both CompositeImplicitAutograd"):
        world.ops.guard_ambiguous.f.default(mkldnn)
    assert reported == []
    with pytest.raises(ValueError, match="raised by the callback"):
        world.ops.guard_ambiguous.g.default(mkldnn)
    assert reported == ["MkldnnCPU"]
    lib.close()


def test_the_callback_goes_with_an_impl_only_operators_last_kernel(world, compat):
    """An operator whose def is gone keeps its entry, and the report-error
    callback with it, while a kernel is left; with its last kernel the entry
    goes, and the callback with it (finding 14): a new def and kernel make a
    new entry, whose missing kernels the dispatcher reports itself.

    torch 2.13's answers to this sequence, with a MkldnnCPU tensor: defined
    again while the CPU kernel stays, "cb MkldnnCPU" (the callback's); after
    the last kernel went, "Could not run 'guard_callback::f' with arguments
    from the 'MkldnnCPU' backend"."""
    mkldnn = world.tensor(K.MkldnnCPU, K.ADInplaceOrView, K.AutogradOther)

    def callback(key):
        raise ValueError(f"cb {key}")

    defs = world.library("guard_callback")
    defs.define("f(Tensor x) -> Tensor")
    kernels = world.library("guard_callback", "IMPL", "CPU")
    kernels.impl("f", lambda x: "cpu")
    C._dispatch_set_report_error_callback(C._dispatch_find_schema_or_throw("guard_callback::f", ""), callback)
    defs.close()
    defs = world.library("guard_callback")
    defs.define("f(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="cb MkldnnCPU"):
        world.ops.guard_callback.f.default(mkldnn)
    defs.close()
    kernels.close()
    assert world.registry.find_op("guard_callback::f") is None
    defs = world.library("guard_callback")
    defs.define("f(Tensor x) -> Tensor")
    kernels = world.library("guard_callback", "IMPL", "CPU")
    kernels.impl("f", lambda x: "cpu again")
    f = world.ops.guard_callback.f.default
    assert f(world.tensor(K.CPU)) == "cpu again"
    with pytest.raises(NotImplementedError,
                       match="Could not run 'guard_callback::f' with arguments from the 'MkldnnCPU' backend"):
        f(mkldnn)
    kernels.close()
    defs.close()


# -- deferred refreshes --------------------------------------------------------------------------
def test_a_nested_deferral_keeps_what_the_outer_one_noted(world):
    """A deferral inside another adds to the outer one's work and leaves the
    refreshes to the outermost end (finding 2): a kernel registered before the
    nested block is published when the outer block ends."""
    lib = world.library("guard_defer")
    lib.define("f(Tensor x) -> str")
    lib.define("g(Tensor x) -> str")
    f, g = world.ops.guard_defer.f.default, world.ops.guard_defer.g.default
    fallbacks = world.library("_", "IMPL", "XLA")
    with world.registry.defer():
        lib.impl("f", lambda x: "f on cpu", "CPU")
        with world.registry.defer():
            lib.impl("g", lambda x: "g on cpu", "CPU")
            fallbacks.fallback(lambda op, *args, **kwargs: "xla fallback")
        with pytest.raises(NotImplementedError):  # still deferred: calls keep the plan of before
            f(world.tensor(K.CPU))
    assert f(world.tensor(K.CPU)) == "f on cpu"
    assert g(world.tensor(K.CPU)) == "g on cpu"
    assert f(world.tensor(K.XLA)) == "xla fallback"
    world.registry.check_invariants("guard_defer::f")
    world.registry.check_invariants("guard_defer::g")
    fallbacks.close()
    lib.close()


# -- the registration lock ----------------------------------------------------------------------
def test_register_impl_from_many_threads_loses_nothing(world):
    """Dispatcher.register_impl takes the registry's lock itself (finding 18):
    threads registering kernels of the same new operators at once, each on a
    key of its own, lose none of them and leave each table as a
    recomputation gives it.  (Library takes the lock around it too; this is
    the registry's own promise, to whoever calls it directly.)"""
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread is interrupted every few bytecodes (see test_registration_threads.py)
    registry = world.registry
    keys = [K.CPU, K.CUDA, K.XLA, K.Meta, K.MPS, K.HPU]
    names = [f"guard_lock::op{i}" for i in range(100)]
    handles: list = []
    handles_lock = threading.Lock()
    each_name_together = threading.Barrier(len(keys))  # every thread starts each name at once

    def registrar(key):
        def work(stop):
            for name in names:
                each_name_together.wait(timeout=30)
                kernel = AnnotatedKernel(make_kernel(lambda x, key=key: key.name), f"thread for {key.name}")
                handle = registry.register_impl(OperatorName.parse(name), key, kernel)
                with handles_lock:
                    handles.append(handle)
        return work

    try:
        errors = run_together([registrar(key) for key in keys], seconds=60)
        sys.setswitchinterval(switch_interval)
        assert errors == []
        for name in names:
            entry = registry.find_op(name)
            assert entry is not None and sorted(entry.kernels) == sorted(keys), name
            entry.check_invariants()
    finally:
        sys.setswitchinterval(switch_interval)
        registry.undo(handles)
    assert all(registry.find_op(name) is None for name in names)


# -- rollback by fault injection ---------------------------------------------------------------
def _state(world, name):
    """What a failed registration must leave as it was: the entry, its kernels,
    its dumps, its overloads and packet, and the registry's operator list."""
    entry = world.registry._operators.get(name)
    qualified = name.partition(".")[0]
    return (entry, None if entry is None else (entry.schema, dict(entry.kernels), entry.dump_state(),
                                               entry.dump_computed_table(), entry._table),
            world.registry.overload_names(qualified), world.registry._packets.get(qualified),
            sorted(world.registry._operators))


def test_a_def_whose_call_plan_fails_changes_nothing(world, compat, monkeypatch):
    """A def is all or nothing (finding 19): when its call plan cannot be
    built, the operator is left as it was -- not defined, its kernels, table,
    dumps and packet unchanged -- and a later def succeeds."""
    lib = world.library("guard_def")
    lib.impl("f", lambda x: "cpu", "CPU")  # impl before def: the entry exists
    before = _state(world, "guard_def::f")
    dump_before = C._dispatch_dump_table("guard_def::f")

    def failing_call_plan(*args, **kwargs):
        raise RuntimeError("injected: the call plan cannot be built")

    monkeypatch.setattr(publish, "call_plan", failing_call_plan)
    with pytest.raises(RuntimeError, match="injected"):
        lib.define("f(Tensor x) -> Tensor")
    monkeypatch.undo()
    assert _state(world, "guard_def::f") == before
    assert before[1][0] is None  # still not defined
    assert C._dispatch_dump_table("guard_def::f") == dump_before
    assert world.registry.find_defined("guard_def::f") is None
    world.registry.check_invariants("guard_def::f")
    lib.define("f(Tensor x) -> Tensor")
    assert world.ops.guard_def.f.default(world.tensor(K.CPU)) == "cpu"
    lib.close()


def test_a_kernel_whose_refresh_fails_changes_nothing(world, monkeypatch):
    """An impl is all or nothing too: when publishing the new plan fails, the
    kernel is not left registered (the table, dumps and calls are those of before)."""
    lib = world.library("guard_impl")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = world.ops.guard_impl.f.default
    before = _state(world, "guard_impl::f")

    def failing_call_plan(*args, **kwargs):
        raise RuntimeError("injected: the call plan cannot be built")

    monkeypatch.setattr(publish, "call_plan", failing_call_plan)
    with pytest.raises(RuntimeError, match="injected"):
        lib.impl("f", lambda x: "xla", "XLA")
    monkeypatch.undo()
    assert _state(world, "guard_impl::f") == before
    world.registry.check_invariants("guard_impl::f")
    with pytest.raises(NotImplementedError, match="'XLA' backend"):
        f(world.tensor(K.XLA))
    lib.close()


def test_switching_checked_calls_rolls_back_when_republishing_fails(world, monkeypatch):
    """Switching checked calls on is all or nothing (finding 20): when
    publishing the plans again fails, checking stays off, in the flag and in
    the plans every registry publishes."""
    lib = world.library("guard_switch")
    lib.define("f(Tensor x, int n) -> int")
    lib.impl("f", lambda x, n: n, "CPU")
    f = world.ops.guard_switch.f.default
    original = world.registry.republish_plans
    calls = []

    def republish_failing_when_checking():
        calls.append(call_checks.checked_calls_enabled())
        if calls[-1]:
            raise RuntimeError("injected: republishing the checked plans fails")
        original()

    monkeypatch.setattr(world.registry, "republish_plans", republish_failing_when_checking)
    try:
        with pytest.raises(RuntimeError, match="injected"):
            call_checks.set_checked_calls(True)
        assert not call_checks.checked_calls_enabled()
        with pytest.raises(RuntimeError, match="injected"):
            with call_checks.checked_calls():
                pass
        assert not call_checks.checked_calls_enabled()
        assert calls == [True, False, True, False]  # each failure published the plain plans again
        assert f(world.tensor(K.CPU), "not an int") == "not an int"  # a plain plan: nothing checked
    finally:
        monkeypatch.undo()
        call_checks.set_checked_calls(False)
        lib.close()


def test_a_checked_calls_block_ends_when_republishing_fails_at_its_end(world, monkeypatch):
    """A checked_calls() block whose end cannot publish the plain plans again
    raises that error, and is over all the same: checking is off after it (a
    rollback would count the block open for good, and no later block's end,
    nor set_checked_calls(False), would turn checking off again)."""
    lib = world.library("guard_switch_end")
    lib.define("f(Tensor x, int n) -> int")
    lib.impl("f", lambda x, n: n, "CPU")
    f = world.ops.guard_switch_end.f.default
    original = world.registry.republish_plans
    failures = ["injected: republishing the plain plans fails"]

    def republish_failing_once_when_plain():
        if not call_checks.checked_calls_enabled() and failures:
            raise RuntimeError(failures.pop())
        original()

    monkeypatch.setattr(world.registry, "republish_plans", republish_failing_once_when_plain)
    try:
        with pytest.raises(RuntimeError, match="injected"):
            with call_checks.checked_calls():
                assert call_checks.checked_calls_enabled()
        assert not call_checks.checked_calls_enabled()
        with call_checks.checked_calls():  # the next change of checking publishes every plan again
            with pytest.raises(TypeError):
                f(world.tensor(K.CPU), "not an int")
        assert not call_checks.checked_calls_enabled()
        assert f(world.tensor(K.CPU), "not an int") == "not an int"  # a plain plan again
    finally:
        monkeypatch.undo()
        call_checks.set_checked_calls(False)
        lib.close()


# -- custom ops --------------------------------------------------------------------------------
def test_a_custom_op_may_not_return_one_tensor_twice():
    """A custom op's outputs are checked against each other as well as against
    its inputs (finding 3): returning ``(y, y)`` is torch's aliasing error."""
    @custom_op("guard_twice::f", mutates_args=())
    def f(x: Tensor) -> tuple[Tensor, Tensor]:
        y = x.clone()
        return y, y

    try:
        with pytest.raises(RuntimeError, match=r"must not also be an input to this custom operator and \(2\) may not "
                                               "alias any inputs to this custom operator or other returns"):
            f(t([1.0, 2.0]))
    finally:
        f._destroy()


def test_an_out_schema_must_return_each_mutable_argument_in_order():
    """The "out" tag: return i is a mutable alias of mutable argument i
    (finding 10); the same annotations in the other order are refused."""
    with pytest.raises(ValueError, match="Return 0 of schema tagged with torch.Tag.out must alias mutable arg 'first' "
                                         r"\(return aliases \{'b'\} but arg aliases \{'a'\}\)"):
        custom_op("guard_out::f", lambda x, *, first, second: (second, first), mutates_args=("first", "second"),
                  tags="out", schema="(Tensor x, *, Tensor(a!) first, Tensor(b!) second) -> (Tensor(b!), Tensor(a!))")
    assert "guard_out::f" not in OPDEFS


def test_register_fake_without_override_refuses_a_composite_implicit_operator():
    """register_fake(allow_override=False) by name refuses an operator with a
    CompositeImplicitAutograd kernel, which needs no fake impl (finding 11)."""
    lib = Library("guard_cia", "FRAGMENT")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CompositeImplicitAutograd")
        with pytest.raises(RuntimeError, match="already has an implementation for this device type via a "
                                               "pre-existing registration to DispatchKey::CompositeImplicitAutograd"):
            register_fake("guard_cia::f", lambda x: x, lib=lib, allow_override=False)
        assert not lib._registry.find_op("guard_cia::f").has_kernel_for_dispatch_key(K.Meta)
    finally:
        lib.close()


def test_register_fake_by_name_overrides_by_default():
    """register_fake's allow_override is True by default, as torch's (finding
    12): a second fake impl of the same operator replaces the first."""
    lib = Library("guard_refake", "FRAGMENT")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x.clone(), "CPU")
        register_fake("guard_refake::f", lambda x: meta(1), lib=lib)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # c10 does not warn of a Meta kernel's override
            register_fake("guard_refake::f", lambda x: meta(2), lib=lib)
        assert ops.guard_refake.f.default(meta(5)).shape == (2,)
        assert len(lib._registry.find_op("guard_refake::f").kernels[K.Meta]) == 2  # torch's dump: Meta (inactive)
    finally:
        lib.close()


def test_register_fake_by_name_ignores_a_custom_op_of_another_registry(world):
    """A name resolves to a CustomOpDef only on the registry that made it
    (finding 13): an operator of that name on the registry in use gets a Meta
    kernel of its own, and the other registry's custom op is left alone."""
    with using_registry(world.registry):
        @custom_op("guard_other::f", mutates_args=())
        def other(x: Tensor) -> Tensor:
            return x.clone()

    lib = Library("guard_other", "FRAGMENT")
    try:
        lib.define("f(Tensor x) -> Tensor")
        register_fake("guard_other::f", lambda x: meta(3), lib=lib)
        assert other._abstract_fn is None
        assert lib._registry.find_op("guard_other::f").has_kernel_for_dispatch_key(K.Meta)
    finally:
        lib.close()
        other._destroy()


def test_a_nested_fake_impl_gives_the_outer_one_its_context_back():
    """get_ctx() inside a fake impl that called another operator's fake impl
    is its own context again (finding 15), and None once both are done."""
    seen = []

    @custom_op("guard_ctx::inner", mutates_args=())
    def inner(x: Tensor) -> Tensor:
        return x.clone()

    @custom_op("guard_ctx::outer", mutates_args=())
    def outer(x: Tensor) -> Tensor:
        return x.clone()

    @inner.register_fake
    def _(x):
        seen.append(("inner", get_ctx()))
        return P.empty(*x.shape, device="meta")

    @outer.register_fake
    def _(x):
        mine = get_ctx()
        inner(x)
        seen.append(("outer", mine, get_ctx()))
        return P.empty(*x.shape, device="meta")

    try:
        outer(meta(2))
        (_, inner_ctx), (_, outer_ctx, after_inner) = seen
        assert after_inner is outer_ctx and outer_ctx is not None and inner_ctx is not outer_ctx
        assert "guard_ctx::outer" in repr(outer_ctx) and "guard_ctx::inner" in repr(inner_ctx)
        assert get_ctx() is None
    finally:
        inner._destroy()
        outer._destroy()


def test_a_second_device_type_of_a_device_routed_op_registers_its_router_again():
    """As torch 2.13's, every register_kernel of an operator routed by its
    ``device`` argument registers the BackendSelect router again (finding 16:
    torch's dump shows a second, inactive BackendSelect kernel and its
    dispatcher warns of the override); the newest router routes each device
    type to its kernel."""
    @custom_op("guard_route::ones", mutates_args=(), device_types="cpu")
    def ones(n: int, device: device) -> Tensor:
        return P.ones(n)

    try:
        with pytest.warns(UserWarning, match=r"Overriding a previously registered kernel for the same operator and "
                                             r"the same dispatch key\n  operator: guard_route::ones\(SymInt n, "
                                             r"Device device\) -> Tensor\n(.|\n)*dispatch key: BackendSelect"):
            ones.register_kernel("cuda", lambda n, device: P.zeros(n))
        entry = ones._registry.find_op("guard_route::ones")
        assert len(entry.kernels[K.BackendSelect]) == 2
        assert ones(2, "cpu").tolist() == [1.0, 1.0] and ones(2, "cuda").tolist() == [0.0, 0.0]
    finally:
        ones._destroy()


def test_a_destroyed_custom_op_is_not_found_by_name():
    """_destroy forgets the CustomOpDef's name (finding 23): the registration
    functions given that name afterwards register on whatever operator now
    has it, not on the destroyed custom op."""
    @custom_op("guard_destroy::f", mutates_args=())
    def destroyed(x: Tensor) -> Tensor:
        return x.clone()

    destroyed._destroy()
    assert "guard_destroy::f" not in OPDEFS
    lib = Library("guard_destroy", "FRAGMENT")
    try:
        lib.define("f(Tensor x) -> Tensor")
        register_fake("guard_destroy::f", lambda x: meta(7), lib=lib)
        assert destroyed._abstract_fn is None
        assert ops.guard_destroy.f.default(meta(1)).shape == (7,)
    finally:
        lib.close()


def test_tags_are_normalized_without_repeats():
    """normalize_tags keeps each tag once, in first-seen order (torch's
    _normalize_tags; finding 22)."""
    assert normalize_tags(("out", "pt2_compliant_tag", "out")) == ("out", "pt2_compliant_tag")
    assert normalize_tags("inplace") == ("inplace",) and normalize_tags(None) == ()

    @custom_op("guard_tags::f", mutates_args=(), tags=("needs_fixed_stride_order", "needs_fixed_stride_order"))
    def f(x: Tensor) -> Tensor:
        return x.clone()

    try:
        assert f._tags == ("needs_fixed_stride_order",)
        # torch 2.13: [torch.Tag.pt2_compliant_tag, torch.Tag.needs_fixed_stride_order]
        assert ops.guard_tags.f.default.tags == [Tag.pt2_compliant_tag, Tag.needs_fixed_stride_order]
    finally:
        f._destroy()


# -- the Python key ------------------------------------------------------------------------------
def test_restore_python_tls_snapshot_clears_the_snapshot_inside_its_block(world, in_use):
    """Inside RestorePythonTLSSnapshot's block there is no snapshot (torch
    sets tls_on_entry to nullopt; finding 17): the block's calls take a
    snapshot of their own; it is back when the block ends."""
    lib = world.library("guard_snapshot")
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = world.ops.guard_snapshot.f.default
    engine = world.engine
    seen = []

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            outer = engine.python_tls_snapshot()
            with RestorePythonTLSSnapshot():
                seen.append((outer is not None, engine.python_tls_snapshot()))
            seen.append(engine.python_tls_snapshot() == outer)
            return func(*args)

    try:
        with Mode():
            assert f(world.tensor(K.CPU)) == "cpu"
    finally:
        while engine.dispatch_mode_stack():
            engine.pop_dispatch_mode()
        lib.close()
    assert seen == [(True, None), True]
    assert engine.python_tls_snapshot() is None


# -- what the harness's first run found untested -------------------------------------------------
def test_a_kernel_registered_before_the_def_must_fit_it(world, compat):
    """A def checks the kernels registered before it against its schema, as
    c10 does, and fails (changing nothing) when one was inferred another."""
    m = C._dispatch_library("FRAGMENT", "guard_early", "")
    m.impl_t_t("f", "CPU")  # a kernel of schema (Tensor _0) -> Tensor _0, before any def
    with pytest.raises(RuntimeError, match="Inferred operator schema for a C\\+\\+ kernel function doesn't match"):
        m.def_("f(int x) -> Tensor")
    assert world.registry.find_defined("guard_early::f") is None
    m.def_("f(Tensor self) -> Tensor")
    assert world.ops.guard_early.f.default(world.tensor(K.CPU)).key_set == world.keyset(K.CPU)
    m.reset()


def test_register_impl_refuses_undefined(world):
    """Dispatcher.register_impl refuses a kernel for Undefined (the Library
    layer maps "Undefined" to no key; only a direct call reaches this check)."""
    kernel = AnnotatedKernel(make_kernel(lambda x: x), "registered by the test")
    with pytest.raises(ValueError, match="cannot register a kernel for Undefined"):
        world.registry.register_impl(OperatorName.parse("guard_undefined::f"), K.Undefined, kernel)
    assert world.registry.find_op("guard_undefined::f") is None


def test_a_catalog_factory_routes_by_its_options(world):
    """A catalog factory operator is defined with its BackendSelect kernel, as
    torch generates one: a call with ``device="meta"`` and no tensor reaches
    the Meta kernel."""
    entry = world.registry.find_op("aten::empty.memory_format")
    assert entry.kernel_for(K.BackendSelect) is not None
    lib = world.library("aten", "IMPL", "Meta")
    lib.impl("empty.memory_format", lambda size, **options: ("meta", size))
    try:
        assert world.ops.aten.empty.memory_format([2], device="meta") == ("meta", [2])
    finally:
        lib.close()


def test_an_out_op_must_return_its_out_arguments_in_order():
    """A kernel of an operator tagged "out" returns its out= arguments
    themselves, in order: a new tensor, or the two outs swapped, is refused."""
    @custom_op("guard_outret::one", mutates_args=("out",), tags="out")
    def one(x: Tensor, *, out: Tensor) -> Tensor:
        return x.clone()

    @custom_op("guard_outret::two", mutates_args=("a", "b"), tags="out")
    def two(x: Tensor, *, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
        return (b, a) if swap else (a, b)

    refused = "An operator tagged with torch.Tag.out must return its mutable keyword-only arguments."
    try:
        with pytest.raises(RuntimeError, match=refused):
            one(t([1.0]), out=t([0.0]))
        a, b = t([0.0]), t([0.0])
        swap = False
        assert two(t([1.0]), a=a, b=b) == (a, b)
        swap = True
        with pytest.raises(RuntimeError, match=refused):
            two(t([1.0]), a=a, b=b)
    finally:
        one._destroy()
        two._destroy()


def test_a_view_custom_op_may_return_a_view_of_its_input():
    """A custom op whose schema makes its result a view of its input
    (``Tensor(a) x -> Tensor(a)``) may return one: the aliasing check is for
    operators whose schema promises new tensors."""
    @custom_op("guard_view::flat", mutates_args=(), schema="(Tensor(a) x) -> Tensor(a)")
    def flat(x):
        return x.view(-1)

    try:
        x = t([[1.0, 2.0]])
        y = flat(x)
        assert y.tolist() == [1.0, 2.0] and y.shape == (2,)
    finally:
        flat._destroy()


def test_an_out_schema_must_return_each_mutable_argument():
    """The "out" tag: as many returns as mutable arguments."""
    with pytest.raises(ValueError, match="Schema tagged with torch.Tag.out must return all mutable arguments "
                                         r"\(got 2 mutable args but 1 returns\)"):
        custom_op("guard_outcount::f", lambda x, *, a, b: a, mutates_args=("a", "b"), tags="out",
                  schema="(Tensor x, *, Tensor(a!) a, Tensor(b!) b) -> Tensor(a!)")
    assert "guard_outcount::f" not in OPDEFS


# -- the compat shim (torch 2.13's answers, checked with torch) -----------------------------------
def test_compat_undefined_means_the_librarys_key(world, compat):
    """``impl_t_t(name, "Undefined")`` registers as ``""`` does, at the
    library's key (a FRAGMENT's: CompositeImplicitAutograd), as torch's dump shows."""
    m = C._dispatch_library("FRAGMENT", "guard_catchall", "")
    m.def_("f(Tensor self) -> Tensor")
    m.impl_t_t("f", "Undefined")
    assert "CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]" in \
        C._dispatch_dump("guard_catchall::f")
    m.reset()


def test_compat_dump_table_prints_the_standard_fallbacks_as_torchs(world, compat):
    """``_dispatch_dump_table`` prints the package's standard fallbacks as
    torch prints its framework's (the lines torch 2.13 gives for an operator
    with a CPU kernel)."""
    m = C._dispatch_library("FRAGMENT", "guard_dump", "")
    m.def_("g(Tensor self) -> Tensor")
    m.impl("g", "CPU", lambda x: x)
    lines = C._dispatch_dump_table("guard_dump::g").split("\n")
    torch_lines = [
        "BackendSelect: fallthrough registered at /__w/pytorch/pytorch/aten/src/ATen/core/BackendSelectFallbackKernel.cpp:3 "
        "[backend fallback]",
        "ADInplaceOrView: fallthrough registered at /__w/pytorch/pytorch/aten/src/ATen/core/VariableFallbackKernel.cpp:103 "
        "[backend fallback]",
        "AutogradCPU: registered at /__w/pytorch/pytorch/aten/src/ATen/core/VariableFallbackKernel.cpp:66 "
        "[backend fallback]",
    ]
    assert [line for line in lines if line.startswith(("BackendSelect", "ADInplaceOrView", "AutogradCPU"))] == \
        torch_lines
    m.reset()


def test_compat_computed_kernel_of_an_empty_slot_is_torchs_error(world, compat):
    """``_dispatch_get_computed_kernel_for_dispatch_key`` of a slot with no
    kernel raises torch's error rather than returning the empty entry."""
    m = C._dispatch_library("FRAGMENT", "guard_empty_slot", "")
    m.def_("g(Tensor self) -> Tensor")
    m.impl("g", "CPU", lambda x: x)
    with pytest.raises(RuntimeError, match="^no kernel for XLA for guard_empty_slot::g$"):
        C._dispatch_get_computed_kernel_for_dispatch_key("guard_empty_slot::g", "XLA")
    m.reset()


def test_compat_call_boxed_gives_a_with_keyset_kernel_the_keyset(world, compat):
    """SafeKernelFunction.call_boxed runs a with-keyset kernel with the keyset it is given first."""
    lib = world.library("guard_call_boxed")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda keyset, x: world.engine.TensorBase(keyset), "CPU", with_keyset=True)
    kernel = C._dispatch_get_computed_kernel_for_dispatch_key("guard_call_boxed::f", "CPU")
    keyset = world.keyset(K.CPU, K.XLA)
    assert kernel.call_boxed(keyset, world.tensor(K.CPU)).key_set == keyset
    lib.close()


# -- the library layer and ops --------------------------------------------------------------------
def test_register_autocast_checks_the_device_type_before_anything_else():
    """register_autocast with a device type that has no autocast fails before
    it makes the library it would register in (one kept for the process)."""
    from dispatcher import _library, library

    before = list(_library._DECORATOR_LIBRARIES)
    with pytest.raises(ValueError, match="^Device type 'nodevice' does not support autocast.$"):
        library.register_autocast("guard_autocast::f", "nodevice", P.float32)
    assert _library._DECORATOR_LIBRARIES == before


def test_an_unknown_catalog_operator_names_the_nearest(world):
    """``ops.aten.<typo>`` says which names are nearest."""
    with pytest.raises(AttributeError, match=r"^no operator named 'sinn' in namespace dispatcher\.ops\.aten "
                                             r"\(aten::sinn is not defined\); did you mean sin, sinh, sinc\?$"):
        world.ops.aten.sinn


def test_a_custom_ops_torch_dispatch_rule_goes_with_the_custom_op():
    """register_torch_dispatch(custom_op, ...) registers in the custom op's own
    library, so that destroying the op removes the rule too."""
    from dispatcher import library

    @custom_op("guard_rule::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    class Mode(TorchDispatchMode):
        pass

    rules = registry_in_use().engine.TORCH_DISPATCH_RULES
    try:
        library.register_torch_dispatch(f, Mode, lambda mode, func, types, args, kwargs: "rule")
        assert Mode in rules["guard_rule::f"]
    finally:
        f._destroy()
    assert "guard_rule::f" not in rules


def test_a_custom_op_whose_schema_contradicts_mutates_args_is_not_left_defined():
    """custom_op is all or nothing: when the schema given marks other arguments
    as written than ``mutates_args`` says, the operator it defined is removed."""
    with pytest.raises(ValueError, match="The schema suggests that the op mutates {'x'}"):
        custom_op("guard_consistent::f", lambda x: None, mutates_args=(), schema="(Tensor(a!) x) -> ()")
    assert "guard_consistent::f" not in OPDEFS
    assert registry_in_use().find_op("guard_consistent::f") is None


def test_register_vmap_by_name_refuses_keyword_only_tensors():
    """register_vmap checks the operator's schema before registering, for an
    operator given by name as for a custom op: tensors passed by keyword only
    are torch's NotImplementedError, and nothing is registered."""
    from dispatcher import library

    lib = Library("guard_vmap", "FRAGMENT")
    try:
        lib.define("f(Tensor x, *, Tensor y) -> Tensor")
        with pytest.raises(NotImplementedError, match="^register_vmap with kwarg-only Tensor args"):
            library.register_vmap("guard_vmap::f", lambda info, in_dims, x, *, y: (x, 0), lib=lib)
        assert not lib._registry.find_op("guard_vmap::f").has_kernel_for_dispatch_key(K.FuncTorchBatched)
    finally:
        lib.close()
