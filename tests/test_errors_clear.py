"""Inputs that used to fail late or unclearly, and now fail early and clearly.

From the adversarial findings of 2026-11-23 ("Unclear errors seen too"):
types nested without bound (accepted by the parser, then a RecursionError
when printed, dumped or named in the duplicate-definition error), and a
library namespace that no define can use.  Also: the tags of
``Library.define``, which used to be dropped.

These are about schemas and registration texts, which no engine takes part
in, so they use the default registry; only the deepest schema's test, whose
define builds the engine's boxer for the deepest type, runs on both engines
(conftest.py's ``world``).
"""
from __future__ import annotations

import itertools

import pytest

from dispatcher import Library, Tag, ops
from dispatcher.compat import torch_C as C
from dispatcher.library import define
from dispatcher.registry import default_registry as registry
from dispatcher.schema import _MAX_TYPE_NESTING, FunctionSchema, SchemaParseError

_ns = (f"errclear{i}" for i in itertools.count())


@pytest.fixture
def ns():
    return next(_ns)


# -- types nested too deeply ------------------------------------------------------------
def _deep(n: int) -> str:
    """``Tensor`` inside ``n`` lists: a type ``n + 1`` levels deep."""
    return "Tensor" + "[]" * n


DEEP = 1000  # far past Python's recursion limit for anything that walks the type

TOO_DEEP = [
    pytest.param(f"ns::f({_deep(DEEP)} x) -> ()", id="list-argument"),
    pytest.param(f"ns::f(Tensor x) -> {_deep(DEEP)}", id="list-return"),
    pytest.param(f"ns::f(Tensor x) -> ({_deep(DEEP)} a, Tensor b)", id="list-in-return-list"),
    pytest.param("ns::f(Tensor" + "?[]" * (DEEP // 2) + " x) -> ()", id="optional-list"),
    pytest.param(f"ns::f(Dict(str, {_deep(DEEP)}) x) -> ()", id="dict-value"),
    pytest.param(f"ns::f(({_deep(DEEP)}, int) x) -> ()", id="tuple-element"),
    # Neither the tuples (40 deep) nor any one run of lists (40) is too deep,
    # but together they nest 40 * 41 levels.
    pytest.param("ns::f(" + "(" * 40 + "Tensor" + ("[])" * 40) + " x) -> ()", id="tuples-of-lists"),
    # Just at the limit, then one more level from the argument's own [N] or ?.
    pytest.param(f"ns::f({_deep(_MAX_TYPE_NESTING - 1)}[2] x) -> ()", id="sized-list"),
    pytest.param(f"ns::f({_deep(_MAX_TYPE_NESTING - 2)}[2]? x) -> ()", id="optional-sized-list"),
    # Parentheses were already bounded; they keep the same error.
    pytest.param("ns::f(" + "(" * 3000 + ") x) -> ()", id="parentheses"),
]


@pytest.mark.parametrize("text", TOO_DEEP)
def test_types_nested_too_deeply_are_a_parse_error(text):
    with pytest.raises(SchemaParseError) as info:
        FunctionSchema.parse(text)
    assert info.value.msg == "types are nested too deeply"


def test_too_deep_error_points_at_the_first_level_too_many():
    text = f"ns::f({_deep(DEEP)} x) -> ()"
    with pytest.raises(SchemaParseError) as info:
        FunctionSchema.parse(text)
    # Tensor and 63 lists are 64 levels; the 64th "[]" is one too many.
    assert info.value.pos == len("ns::f(Tensor") + 2 * (_MAX_TYPE_NESTING - 1)
    assert text[info.value.pos] == "["


@pytest.mark.parametrize(
    "text",
    [
        f"ns::f({_deep(_MAX_TYPE_NESTING - 1)} x) -> ()",
        f"ns::f(Tensor x) -> {_deep(_MAX_TYPE_NESTING - 1)}",
        f"ns::f({_deep(_MAX_TYPE_NESTING - 2)}[2] x) -> ()",
        f"ns::f({_deep(_MAX_TYPE_NESTING - 3)}[2]? x) -> ()",
        "ns::f(" + "(" * (_MAX_TYPE_NESTING - 1) + "Tensor" + ")" * (_MAX_TYPE_NESTING - 1) + " x) -> ()",
        "ns::f(" + "(" * 31 + "Tensor" + "[])" * 31 + "[] x) -> ()",
    ],
)
def test_types_at_the_limit_parse_and_print_back(text):
    schema = FunctionSchema.parse(text)
    assert FunctionSchema.parse(str(schema)) == schema
    assert hash(schema) == hash(FunctionSchema.parse(text))


def test_library_reports_a_too_deep_schema_before_registering(ns):
    with Library(ns, "DEF") as lib:
        with pytest.raises(SchemaParseError, match="types are nested too deeply"):
            lib.define(f"f({_deep(DEEP)} x) -> ()")
        assert registry.find_op(f"{ns}::f") is None


def test_deepest_schema_dumps_and_names_itself_in_errors(world):
    # Everything that walks a type, at the deepest type the parser accepts:
    # on both engines, since defining it builds the engine's boxer for it.
    deepest = _deep(_MAX_TYPE_NESTING - 1)
    ns = "errclear"
    with world.library(ns, "FRAGMENT") as lib:
        lib.define(f"f({deepest} x) -> {deepest}")
        assert f"{ns}::f({deepest} x) -> {deepest}" in world.registry.find_op(f"{ns}::f").dump_state()
        with pytest.raises(RuntimeError, match="with the same name and overload name multiple times") as info:
            lib.define(f"f({deepest} x) -> {deepest}")
        assert deepest in str(info.value)


# -- library namespaces -------------------------------------------------------------------
BAD_NAMESPACES = ["é", "nsé", "1ns", "a-b", "a b", "a.b", "a::b", "", "ns\n", "ｆｕｌｌｗｉｄｔｈ"]


@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT", "IMPL"])
@pytest.mark.parametrize("bad", BAD_NAMESPACES)
def test_library_rejects_a_namespace_no_operator_can_have(bad, kind):
    with pytest.raises(ValueError) as info:
        Library(bad, kind)
    message = str(info.value)
    assert message == (
        "a library namespace must be an identifier (ASCII letters, digits and underscores, "
        f"not starting with a digit) or '_', got {bad!r}"
    )
    assert bad not in registry._def_namespaces  # a rejected DEF library claims nothing


@pytest.mark.parametrize("bad", [None, 3, b"ns"])
def test_library_rejects_a_namespace_that_is_not_a_str(bad):
    with pytest.raises(ValueError, match="a library namespace must be an identifier"):
        Library(bad, "FRAGMENT")


def test_compat_library_rejects_the_same_namespaces():
    with pytest.raises(ValueError, match="^a library namespace must be an identifier .* got 'é'$"):
        C._dispatch_library("DEF", "é", "")
    assert "é" not in registry._def_namespaces


@pytest.mark.parametrize("good", ["_private", "ns_2", "NS", "a" * 200])
def test_library_accepts_namespaces_the_schema_grammar_accepts(good):
    with Library(good, "FRAGMENT") as lib:
        assert lib.define("errclear_f(Tensor x) -> Tensor") == "errclear_f"
        assert registry.find_op(f"{good}::errclear_f") is not None
    with Library("_", "IMPL"):  # the wildcard, for fallbacks
        pass


# -- Library.define(tags=...) -----------------------------------------------------------
def test_define_keeps_tags_per_operator(ns):
    with Library(ns, "DEF") as lib:
        assert lib.define("f(Tensor x) -> Tensor", tags=("pt2_compliant_tag", "core")) == "f"
        assert lib.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", tags=["inplace_view"]) == "f"
        assert lib.define("g(Tensor x) -> Tensor") == "g"
        assert lib.define("h(Tensor x) -> Tensor", tags="core") == "h"  # one tag, alone
        assert lib.define("k(Tensor x) -> Tensor", tags=(t for t in [Tag.pointwise, "out"])) == "k"
        assert lib.tags_of("f") == lib.tags_of(f"{ns}::f") == ("pt2_compliant_tag", "core")
        assert lib.tags_of("f.out") == lib.tags_of(f"{ns}::f.out") == ("inplace_view",)
        assert lib.tags_of("g") == ()
        assert lib.tags_of("h") == ("core",)
        assert lib.tags_of("k") == ("pointwise", "out")
        assert getattr(ops, ns).k.default.tags == [Tag.pointwise, Tag.out]
        assert getattr(ops, ns).f.out.tags == [Tag.inplace_view]


def test_module_level_define_passes_tags(ns):
    with Library(ns, "FRAGMENT") as lib:
        assert define(f"{ns}::f", "(Tensor x) -> Tensor", lib=lib, tags=["core"]) is None  # as torch.library.define
        assert lib.tags_of("f") == ("core",)


def test_tags_are_keyword_only_and_checked_before_registering(ns):
    with Library(ns, "DEF") as lib:
        with pytest.raises(TypeError):
            lib.define("f(Tensor x) -> Tensor", "", ("core",))
        with pytest.raises(ValueError, match="^1 is not an operator tag; the tags are dispatcher.Tag's: core, "):
            lib.define("f(Tensor x) -> Tensor", tags=["core", 1])
        with pytest.raises(ValueError, match="^'' is not an operator tag"):
            lib.define("f(Tensor x) -> Tensor", tags=[""])
        with pytest.raises(TypeError, match="^tags must be a Tag or an iterable of Tags, got 5$"):
            lib.define("f(Tensor x) -> Tensor", tags=5)
        assert registry.find_op(f"{ns}::f") is None
        with pytest.raises(KeyError, match=f"{ns}::f was not defined by this library"):
            lib.tags_of("f")


def test_tags_belong_to_the_library_that_defined_the_operator(ns):
    with Library(ns, "FRAGMENT") as first, Library(ns, "FRAGMENT") as second:
        first.define("f(Tensor x) -> Tensor", tags=["core"])
        # A failed define records nothing, and leaves the first one's tags.
        with pytest.raises(RuntimeError, match="multiple times"):
            second.define("f(Tensor x) -> Tensor", tags=["pointwise"])
        assert first.tags_of("f") == ("core",)
        with pytest.raises(KeyError, match=f"{ns}::f was not defined by this library"):
            second.tags_of("f")
        first.close()  # the operator is gone, and its tags with it
        with pytest.raises(KeyError):
            first.tags_of("f")
        second.define("f(Tensor x) -> Tensor", tags=["pointwise"])
        assert second.tags_of("f") == ("pointwise",)
