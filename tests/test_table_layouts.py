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
