"""torch's undefined tensor at the engine, on both engines: a handler's None
where the schema returns a Tensor is given back as None (torch takes it as an
undefined tensor), and None where a Tensor argument is wanted is refused
with torch's text.  Also: a packet call whose argument's type has a
metaclass (an Enum member, as a prototype dtype is), and OpOverload._handle.
(The prototype's side of these, against torch's answers:
tests/test_prototype_test_file_ops.py.)
"""
from __future__ import annotations

import enum
import itertools

import pytest

from dispatcher import DispatchKey as K
from dispatcher.dispatch_modes import TorchDispatchMode

CPU_TENSOR_KEYS = (K.CPU, K.ADInplaceOrView, K.AutogradCPU)
_ns = (f"undefined{i}" for i in itertools.count())


@pytest.fixture
def modes(in_use, world):
    yield world
    while world.engine.dispatch_mode_stack():
        world.engine.pop_dispatch_mode()


def _define(world, *schemas):
    lib = world.library(next(_ns))
    for schema in schemas:
        lib.define(schema)
    return lib, getattr(world.ops, lib.ns)


def test_a_handler_returning_none_for_a_tensor_gives_none(modes):
    lib, ns = _define(modes, "f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")

    class NoneForF(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return None

    class Text(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return "arf"

    t = modes.tensor(*CPU_TENSOR_KEYS)
    with NoneForF():
        assert ns.f.default(t) is None
    with Text(), pytest.raises(RuntimeError, match="Unable to cast arf to Tensor"):  # anything else still refused
        ns.f.default(t)


def test_none_for_a_tensor_argument_is_refused_with_torchs_text(world):
    lib, ns = _define(world, "f(Tensor x) -> int", "g(Tensor x, Tensor y) -> int", "h(Tensor? x) -> int")
    for name in ("f", "g", "h"):
        lib.impl(name, lambda *args: 1, "CPU")
    t = world.tensor(*CPU_TENSOR_KEYS)
    with pytest.raises(RuntimeError, match=r"^Expected a proper Tensor but got None \(or an undefined Tensor in "
                                           r"C\+\+\) for argument #0 'x'$"):
        ns.f.default(None)
    with pytest.raises(RuntimeError, match=r"for argument #1 'y'$"):
        ns.g.default(t, None)
    with pytest.raises(TypeError, match=r"argument 'x' \(position 1\) must be a tensor, not int"):  # not None: as before
        ns.f.default(3)
    assert ns.h.default(t) == 1  # an optional tensor takes None


class Choice(enum.Enum):
    ONE = 1


def test_a_packet_call_takes_an_argument_whose_type_has_a_metaclass(world):
    lib, ns = _define(world, "f(Tensor x, Any y) -> str")
    lib.impl("f", lambda x, y: type(y).__name__, "CPU")
    t = world.tensor(*CPU_TENSOR_KEYS)
    assert type(type(Choice.ONE)) is not type  # (its type's type is EnumType)
    assert ns.f(t, Choice.ONE) == "Choice"
    assert ns.f(t, y=Choice.ONE) == "Choice"


def test_an_overloads_handle_is_itself(world):
    _, ns = _define(world, "f(Tensor x) -> Tensor")
    assert ns.f.default._handle is ns.f.default
