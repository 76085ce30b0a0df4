"""The registration timing runs every step on our Library (timings are not asserted)."""
import pytest

from dispatcher import registration_timing, round_robin_timing
from dispatcher.compat.torch_C import _dispatch_dump, _dispatch_dump_table, _dispatch_has_backend_fallback
from dispatcher.library import Library
from dispatcher.registry import default_registry


def test_registration_steps_times_every_step_and_leaves_nothing_behind():
    before = default_registry.all_op_names()
    steps = registration_timing.registration_steps(Library, _dispatch_dump_table, _dispatch_dump, rounds=2)
    assert list(steps) == list(registration_timing.STEPS)
    assert all(t > 0 for t in steps.values())
    assert default_registry.all_op_names() == before
    assert not _dispatch_has_backend_fallback(registration_timing.FALLBACK_KEY)


def test_the_table_has_a_row_per_step_and_torch_beside_ours_when_given():
    ours = dict.fromkeys(registration_timing.STEPS, 2.0)
    table = registration_timing.format_table(ours)
    assert "torch" not in table
    assert "| define | 2.0 |" in table
    torch = dict.fromkeys(registration_timing.STEPS, 5.0)
    table = registration_timing.format_table(ours, torch, "2.13.0")
    assert "| step | µs (median) | torch 2.13.0 (µs) | ours / torch | torch's path |" in table
    assert "| destroy | 2.0 | 5.0 | 0.40x | Library._destroy(): " in table
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| step")]
    assert len(rows) == len(registration_timing.STEPS)


def test_catalog_operators_are_counted_by_overload_and_first_use_times_undefined_ones():
    defined = registration_timing.define_catalog_operators(10)
    assert defined >= 10
    assert registration_timing.define_catalog_operators(5) == defined  # definitions stay
    ours, _torch = registration_timing.first_catalog_use(names=3)
    assert len(ours) == 3 and all(t > 0 for t in ours)
    assert registration_timing.define_catalog_operators(defined + 20) >= defined + 20
    line = registration_timing.format_first_use([1.0, 2.0, 3.0], [0.5])
    assert line.startswith("First use of a catalog operator (3 names): ops.aten.<name> median 2.0 µs")
    assert "torch's first torch.ops.aten.<name> median 0.5 µs" in line
    line = registration_timing.format_first_use([1.0, 2.0, 3.0], [0.5], overload=True)
    assert line.startswith("First use of an overload of a catalog operator (3 names): ops.aten.<name>.<overload> "
                           "median 2.0 µs")


def test_first_uses_time_names_not_read_yet_and_the_overload_read_defines_the_set():
    from dispatcher.ops import ops

    read_before = set(vars(ops.aten))
    ours, _torch = registration_timing.first_catalog_use(names=3)
    read = set(vars(ops.aten)) - read_before
    assert len(read) == 4 and len(ours) == 3  # and one read untimed, before
    packets = set(default_registry.packet_names())
    assert not any(f"aten::{name}" in packets for name in read)  # handed out, not defined
    ours, _torch = registration_timing.first_overload_use(names=3)
    defined = set(vars(ops.aten)) - read_before - read
    assert len(defined) == 4 and len(ours) == 3 and all(t > 0 for t in ours)
    assert all(f"aten::{name}" in default_registry.packet_names() for name in defined)


def test_round_robin_calls_each_operator_and_leaves_nothing_behind():
    before = default_registry.all_op_names()
    result = round_robin_timing.compare(count=20, passes=2)
    assert result["ours_ns"] > 0 and result["direct_ns"] > 0 and result["ours/direct"] > 0
    assert default_registry.all_op_names() == before
    assert round_robin_timing.format_row(result, 20).startswith("Round robin over 20 operators: ours ")
    with pytest.raises(ValueError, match="at least 1"):
        round_robin_timing.compare(count=0)
