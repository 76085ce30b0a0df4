"""dispatcher.schema: the corpus round trip, agreement with torch, the model, binding."""

import copy
import dataclasses
import os
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatcher.catalog import TORCH_2_13
from dispatcher.schema import (
    NO_DEFAULT,
    AliasInfo,
    Argument,
    BaseTy,
    BaseType,
    ClassType,
    DispatchArg,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    ParameterizedType,
    Return,
    SchemaParseError,
    TensorArgKind,
    TupleType,
    TypeVar,
    _Parser,
)

from .conftest import load_golden

# The catalog's schemas, sorted as torch's were when the goldens were recorded.
LINES = sorted(TORCH_2_13.schemas())
GOLDEN = load_golden("schema_golden.json")
parse = FunctionSchema.parse
TENSOR = BaseType(BaseTy.Tensor)
INT = BaseType(BaseTy.int)


# -- the corpus ------------------------------------------------------------------
def test_corpus_round_trips():
    assert len(LINES) == 4374
    mismatches = [line for line in LINES if str(parse(line)) != line]
    assert mismatches == []


def test_corpus_reparses_equal_with_equal_hash():
    for line in LINES:
        schema = parse(line)
        again = parse(str(schema))
        assert again == schema and hash(again) == hash(schema)


def test_corpus_schemas_are_distinct():
    assert len({parse(line) for line in LINES}) == len(LINES)


# -- agreement with torch 2.13 (tests/golden/generate_schema_golden.py) -----------
@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["input"])
def test_prints_and_rejects_like_torch(case):
    if case["torch"] is None:
        with pytest.raises(SchemaParseError):
            parse(case["input"])
    else:
        schema = parse(case["input"])
        assert str(schema) == case["torch"]
        assert parse(case["torch"]) == schema


def test_mutable_arguments_agree_with_torch():
    expected = GOLDEN["mutable"]
    for line in LINES:
        schema = parse(line)
        written = [i for i, a in enumerate(schema.arguments) if a.is_write]
        assert schema.is_mutable == (str(schema.name) in expected), line
        assert written == expected.get(str(schema.name), []), line


# torch._C._SchemaInfo reports no aliasing for containers, type variables and
# generators whose annotations say they alias (e.g. "t[](a!) l -> t[](a!)");
# aliased_arguments reports what the annotations declare for every type.
def _tensor_return(ret):
    t = ret.type.elem if isinstance(ret.type, OptionalType) else ret.type
    return isinstance(t, BaseType) and t.name is BaseTy.Tensor


def test_aliasing_of_tensor_returns_agrees_with_torch():
    expected = GOLDEN["may_alias"]
    checked = 0
    for line in LINES:
        schema = parse(line)
        torch_says = expected.get(str(schema.name), [[]] * len(schema.returns))
        for r, ret in enumerate(schema.returns):
            if _tensor_return(ret):
                assert list(schema.aliased_arguments(r)) == torch_says[r], line
                checked += 1
    assert checked == 3754


@pytest.mark.parametrize(
    "text, printed",
    [
        ('a::f(Device x="cpu") -> ()', 'a::f(Device x="cpu") -> ()'),
        ("a::f(complex x=1.5) -> ()", "a::f(complex x=1.5) -> ()"),
        ("a::f(Union(int, float) x) -> ()", "a::f(Union(int, float) x) -> ()"),
        ("a::f(Tensor(a|b) x) -> Tensor(b|a)", "a::f(Tensor(a|b) x) -> Tensor(b|a)"),
        ("a::f(Tensor(a)[][] x) -> ()", "a::f(Tensor(a)[][] x) -> ()"),
        ("a::f(Dict(str, Tensor(a!)) x) -> ()", "a::f(Dict(str, Tensor(a!)) x) -> ()"),
        ("a::f(Dimname x, SymFloat y) -> ()", "a::f(Dimname x, SymFloat y) -> ()"),
        ("a::f(__torch__.torch.classes.ns.Unregistered x) -> ()", None),
        ('a::f(str x="\\r") -> ()', 'a::f(str x="\\r") -> ()'),
        ("a::f(int[2]? x=[5,5]) -> ()", "a::f(int[2]? x=[5, 5]) -> ()"),
        ("a::f(int[2]? x=5) -> ()", "a::f(int[2]? x=[5, 5]) -> ()"),
        ("a::f(int[] x=[2,2]) -> ()", "a::f(int[] x=[2, 2]) -> ()"),
        ("a::f(int[2] x=[2,2,2]) -> ()", "a::f(int[2] x=[2, 2, 2]) -> ()"),
        ("a::f(int x=5.) -> ()", SchemaParseError),
        ("a::f(str x=5) -> ()", SchemaParseError),
        ("a::f(bool x=1) -> ()", SchemaParseError),
        ("a::f(Tensor! x) -> ()", SchemaParseError),
        ("a::f(int x, *) -> ()", SchemaParseError),
        ("a::f(int x, *, int y, *, int z) -> ()", SchemaParseError),
        ("a::f(float x=0x10) -> ()", SchemaParseError),
    ],
)
def test_deliberate_differences_from_torch(text, printed):
    """Where torch accepts what it cannot print back, or prints what it cannot
    parse, or drops what was written, this parser keeps round trips exact."""
    if printed is SchemaParseError:
        with pytest.raises(SchemaParseError):
            parse(text)
    else:
        assert str(parse(text)) == (printed or text)


# -- the model --------------------------------------------------------------------
def test_structure_of_a_parsed_schema():
    s = parse(
        "aten::f.out(Tensor(a!) self, Tensor? w=None, int[2] k=1, *, Scalar alpha=1, "
        "Tensor(b!)[] out) -> (Tensor(a!) values, Tensor[])"
    )
    assert s.name == OperatorName("aten", "f", "out")
    assert s.name.qualified_name == "aten::f"
    self_, w, k, alpha, out = s.arguments
    assert self_ == Argument("self", BaseType(BaseTy.Tensor, AliasInfo(("a",), True)))
    assert w.type == OptionalType(TENSOR) and w.default is None and w.has_default
    assert k.type == ListType(INT, 2) and k.default == (1, 1)
    assert alpha.kwarg_only and alpha.default == 1 and type(alpha.default) is int
    assert out.type == ListType(BaseType(BaseTy.Tensor, AliasInfo(("b",), True)))
    assert out.kwarg_only and out.default is NO_DEFAULT and not out.has_default
    assert s.returns == (
        Return(BaseType(BaseTy.Tensor, AliasInfo(("a",), True)), "values"),
        Return(ListType(TENSOR)),
    )
    assert not s.is_vararg and not s.is_varret


@pytest.mark.parametrize(
    "text, t",
    [
        ("Tensor(a -> *)", BaseType(BaseTy.Tensor, AliasInfo(("a",), False, ("*",)))),
        ("Tensor(b|a)", BaseType(BaseTy.Tensor, AliasInfo(("b", "a")))),
        ("t[](a!)", ListType(TypeVar("t"), None, AliasInfo(("a",), True))),
        ("t(a)?", OptionalType(TypeVar("t", AliasInfo(("a",))))),
        ("Tensor?[]", ListType(OptionalType(TENSOR))),
        ("Tensor[]?", OptionalType(ListType(TENSOR))),
        ("int[3]?", OptionalType(ListType(INT, 3))),
        ("(int, Tensor)", TupleType((INT, TENSOR))),
        ("()", TupleType(())),
        (
            "Dict(str, t)(a!)",
            ParameterizedType("Dict", (BaseType(BaseTy.str), TypeVar("t")), AliasInfo(("a",), True)),
        ),
        ("Future(t)", ParameterizedType("Future", (TypeVar("t"),))),
        (
            "__torch__.torch.classes.quantized.Conv2dPackedParamsBase",
            ClassType("__torch__.torch.classes.quantized.Conv2dPackedParamsBase"),
        ),
        ("None", BaseType(BaseTy.NoneType)),
    ],
)
def test_types(text, t):
    arg = parse(f"a::f({text} x) -> ()").arguments[0]
    assert arg.type == t
    assert str(t) == (text if text != "None" else "NoneType")


def test_equality_tells_apart_what_prints_differently():
    assert parse("a::f(Scalar x=1) -> ()") != parse("a::f(Scalar x=1.) -> ()")
    assert parse("a::f(Scalar x=1) -> ()") != parse("a::f(Scalar x=True) -> ()")
    assert parse("a::f(int x) -> ()") != parse("a::f(int x=0) -> ()")
    assert parse("a::f(int x) -> ()") != parse("a::f(*, int x) -> ()")
    assert parse("a::f(int x) -> int") != parse("a::f(int x) -> int y")
    assert parse("a::f(...) -> ()") != parse("a::f() -> ()")
    # ... but alias sets are sets, as in PyTorch.
    assert parse("a::f(Tensor(a|b) x) -> ()") == parse("a::f(Tensor(b|a) x) -> ()")
    assert hash(parse("a::f(Tensor(a|b) x) -> ()")) == hash(parse("a::f(Tensor(b|a) x) -> ()"))


def test_schemas_are_frozen_and_pickle():
    s = parse(LINES[100])
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.arguments = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.arguments[0].name = "x"  # type: ignore[misc]
    for line in LINES[:200]:
        schema = parse(line)
        copy = pickle.loads(pickle.dumps(schema))
        assert copy == schema and str(copy) == line
        assert copy.dispatch_args == schema.dispatch_args


def test_value_classes_repr_compare_and_copy_as_dataclasses_did():
    s = parse("a::f(Tensor(a!) x, int[2] y=1) -> Tensor(a!)")
    assert repr(s.name) == "OperatorName(namespace='a', name='f', overload_name='')"
    assert repr(s.arguments[1]) == (
        "Argument(name='y', type=ListType(elem=BaseType(name=<BaseTy.int: 'int'>, alias=None), size=2, "
        "alias=None), default=(1, 1), kwarg_only=False)"
    )
    assert s.arguments[0].type.alias == AliasInfo(("a",), True)
    assert OptionalType(BaseType(BaseTy.int)) != ListType(BaseType(BaseTy.int))  # same fields, other class
    assert len({BaseType(BaseTy.int), BaseType(BaseTy.int), BaseType(BaseTy.float)}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'name'"):
        del s.name
    assert copy.copy(s) == s and copy.deepcopy(s.arguments[1]) == s.arguments[1]


def test_parsing_a_text_again_gives_the_same_schema():
    text = "a::parsed_twice(Tensor x) -> Tensor"
    assert parse(text) is parse(text)
    assert OperatorName.parse("a::parsed_twice.out") is OperatorName.parse("a::parsed_twice.out")


def test_a_renamed_schema_is_the_schema_parsed_under_that_name():
    s = parse("f(Tensor x, *, int n=0) -> Tensor")
    renamed = s.with_name(OperatorName("b", "g", "out"))
    assert renamed == parse("b::g.out(Tensor x, *, int n=0) -> Tensor")
    assert str(renamed) == "b::g.out(Tensor x, *, int n=0) -> Tensor" and str(s) == "f(Tensor x, *, int n=0) -> Tensor"
    assert renamed.dispatch_args == s.dispatch_args
    with pytest.raises(TypeError, match=r"^b::g\.out\(\) got an unexpected keyword argument 'm'$"):
        renamed.bind((1,), {"m": 2})
    with pytest.raises(TypeError, match="must be an OperatorName"):
        s.with_name("b::g")  # type: ignore[arg-type]


def test_constructed_schema_prints_and_normalizes_defaults():
    s = FunctionSchema(
        OperatorName("ns", "conv"),
        [
            Argument("x", TENSOR),
            Argument("stride", ListType(INT, 2), 1),
            Argument("scale", BaseType(BaseTy.float), 2),
            Argument("mode", BaseType(BaseTy.str), 'a\n"é', kwarg_only=True),
        ],
        [Return(TENSOR)],
    )
    assert s.arguments[1].default == (1, 1)
    assert s.arguments[2].default == 2.0 and type(s.arguments[2].default) is float
    assert (
        str(s)
        == 'ns::conv(Tensor x, int[2] stride=1, float scale=2., *, str mode="a\\n\\"\\303\\251") -> Tensor'
    )
    assert parse(str(s)) == s


@pytest.mark.parametrize(
    "make, exc",
    [
        (lambda: Argument("not a name", INT), ValueError),
        (lambda: Argument("x", "int"), TypeError),
        (lambda: Argument("x", INT, 1.5), ValueError),
        (lambda: Argument("x", INT, True), ValueError),
        (lambda: Argument("x", INT, 2**63), ValueError),
        (lambda: Argument("x", BaseType(BaseTy.float), float("inf")), ValueError),
        (lambda: Argument("x", TENSOR, 0), ValueError),
        (lambda: Argument("x", TypeVar("t"), 0), ValueError),
        (lambda: Argument("x", ListType(BaseType(BaseTy.str)), ["a"]), ValueError),
        (lambda: Argument("x", ListType(INT, 5000), 1), ValueError),
        (lambda: TypeVar("T"), ValueError),
        (lambda: TypeVar("int"), ValueError),
        (lambda: ClassType("__torch__.foo.Bar"), ValueError),
        (lambda: ParameterizedType("Dict", (INT,)), ValueError),
        (lambda: ParameterizedType("Future", (INT,), AliasInfo(("a",))), ValueError),
        (lambda: ParameterizedType("List", (INT,)), ValueError),
        (lambda: ListType(INT, -1), ValueError),
        (lambda: AliasInfo(()), ValueError),
        (lambda: AliasInfo(("a b",)), ValueError),
        (lambda: OperatorName("aten", "a.b"), ValueError),
        (lambda: Return(INT, "1x"), ValueError),
        (lambda: FunctionSchema("aten::f", (), ()), TypeError),
        (lambda: FunctionSchema(OperatorName("a", "f"), (INT,), ()), TypeError),
        (
            lambda: FunctionSchema(
                OperatorName("a", "f"), (Argument("x", INT, kwarg_only=True), Argument("y", INT)), ()
            ),
            ValueError,
        ),
        (
            lambda: FunctionSchema(OperatorName("a", "f"), (Argument("x", INT, 1), Argument("y", INT)), ()),
            ValueError,
        ),
    ],
)
def test_invalid_construction_raises(make, exc):
    with pytest.raises(exc):
        make()


def test_operator_name():
    assert OperatorName.parse("aten::add.Tensor") == OperatorName("aten", "add", "Tensor")
    assert str(OperatorName.parse("aten::add")) == "aten::add"
    assert OperatorName.parse("add") == OperatorName("", "add")
    with pytest.raises(SchemaParseError):
        OperatorName.parse("aten::add(Tensor x) -> ()")
    with pytest.raises(TypeError):
        FunctionSchema.parse(b"aten::f() -> ()")  # type: ignore[arg-type]


# -- queries the dispatcher uses ----------------------------------------------------
def test_dispatch_args():
    K = TensorArgKind
    s = parse(
        "a::f(Tensor a, int b, Tensor? c, Tensor[] d, Tensor?[] e, Tensor[]? f, (Tensor, Tensor) g, "
        "Tensor(a!) h, *, Tensor(b!)[] out) -> ()"
    )
    assert s.dispatch_args == (
        DispatchArg(0, "a", K.TENSOR),
        DispatchArg(2, "c", K.OPTIONAL_TENSOR),
        DispatchArg(3, "d", K.TENSOR_LIST),
        DispatchArg(4, "e", K.OPTIONAL_TENSOR_LIST),
        DispatchArg(7, "h", K.TENSOR),
        DispatchArg(8, "out", K.TENSOR_LIST),
    )
    assert (
        parse("aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None) -> Tensor").dispatch_args
        == ()
    )


def test_is_mutable_and_aliasing():
    add = parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    add_ = parse("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    view = parse("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    out = parse("aten::f.out(Tensor self, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))")
    assert not add.is_mutable and add_.is_mutable and not view.is_mutable and out.is_mutable
    assert add.aliased_arguments(0) == () and add_.aliased_arguments(0) == (0,)
    assert view.aliased_arguments(0) == (0,)
    assert out.aliased_arguments(0) == (1,) and out.aliased_arguments(1) == (2,)
    assert parse("a::f(Tensor(a!)[] x) -> ()").is_mutable  # the list holds written tensors
    assert not parse("a::f(Tensor(a!)[](b) x) -> ()").is_mutable  # the list's own annotation decides
    assert parse("a::f(Tensor(a -> *) x) -> Tensor(*)").aliased_arguments(0) == (0,)


# -- errors ----------------------------------------------------------------------
def test_parse_error_shows_the_line_and_the_spot():
    with pytest.raises(SchemaParseError) as info:
        parse("aten::f(int x y) -> ()")
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err).splitlines() == [
        "expected ',' or ')' but found identifier 'y':",
        "aten::f(int x y) -> ()",
        "              ^ <--- HERE",
    ]
    assert err.msg == "expected ',' or ')' but found identifier 'y'"
    assert (err.pos, err.lineno, err.colno) == (14, 1, 15)
    copy = pickle.loads(pickle.dumps(err))
    assert str(copy) == str(err)


@pytest.mark.parametrize(
    "text, message, marker",
    [
        ("aten::f(Foo x) -> ()", "unknown type specifier", "        ^~~"),
        (
            "aten::f(int x=1.5) -> ()",
            "a default for int must be a 64-bit integer, got 1.5",
            "              ^~~",
        ),
        (
            "aten::f(int x=1, int y) -> ()",
            "non-default argument 'y' follows default argument",
            "                 ^~~~~",
        ),
        ("aten::f(int x, *) -> ()", "named arguments must follow bare '*'", "               ^"),
        ("aten::f(int x", "expected ',' or ')' but found end of input", "             ^"),
        ('aten::f(str x="\\q") -> ()', "invalid escape sequence '\\q'", "              ^~~~"),
        (
            'aten::f(str x="ab) -> ()',
            "expected a default value but found an unterminated string literal",
            "              ^",
        ),
        ("aten::f(é x) -> ()", "expected a type but found invalid character 'é'", "        ^"),
        (
            "aten::f(int x=99999999999999999999) -> ()",
            "integer literal out of the 64-bit range",
            "              ^" + "~" * 19,
        ),
        ("aten::f(float x=-1e999) -> ()", "float literal out of range", "                ^~~~~~"),
        ("aten::f(int[1000000] x=1) -> ()", "would be repeated 1000000 times", "                       ^"),
        ("aten::f(" + "(" * 100 + ") x) -> ()", "types are nested too deeply", " " * 72 + "^"),
        ("aten::f(Dict(int) x) -> ()", "Dict takes 2 type(s), got 1", "        ^~~~~~~~~"),
        (
            "aten::f(int x) -> int junk more",
            "expected end of the schema but found identifier 'more'",
            " " * 27 + "^~~~",
        ),
    ],
)
def test_parse_errors(text, message, marker):
    with pytest.raises(SchemaParseError) as info:
        parse(text)
    assert message in info.value.msg
    assert str(info.value).endswith(f"\n{marker} <--- HERE")


def test_parse_error_on_a_later_line_shows_that_line():
    with pytest.raises(SchemaParseError) as info:
        parse("aten::f(int x)\n -> (int y z)")
    assert (info.value.lineno, info.value.colno) == (2, 12)
    assert str(info.value).endswith("\n -> (int y z)\n           ^ <--- HERE")


# -- binding ----------------------------------------------------------------------
SCHEMA = parse("ns::f(Tensor a, int b=1, *, int k, int m=3) -> ()")


def f(a, b=1, *, k, m=3):
    """The Python function with SCHEMA's signature, to compare error messages with."""


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((), {}),
        ((1,), {}),
        ((1, 2, 3), {}),
        ((1, 2, 3), {"k": 1}),
        ((1, 2, 3, 4), {"k": 1, "m": 2}),
        ((1,), {"a": 1, "k": 2}),
        ((1,), {"k": 1, "z": 2}),
        ((), {"b": 1}),
    ],
)
def test_bind_errors_are_worded_like_python(args, kwargs):
    with pytest.raises(TypeError) as python:
        f(*args, **kwargs)
    with pytest.raises(TypeError) as ours:
        SCHEMA.bind(args, kwargs)
    assert str(ours.value) == str(python.value).replace("f()", "ns::f()", 1)


@pytest.mark.parametrize(
    "schema, call, expected",
    [
        ("ns::g(int a, int b) -> ()", ((1,), {}), "ns::g() missing 1 required positional argument: 'b'"),
        (
            "ns::g(int a, int b, int c) -> ()",
            ((), {}),
            "ns::g() missing 3 required positional arguments: 'a', 'b', and 'c'",
        ),
        (
            "ns::g(*, int a, int b) -> ()",
            ((), {}),
            "ns::g() missing 2 required keyword-only arguments: 'a' and 'b'",
        ),
        ("ns::g() -> ()", ((1,), {}), "ns::g() takes 0 positional arguments but 1 was given"),
        ("ns::g(int a) -> ()", ((1, 2), {}), "ns::g() takes 1 positional argument but 2 were given"),
        (
            "ns::g(int a, int a) -> ()",
            ((), {"a": 1}),
            "ns::g() has more than one argument named 'a'; pass it positionally",
        ),
    ],
)
def test_bind_error_messages(schema, call, expected):
    with pytest.raises(TypeError, match="^" + expected.replace("(", r"\(").replace(")", r"\)") + "$"):
        parse(schema).bind(*call)


def test_bind_fills_defaults_in_schema_order():
    assert SCHEMA.bind((10,), {"k": 5}) == (10, 1, 5, 3)
    assert SCHEMA.bind((10, 20), {"m": 7, "k": 5}) == (10, 20, 5, 7)
    assert SCHEMA.bind([10], {"b": 2, "k": 5}) == (10, 2, 5, 3)
    add = parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert add.bind((1, 2)) == (1, 2, 1)
    assert add.bind((1, 2), None) == (1, 2, 1)
    assert add.bind((1,), {"other": 2, "alpha": 3}) == (1, 2, 3)
    plain = parse("aten::mm(Tensor self, Tensor mat2) -> Tensor")
    args = (1, 2)
    assert plain.bind(args) is args  # nothing to fill in: the tuple itself
    assert plain.bind([1, 2]) == (1, 2)
    dup = parse(next(line for line in LINES if line.startswith("static_runtime::clamp_nan_to_num")))
    assert dup.bind((1, 2, 3, 4, 5, 6)) == (1, 2, 3, 4, 5, 6)


def _keyword_calls(schema):
    """Calls of ``schema`` that pass some arguments by keyword: each split of its
    positionals, the rest (all with defaults, or every one) by name."""
    sig = schema._sig
    values = [object() for _ in sig.names]
    for n in range(sig.n_positional + 1):
        named = {name: value for name, value in zip(sig.names[n:], values[n:])}
        yield tuple(values[:n]), named
        yield tuple(values[:n]), dict(list(named.items())[:1])  # one keyword, the others defaulted or missing


def test_bind_with_keywords_agrees_with_the_slow_path_on_every_catalog_schema():
    # bind's keyword path answers what it can and hands the rest (errors
    # included) to bind_slow: either way the result is bind_slow's.
    for line in LINES:
        schema = parse(line)
        for args, kwargs in _keyword_calls(schema):
            try:
                expected = schema._sig.bind_slow(schema.name, args, kwargs)
            except TypeError as error:
                with pytest.raises(TypeError) as ours:
                    schema.bind(args, kwargs)
                assert str(ours.value) == str(error), line
            else:
                got = schema.bind(args, kwargs)
                assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), line


def test_bind_with_keywords_reports_what_is_wrong():
    add = parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert add.bind((1, 2), {"alpha": 3}) == (1, 2, 3)
    with pytest.raises(TypeError, match=r"^aten::add\.Tensor\(\) got an unexpected keyword argument 'beta'$"):
        add.bind((1, 2), {"beta": 3})
    with pytest.raises(TypeError, match=r"^aten::add\.Tensor\(\) got multiple values for argument 'self'$"):
        add.bind((1, 2), {"self": 3})
    with pytest.raises(TypeError, match=r"^ns::f\(\) missing 1 required keyword-only argument: 'k'$"):
        SCHEMA.bind((1,), {"m": 2})


def test_bind_rejects_non_mapping_kwargs():
    with pytest.raises(TypeError, match="keyword arguments must be a mapping, not list"):
        SCHEMA.bind((1,), [("k", 1)])


def test_bind_varargs():
    fmt = parse("aten::format(str self, ...) -> str")
    assert fmt.bind(("{} {}", 1, 2)) == ("{} {}", 1, 2)
    assert parse("prim::f(...) -> ()").bind((1, 2)) == (1, 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        fmt.bind(("a",), {"x": 1})


# -- generated schemas round-trip ----------------------------------------------------
_names = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
_alias = st.builds(
    AliasInfo,
    st.lists(st.sampled_from("abc*"), min_size=1, max_size=2, unique=True).map(tuple),
    st.booleans(),
    st.one_of(st.none(), st.lists(st.sampled_from("bcd*"), min_size=1, max_size=2, unique=True).map(tuple)),
)
_leaf = st.one_of(
    # (PyObject prints as itself but parses only as a registered opaque type's name, as in torch.)
    st.builds(BaseType, st.sampled_from([ty for ty in BaseTy if ty is not BaseTy.PyObject]), st.one_of(st.none(), _alias)),
    st.builds(TypeVar, st.sampled_from(["t", "t1", "tv"]), st.one_of(st.none(), _alias)),
    st.just(ClassType("__torch__.torch.classes.ns.Cls")),
)
_types = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.builds(OptionalType, inner),
        st.builds(ListType, inner, st.none(), st.one_of(st.none(), _alias)),
        st.builds(TupleType, st.lists(inner, max_size=3).map(tuple)),
        st.builds(lambda k, v: ParameterizedType("Dict", (k, v)), inner, inner),
        st.builds(
            lambda e, n: ParameterizedType(n, (e,)), inner, st.sampled_from(["Future", "RRef", "Await"])
        ),
    ),
    max_leaves=6,
)
_DEFAULTS = {
    "int": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "bool": st.booleans(),
    "str": st.text(max_size=8),
    "Scalar": st.one_of(st.integers(-100, 100), st.floats(allow_nan=False, allow_infinity=False)),
}


@st.composite
def _argument(draw, kwarg_only):
    t = draw(_types)
    # Sometimes a type that takes a default, with one.
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(_DEFAULTS)))
        size = draw(st.one_of(st.none(), st.integers(0, 4)))
        base = BaseType(BaseTy(name))
        if name in ("int", "float", "bool") and draw(st.booleans()):
            t = ListType(base, size)
            return Argument(draw(_names), t, draw(st.lists(_DEFAULTS[name], max_size=4)), kwarg_only)
        t = OptionalType(base) if draw(st.booleans()) else base
        return Argument(
            draw(_names),
            t,
            draw(st.one_of(st.none(), _DEFAULTS[name]))
            if isinstance(t, OptionalType)
            else draw(_DEFAULTS[name]),
            kwarg_only,
        )
    return Argument(draw(_names), t, NO_DEFAULT, kwarg_only)


@st.composite
def _schemas(draw):
    n_pos = draw(st.integers(0, 3))
    n_kw = draw(st.integers(0, 2))
    args = [draw(_argument(False)) for _ in range(n_pos)]
    # Positional defaults must be trailing: keep the required ones first.
    args.sort(key=lambda a: a.has_default)
    args += [draw(_argument(True)) for _ in range(n_kw)]
    returns = draw(st.lists(st.builds(Return, _types, st.one_of(st.none(), _names)), max_size=3))
    name = OperatorName(
        draw(st.sampled_from(["", "ns"])), draw(_names), draw(st.sampled_from(["", "out", "Tensor"]))
    )
    return FunctionSchema(name, tuple(args), tuple(returns), draw(st.booleans()), draw(st.booleans()))


@settings(max_examples=100, deadline=None)
@given(_schemas())
def test_generated_schemas_round_trip(schema):
    text = str(schema)
    again = parse(text)
    assert again == schema
    assert hash(again) == hash(schema)
    assert str(again) == text


def test_pickled_schema_hashes_right_in_another_process():
    """The cached hash must not travel: str hashes differ between processes."""
    code = (
        "import pickle, sys\n"
        "from dispatcher.schema import FunctionSchema\n"
        "s = pickle.loads(sys.stdin.buffer.read())\n"
        "print({FunctionSchema.parse(str(s)): 'found'}.get(s))\n"
    )
    schema = parse(LINES[0])
    hash(schema)
    # The package the child imports is this run's (the installed one): no PYTHONPATH.
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(schema), capture_output=True, env=env, check=True
    )
    assert out.stdout.strip() == b"found"


def test_split_call_inverts_bind():
    values = SCHEMA.bind((10,), {"k": 5})
    args, kwargs = SCHEMA.split_call(values)
    assert (args, kwargs) == ((10, 1), {"k": 5, "m": 3})
    assert SCHEMA.bind(args, kwargs) == values
    fmt = parse("aten::format(str self, ...) -> str")
    assert fmt.split_call(fmt.bind(("a", 1, 2))) == (("a", 1, 2), {})


def test_a_list_size_of_other_digits_is_a_parse_error():
    # Found by tests/test_schema_fuzz.py: str.isdigit() takes "²", which int() refuses.
    with pytest.raises(SchemaParseError, match="a list size"):
        FunctionSchema.parse("f(SymInt[²1] x) -> ()")


def test_a_signature_parsed_before_is_shared_under_a_new_name():
    # Note [Schemas by signature]: only the name of the second text is parsed.
    first = FunctionSchema.parse("sigcache::first(Tensor self, Scalar alpha=1) -> Tensor")
    second = FunctionSchema.parse("sigcache::second.out(Tensor self, Scalar alpha=1) -> Tensor")
    assert second.arguments is first.arguments and second.returns is first.returns
    fresh = _Parser("sigcache::second.out(Tensor self, Scalar alpha=1) -> Tensor").schema()
    assert second == fresh and hash(second) == hash(fresh) and str(second) == str(fresh)
    assert second.name == OperatorName("sigcache", "second", "out")
    assert second.bind((1,)) == fresh.bind((1,)) == (1, 1)
    # A name the name parser refuses gets the whole parser's error, placed in the whole text.
    with pytest.raises(SchemaParseError) as refused:
        FunctionSchema.parse("sigcache::third.(Tensor self, Scalar alpha=1) -> Tensor")
    with pytest.raises(SchemaParseError) as whole:
        _Parser("sigcache::third.(Tensor self, Scalar alpha=1) -> Tensor").schema()
    assert str(refused.value) == str(whole.value)


@pytest.mark.parametrize("text", ["f", "ns::f", "ns::f.out", "f.out", "_a1::_b2._c3", " ns::f", "ns :: f . out",
                                  "ns::f::g", "1f", "ns::f.1", "ns::f.", "ns::", "::f", "ns:f", "f-g", ""])
def test_plain_names_read_by_the_regex_are_what_the_parser_reads(text):
    def parsed(parse):
        try:
            return parse(text)
        except SchemaParseError as exc:
            return str(exc)

    def by_parser(text):
        parser = _Parser(text)
        name = parser.operator_name()
        parser.expect("", "end of the operator name")
        return name

    assert parsed(OperatorName.parse) == parsed(by_parser)


def test_define_refuses_a_type_variable_each_time_and_remembers_only_texts_without_one():
    # parse_operator_schema (Library.define's parse) remembers the texts it found
    # without type variables; a text with one is refused on every define.
    from dispatcher.schema import SchemaParseError, parse_operator_schema

    for _ in range(2):
        with pytest.raises(SchemaParseError, match="instead of `int64_t`"):
            parse_operator_schema("typevar_memo::f(int64_t x) -> ()")
        with pytest.raises(SchemaParseError, match="unknown type specifier"):
            parse_operator_schema("typevar_memo::g(t x) -> t")
    first = parse_operator_schema("typevar_memo::h(Tensor x, int[] y) -> Tensor")
    assert parse_operator_schema("typevar_memo::h(Tensor x, int[] y) -> Tensor") is first
