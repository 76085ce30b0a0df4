"""Registration at catalog scale: an operator's table is filled from a layout
shared by the operators whose kernels sit on the same keys (Note [Table
layouts] in dispatcher/operator_entry.py), and a backend fallback reaches the
operators through their fallback cells, without a plan per operator (Note
[Fallback cells] in dispatcher/_engine/core.py)."""
import pytest

from dispatcher import DispatchKey as K
from dispatcher.kernel import KernelKind
from dispatcher.library import fallthrough_kernel
from dispatcher.operator_entry import OperatorEntry

ALIAS_KEYS = ("Autograd", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


def _cpu_call(x):
    return "cpu"


FALLBACK_CALLS = []


def _fallback(op, x):
    FALLBACK_CALLS.append(op.name())
    return x


def test_operators_with_kernels_on_the_same_keys_share_a_layout(world):
    lib = world.library("layouts", "FRAGMENT")
    for name in ("f", "g"):
        lib.define(f"{name}(Tensor x) -> Tensor")
        lib.impl(name, _cpu_call, "CPU")
        lib.impl(name, _cpu_call, "Autograd")
    f, g = world.registry.find_op("layouts::f"), world.registry.find_op("layouts::g")
    assert f._filled[0] is g._filled[0]
    lib.impl("g", _cpu_call, "CompositeExplicitAutograd")
    assert f._filled[0] is not g._filled[0]
    world.registry.check_invariants("layouts::f")
    world.registry.check_invariants("layouts::g")
    lib.close()


@pytest.mark.parametrize("alias", ALIAS_KEYS)
def test_an_alias_kernel_fills_the_slots_a_recomputation_gives(world, alias):
    lib = world.library("layouts_alias", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _cpu_call, "SparseCPU")
    lib.impl("f", _cpu_call, alias)
    op = world.registry.find_op("layouts_alias::f")
    op.check_invariants()
    served = [entry.key for entry in op.computed_table() if entry.origin == K[alias]]
    assert served, f"{alias} serves no slot"
    lib.close()


def _count_refreshes(monkeypatch):
    """The operators refreshed (a new plan each) from now on, by name."""
    refreshed = []
    refresh = OperatorEntry.refresh

    def counting(op):
        refreshed.append(op.name)
        refresh(op)

    monkeypatch.setattr(OperatorEntry, "refresh", counting)
    return refreshed


def test_a_fallback_reaches_every_operator_without_a_new_plan(world, monkeypatch):
    lib = world.library("layouts_fb", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", _cpu_call, "CPU")
    f, g = world.ops.layouts_fb.f.default, world.ops.layouts_fb.g.default
    refreshed = _count_refreshes(monkeypatch)
    fallbacks = world.library("_", "IMPL")
    fallbacks.fallback(_fallback, "PrivateUse3")
    # No operator was visited (no new plan), and calls reach the fallback.
    assert refreshed == []
    x = world.tensor(K.PrivateUse3)
    FALLBACK_CALLS.clear()
    assert f(x) is x and g(x) is x
    assert FALLBACK_CALLS == ["layouts_fb::f", "layouts_fb::g"]
    world.registry.check_invariants()
    fallbacks.close()
    assert refreshed == []
    with pytest.raises(NotImplementedError, match="PrivateUse3"):
        f(x)
    world.registry.check_invariants()
    lib.close()


def test_a_fallthrough_fallback_changes_the_masks_of_every_operator(world, monkeypatch):
    lib = world.library("layouts_ft", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _cpu_call, "CPU")
    f = world.ops.layouts_ft.f.default
    refreshed = _count_refreshes(monkeypatch)
    fallbacks = world.library("_", "IMPL", "Functionalize")
    fallbacks.fallback(fallthrough_kernel)
    assert "layouts_ft::f" in refreshed
    # The key is skipped: the call goes on to the CPU kernel.
    assert f(world.tensor(K.Functionalize, K.CPU)) == "cpu"
    world.registry.check_invariants()
    fallbacks.close()
    with pytest.raises(NotImplementedError, match="Functionalize"):
        f(world.tensor(K.Functionalize, K.CPU))
    world.registry.check_invariants()
    lib.close()


def test_a_fallback_removed_in_a_deferral_changes_calls_at_its_end(world):
    lib = world.library("layouts_defer", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    f = world.ops.layouts_defer.f.default
    fallbacks = world.library("_", "IMPL")
    fallbacks.fallback(_fallback, "PrivateUse3")
    x = world.tensor(K.PrivateUse3)
    with world.registry.defer():
        fallbacks.close()
        # Calls keep the state of before the deferral (Note [Deferred refreshes]).
        FALLBACK_CALLS.clear()
        assert f(x) is x and FALLBACK_CALLS == ["layouts_defer::f"]
    with pytest.raises(NotImplementedError, match="PrivateUse3"):
        f(x)
    world.registry.check_invariants()
    lib.close()


def test_only_a_fallback_cell_takes_another_kernel(engine):
    plain = engine.KernelFunction(KernelKind.UNBOXED, _cpu_call)
    with pytest.raises(TypeError, match="only a fallback cell"):
        plain._hold(engine.KernelFunction(KernelKind.MISSING, None))
    cell = engine.KernelFunction(KernelKind.MISSING, None, cell=True)
    with pytest.raises(TypeError, match="takes a KernelFunction, not str"):
        cell._hold("kernel")
    cell._hold(plain)
    assert (cell.kind, cell.fn, cell.cell) == (KernelKind.UNBOXED, _cpu_call, True)
    assert not plain.cell


def test_a_layout_step_leads_to_the_layout_a_walk_over_the_kernels_gives(world):
    # Note [Layout steps]: an impl after a filled table looks the next layout
    # up by (layout before, key, fallthrough); it must be the one the
    # kernels' signature gives, whatever the order, overrides and fallthroughs.
    registry = world.registry
    lib = world.library("layout_steps", "FRAGMENT")
    registrations = [("CPU", _cpu_call), ("AutogradCPU", _cpu_call), ("Autograd", _cpu_call),
                     ("Meta", fallthrough_kernel), ("Meta", _cpu_call), ("CPU", fallthrough_kernel),
                     ("CompositeImplicitAutograd", _cpu_call)]
    for name in ("f", "g"):  # g takes the steps f took: lookups, not walks
        lib.define(f"{name}(Tensor x) -> Tensor")
        for key, kernel in registrations:
            # (c10 warns of an override on any key but Meta.)
            overrides = key != "Meta" and registry.find_op(f"layout_steps::{name}").kernels.get(K[key])
            with pytest.warns(UserWarning) if overrides else _no_warning():
                lib.impl(name, kernel, key)
            op = registry.find_op(f"layout_steps::{name}")
            assert op._filled[0] is registry.layout(op.kernels)
            op.check_invariants()
    f, g = registry.find_op("layout_steps::f"), registry.find_op("layout_steps::g")
    assert f._filled[0] is g._filled[0]
    assert (None, K.CPU, False) in registry.layout_steps
    lib.close()


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_layout_steps_are_forgotten_when_a_fallback_changes_the_masks(world):
    # A fallthrough fallback changes the kernel-less masks, which every
    # layout holds: the steps to the old layouts must not be taken again.
    registry = world.registry
    lib = world.library("layout_steps_masks", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _cpu_call, "CPU")
    assert registry.layout_steps
    fallbacks = world.library("_", "IMPL")
    fallbacks.fallback(fallthrough_kernel, "PrivateUse3")
    assert not registry.layout_steps
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", _cpu_call, "CPU")
    g = registry.find_op("layout_steps_masks::g")
    assert g._filled[0].masks == registry.layout(g.kernels).masks
    g.check_invariants()
    registry.find_op("layout_steps_masks::f").check_invariants()
    fallbacks.close()
    lib.close()


def test_a_filled_table_is_the_cells_with_each_run_holding_its_entry(engine):
    # engine.filled_table, which makes every table registration publishes
    # (OperatorEntry.refresh), in one pass when compiled.
    cells = tuple(engine.KernelFunction(KernelKind.MISSING, None, cell=True) for _ in range(8))
    first, second = engine.KernelFunction(KernelKind.UNBOXED, len), engine.KernelFunction(KernelKind.UNBOXED, abs)
    table = engine.filled_table(cells, ((0, 1, 1), (3, 6, 0), (7, 8, 1)), [first, second])
    assert type(table) is tuple
    assert [entry is first for entry in table] == [False, False, False, True, True, True, False, False]
    assert [entry is second for entry in table] == [True, False, False, False, False, False, False, True]
    assert all(table[i] is cells[i] for i in (1, 2, 6))
    assert engine.filled_table(cells, (), []) == cells


@pytest.mark.parametrize("runs", [((3, 2, 0),), ((0, 9, 0),), ((4, 6, 0), (2, 3, 0)), ((0, 3, 0), (2, 4, 0))])
def test_a_filled_table_refuses_runs_out_of_order_or_beyond_its_slots(engine, runs):
    cells = tuple(engine.KernelFunction(KernelKind.MISSING, None, cell=True) for _ in range(8))
    with pytest.raises(ValueError, match="in slot order, within its 8 slots"):
        engine.filled_table(cells, runs, [engine.KernelFunction(KernelKind.UNBOXED, len)])
