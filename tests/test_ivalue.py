"""dispatcher.ivalue: IValue, Stack, and boxing calls against their schema.

IValue, Stack and the Boxer live in the engine, so every test here runs on
both engines (conftest.py's ``engine`` and ``world``): boxing goes through the
handle of an operator defined on the test's own registry, which boxes with
its engine's Boxer.  Only ``test_boxing_by_schema_uses_the_default_engine``
boxes by FunctionSchema, which is the default engine's.
"""

import collections
import enum
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatcher
from dispatcher import ivalue
from dispatcher.ivalue import (
    IValueTag,
    box,
    box_returns,
    register_value_type,
    unbox_arguments,
    unbox_returns,
)
from dispatcher.keys import DispatchKey
from dispatcher.schema import FunctionSchema

parse = FunctionSchema.parse


class FakeTensor:
    """The smallest tensor: a plain class registered as a tensor type (by the
    ``world`` fixture below, with the engine's keyset)."""

    def __init__(self, name="t"):
        self.name = name

    def __repr__(self):
        return f"FakeTensor({self.name})"


@pytest.fixture
def world(world):
    """conftest.py's ``world``, whose engine takes FakeTensor for a CPU tensor."""
    world.engine.register_tensor_type(FakeTensor, world.keyset(DispatchKey.CPU))
    yield world
    world.engine.unregister_tensor_type(FakeTensor)


def define(world, text):
    """The handle of an operator of schema ``text``: the catalog's, for an
    aten operator (checked to have that schema), else defined on ``world``'s registry."""
    schema = parse(text)
    name = str(schema.name)
    if world.registry.find_op(name) is None:
        world.registry.register_def(schema, "test_ivalue")
    op = world.registry.find_op(name)
    assert str(op.schema.schema) == text
    return op.handle


class Dtype(enum.IntEnum):
    float32 = 6


# An IValue of no engine in particular, for the tables below: ``ivalue`` makes
# it the engine's.
V = collections.namedtuple("V", "tag payload")


def ivalue_of(engine, v):
    """``v`` (a V, or a payload that may hold some) with ``engine``'s IValues."""
    if isinstance(v, V):
        return engine.IValue(v.tag, ivalue_of(engine, v.payload))
    if type(v) is tuple:
        return tuple(ivalue_of(engine, x) for x in v)
    return v


T1, T2 = FakeTensor("a"), FakeTensor("b")
NONE = V(IValueTag.NONE, None)


# -- IValue -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, tag, payload",
    [
        (None, IValueTag.NONE, None),
        (True, IValueTag.BOOL, True),
        (3, IValueTag.INT, 3),
        (1.5, IValueTag.DOUBLE, 1.5),
        ("s", IValueTag.STRING, "s"),
        (2j, IValueTag.COMPLEX, 2j),
        (T1, IValueTag.TENSOR, T1),
        ([1, 2], IValueTag.INT_LIST, (1, 2)),
        ([1.0], IValueTag.DOUBLE_LIST, (1.0,)),
        ([True, False], IValueTag.BOOL_LIST, (True, False)),
        ([T1, T2], IValueTag.TENSOR_LIST, (T1, T2)),
        ([1, "a"], IValueTag.GENERIC_LIST, (V(IValueTag.INT, 1), V(IValueTag.STRING, "a"))),
        ([], IValueTag.GENERIC_LIST, ()),
        ((1, None), IValueTag.TUPLE, (V(IValueTag.INT, 1), NONE)),
        (Ellipsis, IValueTag.OBJECT, Ellipsis),
    ],
)
def test_from_python_infers_the_tag(world, value, tag, payload):
    iv = world.engine.IValue.from_python(value)
    assert iv == ivalue_of(world.engine, V(tag, payload))
    back = iv.to_python()
    assert back == value and type(back) is type(value)


def test_to_python_returns_fresh_lists(engine):
    iv = engine.IValue(IValueTag.INT_LIST, (1, 2))
    first = iv.to_python()
    first.append(3)
    assert iv.to_python() == [1, 2]


# -- Stack ------------------------------------------------------------------------
def test_stack_helpers(engine):
    a, b, c = (engine.IValue(IValueTag.INT, i) for i in range(3))
    s = engine.Stack()
    s.push(a, b, c)
    assert s == [a, b, c] and len(s) == 3
    assert s.peek(0, 3) is a and s.peek(2, 3) is c and s.peek(0, 1) is c
    assert s.pop() is c
    s.push(c)
    assert s.pop_n(2) == [b, c] and s == [a]
    assert s.pop_n(0) == [] and s == [a]
    s.push(b, c)
    s.drop(2)
    assert s == [a]
    s.drop(1)
    assert s == []


@pytest.mark.parametrize(
    "action, exc",
    [
        (lambda s: s.push(1), TypeError),
        (lambda s: s.push((IValueTag.INT, 1)), TypeError),
        (lambda s: s.peek(0, 3), IndexError),
        (lambda s: s.peek(2, 2), IndexError),
        (lambda s: s.pop_n(3), IndexError),
        (lambda s: s.pop_n(-1), ValueError),
        (lambda s: s.drop(3), IndexError),
        (lambda s: s.drop(1.0), ValueError),
    ],
)
def test_stack_misuse(engine, action, exc):
    s = engine.Stack([engine.IValue(IValueTag.INT, 1), engine.IValue(IValueTag.INT, 2)])
    with pytest.raises(exc):
        action(s)
    assert s == [engine.IValue(IValueTag.INT, 1), engine.IValue(IValueTag.INT, 2)]


# -- boxing each type --------------------------------------------------------------
def box_one(world, type_text, value):
    op = define(world, f"ns::op(int first, {type_text} x) -> ()")
    stack = box(op, (0, value))
    assert stack[0] == world.engine.IValue(IValueTag.INT, 0)
    return stack[1]


GEN = random.Random(0)
OBJ = object()


@pytest.mark.parametrize(
    "type_text, value, expected",
    [
        ("Tensor", T1, V(IValueTag.TENSOR, T1)),
        ("Tensor(a!)", T1, V(IValueTag.TENSOR, T1)),
        ("Tensor?", None, NONE),
        ("Tensor?", T1, V(IValueTag.TENSOR, T1)),
        ("Tensor[]", [T1, T2], V(IValueTag.TENSOR_LIST, (T1, T2))),
        ("Tensor(a!)[]", (T1,), V(IValueTag.TENSOR_LIST, (T1,))),
        ("Tensor?[]", [T1, None], V(IValueTag.GENERIC_LIST, (V(IValueTag.TENSOR, T1), NONE))),
        ("int", 3, V(IValueTag.INT, 3)),
        ("int", True, V(IValueTag.INT, 1)),  # as torch.ops takes it
        ("float", True, V(IValueTag.DOUBLE, 1.0)),
        ("SymInt", np.int64(3), V(IValueTag.INT, 3)),
        ("float", 1, V(IValueTag.DOUBLE, 1.0)),
        ("float", np.float32(0.5), V(IValueTag.DOUBLE, 0.5)),
        ("SymFloat", 2.5, V(IValueTag.DOUBLE, 2.5)),
        ("bool", False, V(IValueTag.BOOL, False)),
        ("SymBool", True, V(IValueTag.BOOL, True)),
        ("str", "a", V(IValueTag.STRING, "a")),
        ("Dimname", "N", V(IValueTag.STRING, "N")),
        ("complex", 1, V(IValueTag.COMPLEX, 1 + 0j)),
        ("Scalar", 1, V(IValueTag.INT, 1)),
        ("Scalar", 1.5, V(IValueTag.DOUBLE, 1.5)),
        ("Scalar", True, V(IValueTag.BOOL, True)),
        ("Scalar", 2j, V(IValueTag.COMPLEX, 2j)),
        ("Scalar", np.int64(2), V(IValueTag.INT, 2)),
        ("Scalar", np.float64(0.5), V(IValueTag.DOUBLE, 0.5)),
        ("ScalarType", 6, V(IValueTag.SCALAR_TYPE, 6)),
        ("ScalarType?", Dtype.float32, V(IValueTag.SCALAR_TYPE, Dtype.float32)),
        ("Layout", 0, V(IValueTag.LAYOUT, 0)),
        ("MemoryFormat", 1, V(IValueTag.MEMORY_FORMAT, 1)),
        ("Device", "cpu", V(IValueTag.DEVICE, "cpu")),
        ("Generator?", GEN, V(IValueTag.GENERATOR, GEN)),
        ("int[]", [1, 2], V(IValueTag.INT_LIST, (1, 2))),
        ("int[]", (1, 2), V(IValueTag.INT_LIST, (1, 2))),
        ("int[2]", 3, V(IValueTag.INT_LIST, (3, 3))),
        ("SymInt[1]", [4], V(IValueTag.INT_LIST, (4,))),
        ("float[]", [1, 2.5], V(IValueTag.DOUBLE_LIST, (1.0, 2.5))),
        ("bool[3]", [True] * 3, V(IValueTag.BOOL_LIST, (True,) * 3)),
        ("str[]", ["a"], V(IValueTag.GENERIC_LIST, (V(IValueTag.STRING, "a"),))),
        (
            "int[][]",
            [[1], []],
            V(IValueTag.GENERIC_LIST, (V(IValueTag.INT_LIST, (1,)), V(IValueTag.INT_LIST, ()))),
        ),
        ("(int, str)", (1, "a"), V(IValueTag.TUPLE, (V(IValueTag.INT, 1), V(IValueTag.STRING, "a")))),
        ("Any", 5, V(IValueTag.INT, 5)),
        ("Any", None, NONE),
        ("t", [1], V(IValueTag.INT_LIST, (1,))),
        ("Union(int, str)", "a", V(IValueTag.STRING, "a")),
        ("Dict(str, t)", {"a": 1}, V(IValueTag.OBJECT, {"a": 1})),
        ("NoneType", None, NONE),
        ("Storage", OBJ, V(IValueTag.OBJECT, OBJ)),
        ("Future(int)", OBJ, V(IValueTag.OBJECT, OBJ)),
        ("__torch__.torch.classes.ns.Cls", OBJ, V(IValueTag.OBJECT, OBJ)),
    ],
)
def test_box_each_type(world, type_text, value, expected):
    expected = ivalue_of(world.engine, expected)
    iv = box_one(world, type_text, value)
    assert iv == expected and iv.tag is expected.tag
    assert type(iv.payload) is type(expected.payload)


@pytest.mark.parametrize(
    "type_text, value, expected",
    [
        ("Tensor", 1, "Tensor, not int"),
        ("Tensor", None, "Tensor, not None"),
        ("Tensor(a!)", "x", "Tensor, not str"),
        ("Tensor?", 1.5, "Tensor?, not float"),
        ("int", 1.5, "int, not float"),
        ("float", "x", "float, not str"),
        ("bool", 1, "bool, not int"),
        ("str", b"x", "str, not bytes"),
        ("complex", "1j", "complex, not str"),
        ("Scalar", "1", "Scalar, not str"),
        ("ScalarType", True, "ScalarType, not bool"),
        ("Device", 0, "Device, not int"),
        ("Generator", OBJ, "Generator, not object"),
        ("Tensor[]", [T1, 1], "Tensor[], not list whose element 1 is int"),
        ("Tensor?[]", (None, 2), "Tensor?[], not tuple whose element 1 is int"),
        ("int[]", "12", "int[], not str"),
        ("int[2]", 1.5, "int[2], not float"),
        ("int[][]", [[1], ["a"]], "int[][], not list whose element 1 is list whose element 0 is str"),
        ("(int, str)", (1,), "(int, str), not tuple of 1"),
        ("(int, str)", (1, 2), "(int, str), not tuple whose element 1 is int"),
        ("Union(int, str)", 1.5, "Union(int, str), not float"),
        ("Dict(str, int)", [], "Dict(str, int), not list"),
        ("Storage", None, "Storage, not None"),
        ("NoneType", 0, "NoneType, not int"),
    ],
)
def test_box_type_errors_name_operator_argument_position_and_types(world, type_text, value, expected):
    with pytest.raises(TypeError) as info:
        box_one(world, type_text, value)
    assert str(info.value) == f"ns::op(): argument 'x' (position 2) must be {expected}"


def test_tensor_detection_is_the_core_s(world):
    engine = world.engine
    op = define(world, "ns::op(Tensor x) -> ()")

    class Sub(engine.TensorBase):
        pass

    class Registered:
        pass

    class NoKeys:
        __dispatch_keys__ = None

    assert box(op, (Sub(world.keyset(DispatchKey.CPU)),))[0].tag is IValueTag.TENSOR
    with pytest.raises(TypeError, match="not Registered"):
        box(op, (Registered(),))
    engine.register_tensor_type(Registered, world.keyset(DispatchKey.CUDA))
    try:
        assert box(op, (Registered(),))[0].tag is IValueTag.TENSOR
    finally:
        engine.unregister_tensor_type(Registered)
    with pytest.raises(TypeError, match="not NoKeys"):
        box(op, (NoKeys(),))


def test_argument_with_default_none_takes_none(world):
    iv = world.engine.IValue
    op = define(world, "ns::op(Tensor x, Tensor y=None, Generator g=None) -> ()")
    none = iv(IValueTag.NONE, None)
    assert box(op, (T1,)) == [iv(IValueTag.TENSOR, T1), none, none]
    assert box(op, (T1, None, None)) == [iv(IValueTag.TENSOR, T1), none, none]
    with pytest.raises(TypeError, match="argument 'x' .* not None"):
        box(op, (None,))


@pytest.fixture
def isolated_value_types(monkeypatch):
    """register_value_type changes global state: give the test its own copy."""
    monkeypatch.setattr(ivalue, "_ACCEPTED", dict(ivalue._ACCEPTED))
    yield


def test_register_value_type(world, isolated_value_types):
    class MyDevice:
        pass

    op = define(world, "ns::op(Device d) -> ()")
    with pytest.raises(TypeError, match="must be Device, not MyDevice"):
        box(op, (MyDevice(),))
    register_value_type(IValueTag.DEVICE, MyDevice)
    assert box(op, (MyDevice(),))[0].tag is IValueTag.DEVICE
    with pytest.raises(ValueError, match="take registered types"):
        register_value_type(IValueTag.INT, MyDevice)
    with pytest.raises(TypeError):
        register_value_type(IValueTag.DEVICE, MyDevice())


# -- box / unbox ------------------------------------------------------------------
ADD = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


def test_box_binds_first(world):
    iv = world.engine.IValue
    add = define(world, ADD)
    assert box(add, (T1, T2)) == [iv(IValueTag.TENSOR, T1), iv(IValueTag.TENSOR, T2), iv(IValueTag.INT, 1)]
    assert box(add, (T1,), {"other": T2, "alpha": 0.5})[2] == iv(IValueTag.DOUBLE, 0.5)
    with pytest.raises(
        TypeError, match=r"^aten::add.Tensor\(\) missing 1 required positional argument: 'other'$"
    ):
        box(add, (T1,))
    with pytest.raises(TypeError, match=r"takes 2 positional arguments but 3 were given"):
        box(add, (T1, T2, 1))
    with pytest.raises(TypeError, match="expected a FunctionSchema"):
        box("aten::add", (T1, T2))


def test_unbox_arguments_pops_them(world):
    iv = world.engine.IValue
    add = define(world, ADD)
    stack = world.engine.Stack([iv(IValueTag.STRING, "below")])
    stack.extend(box(add, (T1, T2), {"alpha": 2}))
    assert unbox_arguments(add, stack) == (T1, T2, 2)
    assert stack == [iv(IValueTag.STRING, "below")]
    with pytest.raises(RuntimeError, match="expected 3 arguments on the stack, found 1"):
        unbox_arguments(add, stack)


def test_varargs_box_the_extras_by_inference(world):
    iv = world.engine.IValue
    fmt = define(world, "aten::format(str self, ...) -> str")
    stack = box(fmt, ("{}{}", 1, [T1]))
    assert stack == [iv(IValueTag.STRING, "{}{}"), iv(IValueTag.INT, 1), iv(IValueTag.TENSOR_LIST, (T1,))]
    assert unbox_arguments(fmt, stack) == ("{}{}", 1, [T1]) and stack == []


@pytest.mark.parametrize(
    "returns, result, unboxed",
    [
        ("()", None, None),
        ("Tensor", T1, T1),
        ("(Tensor a, int b)", (T1, 2), (T1, 2)),
        ("int[]", [1, 2], [1, 2]),
        ("...", (1, "a"), (1, "a")),
        ("...", (), ()),
        ("(Tensor, ...)", (T1, T2), (T1, T2)),
    ],
)
def test_box_returns_then_unbox_returns(world, returns, result, unboxed):
    op = define(world, f"ns::op(Tensor x) -> {returns}")
    stack = world.engine.Stack()
    box_returns(op, result, stack)
    assert unbox_returns(op, stack) == unboxed
    assert stack == []


@pytest.mark.parametrize(
    "returns, result, message",
    [
        ("()", T1, r"ns::op\(\) returns nothing, but the kernel returned FakeTensor"),
        ("Tensor", 1, r"ns::op\(\): return value 1 must be Tensor, not int"),
        ("(Tensor a, int b)", (T1, "x"), r"ns::op\(\): return value 2 \('b'\) must be int, not str"),
        ("(Tensor, Tensor)", T1, r"returns a tuple of 2, but the kernel returned FakeTensor"),
        ("(Tensor, Tensor)", (T1,), r"returns a tuple of 2, but the kernel returned a tuple of 1"),
        ("(Tensor, ...)", [T1], r"returns a tuple of at least 1 values, but the kernel returned list"),
    ],
)
def test_box_returns_checks_the_result(world, returns, result, message):
    op = define(world, f"ns::op(Tensor x) -> {returns}")
    with pytest.raises(TypeError, match=message):
        box_returns(op, result, world.engine.Stack())


def test_unbox_returns_misuse(world):
    iv, Stack = world.engine.IValue, world.engine.Stack
    two = define(world, "ns::op(Tensor x) -> (Tensor, Tensor)")
    with pytest.raises(RuntimeError, match="expected 2 return values on the stack, found 1"):
        unbox_returns(two, Stack([iv(IValueTag.TENSOR, T1)]))
    with pytest.raises(TypeError, match="the stack holds a int, not an IValue"):
        unbox_returns(two, Stack([1, 2]))
    with pytest.raises(TypeError, match="expected a Stack"):
        unbox_returns(two, [iv(IValueTag.TENSOR, T1)] * 2)


def test_boxing_by_schema_uses_the_default_engine():
    # box and the others also take a FunctionSchema, as torch's do; they box
    # it with the default engine's Boxer (Note [Boxers by schema]).
    schema = parse(ADD)
    t = dispatcher.TensorBase(dispatcher.DispatchKeySet(DispatchKey.CPU))
    stack = box(schema, (t, t), {"alpha": 2})
    assert type(stack) is dispatcher.Stack and all(type(iv) is dispatcher.IValue for iv in stack)
    assert stack == [dispatcher.IValue(IValueTag.TENSOR, t), dispatcher.IValue(IValueTag.TENSOR, t), dispatcher.IValue(IValueTag.INT, 2)]
    assert unbox_arguments(schema, stack) == (t, t, 2) and stack == []
    box_returns(schema, t, stack)
    assert stack == [dispatcher.IValue(IValueTag.TENSOR, t)]
    assert unbox_returns(schema, stack) is t and stack == []
    with pytest.raises(TypeError, match=r"^aten::add.Tensor\(\): argument 'other' \(position 2\) must be Tensor, not str$"):
        box(schema, (t, "1"))


@pytest.mark.parametrize("number, tag", [(2, IValueTag.INT), (2.5, IValueTag.DOUBLE), (True, IValueTag.BOOL)])
def test_an_operator_taking_numbers_as_tensors_boxes_a_number_as_the_scalar(number, tag):
    # x + 2 is add.Tensor (torch's should_allow_numbers_as_tensors): its boxed
    # kernels get the number back; an operator not on that list refuses it.
    t = dispatcher.TensorBase(dispatcher.DispatchKeySet(DispatchKey.CPU))
    stack = box(parse(ADD), (t, number))
    assert stack[1] == dispatcher.IValue(tag, number)
    unboxed = unbox_arguments(parse(ADD), stack)[1]
    assert unboxed == number and type(unboxed) is type(number)
    with pytest.raises(TypeError, match=r"^aten::atan2\(\): argument 'other' \(position 2\) must be Tensor, not int$"):
        box(parse("aten::atan2(Tensor self, Tensor other) -> Tensor"), (t, 2))


# -- property: unboxing what was boxed gives back the bound arguments ----------------
tensors = st.builds(FakeTensor, st.sampled_from("abc"))
ints = st.integers(-(2**63), 2**63 - 1)
floats = st.floats(allow_nan=False)
TYPES = {
    "Tensor": tensors,
    "Tensor?": st.one_of(st.none(), tensors),
    "Tensor[]": st.lists(tensors, max_size=3),
    "Tensor?[]": st.lists(st.one_of(st.none(), tensors), max_size=3),
    "int": ints,
    "SymInt?": st.one_of(st.none(), ints),
    "float": floats,
    "bool": st.booleans(),
    "str": st.text(max_size=5),
    "complex": st.complex_numbers(allow_nan=False),
    "Scalar": st.one_of(ints, floats, st.booleans()),
    "int[]": st.lists(ints, max_size=3),
    "int[2]": st.lists(ints, min_size=2, max_size=2),
    "float[]": st.lists(floats, max_size=3),
    "bool[]?": st.one_of(st.none(), st.lists(st.booleans(), max_size=3)),
    "str[]": st.lists(st.text(max_size=3), max_size=3),
    "ScalarType?": st.one_of(st.none(), st.integers(0, 20)),
    "Device": st.sampled_from(["cpu", "cuda:0"]),
    "(int, Tensor)": st.tuples(ints, tensors),
    "Any": st.one_of(st.none(), ints, st.text(max_size=3), st.lists(ints, max_size=2)),
}


@st.composite
def calls(draw):
    names = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=0, max_size=6))
    n_kwarg_only = draw(st.integers(0, len(names)))
    params = [f"{'*, ' if i == len(names) - n_kwarg_only else ''}{t} a{i}" for i, t in enumerate(names)]
    schema = parse(f"ns::op({', '.join(params)}) -> ()")
    values = [draw(TYPES[t]) for t in names]
    n_positional = draw(st.integers(0, len(names) - n_kwarg_only))
    args = tuple(values[:n_positional])
    kwargs = {f"a{i}": v for i, v in enumerate(values) if i >= n_positional}
    return schema, args, kwargs


def same(a, b):
    """Equal, where a list given as a tuple comes back as a list, and tensors by identity."""
    if isinstance(a, FakeTensor):
        return a is b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and (type(a) is type(b) or isinstance(a, (int, float, complex)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=calls())
def test_unboxing_what_was_boxed_gives_the_bound_arguments(world, call):
    schema, args, kwargs = call
    undefine = world.registry.register_def(schema, "test_ivalue")  # each example defines ns::op anew
    try:
        op = world.registry.find_op(str(schema.name)).handle
        stack = box(op, args, kwargs)
        assert all(type(iv) is world.engine.IValue for iv in stack)
        unboxed = unbox_arguments(op, stack)
    finally:
        world.registry.undo([undefine])
    assert stack == []
    bound = schema.bind(args, kwargs)
    assert len(unboxed) == len(bound)
    assert all(same(b, u) for b, u in zip(bound, unboxed)), (bound, unboxed)


def test_ivalue_is_a_checked_immutable_value(engine):
    IValue = engine.IValue
    iv = IValue(IValueTag.INT, 3)
    assert (iv.tag, iv.payload) == (IValueTag.INT, 3)
    assert iv == IValue(IValueTag.INT, 3) and hash(iv) == hash(IValue(IValueTag.INT, 3))
    assert iv != IValue(IValueTag.BOOL, 3) and iv != IValue(IValueTag.INT, 4) and iv != (IValueTag.INT, 3)
    assert repr(iv) == "IValue(IValueTag.INT, 3)"
    assert pickle.loads(pickle.dumps(iv)) == iv
    with pytest.raises(AttributeError):
        iv.tag = IValueTag.BOOL
    with pytest.raises(AttributeError):
        iv.payload = 4
    with pytest.raises(TypeError, match="tag must be an IValueTag"):
        IValue(3, 3)


def test_box_returns_is_all_or_nothing(world):
    iv = world.engine.IValue
    op = define(world, "ns::op(Tensor x) -> (Tensor a, int b)")
    stack = world.engine.Stack([iv(IValueTag.STRING, "below")])
    with pytest.raises(TypeError, match="return value 2"):
        box_returns(op, (T1, "x"), stack)
    assert stack == [iv(IValueTag.STRING, "below")]
    with pytest.raises(TypeError, match="expected a Stack, got list"):
        box_returns(op, (T1, 1), [])


def test_a_stack_stays_a_working_list_after_unboxing(world):
    # Unboxing removes items without giving memory back (Note [Popping
    # without shrinking]); the Stack must behave as a list afterwards.
    iv = world.engine.IValue
    op = define(world, "ns::op(Tensor x, Tensor y) -> Tensor")
    stack = box(op, (T1, T2))
    assert unbox_arguments(op, stack) == (T1, T2)
    assert stack == [] and len(stack) == 0 and list(stack) == []
    box_returns(op, T1, stack)
    stack.push(iv(IValueTag.INT, 1), iv(IValueTag.INT, 2))
    assert stack.pop_n(2) == [iv(IValueTag.INT, 1), iv(IValueTag.INT, 2)]
    assert unbox_returns(op, stack) is T1
    assert stack == []
    stack.extend([iv(IValueTag.INT, i) for i in range(100)])
    assert len(stack) == 100 and stack[-1] == iv(IValueTag.INT, 99)


def test_ivalue_equality_compares_payloads_by_identity_first(engine):
    class NoBoolEquality:
        def __eq__(self, other):
            raise ValueError("ambiguous")  # like a numpy array's ==

        __hash__ = object.__hash__

    x = NoBoolEquality()
    assert engine.IValue(IValueTag.TENSOR, x) == engine.IValue(IValueTag.TENSOR, x)
    with pytest.raises(ValueError):
        engine.IValue(IValueTag.TENSOR, x) == engine.IValue(IValueTag.TENSOR, NoBoolEquality())


def test_boxer_checks_what_it_is_given(core):
    schema = parse("ns::op(Tensor x) -> Tensor")

    def conv(v):
        return core.IValue(IValueTag.OBJECT, v)

    def args(**changes):
        base = dict(
            name="ns::op", argument_converters=(conv,), argument_fast_paths=(None,),
            return_converters=(conv,), return_fast_paths=((None, IValueTag.TENSOR),),
            positional=True, vararg=False, varret=False, bind=schema.bind,
            argument_error=TypeError, return_error=TypeError,
        )
        base.update(changes)
        return base

    boxer = core.Boxer(**args())
    assert boxer.name == "ns::op"
    assert boxer.box((1,)) == [core.IValue(IValueTag.OBJECT, 1)]
    with pytest.raises(ValueError, match="as many fast paths"):
        core.Boxer(**args(argument_fast_paths=()))
    with pytest.raises(TypeError, match="IValueTag"):
        core.Boxer(**args(argument_fast_paths=((int, 3),)))
    with pytest.raises(TypeError, match="callable"):
        core.Boxer(**args(argument_converters=(None,)))
    with pytest.raises(TypeError, match="bind must be callable"):
        core.Boxer(**args(bind=None))
    with pytest.raises(TypeError, match="initialised once"):
        boxer.__init__(**args())
    with pytest.raises((TypeError, AttributeError)):
        core.Boxer.__new__(core.Boxer).box((1,))
