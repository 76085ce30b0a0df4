"""Every entry point of both engines, and the adversarial findings, in one run.

Each test gets an engine (the ``engine`` fixture of conftest.py: the
pure-Python one and, when built, the compiled one) and a registry of its own
on it (the ``world`` fixture), so the compiled entry points -- vectorcall, ``__call__``, ``call_boxed``, both redispatch
forms, boxed kernels and fallbacks -- each run here and fail if broken.
"""
import functools
import gc
import threading
import weakref

import pytest

from dispatcher import _engine
from dispatcher._ivalue_tag import IValueTag
from dispatcher.keys import DispatchKey as K
from dispatcher.kernel import fallthrough_kernel
from dispatcher.schema import FunctionSchema

pytestmark = pytest.mark.usefixtures("tls_restored")


def define(world, schema, **kernels):
    lib = world.library("t")
    lib.define(schema)
    name = FunctionSchema.parse("t::" + schema).name.name
    for key, fn in kernels.items():
        lib.impl(name, fn, key)
    return lib, getattr(getattr(world.ops, "t"), name).default


def test_the_engines_are_what_they_say(engine):
    assert engine.COMPILED == (engine is _engine.compiled_engine())
    assert type(engine.DispatchKeySet()).__module__ == engine.__name__


# -- every entry point -----------------------------------------------------------------
def test_call_entry_points(world):
    lib, f = define(world, "f(Tensor x, Tensor y, *, int n=1) -> int", CPU=lambda x, y, n=1: n)
    t = world.tensor(K.CPU)
    assert f(t, t) == 1  # vectorcall
    assert f(t, t, n=3) == 3  # vectorcall with a keyword
    assert f.__call__(t, t, n=4) == 4  # tp_call: the packed path
    assert functools.partial(f, t)(t, n=5) == 5  # vectorcall without ARGUMENTS_OFFSET
    assert f(*(t, t), **{"n": 6}) == 6
    assert f(x=t, y=t) == 1


def test_with_keyset_kernels_get_the_masked_keyset(world):
    seen = []

    def kernel(keyset, x):
        seen.append(keyset)
        return "ks"

    lib = world.library("t")
    lib.define("g(Tensor x) -> str")
    lib.impl("g", kernel, "CPU", with_keyset=True)
    g = world.ops.t.g.default
    t = world.tensor(K.CPU, K.ADInplaceOrView)
    assert g(t) == "ks"
    assert g.__call__(t) == "ks"
    assert functools.partial(g)(t) == "ks"  # no ARGUMENTS_OFFSET: the keyset cannot borrow args[-1]
    assert seen == [world.engine.DispatchKeySet(K.CPU)] * 3


def test_redispatch_entry_points(world):
    lib, f = define(world, "f(Tensor x) -> str", CPU=lambda x: "cpu", CUDA=lambda x: "cuda")
    t = world.tensor(K.CPU)
    cuda = world.engine.DispatchKeySet(K.CUDA)
    assert f.redispatch(cuda, t) == "cuda"  # vectorcall
    assert f.redispatch.__call__(cuda, t) == "cuda"  # tp_call
    assert functools.partial(f.redispatch, cuda)(t) == "cuda"
    with pytest.raises(TypeError, match="DispatchKeySet"):
        f.redispatch("CUDA", t)
    with pytest.raises(TypeError):
        f.redispatch()


def test_boxed_kernel_and_fallback_entry_points(world):
    engine = world.engine

    def boxed(op, keyset, stack):
        x, n = op.boxer.unbox_arguments(stack)
        op.boxer.box_returns(n + 1, stack)

    lib = world.library("t")
    lib.define("b(Tensor x, int n) -> int")
    lib.impl("b", boxed, "CPU", boxed=True)
    b = world.ops.t.b.default
    t = world.tensor(K.CPU)
    assert b(t, 1) == 2  # vectorcall, boxed from the array
    assert b(t, n=2) == 3  # vectorcall, bound first
    assert b.__call__(t, 3) == 4  # packed
    stack = engine.Stack([engine.IValue(IValueTag.TENSOR, t), engine.IValue(IValueTag.INT, 4)])
    b.call_boxed(stack)
    assert stack == [engine.IValue(IValueTag.INT, 5)]
    stack = engine.Stack([engine.IValue(IValueTag.TENSOR, t), engine.IValue(IValueTag.INT, 5)])
    b.redispatch_boxed(engine.DispatchKeySet(K.CPU), stack)
    assert stack == [engine.IValue(IValueTag.INT, 6)]

    fallback = world.library("_", "IMPL")
    fallback.fallback(boxed, "XLA", boxed=True)
    x = world.tensor(K.XLA)
    assert b(x, 10) == 11
    assert b.__call__(x, 11) == 12


def test_call_boxed_of_an_unboxed_kernel(world):
    engine = world.engine
    lib, f = define(world, "f(Tensor x, int n) -> int", CPU=lambda x, n: n * 2)
    t = world.tensor(K.CPU)
    stack = engine.Stack([engine.IValue(IValueTag.STRING, "below"), engine.IValue(IValueTag.TENSOR, t),
                          engine.IValue(IValueTag.INT, 4)])
    f.call_boxed(stack)
    assert stack == [engine.IValue(IValueTag.STRING, "below"), engine.IValue(IValueTag.INT, 8)]


# -- the adversarial findings (shared/findings/2026-11-23-adversarial) ------------------
def test_gc_during_a_packed_call_cannot_free_the_plan(world):  # repro 1
    lib = world.library("t")
    lib.define("f(Tensor x, " + ", ".join(f"int a{i}" for i in range(24)) + ") -> int")
    f = world.ops.t.f.default
    t = world.tensor(K.CPU)
    gc.disable()
    try:
        junk = world.library("t", "IMPL", "CUDA")
        junk.impl("f", lambda *a: 0)
        junk.me = junk
        del junk
        gc.set_threshold(1)
        gc.enable()
        with pytest.raises(NotImplementedError, match="CPU"):
            f(t, *range(24))
    finally:
        gc.set_threshold(700, 10, 10)
        gc.enable()


def test_a_keyword_hash_that_registers_cannot_free_the_plan(world):  # repro 1b
    keep = []
    lib = world.library("t")
    lib.define("f(Tensor x, *, int n=0) -> int")
    lib.impl("f", lambda ks, x, n=0: 1, "CPU", with_keyset=True)

    class Key(str):
        def __hash__(self):
            if keep:
                late = world.library("t", "IMPL", "CUDA")
                late.impl("f", lambda x, n=0: 2)
                keep.extend([late, [bytearray(200) for _ in range(999)]])
            return str.__hash__(self)

    keep.append(1)
    assert functools.partial(world.ops.t.f.default)(world.tensor(K.CPU), **{Key("n"): 5}) == 1


def test_deep_and_cyclic_values_raise_recursion_error(world):  # repro 2
    lib = world.library("t")
    lib.define("f(Any x) -> Any")
    lib.impl("f", lambda x: "ran", "CompositeExplicitAutograd")
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(RecursionError):
        world.engine.IValue.from_python(cyclic)
    deep = []
    for _ in range(60000):
        deep = [deep]
    with pytest.raises(RecursionError):
        world.engine.IValue.from_python(deep)
    with pytest.raises(RecursionError):
        world.ops.t.f.default.boxer.box((cyclic,))


def test_unboxing_survives_a_gc_that_changes_the_stack(world):  # repros 3, 3b
    engine = world.engine
    schema = FunctionSchema.parse("f() -> (" + ", ".join(["int"] * 25) + ")")
    from dispatcher.ivalue import make_boxer

    boxer = make_boxer(schema, engine)
    st = engine.Stack([engine.IValue(IValueTag.INT, 10**20 + i) for i in range(25)])

    def clear(phase, info):
        st.clear()

    gc.callbacks.append(clear)
    gc.set_threshold(1)
    try:
        values = boxer.unbox_returns(st)
    finally:
        gc.callbacks.remove(clear)
        gc.set_threshold(700, 10, 10)
    assert values == tuple(10**20 + i for i in range(25))
    with pytest.raises(TypeError, match="not an IValue"):
        boxer.unbox_returns(engine.Stack([10**30] * 25))


def test_keyset_reprs_are_exact_ints(engine):  # repro 4
    class Lying(int):
        __lt__ = __gt__ = lambda s, o: False  # noqa: E731
        __and__ = lambda s, o: 0  # noqa: E731

    with pytest.raises(TypeError, match="must be an int"):
        engine.DispatchKeySet.from_raw_repr(Lying(1 << 63))
    with pytest.raises(ValueError):
        engine.DispatchKeySet.from_raw_repr(1 << 63)


def test_objects_made_without_init_raise_cleanly(world):  # repro 5
    lib, f = define(world, "f(Tensor x) -> int", CPU=lambda x: 1)
    R = type(f.redispatch)
    r = R.__new__(R)
    with pytest.raises(TypeError, match="no operator"):
        r(world.engine.DispatchKeySet(K.CPU), world.tensor(K.CPU))
    assert "no operator" in repr(r)
    H = world.engine.OperatorHandle
    with pytest.raises(TypeError, match="never initialised"):
        H.__new__(H)(world.tensor(K.CPU))
    B = world.engine.Boxer
    with pytest.raises(TypeError, match="never initialised"):
        B.__new__(B).box((1,))


def test_redispatch_skips_fallthrough_entries(world):
    # Calls mask fallthrough keys out; a redispatch's keyset is taken as
    # given, so a fallthrough entry at its top is skipped on the way down.
    lib, f = define(world, "f(Tensor x) -> str", CPU=lambda x: "cpu")
    lib.impl("f", fallthrough_kernel, "Python")
    t = world.tensor(K.CPU)
    for keys in ([K.CPU, K.AutogradCPU], [K.CPU, K.Python], [K.CPU, K.Python, K.AutogradCPU]):
        keyset = world.keyset(*keys)
        assert f.redispatch(keyset, t) == "cpu"  # vectorcall
        assert f.redispatch.__call__(keyset, t) == "cpu"  # tp_call
        stack = world.engine.Stack([world.engine.IValue(IValueTag.TENSOR, t)])
        f.redispatch_boxed(keyset, stack)
        assert stack == [world.engine.IValue(IValueTag.STRING, "cpu")]


def test_fallthrough_skipping_always_ends(world):  # repros 6, 6b
    lib, f = define(world, "f(Tensor x) -> str", CPU=lambda x: "cpu")
    t = world.tensor(K.CPU, K.AutogradCPU)
    assert f(t) == "cpu"
    no_lower_key = "is a fallthrough, but there is no lower key to fall through"
    with pytest.raises(RuntimeError, match=no_lower_key):
        f.redispatch(world.engine.DispatchKeySet(K.AutogradFunctionality), t)
    lib.impl("f", fallthrough_kernel, "CompositeExplicitAutograd")
    with world.engine.ExcludeDispatchKeyGuard(world.engine.DispatchKeySet.full()):
        with pytest.raises(RuntimeError, match=no_lower_key):
            f(world.tensor(K.CPU))


@pytest.mark.parametrize("call", ["vectorcall", "tp_call", "call_boxed"])
def test_a_library_closed_during_extraction_takes_its_kernel_along(world, call):  # repro 7
    lib = world.library("t")
    lib.define("f(Tensor x) -> str")
    impl = world.library("t", "IMPL", "CPU")
    impl.impl("f", lambda x: "kernel of a closed library")
    engine = world.engine

    class Closing:
        @property
        def __dispatch_keys__(self):
            impl.close()
            return engine.DispatchKeySet(K.CPU)

    f = world.ops.t.f.default
    with pytest.raises(NotImplementedError):
        if call == "vectorcall":
            f(Closing())
        elif call == "tp_call":
            f.__call__(Closing())
        else:
            f.call_boxed(engine.Stack([engine.IValue(IValueTag.TENSOR, Closing())]))


def test_immutable_objects_cannot_be_reinitialised(world):  # repro 8
    engine = world.engine
    ks = engine.DispatchKeySet(K.CPU)
    with pytest.raises(TypeError, match="immutable"):
        ks.__init__(K.CUDA)
    assert ks == engine.DispatchKeySet(K.CPU)
    iv = engine.IValue(IValueTag.INT, 1)
    with pytest.raises(TypeError, match="immutable"):
        iv.__init__(IValueTag.INT, 2)
    kf = engine.KernelFunction(0, len)
    with pytest.raises(TypeError, match="immutable"):
        kf.__init__(0, repr)
    assert kf.fn is len


def test_what_a_boxed_kernel_leaves_is_checked(world):  # repro 9
    engine = world.engine
    lib = world.library("t")
    lib.define("f(Tensor x, int n) -> int")
    lib.impl("f", lambda op, ks, stack: None, "CPU", boxed=True)
    lib.impl("f", lambda op, ks, stack: (stack.clear(), stack.push(engine.IValue(IValueTag.STRING, "oops"))),
             "CUDA", boxed=True)
    f = world.ops.t.f.default
    with pytest.raises(RuntimeError, match="t::f: a boxed kernel must leave exactly its 1 return"):
        f(world.tensor(K.CPU), 5)
    with pytest.raises(TypeError, match="t::f.*return value 1 must be int, not str"):
        f(world.tensor(K.CUDA), 5)


def test_caches_do_not_keep_schemas_or_types_alive(world):  # repros 10, 10b
    engine = world.engine
    t = world.tensor(K.CPU)
    for _ in range(50):
        with world.library("t10") as lib:
            lib.define("f(Tensor x, int n) -> Tensor")
            lib.impl("f", lambda op, ks, st: st.pop(), "CPU", boxed=True)
            world.ops.t10.f.default(t, 1)
    lib = world.library("t10b")
    lib.define("f(Tensor x) -> int")
    lib.impl("f", lambda x: 1, "CPU")
    classes = []
    for i in range(50):
        C = type(f"C{i}", (), {"__dispatch_keys__": engine.DispatchKeySet(K.CPU)})
        world.ops.t10b.f.default(C())
        classes.append(weakref.ref(C))
        del C
    gc.collect()
    assert sum(r() is not None for r in classes) == 0
    schemas = [o for o in gc.get_objects() if type(o) is FunctionSchema and str(o.name) == "t10::f"]
    assert schemas == []


def test_call_boxed_validates_before_it_pops(world):  # repro 11
    engine = world.engine
    lib, f = define(world, "f(Tensor x, int n) -> int", CPU=lambda x, n: n)
    stack = engine.Stack([engine.IValue(IValueTag.STRING, "caller's"), engine.IValue(IValueTag.INT, 1),
                          engine.IValue(IValueTag.INT, 2)])
    before = list(stack)
    with pytest.raises(TypeError, match="must be a tensor"):
        f.call_boxed(stack)
    assert stack == before


def test_define_is_all_or_nothing(world):  # repro 12
    s = FunctionSchema.parse("t12::f(Tensor x) -> Tensor")
    # A layout no call plan takes: defining fails when it makes the plan.
    object.__setattr__(s, "dispatch_layout", (((0, "x", 9, True),), 1))
    lib = world.library("t12", "DEF")
    with pytest.raises(TypeError, match="a dispatch argument is"):
        lib.define(s)
    lib.close()
    again = world.library("t12", "DEF")
    again.define("f(Tensor x) -> Tensor")
    assert world.ops.t12.f.overloads() == ["default"]


def test_call_plans_take_only_built_shapes_and_whole_tables(world):
    engine = world.engine
    lib, _ = define(world, "f(Tensor x) -> Tensor", CPU=lambda x: x)  # held: collecting it undefines f
    op = world.registry.find_op("t::f")
    table, masks, shape = tuple(op._table), tuple(op._masks), op._shape
    assert engine.CallPlan("t::f", shape, table, masks, op.report_error).shape is shape
    with pytest.raises(TypeError, match="a CallPlan's shape is a built CallShape, not tuple"):
        engine.CallPlan("t::f", (), table, masks, op.report_error)
    with pytest.raises(TypeError, match="a CallPlan's shape is a built CallShape"):
        engine.CallPlan("t::f", engine.CallShape.__new__(engine.CallShape), table, masks, op.report_error)
    with pytest.raises(ValueError, match="a CallPlan's table is a tuple of"):
        engine.CallPlan("t::f", shape, table[1:], masks, op.report_error)
    with pytest.raises(TypeError, match="holds KernelFunctions, not int"):
        engine.CallPlan("t::f", shape, (1,) + table[1:], masks, op.report_error)
    with pytest.raises(ValueError, match="not a 64-bit unsigned integer"):
        engine.CallPlan("t::f", shape, table, (-1,) + masks[1:], op.report_error)
    with pytest.raises(TypeError, match="a CallShape is built once"):
        shape.__init__(**UNDEFINED_SHAPE)
    with pytest.raises(TypeError, match="a CallShape's boxer is a Boxer or None, not str"):
        engine.CallShape(**dict(UNDEFINED_SHAPE, boxer="boxer"))
    with pytest.raises(TypeError):
        engine.CallShape(None, (), -1, None, None, None, -1, None)  # keyword arguments only


UNDEFINED_SHAPE = dict(schema=None, dispatch_args=(), positional_span=-1, boxer=None, bind=None, split_call=None,
                       handler_arity=-1, handler_call=None)


def test_a_defs_boxer_is_made_on_first_use(world, monkeypatch):
    # Note [Boxers made on first use]: defining and calling unboxed make no
    # Boxer; the first boxed call (here a boxed kernel) makes it, once.
    from dispatcher import ivalue

    made = []
    real = ivalue.make_boxer

    def counting_make_boxer(schema, engine):
        made.append(str(schema.name))
        return real(schema, engine)

    monkeypatch.setattr(ivalue, "make_boxer", counting_make_boxer)
    monkeypatch.setattr("dispatcher.publish.make_boxer", counting_make_boxer)
    lib, f = define(world, "lazy(Tensor x, int n) -> int", CPU=lambda x, n: n)
    assert f(world.tensor(K.CPU), 3) == 3
    assert made == []

    def boxed(op, keyset, stack):
        x, n = op.boxer.unbox_arguments(stack)
        op.boxer.box_returns(n + 4, stack)

    lib.impl("lazy", boxed, "CUDA", boxed=True)
    assert f(world.tensor(K.CUDA), 3) == 7
    assert made == ["t::lazy"]
    assert f.boxer is f.boxer and f(world.tensor(K.CUDA), 4) == 8
    assert made == ["t::lazy"]
    with pytest.raises(TypeError, match=r"argument 'n' \(position 2\) must be int, not str"):
        f(world.tensor(K.CUDA), "no")


def test_a_shapes_make_boxer_is_checked(world):
    engine = world.engine
    schema = FunctionSchema.parse("t::g(Tensor x) -> Tensor")
    fields = dict(schema=schema, dispatch_args=((0, "x", 0, True),), positional_span=1, bind=schema.bind,
                  split_call=schema.split_call, handler_arity=schema.handler_arity, handler_call=schema.handler_call)
    with pytest.raises(TypeError, match="make_boxer is a callable given instead of a boxer"):
        engine.CallShape(**fields, boxer=None, make_boxer="not callable")
    shape = engine.CallShape(**fields, boxer=None, make_boxer=lambda: "not a Boxer")
    with pytest.raises(TypeError, match="make_boxer returned str, not a Boxer"):
        shape.boxer
    assert engine.CallShape(**fields, boxer=None).boxer is None


def test_calling_a_removed_operator_says_so(world):
    lib, f = define(world, "gone(Tensor x) -> int", CPU=lambda x: 1)
    lib.close()
    for call in (lambda: f(world.tensor(K.CPU)), lambda: f.__call__(world.tensor(K.CPU)),
                 lambda: f.redispatch(world.engine.DispatchKeySet(K.CPU), world.tensor(K.CPU))):
        with pytest.raises(RuntimeError, match="t::gone is not defined"):
            call()


def test_undefined_operators_share_one_plan_and_each_names_itself(world):
    # Note [One plan while undefined]: the dispatcher's one plan serves every
    # undefined operator, so the error names the handle, not the plan.
    lib = world.library("t")
    lib.define("first(Tensor x) -> int")
    lib.define("second(Tensor x) -> int")
    lib.impl("first", lambda x: 1, "CPU")
    impls_only = world.library("t")
    impls_only.impl("third", lambda x: 3, "CPU")  # a kernel, never a def
    ns = world.ops.t
    first, second = ns.first.default, ns.second.default
    lib.close()
    third = world.registry.op_or_throw("t::third").handle
    assert first.plan is second.plan is third.plan is world.registry.undefined_plan
    cpu = world.tensor(K.CPU)
    for name, op in (("t::first", first), ("t::second", second), ("t::third", third)):
        for call in (lambda: op(cpu), lambda: op.call_boxed([world.engine.IValue.from_python(cpu)]),
                     lambda: op.redispatch(world.keyset(K.CPU), cpu),
                     lambda: op.redispatch_boxed(world.keyset(K.CPU), [world.engine.IValue.from_python(cpu)])):
            with pytest.raises(RuntimeError, match=f"operator {name} is not defined"):
                call()
    impls_only.close()


def test_tls_is_per_thread(engine):
    seen = []
    with engine.IncludeDispatchKeyGuard(K.Tracer):
        thread = threading.Thread(target=lambda: seen.append(engine.tls_is_dispatch_key_included(K.Tracer)))
        thread.start()
        thread.join()
        assert engine.tls_is_dispatch_key_included(K.Tracer)
    assert seen == [False]


def test_a_stack_of_the_other_engine_is_named():
    compiled = _engine.compiled_engine()
    if compiled is None:
        pytest.skip("compiled engine not built")
    from dispatcher.ivalue import make_boxer

    boxer = make_boxer(FunctionSchema.parse("t::f(int x) -> ()"), compiled)
    with pytest.raises(TypeError, match=r"expected a Stack of dispatcher\._engine\.core, got one of dispatcher\._engine\.core_py"):
        boxer.unbox_arguments(_engine.pure_engine().Stack())
