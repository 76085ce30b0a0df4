"""The operator catalog: torch 2.13's 4374 schemas, defined on first use."""
from __future__ import annotations

import subprocess
import sys

import pytest

from dispatcher import DispatchKey
from dispatcher.catalog import TORCH_2_13, Catalog
from dispatcher.schema import FunctionSchema


def test_the_catalog_is_torch_2_13s():
    schemas = TORCH_2_13.schemas()
    assert len(schemas) == len(set(schemas)) == 4374
    namespaces = {s.split("::")[0] for s in schemas}
    assert set(TORCH_2_13.namespaces) == namespaces and len(namespaces) == 27
    assert sum(s.startswith("aten::") for s in schemas) == 3754
    assert TORCH_2_13.def_namespaces <= namespaces and "aten" in TORCH_2_13.def_namespaces
    assert "inductor" not in TORCH_2_13.def_namespaces  # torch defines it in FRAGMENTs only


def test_overloads_come_in_torchs_order_with_their_tags():
    add = TORCH_2_13.overloads("aten::add")
    assert [o.schema.split("(")[0] for o in add[:4]] == [
        "aten::add.Tensor", "aten::add.Scalar", "aten::add.out", "aten::add.Scalar_out"]
    assert add[0].tags == ("core", "pointwise", "pt2_compliant_tag")
    assert TORCH_2_13.overloads("aten::no_such_op") == ()


def test_every_catalog_schema_is_reachable_through_ops(world):
    reached = 0
    for qualified in TORCH_2_13.names():
        ns, name = qualified.split("::")
        packet = getattr(getattr(world.ops, ns), name)
        for overload, catalog_line in zip(packet.overloads(), TORCH_2_13.overloads(qualified), strict=True):
            assert str(getattr(packet, overload).schema) == catalog_line.schema
            reached += 1
    assert reached == 4374


def test_operators_are_defined_on_first_use(world):
    registry = world.registry
    assert registry.find_defined("aten::sin") is None  # nothing read it yet
    assert world.ops.aten.sin.default.schema == FunctionSchema.parse("aten::sin(Tensor self) -> Tensor")
    entry = registry.find_defined("aten::sin")
    assert entry is not None and entry.schema.debug == TORCH_2_13.origin
    assert entry.schema.tags == ("core", "pointwise", "pt2_compliant_tag")
    # find_op defines too, all overloads of the name at once.
    assert registry.find_op("aten::cos.out") is not None and registry.find_defined("aten::cos") is not None
    assert "aten::tan.out" in registry.all_op_names()  # listed before it is defined
    with pytest.raises(AttributeError, match="no operator named 'no_such_op' in namespace dispatcher.ops.aten"):
        world.ops.aten.no_such_op


def test_a_catalog_name_is_published_once_with_all_its_overloads(world):
    seen = []
    world.registry.watch_overloads(lambda name, packet: seen.append((name, packet.overloads())))
    packet = world.ops.aten.add
    assert seen == []  # handed out, not defined yet (Note [Packets of operators not defined yet])
    packet.overloads()  # needs them all
    expected = [o.schema.partition("(")[0].partition(".")[2] or "default" for o in TORCH_2_13.overloads("aten::add")]
    assert len(expected) > 2 and seen == [("aten::add", expected)]


def test_import_and_other_namespaces_do_not_read_the_catalog():
    code = ("import dispatcher, dispatcher.catalog as c; "
            "assert c.TORCH_2_13._by_name is None, 'catalog read at import'; "
            "lib = dispatcher.Library('mine', 'DEF'); lib.define('f(Tensor x) -> Tensor'); "
            "assert c.TORCH_2_13._by_name is None, 'catalog read by a define of another namespace'; "
            "dispatcher.ops.aten.add; assert c.TORCH_2_13._by_name is not None")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_second_definition_gets_torchs_error(world):
    with pytest.raises(RuntimeError, match=r"^Only a single TORCH_LIBRARY can be used to register the namespace "
                       r"aten;.*Previous registration of TORCH_LIBRARY was registered by the torch 2\.13 operator "
                       r"catalog"):
        world.library("aten", "DEF")
    world.library("inductor", "DEF").close()  # torch has no DEF library of inductor either
    with world.library("aten", "FRAGMENT") as lib:
        with pytest.raises(RuntimeError, match=r"^Tried to register an operator \(aten::mul\.Tensor\(.*Original "
                           r"registration: registered by the torch 2\.13 operator catalog"):
            lib.define("mul.Tensor(Tensor self, Tensor other) -> Tensor")
        assert lib.define("my_new_op(Tensor self) -> Tensor") == "my_new_op"  # torch allows new aten ops
        assert str(world.ops.aten.my_new_op.default.schema) == "aten::my_new_op(Tensor self) -> Tensor"


def test_kernels_for_catalog_operators(world):
    t = world.tensor(DispatchKey.CPU)
    with world.library("aten", "IMPL", "CPU") as lib:
        # Registered before anything used aten::neg: impl before def, as in c10.
        lib.impl("neg", lambda x: ("neg", x))
        assert world.ops.aten.neg.default(t) == ("neg", t)
        lib.impl("aten::add.Tensor", lambda x, y, alpha=1: ("add", alpha))
        assert world.ops.aten.add.Tensor(t, t, alpha=2) == ("add", 2)
        assert world.ops.aten.add(t, t) == ("add", 1)  # the packet picks add.Tensor
    with pytest.raises(NotImplementedError, match="aten::neg"):
        world.ops.aten.neg.default(t)  # the kernel went with its library; the def stays


def test_a_broken_catalog_file_is_reported(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("aten::f(Tensor x) -> Tensor\n")
    with pytest.raises(ValueError, match="the first two lines must be"):
        Catalog(str(bad), "test").namespaces
    bad.write_text("# namespaces: a\n# namespaces with a DEF library: \nb::f(Tensor x) -> Tensor\n")
    with pytest.raises(ValueError, match=r"bad\.txt:3: b::f is not in a namespace of the first line"):
        Catalog(str(bad), "test").names()


def test_an_operators_overloads_apart_in_the_file_are_still_its(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("# namespaces: a\n# namespaces with a DEF library: a\n"
                    "a::f(Tensor x) -> Tensor\ta_tag\na::g(Tensor x) -> Tensor\na::f.two(Tensor x) -> Tensor\n")
    catalog = Catalog(str(path), "test")
    assert catalog.names() == ["a::f", "a::g"]
    assert [(o.schema, o.tags, o.number) for o in catalog.overloads("a::f")] == [
        ("a::f(Tensor x) -> Tensor", ("a_tag",), 0), ("a::f.two(Tensor x) -> Tensor", (), 2)]
    assert catalog.operator_names() == ["a::f", "a::f.two", "a::g"]
    assert catalog.overloads("a::f") is catalog.overloads("a::f")  # made once
