"""The catalog's schemas from their parts (Note [Catalog parts] in dispatcher/catalog/parts.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dispatcher.catalog import TORCH_2_13, Catalog, CatalogOverload
from dispatcher.catalog.parts import format_parts
from dispatcher.schema import FunctionSchema, SchemaParseError, parse_schema_element

PARTS = os.path.join(os.path.dirname(TORCH_2_13.path), "torch-2.13.parts.txt")


def test_the_parts_file_is_written_from_the_catalog_as_it_is():
    # tools/write_catalog_parts.py writes exactly this: rerun it after the catalog changes.
    schemas = [FunctionSchema.parse(text) for text in TORCH_2_13.schemas()]
    with open(PARTS, encoding="utf-8") as f:
        assert f.read() == format_parts("torch-2.13.txt", schemas)


# A fresh interpreter: no schema of the catalog parsed before, so that each
# one is made from its parts, then compared with the parser's own.
_EVERY_SCHEMA_FROM_ITS_PARTS = """
from dispatcher.catalog import TORCH_2_13
from dispatcher.schema import _SCHEMA_CACHE, _Parser
overloads = [o for name in TORCH_2_13.names() for o in TORCH_2_13.overloads(name)]
assert not any(o.schema in _SCHEMA_CACHE for o in overloads)
made = TORCH_2_13.parsed(tuple(overloads))
assert TORCH_2_13._parts._loaded, "the parts file was not used"
for overload, schema in zip(overloads, made, strict=True):
    parsed = _Parser(overload.schema).schema()
    assert schema == parsed and str(schema) == overload.schema, overload.schema
    assert schema.dispatch_args == parsed.dispatch_args and schema.dispatch_layout == parsed.dispatch_layout
    mine, theirs = schema._sig, parsed._sig
    for field in ("names", "index", "ambiguous", "defaults", "n_declared", "n_positional", "n_required", "tail",
                  "is_vararg", "_required", "last_required"):
        assert getattr(mine, field) == getattr(theirs, field), (overload.schema, field)
    assert [a.default_value for a in schema.arguments] == [a.default_value for a in parsed.arguments]
# What parse gives from now on is the schema made from the parts (as
# remembered: the cache, bounded, started over before the last ones).
from dispatcher.schema import FunctionSchema
assert all(FunctionSchema.parse(o.schema) is s for o, s in zip(overloads[-100:], made[-100:]))
print(len(made))
"""


def test_every_catalog_schema_from_its_parts_is_the_parsed_one():
    out = subprocess.run([sys.executable, "-c", _EVERY_SCHEMA_FROM_ITS_PARTS], check=True, capture_output=True,
                         text=True)
    assert out.stdout.split() == ["4374"]


def test_a_catalog_without_matching_parts_parses(tmp_path):
    catalog_file = tmp_path / "c.txt"
    catalog_file.write_text("# namespaces: a\n# namespaces with a DEF library: a\n"
                            "a::f(Tensor x, *, int n=2) -> Tensor\na::g(Tensor x) -> Tensor\n")
    stale = tmp_path / "stale.parts.txt"
    stale.write_text("# parts of c.txt\na Tensor x\nr Tensor\n# schemas\n0;1\n")  # one schema line for two schemas
    for parts in (None, str(tmp_path / "missing.parts.txt"), str(stale)):
        catalog = Catalog(str(catalog_file), "test", parts)
        schemas = catalog.parsed(catalog.overloads("a::f") + catalog.overloads("a::g"))
        assert [str(s) for s in schemas] == ["a::f(Tensor x, *, int n=2) -> Tensor", "a::g(Tensor x) -> Tensor"]


def test_a_catalog_with_its_own_parts(tmp_path):
    catalog_file = tmp_path / "c.txt"
    texts = ["b::h(Tensor(a!) self, int[2] k=[1, 2], ...) -> (Tensor(a!), ...)", "b::h.two() -> ()"]
    catalog_file.write_text("# namespaces: b\n# namespaces with a DEF library: b\n" + "\n".join(texts) + "\n")
    parts = tmp_path / "c.parts.txt"
    parts.write_text(format_parts("c.txt", [FunctionSchema.parse(t) for t in texts]))
    assert parts.read_text().splitlines()[1:] == [
        "a Tensor(a!) self", "a int[2] k=[1, 2]", "r Tensor(a!)", "# schemas", "0,1,...;2,...", ";"]
    catalog = Catalog(str(catalog_file), "test", str(parts))
    assert [str(s) for s in catalog.parsed(catalog.overloads("b::h"))] == texts


def test_an_overload_without_a_line_number_is_parsed():
    made = TORCH_2_13.parsed((CatalogOverload("aten::not_in_the_catalog(Tensor x) -> Tensor", ()),))
    assert [str(s) for s in made] == ["aten::not_in_the_catalog(Tensor x) -> Tensor"]


def test_schema_elements_parse_alone():
    assert str(parse_schema_element("k", "Scalar alpha=1")) == "Scalar alpha=1"
    assert parse_schema_element("k", "Scalar alpha=1").kwarg_only
    assert not parse_schema_element("a", "Tensor(a!) self").kwarg_only
    assert str(parse_schema_element("r", "Tensor(a!) out")) == "Tensor(a!) out"
    with pytest.raises(ValueError, match="a schema element's kind is 'a', 'k' or 'r', not 'x'"):
        parse_schema_element("x", "Tensor self")
    with pytest.raises(SchemaParseError, match="expected end of the argument or return"):
        parse_schema_element("a", "Tensor self, Tensor other")


def schemas_made(monkeypatch):
    """The texts of the schemas the catalog makes from now on, in order (a list that grows)."""
    made = []
    parsed = TORCH_2_13.parsed

    def counted(overloads):
        made.extend(o.schema for o in overloads)
        return parsed(overloads)

    monkeypatch.setattr(TORCH_2_13, "parsed", counted)
    return made


def test_a_first_use_makes_each_overload_once(world, monkeypatch):
    made = schemas_made(monkeypatch)
    world.ops.aten.max.overloads()  # many overloads, each defined by a register_def that looks the name up
    expected = [o.schema for o in TORCH_2_13.overloads("aten::max")]
    assert len(expected) > 3 and made == expected


def test_a_first_read_of_an_overload_makes_that_schema_alone(world, monkeypatch):
    made = schemas_made(monkeypatch)
    packet = world.ops.aten.min
    assert made == []  # the packet read makes no schema
    packet.dim  # noqa: B018
    assert made == [o.schema for o in TORCH_2_13.overloads("aten::min") if o.overload_name == "dim"]
