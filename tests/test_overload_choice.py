"""Packet calls choose torch 2.13's overload: every argument pattern of
tests/golden/overload_choice_golden.json (recorded with torch's
``_jit_resolve_packet``, the matching its packet call does), replayed on the
whole aten catalog through ``compat.torch_C._jit_resolve_packet`` and the
packet call itself."""
import pytest

from dispatcher import DispatchKey as K
from dispatcher import TorchDispatchMode

from .conftest import load_golden

GOLDEN = load_golden("overload_choice_golden.json")["choices"]


def values(world, pattern):
    def value(token):
        if token == "T":
            return world.tensor(K.CPU, K.AutogradCPU, K.ADInplaceOrView)
        if isinstance(token, list):
            return [value(t) for t in token]
        return token

    return [value(t) for t in pattern]


def test_every_pattern_chooses_torchs_overload(world, compat):
    assert sum(len(patterns) for patterns in GOLDEN.values()) > 15000
    wrong = []
    for name, patterns in GOLDEN.items():
        for pattern, expected in patterns:
            try:
                chosen = compat._jit_resolve_packet(f"aten::{name}", *values(world, pattern))
            except RuntimeError:
                chosen = None
            if chosen != expected:
                wrong.append(f"aten::{name}{tuple(pattern)}: torch {expected}, here {chosen}")
    assert not wrong, f"{len(wrong)} patterns choose otherwise:\n" + "\n".join(wrong[:40])


@pytest.mark.parametrize("name", ["mul", "add", "sub", "div"])
def test_a_number_counts_as_a_tensor_for_torchs_arithmetic(in_use, world, monkeypatch, name):
    """``ops.aten.mul(t, 2)`` reaches aten::mul.Tensor, as on torch; the kernel gets the number."""
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func.name(), args))
            return args[0]

    t = values(world, ["T"])[0]
    with Record():
        getattr(world.ops.aten, name)(t, 2)
        getattr(world.ops.aten, name)(t, 2.5)
    assert seen == [(f"aten::{name}.Tensor", (t, 2)), (f"aten::{name}.Tensor", (t, 2.5))]
    with Record():
        world.ops.aten.pow(t, 2)  # not allow-listed: the Scalar overload
    assert seen[-1][0] == "aten::pow.Tensor_Scalar"
