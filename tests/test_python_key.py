"""The Python key on both engines: ``__torch_dispatch__`` subclasses and dispatch modes.

tests/golden/python_key_cases.py's scenarios run here on each engine's world
and must log what torch 2.13 logged (tests/golden/python_key_golden.json):
which handler ran for which call and in which order, the ``types`` and
arguments it got, the thread's include/exclude sets inside it, the mode on
top of the stack, what RestorePythonTLSSnapshot restores, the errors.  The
other tests pin what the golden file cannot show: the keys a tensor type
gets, that a handler's exception leaves the stack and the TLS as they were,
threads, boxed calls, and bad input.
"""
from __future__ import annotations

import functools
import gc
import itertools
import re
import sys
import threading
import weakref

import pytest

from dispatcher import DispatchKey as K
from dispatcher import IValue, IValueTag, keysets
from dispatcher.dispatch_modes import (
    BaseTorchDispatchMode,
    RestorePythonTLSSnapshot,
    TorchDispatchMode,
    _disable_current_modes,
    _get_current_dispatch_mode,
    _get_current_dispatch_mode_stack,
    _pop_mode,
    _pop_mode_temporarily,
    _push_mode,
    enable_reentrant_dispatch,
)

from .conftest import load_golden
from .golden.python_key_cases import Api, scenarios

GOLDEN = load_golden("python_key_golden.json")
CPU_TENSOR_KEYS = (K.CPU, K.ADInplaceOrView, K.AutogradCPU, K.AutocastCPU)  # a torch CPU tensor's
_ns = (f"python_key{i}" for i in itertools.count())


@pytest.fixture
def modes(in_use, world, monkeypatch):
    """dispatch_modes on the world's engine while the test runs; no mode left behind."""
    yield world
    leftover = world.engine.dispatch_mode_stack()
    while world.engine.dispatch_mode_stack():
        world.engine.pop_dispatch_mode()
    assert leftover == [], "a test left dispatch modes on the stack"


def api_of(world) -> Api:
    engine = world.engine

    def make_subclass(cls, elem):
        t = cls(elem.key_set)
        t.elem = elem
        return t

    return Api(
        library=world.library,
        ops=world.ops,
        tensor=lambda: world.tensor(*CPU_TENSOR_KEYS),
        TensorBase=engine.TensorBase,
        make_subclass=make_subclass,
        TorchDispatchMode=TorchDispatchMode,
        current_mode=_get_current_dispatch_mode,
        include_set=lambda: repr(engine.tls_local_include_set()),
        exclude_set=lambda: repr(engine.tls_local_exclude_set()),
        exclude_guard=lambda names: engine.ExcludeDispatchKeyGuard([K[n] for n in names]),
        include_guard=lambda name: engine.IncludeDispatchKeyGuard(K[name]),
        restore_snapshot=RestorePythonTLSSnapshot,
        after_autograd=world.own(keysets.AFTER_AUTOGRAD_KEYSET),
    )


def ours(event):
    """A torch event as ours reads: torch's error text names its own module
    (torch._ops) and ends with advice about its logging; ours does neither."""
    if isinstance(event, list):
        return [ours(e) for e in event]
    if isinstance(event, str) and event.startswith("Multiple dispatch failed"):
        event = event.replace("'torch._ops.", "'dispatcher.ops.")
        return event.removesuffix("\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")
    return event


def _on_strings(event, change):
    """``event`` with ``change`` applied to each string in it (events nest in lists)."""
    if isinstance(event, list):
        return [_on_strings(e, change) for e in event]
    return change(event) if isinstance(event, str) else event


def class_names(event):
    # The scenario classes print with their module's name, which differs
    # between the golden script (python_key_cases) and here (tests.golden....).
    return _on_strings(event, lambda s: re.sub(r"<class '[\w.]*python_key_cases\.", "<class 'python_key_cases.", s))


# The scenarios' events per engine: all of them run together (they share
# their operators), once per engine, and each test compares one.
_EVENTS: dict[str, dict] = {}


@pytest.mark.parametrize("name", sorted(GOLDEN["scenarios"]))
def test_scenario_matches_torch(name, modes):
    if modes.engine.__name__ not in _EVENTS:
        _EVENTS[modes.engine.__name__] = scenarios(api_of(modes), next(_ns))
    ns_free = [class_names(e) for e in _EVENTS[modes.engine.__name__][name]]
    expected = [class_names(ours(e)) for e in GOLDEN["scenarios"][name]]
    assert _without_ns(ns_free) == _without_ns(expected)


def _without_ns(events):
    # Operators print as ns.name.overload: the namespaces differ (pk in the golden file).
    return _on_strings(events, lambda s: re.sub(r"\b(python_key\d+|pk)\.", "NS.", s))


# -- tensor types with __torch_dispatch__ ------------------------------------------------------
def test_tensor_types_with_torch_dispatch_carry_the_python_keys(world):
    engine = world.engine
    cpu = world.keyset(K.CPU)
    python = world.keyset(K.CPU, K.Python, K.PythonTLSSnapshot)

    class Sub(engine.TensorBase):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Plain(engine.TensorBase):
        pass

    assert Sub(cpu).key_set == python and Plain(cpu).key_set == cpu
    s = Sub(cpu)
    s.key_set = world.keyset(K.Meta)  # every keyset it is given
    assert s.key_set == world.keyset(K.Meta, K.Python, K.PythonTLSSnapshot)

    class ByAttribute:
        __dispatch_keys__ = cpu

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Registered:
        __torch_dispatch__ = ByAttribute.__torch_dispatch__

    engine.register_tensor_type(Registered, lambda obj: cpu)
    try:
        assert engine.tensor_key_set(ByAttribute()) == python
        assert engine.tensor_key_set(Registered()) == python
    finally:
        engine.unregister_tensor_type(Registered)


def test_a_handler_gets_the_overload_and_its_attributes(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x, Scalar alpha=1) -> Tensor")
    lib.impl("f", lambda x, alpha=1: x, "CPU")
    seen = []
    handled = modes.engine.TensorBase(modes.keyset(K.CPU))

    class Sub(modes.engine.TensorBase):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append((func, func.name(), func._overloadname, func.overloadpacket, types, args, kwargs))
            return handled

    s = Sub(modes.keyset(K.CPU))
    f = getattr(modes.ops, lib.ns).f
    assert f.default(s, 2) is handled
    func, name, overload, packet, types, args, kwargs = seen[0]
    assert (func is f.default, name, overload, packet is f) == (True, f"{lib.ns}::f", "default", True)
    assert (types, args, kwargs) == ((Sub,), (s, 2), {})


def test_a_handler_result_must_be_what_the_schema_returns(modes):
    # torch casts a handler's result to the operator's returns: "Unable to cast arf to Tensor".
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor[]")
    lib.define("h(Tensor x) -> Tensor?")

    class Arf(modes.engine.TensorBase):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return "arf" if func.name().endswith("::f") else None

    ns = getattr(modes.ops, lib.ns)
    with pytest.raises(RuntimeError, match="^Unable to cast arf to Tensor$"):
        ns.f.default(Arf(modes.keyset(K.CPU)))
    # Other returns are not cast here: a list of tensors, an optional one (None).
    assert ns.g.default(Arf(modes.keyset(K.CPU))) is None and ns.h.default(Arf(modes.keyset(K.CPU))) is None

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return 3

    with Mode():
        with pytest.raises(RuntimeError, match="^Unable to cast 3 to Tensor$"):
            ns.f.default(modes.engine.TensorBase(modes.keyset(K.CPU)))


class _ClassMethod(classmethod):
    pass


def _handler_forms(base):
    """Subclasses of ``base`` whose __torch_dispatch__ is reached in each way
    the instance lookup can find it; each handler returns what it was bound to."""

    def bound(owner, func, types, args=(), kwargs=None):
        return ("bound to", owner)

    class Slots(base):  # the usual form: a classmethod, instances without __dict__
        __slots__ = ()
        __torch_dispatch__ = classmethod(bound)

    class WithDict(base):  # instances with a __dict__, which may hold the handler
        __torch_dispatch__ = classmethod(bound)

    class Shadowed(WithDict):
        def __init__(self, keys):
            super().__init__(keys)
            self.__torch_dispatch__ = lambda func, types, args=(), kwargs=None: ("bound to", "the instance")

    class Getattribute(Slots):  # an attribute lookup of its own
        __slots__ = ()

        def __getattribute__(self, name):
            if name == "__torch_dispatch__":
                return lambda func, types, args=(), kwargs=None: ("bound to", "__getattribute__")
            return super().__getattribute__(name)

    class Subclassed(base):  # a classmethod subclass
        __slots__ = ()
        __torch_dispatch__ = _ClassMethod(bound)

    class Partial(base):  # a classmethod of something that is not a function
        __slots__ = ()
        __torch_dispatch__ = classmethod(functools.partial(bound))

    class Static(base):
        __slots__ = ()
        __torch_dispatch__ = staticmethod(lambda func, types, args=(), kwargs=None: ("bound to", "nothing"))

    class Method(base):
        __slots__ = ()
        __torch_dispatch__ = bound

    class Renamed(Slots):  # the attribute replaced after the first call
        __slots__ = ()

    return {Slots: Slots, WithDict: WithDict, Shadowed: "the instance", Getattribute: "__getattribute__",
            Subclassed: Subclassed, Partial: Partial, Static: "nothing", Renamed: Renamed}, Method, Renamed


def test_every_form_of_tensor_handler_is_bound_as_in_python(modes):
    # Compiled, the usual form is called without a bound method (Note
    # [Calling a tensor's handler]); every form must see what Python binds.
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Any")  # the handlers return what they were bound to
    f = getattr(modes.ops, lib.ns).f.default
    keys = modes.keyset(K.CPU)
    forms, method, renamed = _handler_forms(modes.engine.TensorBase)
    for _ in range(2):  # the first classmethod call may go a slower way
        for cls, owner in forms.items():
            t = cls(keys)
            assert f(t) == ("bound to", owner), cls.__name__
        m = method(keys)
        assert f(m) == ("bound to", m)
    renamed.__torch_dispatch__ = classmethod(lambda cls, func, types, args=(), kwargs=None: "replaced")
    assert f(renamed(keys)) == "replaced"

    class Uninitialised(modes.engine.TensorBase):
        __slots__ = ()
        __torch_dispatch__ = classmethod.__new__(classmethod)

    with pytest.raises(RuntimeError, match="uninitialized classmethod"):
        f(Uninitialised(keys))


# -- modes ----------------------------------------------------------------------------------------
def test_a_mode_sees_every_call_and_its_calls_go_on_below(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> str")
    lib.define("g(Tensor x) -> str")
    lib.impl("f", lambda x: "f kernel", "CPU")
    lib.impl("g", lambda x: "g kernel", "CPU")
    ns = getattr(modes.ops, lib.ns)
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), _get_current_dispatch_mode_stack()))
            return func(*args, **(kwargs or {}))

    t = modes.tensor(*CPU_TENSOR_KEYS)
    include = modes.engine.tls_local_include_set()
    with Log() as outer:
        assert modes.engine.tls_local_include_set() == include | modes.keyset(K.Python, K.PythonTLSSnapshot)
        with Log() as inner:
            assert _get_current_dispatch_mode() is inner
            assert ns.f.default(t) == "f kernel"
        assert ns.g.default(t) == "g kernel"
    assert seen == [(f"{lib.ns}.f.default", [outer]), (f"{lib.ns}.f.default", []), (f"{lib.ns}.g.default", [])]
    assert modes.engine.tls_local_include_set() == include and _get_current_dispatch_mode() is None


def test_an_exception_in_a_handler_leaves_the_stack_and_tls_as_they_were(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = getattr(modes.ops, lib.ns).f.default

    class Fails(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise ValueError("from the handler")

    class SubFails(modes.engine.TensorBase):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise KeyError("from the subclass")

    engine = modes.engine
    before = engine.tls_local_include_set(), engine.tls_local_exclude_set()
    with BaseTorchDispatchMode() as below:
        with Fails() as mode:
            inside = engine.tls_local_include_set(), engine.tls_local_exclude_set()
            with pytest.raises(ValueError, match="from the handler"):
                f(modes.tensor(*CPU_TENSOR_KEYS))
            assert _get_current_dispatch_mode_stack() == [below, mode]
            assert (engine.tls_local_include_set(), engine.tls_local_exclude_set()) == inside
            assert engine.python_tls_snapshot() is None
    with pytest.raises(KeyError, match="from the subclass"):
        f(SubFails(modes.keyset(*CPU_TENSOR_KEYS)))
    assert (engine.tls_local_include_set(), engine.tls_local_exclude_set()) == before
    assert engine.python_tls_snapshot() is None


def test_modes_in_two_threads_do_not_see_each_other(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "kernel", "CPU")
    f = getattr(modes.ops, lib.ns).f.default
    engine = modes.engine
    entered, release = threading.Barrier(2), threading.Event()
    results: dict[str, object] = {}

    class Tag(TorchDispatchMode):
        def __init__(self, tag):
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return self.tag

    def worker(tag):
        try:
            with Tag(tag):
                entered.wait(timeout=10)
                results[tag] = (f(modes.tensor(K.CPU)), [m.tag for m in _get_current_dispatch_mode_stack()],
                                engine.tls_is_dispatch_key_included(K.Python))
                release.wait(timeout=10)
        except BaseException as exc:  # reported below, not lost in the thread
            results[tag] = exc

    def bare():
        results["bare"] = (f(modes.tensor(K.CPU)), _get_current_dispatch_mode_stack(),
                           engine.tls_is_dispatch_key_included(K.Python))

    threads = [threading.Thread(target=worker, args=(tag,)) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    while len(results) < 2:
        threading.Event().wait(0.01)
    checker = threading.Thread(target=bare)
    checker.start()
    checker.join(10)
    release.set()
    for thread in threads:
        thread.join(10)
    assert results == {"a": ("a", ["a"], True), "b": ("b", ["b"], True), "bare": ("kernel", [], False)}
    assert f(modes.tensor(K.CPU)) == "kernel" and _get_current_dispatch_mode_stack() == []


def test_mode_stack_helpers(modes):
    first, second = BaseTorchDispatchMode(), BaseTorchDispatchMode()
    _push_mode(first)
    _push_mode(second)
    assert _get_current_dispatch_mode_stack() == [first, second]
    with _pop_mode_temporarily() as popped:
        assert popped is second and _get_current_dispatch_mode_stack() == [first]
    with _disable_current_modes() as old:
        assert old == [second, first] and _get_current_dispatch_mode_stack() == []
        assert not modes.engine.tls_is_dispatch_key_included(K.Python)
    assert _pop_mode() is second and _pop_mode() is first
    with pytest.raises(RuntimeError, match="^trying to pop from empty mode stack$"):
        _pop_mode()


def test_modes_must_be_left_in_order(modes):
    first, second = BaseTorchDispatchMode(), BaseTorchDispatchMode()
    first.__enter__()
    second.__enter__()
    with pytest.raises(RuntimeError, match="modes must be left in the reverse order they were entered"):
        first.__exit__(None, None, None)
    assert _get_current_dispatch_mode_stack() == [first, second]  # nothing popped
    second.__exit__(None, None, None)
    first.__exit__(None, None, None)


def test_a_mode_is_checked_when_pushed(modes):
    class Classmethod(TorchDispatchMode):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return None

    with pytest.raises(RuntimeError, match=re.escape(
            "Defining your mode's `__torch_dispatch__` as a classmethod is not supported, please make it a plain "
            "method")):
        Classmethod().__enter__()
    with pytest.raises(TypeError, match="^a dispatch mode needs a __torch_dispatch__ method; object has none$"):
        _push_mode(object())
    assert _get_current_dispatch_mode_stack() == []
    with pytest.raises(NotImplementedError):
        with TorchDispatchMode():  # the base class has no behaviour of its own
            lib = modes.library(next(_ns))
            lib.define("f(Tensor x) -> Tensor")
            getattr(modes.ops, lib.ns).f.default(modes.tensor(K.CPU))


def test_restore_python_tls_snapshot(modes):
    with pytest.raises(RuntimeError, match="outside of '__torch_dispatch__' is not allowed"):
        with enable_reentrant_dispatch():
            pass
    guard = RestorePythonTLSSnapshot()
    with pytest.raises(RuntimeError, match="exited without being entered"):
        guard.__exit__(None, None, None)
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "autograd", "AutogradCPU")
    f = getattr(modes.ops, lib.ns).f.default
    seen = []

    class Reentrant(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func(*args))  # below autograd
            with RestorePythonTLSSnapshot() as restored:
                with pytest.raises(RuntimeError, match="already active"):
                    restored.__enter__()
                seen.append(func(*args))  # through autograd again
            return "mode"

    with Reentrant():
        assert f(modes.tensor(*CPU_TENSOR_KEYS)) == "autograd"  # autograd runs first, then the mode
    assert seen == []
    with Reentrant():
        with modes.engine.AutoDispatchBelowAutograd():
            assert f(modes.tensor(*CPU_TENSOR_KEYS)) == "mode"
    assert seen == ["cpu", "cpu"]  # the snapshot had autograd excluded too


# -- routes into and around the Python key ---------------------------------------------------------
def test_a_boxed_call_reaches_the_handlers(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x, int n=1) -> int")
    lib.impl("f", lambda x, n=1: n, "CPU")
    op = getattr(modes.ops, lib.ns).f.default
    engine = modes.engine

    class Double(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return 2 * func(*args, **kwargs)

    t = modes.tensor(K.CPU)
    stack = engine.Stack([engine.IValue(IValueTag.TENSOR, t), engine.IValue(IValueTag.INT, 5)])
    with Double():
        op.call_boxed(stack)
    assert stack == [engine.IValue(IValueTag.INT, 10)]
    assert IValue  # the default engine's type, for the import


def test_the_python_key_included_by_hand(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> str")
    lib.define("make() -> str")
    lib.impl("f", lambda x: "kernel", "CPU")
    lib.impl("make", lambda: "made", "CompositeExplicitAutograd")
    ns = getattr(modes.ops, lib.ns)
    with modes.engine.IncludeDispatchKeyGuard(K.Python):
        assert ns.f.default(modes.tensor(K.CPU)) == "kernel"
        with pytest.raises(RuntimeError, match=f"^{lib.ns}::make: the call reached the Python key with no dispatch "
                                               "mode active and no tensor argument$"):
            ns.make.default()
        with BaseTorchDispatchMode():  # a mode takes calls without tensors
            assert ns.make.default() == "made"


def test_the_dispatch_trace_shows_both_keys(modes, capsys):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = getattr(modes.ops, lib.ns).f.default
    engine = modes.engine
    engine.set_show_dispatch_trace(True)
    try:
        with BaseTorchDispatchMode():
            f(modes.tensor(K.CPU))
    finally:
        engine.set_show_dispatch_trace(False)
    assert capsys.readouterr().err.splitlines() == [
        f"[call] op=[{lib.ns}::f], key=[PythonTLSSnapshot]",
        f" [redispatch] op=[{lib.ns}::f], key=[Python]",
        f"  [call] op=[{lib.ns}::f], key=[CPU]",
    ]


def test_the_fallbacks_check_what_they_are_given(world):
    engine = world.engine
    lib = world.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    op = getattr(world.ops, lib.ns).f.default
    ks = world.keyset(K.CPU, K.Python)
    for fallback in (engine.python_key_fallback, engine.python_tls_snapshot_fallback):
        with pytest.raises(TypeError, match="takes an OperatorHandle, not str"):
            fallback("op", ks, (), {})
        with pytest.raises(TypeError, match="expects a DispatchKeySet, got int"):
            fallback(op, 3, (), {})
        with pytest.raises(TypeError, match="as a tuple and a dict"):
            fallback(op, ks, [], {})
    with pytest.raises(TypeError, match=r"an \(included, excluded\) tuple"):
        engine.set_python_tls_snapshot("nope")


def test_handlers_may_change_the_kwargs_they_get(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x, *, int n=0) -> int")
    lib.impl("f", lambda x, n=0: n, "CPU")
    f = getattr(modes.ops, lib.ns).f.default

    class Adds(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs["n"] = kwargs.get("n", 0) + 1
            return func(*args, **kwargs)

    given = {"n": 5}
    with Adds():
        assert f(modes.tensor(K.CPU), **given) == 6
        assert f(modes.tensor(K.CPU)) == 1
    assert given == {"n": 5}
    with Adds():
        stack = modes.engine.python_key_fallback(f, modes.keyset(K.CPU, K.Python), (modes.tensor(K.CPU),), given)
    assert stack == 6 and given == {"n": 5}


def test_each_call_gives_its_handlers_arguments_of_their_own(modes):
    # Compiled, a call may reuse the tuple and the empty dict an earlier
    # call's handlers gave back unreferenced (Note [Spare arguments for
    # handlers]): what a handler kept, or left something in, is never handed
    # on; a reused tuple holds this call's arguments and is tracked by the
    # collector, as a new one is; one waiting for reuse keeps no argument alive.
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", lambda x, y: x, "CPU")
    f = getattr(modes.ops, lib.ns).f.default
    kept_args, kept_kwargs, expected = [], [], [None]

    class Keeps(TorchDispatchMode):
        def __init__(self, what):
            self.what = what

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            assert args == expected[0] and all(args is not k for k in kept_args) and gc.is_tracked(args)
            assert kwargs == {} and all(kwargs is not k for k in kept_kwargs)
            assert not gc.is_tracked(kwargs)  # as a new empty dict, and so out of gc.get_objects()'s reach
            if self.what == "keeps":
                kept_args.append(args)
                kept_kwargs.append(kwargs)
            elif self.what == "fills":
                kwargs["left"] = True
            elif self.what == "tracks":  # left empty, but tracked by the collector
                kwargs["list"] = []
                del kwargs["list"]
            return func(*args)  # to the next mode, if any: a nested call's own arguments

    class Weak(modes.engine.TensorBase):  # weakly referenceable
        pass

    whats = ("plain", "keeps", "fills", "tracks")
    for outer, inner in itertools.product(whats, whats):
        x, y = Weak(modes.keyset(K.CPU)), Weak(modes.keyset(K.CPU))
        expected[0] = (x, y)
        with Keeps(outer), Keeps(inner):
            assert f(x, y) is x
        with Keeps(inner):
            assert f(x, y) is x
        if "keeps" not in (outer, inner):
            gone = weakref.ref(x)
            del x, y
            expected[0] = None
            assert gone() is None
    assert kept_kwargs == [{}] * 12 and len({id(k) for k in kept_kwargs}) == 12
    assert len({id(a) for a in kept_args}) == 12


def test_recursion_through_a_mode_is_a_recursion_error(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    f = getattr(modes.ops, lib.ns).f.default

    class SelfReferential(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            with self:
                return func(*args)

    before = modes.engine.tls_local_include_set(), modes.engine.tls_local_exclude_set()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        with SelfReferential():
            with pytest.raises(RecursionError):
                f(modes.tensor(K.CPU))
    finally:
        sys.setrecursionlimit(limit)
    assert (modes.engine.tls_local_include_set(), modes.engine.tls_local_exclude_set()) == before
    assert _get_current_dispatch_mode_stack() == []



def test_recursion_at_the_default_limit_in_a_thread_is_a_recursion_error(modes):
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    f = getattr(modes.ops, lib.ns).f.default
    outcome = []

    class SelfReferential(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            with self:
                return func(*args)

    def run():
        try:
            with SelfReferential():
                f(modes.tensor(K.CPU))
        except RecursionError:
            outcome.append(("RecursionError", _get_current_dispatch_mode_stack()))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert outcome == [("RecursionError", [])]


def test_a_none_handler_is_no_handler(world):
    class NotDispatching(world.engine.TensorBase):
        __torch_dispatch__ = None

    assert NotDispatching(world.keyset(K.CPU)).key_set == world.keyset(K.CPU)


def test_explain_sees_the_python_keys(modes):
    from dispatcher import explain

    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = getattr(modes.ops, lib.ns).f.default
    t = modes.tensor(K.CPU)
    with BaseTorchDispatchMode():
        plain = explain(f, t)
        ran = explain(f, t, run=True)
    assert plain.entry.key == K.PythonTLSSnapshot
    assert "python_tls_snapshot_fallback (with operator) [backend fallback]" in str(plain)
    assert [hop.key for hop in ran.hops] == [K.PythonTLSSnapshot, K.Python, K.CPU]


def test_is_tensor_subclass_like_while_a_mode_is_active(modes, compat):
    from dispatcher.compat import torch_C as C

    t = modes.tensor(K.CPU)
    assert not C._dispatch_isTensorSubclassLike(t)
    with BaseTorchDispatchMode():
        assert C._dispatch_isTensorSubclassLike(t)
        with modes.engine.ExcludeDispatchKeyGuard(K.Python):
            assert not C._dispatch_isTensorSubclassLike(t)


def test_the_snapshot_is_set_and_cleared_by_the_outermost_call(modes):
    engine = modes.engine
    lib = modes.library(next(_ns))
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = getattr(modes.ops, lib.ns).f.default
    seen = []

    class Snap(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(engine.python_tls_snapshot())
            return func(*args)

    with Snap():
        f(modes.tensor(K.CPU))
    (snapshot,) = seen
    assert snapshot == (engine.DEFAULT_INCLUDED_SET | modes.keyset(K.Python, K.PythonTLSSnapshot),
                        engine.DEFAULT_EXCLUDED_SET)
    assert engine.python_tls_snapshot() is None
    engine.set_python_tls_snapshot(snapshot)
    try:
        assert engine.python_tls_snapshot() == snapshot
    finally:
        engine.set_python_tls_snapshot(None)
