"""A catalog operator's packet before its definition (Note [Packets of
operators not defined yet] in dispatcher/_engine/core.py): ``ops.aten.<name>``
defines nothing; whatever first needs the overloads defines them all, on the
same packet, and behaves as if they had been defined at the read."""
from __future__ import annotations

import threading

import pytest

from dispatcher import DispatchKey, explain
from dispatcher.catalog import TORCH_2_13


def overload_names(qualified: str) -> list[str]:
    return [o.schema.partition("(")[0].partition(".")[2] or "default" for o in TORCH_2_13.overloads(qualified)]


def is_pending(world, packet) -> bool:
    return isinstance(packet, world.engine.PendingOverloadPacket)



def run_together(targets, errors, timeout=60):
    """Run each of ``targets`` in a thread of its own and wait for them all; none
    may hang or have put an exception in ``errors``."""
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert errors == [] and not any(thread.is_alive() for thread in threads)

def test_reading_a_packet_defines_nothing(world):
    registry = world.registry
    packet = world.ops.aten.addcmul
    assert is_pending(world, packet)
    assert registry.find_defined("aten::addcmul") is None and registry.find_defined("aten::addcmul.out") is None
    assert "aten::addcmul" not in registry.packet_names()
    assert world.ops.aten.addcmul is packet  # an attribute now: the same packet on every read
    assert (repr(packet), str(packet), packet.__name__) == ("<OpOverloadPacket(op='aten.addcmul')>", "aten.addcmul",
                                                            "addcmul")
    assert registry.find_defined("aten::addcmul") is None  # those read nothing that needs the overloads


def test_reading_an_overload_defines_it_alone_on_the_same_packet(world):
    registry = world.registry
    packet = world.ops.aten.addcmul
    handle = packet.out
    assert is_pending(world, packet)  # until its other overload is defined too
    assert registry.find_defined("aten::addcmul.out").handle is handle and registry.find_defined("aten::addcmul") is None
    assert registry.overload_names("aten::addcmul") == ["out"]
    assert world.ops.aten.addcmul is packet and packet.out is handle and handle.overloadpacket is packet
    assert str(handle.schema) == TORCH_2_13.overloads("aten::addcmul")[1].schema
    default = packet.default
    assert registry.overload_names("aten::addcmul") == ["", "out"]  # torch's order, whatever the order of reads
    # All defined: the packet takes its class of its own (Note [A packet's class names it]).
    assert not is_pending(world, packet) and type(packet).__name__ == "ops.aten.addcmul"
    assert packet.overloads() == overload_names("aten::addcmul") and packet.default is default


def test_reading_overloads_in_any_order_lists_them_in_torchs(world):
    packet = world.ops.aten.add
    names = overload_names("aten::add")
    for name in reversed(names[:5]):
        getattr(packet, name)
    assert is_pending(world, packet)
    assert world.registry.overload_names("aten::add") == [n if n != "default" else "" for n in names[:5]]
    assert packet.overloads() == names and not is_pending(world, packet)
    assert world.registry.overload_names("aten::add") == [n if n != "default" else "" for n in names]


def test_a_registry_lookup_defines_the_rest_of_a_partly_read_set(world):
    packet = world.ops.aten.addcdiv
    packet.out  # noqa: B018
    assert world.registry.find_op("aten::addcdiv") is not None  # the whole set, as before
    assert not is_pending(world, packet) and packet.overloads() == overload_names("aten::addcdiv")
    assert world.registry.packet("aten::addcdiv") is packet


@pytest.mark.parametrize("first_need", ["overloads", "_overload_names", "_schemas", "op_overloads", "_dir", "dir",
                                        "hasattr", "call", "resolve", "find_op"])
def test_whatever_needs_the_overloads_defines_them(world, first_need):
    packet = world.ops.aten.sinh
    assert is_pending(world, packet)
    t = world.tensor(DispatchKey.CPU)
    expected = overload_names("aten::sinh")
    with world.library("aten", "IMPL", "CPU") as lib:
        lib.impl("sinh", lambda x: ("sinh", x))
        got = {
            "overloads": lambda: packet.overloads(),
            "_overload_names": lambda: packet._overload_names,
            "_schemas": lambda: list(packet._schemas),
            "op_overloads": lambda: [h._overloadname for h in packet.op_overloads()],
            "_dir": lambda: packet._dir,
            "dir": lambda: [n for n in dir(packet) if n in expected],
            "hasattr": lambda: [n for n in expected if hasattr(packet, n)],
            "call": lambda: packet(t),
            "resolve": lambda: world.engine.resolve_overload(packet, (t,)),
            "find_op": lambda: world.registry.find_op("aten::sinh.out") and packet.overloads(),
        }[first_need]()
        assert not is_pending(world, packet)
        if first_need == "call":
            assert got == ("sinh", t)
        elif first_need == "resolve":
            assert got is packet.default
        else:
            assert sorted(got) == sorted(expected)
        assert packet.default(t) == ("sinh", t)


def test_a_missing_overload_is_named_as_on_a_defined_packet(world):
    packet = world.ops.aten.cosh
    with pytest.raises(AttributeError) as caught:
        packet.nope
    assert str(caught.value) == "'ops.aten.cosh' object has no attribute 'nope'"
    assert not is_pending(world, packet)  # a name that is no overload needs them all: defined, then missed
    with pytest.raises(AttributeError) as again:
        packet.nope
    assert str(again.value) == str(caught.value)


def test_a_fallback_registered_before_the_definition_reaches_it(world):
    packet = world.ops.aten.tanh  # handed out, not defined
    seen = []

    def fallback(op, x):
        seen.append(op)
        return x

    t = world.tensor(DispatchKey.PrivateUse3)
    with world.library("_", "IMPL") as lib:
        lib.fallback(fallback, "PrivateUse3")
        assert is_pending(world, packet)
        assert packet.default(t) is t  # defined now, with the fallback in its slot
        assert seen == [packet.default]
        world.registry.check_invariants("aten::tanh")
    with pytest.raises(NotImplementedError, match="aten::tanh"):
        packet.default(t)  # the fallback went with its library


def test_a_fallback_registered_after_reading_but_before_a_call(world):
    packet = world.ops.aten.atan
    handle = packet.default
    t = world.tensor(DispatchKey.PrivateUse3)
    with world.library("_", "IMPL") as lib:
        seen = []
        lib.fallback(lambda op, x: seen.append(op) or x, "PrivateUse3")
        assert handle(t) is t and seen == [handle]


def test_an_impl_before_the_definition_is_kept(world):
    packet = world.ops.aten.asinh
    t = world.tensor(DispatchKey.CPU)
    with world.library("aten", "IMPL", "CPU") as lib:
        lib.impl("asinh", lambda x: "asinh kernel")  # impl before def, as in c10: defines nothing
        assert is_pending(world, packet) and world.registry.find_defined("aten::asinh") is None
        assert packet.default(t) == "asinh kernel"  # defined now, the kernel checked against the def and kept
        assert world.registry.find_defined("aten::asinh") is not None and world.ops.aten.asinh is packet
        assert world.registry.find_op("aten::asinh").has_kernel_for_dispatch_key(DispatchKey.CPU)


def test_dumps_and_lookups_of_a_read_operator_are_those_of_a_defined_one(in_use, world, compat):
    # One operator only read (pending), another defined outright: the compat
    # shim's answers for the first equal those for the second, and what a def
    # of the same schema in a library of our own prints.
    world.ops.aten.expm1
    assert is_pending(world, world.ops.aten.expm1)
    assert compat._dispatch_has_kernel("aten::expm1")
    assert not compat._dispatch_has_kernel_for_dispatch_key("aten::expm1", "CPU")
    dump = compat._dispatch_dump("aten::expm1")
    assert dump == ("name: aten::expm1\nschema: aten::expm1(Tensor self) -> Tensor\n"
                    f"debug: {TORCH_2_13.origin}\nalias analysis kind: FROM_SCHEMA\n")
    table = compat._dispatch_dump_table("aten::expm1")
    world.registry.find_op("aten::log1p")
    assert table == compat._dispatch_dump_table("aten::log1p")
    assert not is_pending(world, world.ops.aten.expm1)


def test_a_factory_read_then_used_has_its_backend_select_kernel(world):
    packet = world.ops.aten.empty
    assert world.registry.find_defined("aten::empty.memory_format") is None
    assert packet.memory_format.has_kernel_for_dispatch_key(DispatchKey.BackendSelect)  # defined alone, with it
    assert is_pending(world, packet)


def test_first_reads_from_many_threads_define_each_set_once(world):
    names = [n[len("aten::"):] for n in TORCH_2_13.names() if n.startswith("aten::")][200:260]
    defined: list[str] = []
    world.registry.watch_overloads(lambda name, packet: defined.append(name))
    barrier = threading.Barrier(4)
    seen: list[list[tuple[object, object]]] = [[], [], [], []]
    errors: list[BaseException] = []

    def reader(i):
        try:
            barrier.wait()
            for name in names:
                packet = getattr(world.ops.aten, name)
                first = packet.overloads()[0]
                seen[i].append((packet, getattr(packet, first)))
        except BaseException as exc:  # noqa: BLE001 -- reported below
            errors.append(exc)

    run_together([lambda i=i: reader(i) for i in range(4)], errors)
    assert all(s == seen[0] for s in seen)  # one packet, one handle per name for every thread
    assert sorted(defined) == sorted(f"aten::{n}" for n in names)  # each set published once
    for name in names:
        assert world.registry.overload_names(f"aten::{name}") == [
            o if o != "default" else "" for o in overload_names(f"aten::{name}")]


def test_a_read_racing_registrations_and_calls(world):
    # One thread reads packets and calls their overloads, one registers and
    # removes impls and a fallback on the same operators, one asks the
    # registry for them: every answer is whole, every set defined once.
    names = [n[len("aten::"):] for n in TORCH_2_13.names() if n.startswith("aten::")][300:340]
    t = world.tensor(DispatchKey.PrivateUse3)
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def reader():
        try:
            barrier.wait()
            for name in names:
                packet = getattr(world.ops.aten, name)
                for overload in packet.overloads():
                    handle = getattr(packet, overload)
                    assert handle.schema is not None
                    try:
                        handle(t)
                    except (NotImplementedError, TypeError, RuntimeError):
                        pass  # no kernel, or arguments that do not fit: the answer of a defined operator
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def registrar():
        try:
            barrier.wait()
            for name in names:
                with world.library("aten", "IMPL", "PrivateUse3") as lib:
                    lib.impl(name, lambda *args, **kwargs: None)
                with world.library("_", "IMPL") as lib:
                    lib.fallback(lambda op, *args, **kwargs: None, "PrivateUse3")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def asker():
        try:
            barrier.wait()
            for name in reversed(names):
                assert world.registry.find_op(f"aten::{name}") is not None or world.registry.overload_names(
                    f"aten::{name}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    run_together([reader, registrar, asker], errors, timeout=120)
    for name in names:
        qualified = f"aten::{name}"
        assert world.registry.overload_names(qualified) == [o if o != "default" else ""
                                                            for o in overload_names(qualified)]
    world.registry.check_invariants()


def test_overloads_read_one_by_one_from_many_threads(world):
    # Each thread reads the overloads of the same operators in its own order:
    # each overload is defined once, every thread gets its one handle, and
    # the sets end listed in torch's order, their packets settled.
    qualified = [n for n in TORCH_2_13.names() if n.startswith("aten::") and len(TORCH_2_13.overloads(n)) > 2][40:70]
    defined: list[str] = []
    world.registry.watch_overloads(lambda name, packet: defined.append(name))
    barrier = threading.Barrier(4)
    seen: list[dict[tuple[str, str], object]] = [{}, {}, {}, {}]
    errors: list[BaseException] = []

    def reader(i):
        try:
            barrier.wait()
            for name in qualified:
                packet = getattr(world.ops.aten, name[len("aten::"):])
                names = overload_names(name)
                for overload in (names if i % 2 else names[::-1])[i:] + (names if i % 2 else names[::-1])[:i]:
                    seen[i][name, overload] = getattr(packet, overload)
        except BaseException as exc:  # noqa: BLE001 -- reported below
            errors.append(exc)

    run_together([lambda i=i: reader(i) for i in range(4)], errors)
    assert all(s == seen[0] for s in seen[1:])
    for name in qualified:
        names = overload_names(name)
        packet = getattr(world.ops.aten, name[len("aten::"):])
        assert not is_pending(world, packet) and packet.overloads() == names
        assert defined.count(name) == len(names)  # one publication per overload defined
        assert [seen[0][name, o] for o in names] == packet.op_overloads()


def test_explain_of_an_overload_read_alone_and_of_a_pending_packet(world):
    packet = world.ops.aten.log2
    handle = packet.default  # defined alone; log2.out is not
    t = world.tensor(DispatchKey.CPU)
    with world.library("aten", "IMPL", "CPU") as lib:
        lib.impl("log2", lambda x: x)
        explanation = explain(handle, t)
        assert explanation.key == DispatchKey.CPU and "aten::log2" in str(explanation)
    other = world.ops.aten.log10
    with pytest.raises(TypeError, match=r"explain takes one overload, not the packet aten::log10: pass one of "
                                        r"ops\.aten\.log10\.default, ops\.aten\.log10\.out"):
        explain(other)
