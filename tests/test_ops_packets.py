"""``ops.ns.name(.overload)`` on both engines: attributes kept up to date by
registration (Note [ops at attribute speed] in dispatcher/ops.py) and packets
that remember their choice per argument-type pattern (Note [Overload choice
by argument types] in dispatcher/_engine/core.py).

Each call is made through every entry point a packet has: vectorcall
(``packet(...)``, compiled), ``__call__`` (tp_call) and ``functools.partial``
(vectorcall without PY_VECTORCALL_ARGUMENTS_OFFSET).
"""
import functools

import pytest

from dispatcher.keys import DispatchKey as K

pytestmark = pytest.mark.usefixtures("tls_restored")

CALLS = {
    "vectorcall": lambda packet, *args, **kwargs: packet(*args, **kwargs),
    "tp_call": lambda packet, *args, **kwargs: packet.__call__(*args, **kwargs),
    "partial": lambda packet, *args, **kwargs: functools.partial(packet)(*args, **kwargs),
}


@pytest.fixture(params=sorted(CALLS))
def call(request):
    return CALLS[request.param]


def add_library(world):
    lib = world.library("t", "DEF")
    lib.define("add(Tensor x, Tensor y) -> str")
    lib.define("add.Scalar(Tensor x, Scalar y) -> str")
    lib.define("add.list(Tensor x, int[] y) -> str")
    lib.impl("add", lambda x, y: "tensor", "CPU")
    lib.impl("add.Scalar", lambda x, y: f"scalar {y!r}", "CPU")
    lib.impl("add.list", lambda x, y: f"list {y!r}", "CPU")
    return lib


def test_ops_attributes_are_the_registrys_objects(world):
    lib = add_library(world)
    packet = world.ops.t.add
    assert isinstance(packet, world.engine.OverloadPacket) and type(packet).__name__ == "ops.t.add"
    assert packet.overloads() == ["default", "Scalar", "list"]
    assert packet.default is world.registry.find_op("t::add").handle
    assert packet.Scalar is world.registry.find_op("t::add.Scalar").handle
    assert repr(world.ops.t) == "<ops.t>"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        world.ops.t.nope
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        packet.nope
    lib.close()


def test_operators_defined_later_and_closed_libraries(world):
    lib = add_library(world)
    packet = world.ops.t.add
    t = world.tensor(K.CPU)
    later = world.library("t", "FRAGMENT")
    later.define("add.out(Tensor x, Tensor y, *, Tensor(a!) out) -> str")
    later.impl("add.out", lambda x, y, *, out: "out", "CPU")
    later.define("mul(Tensor x) -> str")
    later.impl("mul", lambda x: "mul", "CPU")
    assert packet.overloads() == ["default", "Scalar", "list", "out"]
    assert packet.out(t, t, out=t) == "out"
    assert packet(t, t, out=t) == "out"
    assert world.ops.t.mul(t) == "mul"
    later.close()
    assert packet.overloads() == ["default", "Scalar", "list"]
    with pytest.raises(AttributeError):
        packet.out
    with pytest.raises(AttributeError):
        world.ops.t.mul
    lib.close()
    with pytest.raises(AttributeError):
        world.ops.t.add
    with pytest.raises(AttributeError, match="no operator named t::add is defined"):
        packet(t, t)
    # A new def makes a new packet (Note [An entry goes with its last
    # registration]); the old one keeps saying the operator is not defined.
    again = add_library(world)
    assert world.ops.t.add is not packet
    assert world.ops.t.add(t, 1) == "scalar 1"
    with pytest.raises(AttributeError, match="no operator named t::add is defined"):
        packet(t, t)
    again.close()


def test_an_ops_made_after_registration_sees_it(world):
    lib = add_library(world)
    from dispatcher.ops import OpNamespaces

    late = OpNamespaces(world.registry)
    assert late.t.add is world.ops.t.add
    lib.close()
    with pytest.raises(AttributeError):
        late.t.add


def test_packet_choices_by_argument_types(world, call):
    lib = add_library(world)
    packet = world.ops.t.add
    t = world.tensor(K.CPU)
    # Repeated, alternating and keyword patterns, each more than once, so
    # remembered choices (and the compiled engine's memo) are exercised.
    for _ in range(3):
        assert call(packet, t, t) == "tensor"
        assert call(packet, t, 2) == "scalar 2"
        assert call(packet, t, 2.5) == "scalar 2.5"
        assert call(packet, t, True) == "scalar True"
        assert call(packet, t, t) == "tensor"
        assert call(packet, t, [1, 2]) == "list [1, 2]"
        assert call(packet, t, y=3) == "scalar 3"
        assert call(packet, x=t, y=t) == "tensor"
        assert call(packet, t, (4,)) == "list (4,)"
    # Two patterns in turn: compiled, the second is found in the memo of the previous choice.
    for _ in range(3):
        assert call(packet, t, t) == "tensor"
        assert call(packet, t, 2) == "scalar 2"
    with pytest.raises(TypeError, match="no overload of t::add accepts these arguments"):
        call(packet, t, "text")
    with pytest.raises(TypeError, match="no overload of t::add accepts these arguments"):
        call(packet, t, ["a"])
    lib.close()


def test_a_one_overload_packet_still_checks_its_arguments(world, call):
    lib = world.library("t", "DEF")
    lib.define("scale(Tensor x, int n) -> int")
    lib.impl("scale", lambda x, n: n, "CPU")
    t = world.tensor(K.CPU)
    packet = world.ops.t.scale
    for _ in range(2):
        assert call(packet, t, 3) == 3
        assert call(packet, t, True) is True  # accepted, as torch.ops does (the kernel gets it as passed)
        with pytest.raises(TypeError, match=r"no overload of t::scale accepts these arguments:\n.*int"):
            call(packet, t, 1.5)
    lib.close()


def test_new_overloads_forget_the_choices(world, call):
    lib = world.library("t", "DEF")
    lib.define("f(Tensor x, Scalar y) -> str")
    lib.impl("f", lambda x, y: "scalar", "CPU")
    t = world.tensor(K.CPU)
    packet = world.ops.t.f
    assert call(packet, t, 1) == "scalar"
    assert call(packet, t, 1) == "scalar"
    extra = world.library("t", "FRAGMENT")
    extra.define("f.int(Tensor x, int y) -> str")
    extra.impl("f.int", lambda x, y: "int", "CPU")
    # Definition order: the default still comes first.
    assert call(packet, t, 1) == "scalar"
    lib.close()
    # Its overload gone, the remembered choice must not be used.
    assert call(packet, t, 1) == "int"
    assert call(packet, t, 1) == "int"
    extra.close()


def test_forgetting_choices_retests_the_arguments(world, call, monkeypatch):
    # register_value_type can make an int acceptable where it was not: every
    # packet must test its arguments again (the epoch).
    from dispatcher import ivalue
    from dispatcher._ivalue_tag import IValueTag

    lib = world.library("t", "DEF")
    lib.define("to(Tensor x, Device d) -> str")
    lib.define("to.int(Tensor x, int n) -> str")
    lib.impl("to", lambda x, d: f"device {d!r}", "CPU")
    lib.impl("to.int", lambda x, n: "int", "CPU")
    t = world.tensor(K.CPU)
    packet = world.ops.t.to
    assert call(packet, t, 0) == "int"
    assert call(packet, t, 0) == "int"
    monkeypatch.setitem(ivalue._ACCEPTED, IValueTag.DEVICE, ivalue._ACCEPTED[IValueTag.DEVICE] + (int,))
    assert call(packet, t, 0) == "int"  # remembered: nobody said the rules changed
    world.engine.forget_overload_choices()
    assert call(packet, t, 0) == "device 0"
    monkeypatch.undo()
    world.engine.forget_overload_choices()
    assert call(packet, t, 0) == "int"
    lib.close()


def test_register_value_type_forgets_every_engines_choices(monkeypatch):
    from dispatcher import _engine, ivalue
    from dispatcher._ivalue_tag import IValueTag

    forgotten = []
    for engine in _engine.loaded_engines():
        monkeypatch.setattr(engine, "forget_overload_choices", lambda engine=engine: forgotten.append(engine))

    class Place:
        pass

    monkeypatch.setitem(ivalue._ACCEPTED, IValueTag.DEVICE, ivalue._ACCEPTED[IValueTag.DEVICE])
    ivalue.register_value_type(IValueTag.DEVICE, Place)
    assert forgotten == _engine.loaded_engines()


# -- torch's OpOverload / OpOverloadPacket attributes (torch 2.13's values for the same defs) --
def test_overloads_have_torchs_opoverload_attributes(world):
    from dispatcher import Tag

    with world.library("tst", "DEF") as lib:
        assert lib.define("foo.bar(Tensor x) -> Tensor", tags=[Tag.pointwise]) == "foo"
        assert lib.define("baz(Tensor x) -> Tensor") == "baz"
        lib.impl("baz", lambda x: x, "CPU")
        bar, baz = world.ops.tst.foo.bar, world.ops.tst.baz.default
        assert str(bar._schema) == "tst::foo.bar(Tensor x) -> Tensor"
        assert (bar.name(), bar._overloadname, bar._opname, bar.namespace) == ("tst::foo.bar", "bar", "foo", "tst")
        assert (baz.name(), baz._overloadname, str(baz)) == ("tst::baz", "default", "tst.baz.default")
        assert (repr(bar), str(bar)) == ("<OpOverload(op='tst.foo', overload='bar')>", "tst.foo.bar")
        assert bar.tags == [Tag.pointwise] and baz.tags == []
        assert bar.overloadpacket is world.ops.tst.foo and baz.overloadpacket is world.ops.tst.baz
        assert baz.has_kernel_for_dispatch_key(K.CPU) and baz.has_kernel_for_dispatch_key("CPU")
        assert not bar.has_kernel_for_dispatch_key(K.CPU)
        assert baz.has_kernel_for_any_dispatch_key(world.keyset(K.CPU, K.CUDA))
        packet = world.ops.tst.foo
        assert (repr(packet), str(packet)) == ("<OpOverloadPacket(op='tst.foo')>", "tst.foo")
        assert packet._qualified_op_name == "tst::foo" and packet._overload_names == ["bar"]
        assert {k: str(v) for k, v in packet._schemas.items()} == {"bar": "tst::foo.bar(Tensor x) -> Tensor"}
    assert world.ops.aten.add.Tensor.tags == [Tag.core, Tag.pointwise, Tag.pt2_compliant_tag]


def test_namespace_gives_any_namespace_as_torch_ops_does(world):
    from dispatcher.ops import forget_namespace, namespace

    empty = namespace("h23b_later", world.ops)
    assert world.ops.h23b_later is empty and not vars(empty)
    with world.library("h23b_later") as lib:
        lib.define("f(Tensor x) -> Tensor")
        assert namespace("h23b_later", world.ops) is empty and empty.f is world.ops.h23b_later.f
        forget_namespace("h23b_later", world.ops)  # has an operator: stays
        assert world.ops.h23b_later is empty
    forget_namespace("h23b_later", world.ops)  # empty now: dropped
    assert not hasattr(world.ops, "h23b_later")
    with pytest.raises(AttributeError, match="no operator namespace 'h23b_later' to delete"):
        forget_namespace("h23b_later", world.ops)
    with pytest.raises(ValueError, match="an operator namespace is an identifier"):
        namespace("not a name", world.ops)
    with pytest.raises(ValueError, match="an operator namespace is an identifier"):
        namespace("__dunder", world.ops)


def test_scoped_library_is_destroyed_as_the_block_ends():
    from dispatcher.library import _scoped_library
    from dispatcher.registry import default_registry

    with _scoped_library("h23bscoped", "DEF") as lib:
        lib.define("g(Tensor x) -> Tensor")
        assert default_registry.find_op("h23bscoped::g") is not None
    assert default_registry.find_op("h23bscoped::g") is None


def test_a_namespace_takes_its_class_on_first_read(world):
    # Note [Namespace classes on first read] in dispatcher/ops.py.
    import threading

    ops = world.ops
    with world.library("firstread") as lib:
        lib.define("f(Tensor x) -> Tensor")
        assert "firstread" not in vars(ops) and "firstread" in type(ops).__dict__  # not made yet
        assert "firstread" in dir(ops) and type(ops).__name__ == "OpNamespaces"
        seen = []
        threads = [threading.Thread(target=lambda: seen.append(ops.firstread)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        namespace = seen[0]
        assert all(s is namespace for s in seen) and ops.firstread is namespace
        assert type(namespace).__name__ == "ops.firstread" and repr(namespace) == "<ops.firstread>"
        assert vars(ops)["firstread"] is namespace and "firstread" not in type(ops).__dict__
        assert namespace.f.default is world.registry.find_op("firstread::f").handle
    assert not hasattr(namespace, "f")  # closed: the packet is gone, the namespace stays
    with world.library("firstread") as again:
        again.define("g(Tensor x) -> Tensor")
        assert ops.firstread is namespace and namespace.g.overloads() == ["default"]


def test_namespace_of_a_namespace_not_read_yet_is_ops_own(world):
    # namespace() is a first read of ops.<name> (Note [Namespace classes on first read]).
    from dispatcher.ops import namespace

    with world.library("unread_ns") as lib:
        lib.define("f(Tensor x) -> Tensor")
        found = namespace("unread_ns", world.ops)
        assert type(found).__name__ == "ops.unread_ns" and world.ops.unread_ns is found
        assert found.f.default is world.registry.find_op("unread_ns::f").handle


def test_a_dunder_namespace_is_an_attribute_at_once(world):
    with world.library("__dunder__") as lib:
        lib.define("f(Tensor x) -> Tensor")
        assert type(vars(world.ops)["__dunder__"]).__name__ == "ops.__dunder__"
        assert repr(world.ops) == "<dispatcher.ops>"



def test_a_packet_deleted_by_the_user_then_its_library_closed(world):
    """``del torch.ops.ns.name`` drops a cached packet in torch (its tests do it
    in tearDown); closing the library afterwards must still undo the
    definition, not stop on the attribute already gone."""
    lib = world.library("deleted_packet", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    delattr(world.ops.deleted_packet, "f")
    lib.close()
    assert world.registry.find_op("deleted_packet::f") is None
    again = world.library("deleted_packet", "DEF")
    again.define("f(Tensor x) -> Tensor")
    assert str(world.ops.deleted_packet.f) == "deleted_packet.f"
    again.close()
