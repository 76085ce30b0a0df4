"""dispatcher.explain: what a call does and why, checked against what it then does.

Every test runs on both engines (conftest.py's ``world``).  The rule tests
cover each step of the precedence (operator_entry.RULES) with a call that
reaches it; the randomized test lives in test_explain_random.py.
"""
import dataclasses
import pathlib
import re
import sys
import threading

import pytest

import dispatcher
from dispatcher import DispatchKey as K
from dispatcher import explain, explain_keyset, fallthrough_kernel
from dispatcher.ivalue import box_returns, unbox_arguments
from dispatcher.kernel import KernelKind
from dispatcher.operator_entry import (
    AMBIGUOUS,
    AUTOGRAD,
    AUTOGRAD_OVER_MATH,
    BATCHED,
    CEA,
    CEANF,
    CIA,
    CIA_AUTOGRAD,
    CIA_NESTED,
    DIRECT,
    FALLBACK,
    FALLBACK_OVER_MATH,
    MISSING,
    MISSING_OVER_MATH,
    RULES,
)

CIA_KEY, CEA_KEY, CEANF_KEY = "CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"


@pytest.fixture
def lib(world):
    with world.library("explaintest", "DEF") as library:
        library.define("f(Tensor x, Tensor? y=None) -> str")
        yield library


def op(world, lib, name="f"):
    return getattr(getattr(world.ops, lib.ns), name).default


def named(name):
    """A kernel returning ``name``, which is also its __qualname__."""
    def kernel(x, y=None):
        return name

    kernel.__qualname__ = name
    return kernel


def line_of(text):
    """The line of this file that holds ``text`` (a registration's site)."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


# -- one call per rule of the precedence -------------------------------------------------
# rule: (kernel keys, a recording fallback on these keys, keep the standard
# fallbacks, the tensor's keys, where the rule shows ("entry": the slot the
# call reaches; else the skipped key it explains), what the call returns or raises)
SCENARIOS = {
    DIRECT: ([CIA_KEY, "CPU"], [], True, [K.CPU], "entry", "CPU"),
    CEANF: ([CEA_KEY, CEANF_KEY], [], True, [K.CPU], "entry", CEANF_KEY),
    CEA: ([CIA_KEY, CEA_KEY], [], True, [K.CPU], "entry", CEA_KEY),
    CIA_NESTED: ([CIA_KEY, "CompositeImplicitAutogradNestedTensor"], [], True, [K.NestedTensorCPU], "entry",
                 "CompositeImplicitAutogradNestedTensor"),
    CIA: ([CIA_KEY], [], True, [K.XLA], "entry", CIA_KEY),
    CIA_AUTOGRAD: ([CIA_KEY], [], True, [K.CPU, K.AutogradCPU], "entry", CIA_KEY),
    AUTOGRAD: (["CPU", "Autograd"], [], True, [K.CPU, K.AutogradCPU], "entry", "Autograd"),
    AUTOGRAD_OVER_MATH: (["CPU", CIA_KEY, "Autograd"], [], True, [K.CPU, K.AutogradCPU], "entry", "Autograd"),
    BATCHED: (["CPU", "FuncTorchBatchedDecomposition"], [], True, [K.CPU, K.FuncTorchBatched], "entry",
              "FuncTorchBatchedDecomposition"),
    FALLBACK: (["CPU"], ["XLA"], True, [K.XLA], "entry", "fallback"),
    FALLBACK_OVER_MATH: (["CPU", CIA_KEY], [], True, [K.CPU, K.AutogradCPU], K.AutogradCPU, "CPU"),
    MISSING: (["CPU"], [], True, [K.XLA], "entry", NotImplementedError),
    MISSING_OVER_MATH: (["CPU", CIA_KEY], [], False, [K.CPU, K.AutogradCPU], "entry", NotImplementedError),
    AMBIGUOUS: ([CIA_KEY, "SparseCPU"], [], True, [K.SparseCPU, K.AutogradOther], "entry", RuntimeError),
}


def test_every_rule_has_a_scenario():
    assert set(SCENARIOS) == set(RULES)
    assert len({rule.name for rule in RULES}) == len(RULES)


def _recording_fallback(op, keyset, stack):
    unbox_arguments(op, stack)
    box_returns(op, "fallback", stack)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_each_rule_is_explained_and_the_call_agrees(world, lib, rule):
    kernel_keys, fallback_keys, standard, tensor_keys, where, outcome = SCENARIOS[rule]
    kernels = {key: named(key) for key in kernel_keys}
    for key, kernel in kernels.items():
        lib.impl("f", kernel, key)
    if not standard:
        world.fallbacks.close()
    f = op(world, lib)
    t = world.tensor(*tensor_keys)
    with world.library("_", "IMPL") as fallbacks:
        for key in fallback_keys:
            fallbacks.fallback(_recording_fallback, key, boxed=True)
        e = explain(f, t)
        entry = e.entry if where == "entry" else next(s for s in e.skipped if s.key == where)
        assert entry.rule is rule
        assert entry.why == rule.why.format(key=entry.key.name)
        assert entry.why in str(e)
        # The dump's tag of the slot is the rule's.
        line = next((ln for ln in world.registry.find_op(f.name()).dump_computed_table().splitlines()
                     if ln.startswith(f"{entry.key.name}:")), "")
        assert line.endswith(f"[{rule.tag}]") or (rule.tag == "missing" and line == "")
        if isinstance(outcome, type):
            assert not e.entry.runs and e.kernel is None
            with pytest.raises(outcome):
                f(t)
        else:
            assert e.entry.runs and f(t) == outcome
            expected = _recording_fallback if outcome == "fallback" else kernels[outcome]
            assert e.kernel is expected


def test_a_direct_kernel_is_explained_with_its_registration_site(world, lib):
    lib.impl("f", named("cpu"), "CPU")  # the site
    e = explain(op(world, lib), world.tensor(K.CPU))
    assert e.entry.registered == f"registered at {__file__}:{line_of('the site')}"
    assert (e.key, e.entry.slot, e.entry.kind) == (K.CPU, 1, KernelKind.UNBOXED)
    text = str(e)
    assert "argument x (position 1): DispatchKeySet(CPU)" in text
    assert "argument y (position 2): no tensor" in text
    assert f"dispatches to CPU (table slot 1): cpu [kernel], registered at {__file__}:" in text
    assert "a call runs cpu" in text


def test_the_steps_of_a_call_are_recorded(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    x, y = world.tensor(K.CPU, K.AutogradCPU), world.tensor(K.CPU, K.ADInplaceOrView)
    e = explain(op(world, lib), x, y=y)
    assert [(a.name, a.position, a.keyset) for a in e.arguments] == [
        ("x", 0, world.keyset(K.CPU, K.AutogradCPU)), ("y", 1, world.keyset(K.CPU, K.ADInplaceOrView))
    ]
    assert e.union == world.keyset(K.CPU, K.ADInplaceOrView, K.AutogradCPU)
    assert e.tls_included == world.engine.DEFAULT_INCLUDED_SET
    assert e.tls_excluded == world.engine.DEFAULT_EXCLUDED_SET
    assert (e.tls_added, e.tls_removed) == ((K.BackendSelect,), ())
    assert e.mask_backend.name == "CPUBit"
    # The standard fallthroughs, highest priority last as the keyset iterates.
    assert [s.key for s in e.skipped] == [K.BackendSelect, K.ADInplaceOrView, K.AutogradCPU]
    assert all(s.kind == KernelKind.FALLTHROUGH and s.rule is FALLBACK for s in e.skipped)
    assert e.keyset == world.keyset(K.CPU)
    assert not e.mask.has(K.AutogradCPU) and e.mask.has(K.CPU)


def test_tls_include_and_exclude_guards(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    lib.impl("f", named("xla"), "XLA")
    lib.impl("f", named("autograd"), "AutogradCPU")
    f, t = op(world, lib), world.tensor(K.CPU, K.AutogradCPU)
    assert explain(f, t).kernel.__qualname__ == "autograd"
    with world.engine.ExcludeDispatchKeyGuard(K.AutogradCPU):
        e = explain(f, t)
        assert e.tls_removed == (K.AutogradCPU,) and e.key == K.CPU and f(t) == "cpu"
        assert "removes AutogradCPU" in str(e)
    with world.engine.AutoDispatchBelowAutograd():
        assert explain(f, t).key == K.CPU
    with world.engine.IncludeDispatchKeyGuard(K.XLA):
        e = explain(f, world.tensor(K.CPU))
        # XLA's bits are Dense and the XLA backend: the highest backend is now XLA.
        assert K.XLA in e.tls_added and e.key == K.XLA and e.mask_backend.name == "XLABit"
        assert f(world.tensor(K.CPU)) == "xla" and e.kernel.__qualname__ == "xla"


def test_an_operators_own_fallthrough_is_skipped_with_its_reason(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    lib.impl("f", named("autograd"), "Autograd")
    lib.impl("f", fallthrough_kernel, "AutogradCPU")  # CPU tensors skip autograd for this operator
    f = op(world, lib)
    e = explain(f, world.tensor(K.CPU, K.AutogradCPU))
    (autograd,) = [s for s in e.skipped if s.key == K.AutogradCPU]
    assert autograd.rule is DIRECT and autograd.kind == KernelKind.FALLTHROUGH
    assert autograd.registered.endswith(f":{line_of('CPU tensors skip autograd')}")
    assert "AutogradCPU (table slot 96): fallthrough [kernel]" in str(e)
    assert autograd.why in str(e)  # an operator's own fallthrough is explained
    assert e.key == K.CPU and f(world.tensor(K.CPU, K.AutogradCPU)) == "cpu"
    # The mask is per backend: a CUDA tensor still reaches the Autograd kernel.
    assert explain(f, world.tensor(K.CUDA, K.AutogradCUDA)).key == K.AutogradCUDA


def test_the_missing_kernel_case(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    f, t = op(world, lib), world.tensor(K.XLA)
    e = explain(f, t)
    assert (e.key, e.entry.kind, e.kernel, e.entry.registered) == (K.XLA, KernelKind.MISSING, None, None)
    assert "a call raises NotImplementedError: no kernel for XLA" in str(e)
    ran = explain(f, t, run=True)
    assert isinstance(ran.error, NotImplementedError) and "from the 'XLA' backend" in str(ran.error)
    assert [(h.what, h.key, h.entry.kind) for h in ran.hops] == [("call", K.XLA, KernelKind.MISSING)]
    assert "raised NotImplementedError: Could not run 'explaintest::f' with arguments from the 'XLA'" in str(ran)


def test_a_fallthrough_with_nothing_below_it(world, lib):
    lib.define("g(Tensor[] xs) -> str")
    lib.impl("g", fallthrough_kernel, CIA_KEY)  # the composite kernels also serve Undefined
    g = op(world, lib, "g")
    e = explain(g, [])
    assert (e.key, e.entry.kind, e.entry.rule) == (K.Undefined, KernelKind.FALLTHROUGH, CIA)
    assert "no key is left: the call dispatches to Undefined's slot" in str(e)
    assert "a call raises RuntimeError: Undefined falls through" in str(e)
    with pytest.raises(RuntimeError, match="no lower key to fall through to"):
        g([])


def test_a_redispatch_chain_is_explained_hop_by_hop(world, lib):
    lib.define("g(Tensor x) -> str")
    ops = world.ops

    def autograd(keyset, x, y=None):
        below = keyset & world.own(world.engine.DispatchKeySet.full_after(K.AutogradOther))
        return getattr(ops, lib.ns).f.default.redispatch(below, x, y)

    def cpu(x, y=None):
        return "cpu:" + getattr(ops, lib.ns).g.default(x)

    autograd.__qualname__, cpu.__qualname__ = "autograd", "cpu"
    lib.impl("f", autograd, "Autograd", with_keyset=True)
    lib.impl("f", cpu, "CPU")
    lib.impl("g", named("g_cpu"), "CPU")
    f, t = op(world, lib), world.tensor(K.CPU, K.AutogradCPU)
    e = explain(f, t, run=True)
    assert e.ran and e.result == "cpu:g_cpu" and e.error is None
    assert [(h.what, h.operator, h.key, h.depth, h.entry.kernel) for h in e.hops] == [
        ("call", f"{lib.ns}::f", K.AutogradCPU, 0, autograd),
        ("redispatch", f"{lib.ns}::f", K.CPU, 1, cpu),
        ("call", f"{lib.ns}::g", K.CPU, 2, world.registry.find_op(f"{lib.ns}::g").compute_entry(K.CPU)[0].kernel.fn),
    ]
    assert e.hops[0].entry == e.entry
    assert str(e.hops[1]).startswith(f"  [redispatch] {lib.ns}::f at CPU (table slot 1): cpu [kernel], registered at ")
    assert str(e.entry).startswith("AutogradCPU (table slot 96): autograd (with keyset) [autograd kernel]")
    text = str(e)
    assert f"    [call] {lib.ns}::f at AutogradCPU (table slot 96): autograd (with keyset) [autograd kernel]" in text
    assert f"      [redispatch] {lib.ns}::f at CPU (table slot 1): cpu [kernel]" in text
    assert f"        [call] {lib.ns}::g at CPU (table slot 1): g_cpu [kernel]" in text
    assert "    returned 'cpu:g_cpu'" in text


def test_run_leaves_the_trace_and_the_observer_as_they_were(world, lib, capsys):
    def boom(x, y=None):
        print("kernel output", file=sys.stderr)
        raise ValueError("boom")

    lib.impl("f", boom, "CPU")
    f, t = op(world, lib), world.tensor(K.CPU)
    stderr = sys.stderr
    e = explain(f, t, run=True)
    assert isinstance(e.error, ValueError) and "raised ValueError: boom" in str(e)
    assert sys.stderr is stderr and not world.engine.show_dispatch_trace()
    assert world.engine.set_dispatch_observer(None) is None  # explain's observer is gone
    assert capsys.readouterr().err == "kernel output\n"  # the kernel's own output still shows
    world.engine.set_show_dispatch_trace(True)
    try:
        explain(f, t, run=True)
        assert world.engine.show_dispatch_trace()
    finally:
        world.engine.set_show_dispatch_trace(False)
    # A trace the user switched on still prints.
    assert capsys.readouterr().err == f"[call] op=[{lib.ns}::f], key=[CPU]\nkernel output\n"


def test_run_sees_only_its_own_thread(world, lib):
    lib.define("g(Tensor x) -> str")
    lib.impl("g", named("g"), "CPU")
    g = op(world, lib, "g")

    def cpu(x, y=None):
        other = threading.Thread(target=g, args=(x,))
        other.start()
        other.join()
        return "cpu"

    lib.impl("f", cpu, "CPU")
    e = explain(op(world, lib), world.tensor(K.CPU), run=True)
    assert [h.operator for h in e.hops] == [f"{lib.ns}::f"]


def test_tensor_lists_and_no_tensors(world, lib):
    lib.define("g(Tensor[] xs, Tensor?[] ys) -> str")
    lib.impl("g", named("math"), CIA_KEY)
    g = op(world, lib, "g")
    e = explain(g, [world.tensor(K.CPU), world.tensor(K.XLA)], ys=[None, world.tensor(K.Meta)])
    assert [a.keyset for a in e.arguments] == [world.keyset(K.CPU, K.XLA), world.keyset(K.Meta)]
    # CPU, XLA and Meta are one Dense functionality on three backends: Meta is the highest.
    assert e.key == K.Meta
    e = explain(g, [], [None])
    assert e.union == world.keyset() and e.key == K.Undefined and e.entry.rule is CIA
    assert g([], [None]) == "math"


def test_explain_keyset(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    f = op(world, lib)
    e = explain_keyset(f, ["CPU", K.AutogradCPU])
    assert e.arguments == () and e.union == world.keyset(K.CPU, K.AutogradCPU) and e.key == K.CPU
    # The same as a call whose arguments carry those keys, but for the arguments.
    by_call = explain(f, world.tensor(K.CPU, K.AutogradCPU))
    assert dataclasses.replace(e, operator=by_call.operator, arguments=by_call.arguments) == by_call
    # A keyset of the other engine is taken by its keys.
    assert explain_keyset(f, dispatcher.DispatchKeySet(K.CPU)).keyset == world.keyset(K.CPU)
    with pytest.raises(ValueError, match="explain_keyset: .*Bogus"):
        explain_keyset(f, ["Bogus"])


def test_explanations_are_frozen_values(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    f, t = op(world, lib), world.tensor(K.CPU)
    e = explain(f, t)
    assert e == explain(f, t) and e != explain(f, world.tensor(K.XLA))
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.entry = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.entry.why = ""
    assert repr(e).startswith("Explanation(operator='explaintest::f', arguments=(DispatchArgument(name='x'")


def test_operators_by_name_in_the_package_registry():
    from dispatcher import Library, TensorBase, DispatchKeySet

    with Library("explainbyname", "DEF") as lib:
        lib.define("f(Tensor x) -> str")
        lib.impl("f", named("cpu"), "CPU")
        assert explain("explainbyname::f", TensorBase(DispatchKeySet(K.CPU))).kernel.__qualname__ == "cpu"


def test_bad_input_says_what_was_wrong(world, lib):
    lib.impl("f", named("cpu"), "CPU")
    f, t = op(world, lib), world.tensor(K.CPU)
    packet = getattr(world.ops, lib.ns).f
    with pytest.raises(TypeError, match=r"one overload, not the packet explaintest::f: pass one of ops\.explaintest\.f\.default"):
        explain(packet, t)
    with pytest.raises(TypeError, match="explain takes an operator .* got int"):
        explain(42, t)
    with pytest.raises(ValueError, match="no operator 'nope::nothing' is defined"):
        explain("nope::nothing", t)
    with pytest.raises(TypeError, match=r"explaintest::f\(\) missing required argument: 'x'"):
        explain(f)
    with pytest.raises(TypeError, match=r"argument 'y' \(position 2\) must be a tensor or None, not str"):
        explain(f, t, "no")
    with pytest.raises(TypeError, match="run must be True or False, got 'yes'"):
        explain(f, t, run="yes")
    lib.close()
    with pytest.raises(RuntimeError, match="operator explaintest::f is not defined"):
        explain(f, t)


def test_the_guides_example_prints_what_the_guide_shows(capsys):
    guide = pathlib.Path(__file__).parent.parent / "docs" / "guides" / "explain.md"
    if not guide.exists():
        pytest.skip("no docs folder")
    block, shown = re.search(r"```python\n([^`]*?print\(explain\(.*?)```\n\nprints \(saved as `example.py`\):\n\n```text\n(.*?)```",
                             guide.read_text(), re.S).groups()
    namespace = {}
    exec(compile(block, "example.py", "exec"), namespace)
    namespace["lib"].close()
    assert capsys.readouterr().out == shown


def test_an_explain_inside_an_observed_call_tells_the_outer_observer_too(world, lib):
    seen = []
    lib.impl("f", lambda x, y=None: "cpu", "CPU")
    f, t = op(world, lib), world.tensor(K.CPU)
    world.engine.set_dispatch_observer(lambda *hop: seen.append(hop))
    try:
        assert explain(f, t, run=True).result == "cpu"
    finally:
        assert world.engine.set_dispatch_observer(None) is not None
    assert seen == [("call", f"{lib.ns}::f", K.CPU, 0)]


def test_a_dispatch_observer_must_be_callable(world):
    with pytest.raises(TypeError, match="^a dispatch observer must be callable or None, not int$"):
        world.engine.set_dispatch_observer(3)
