"""Calls racing registrations, leaks, and hostile inputs: only clean exceptions.

Each test runs on both engines (conftest.py's ``world``: a registry of its
own on the pure-Python engine and, when built, on the compiled one).
"""
import gc
import sys
import threading
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatcher import DispatchKey as K


def cpu_tensor(world):
    return world.tensor(K.CPU, K.ADInplaceOrView, K.AutogradCPU)


def test_calls_racing_registrations_see_old_or_new_kernel(world):
    lib = world.library("race", "DEF")
    lib.define("f(Tensor x) -> int")
    lib.impl("f", lambda x: 0, "CPU")
    f = world.ops.race.f.default
    t = cpu_tensor(world)
    stop = time.monotonic() + 1.5
    seen, errors = set(), []

    def caller():
        try:
            while time.monotonic() < stop:
                seen.add(f(t))
        except BaseException as exc:  # recorded, asserted below
            errors.append(exc)

    def registrar(value, key):
        try:
            while time.monotonic() < stop:
                with world.library("race", "IMPL", key) as over:
                    over.impl("f", lambda x, v=value: v)
        except BaseException as exc:
            errors.append(exc)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overriding CPU warns each time, by design
        threads = [threading.Thread(target=caller) for _ in range(3)]
        threads += [threading.Thread(target=registrar, args=(1, "CPU")),
                    threading.Thread(target=registrar, args=(2, "AutogradCPU"))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert errors == []
    assert seen <= {0, 1, 2} and 0 in seen
    # Exactly the first registration is left, and the table agrees with it.
    assert f(t) == 0
    world.registry.check_invariants("race::f")
    lib.close()
    assert world.registry.find_op("race::f") is None


# A million calls through the compiled engine; the pure one is ~30x slower,
# so it makes a tenth as many (still far past any warm-up effect).
def calls_for(engine):
    return 1_000_000 if engine.COMPILED else 100_000


def test_a_million_calls_leak_nothing(world):
    with world.library("leak", "DEF") as lib:
        lib.define("f(Tensor x, Tensor y) -> Tensor")
        lib.define("g(Tensor x) -> Tensor")

        def kernel(x, y):
            return x

        lib.impl("f", kernel, "CPU")
        lib.impl("g", lambda ks, x: x, "CPU", with_keyset=True)
        f, g = world.ops.leak.f.default, world.ops.leak.g.default
        t = cpu_tensor(world)
        cpu = world.keyset(K.CPU)
        for _ in range(1000):  # warm up caches
            f(t, t), g(t), f(t, y=t)
        gc.collect()
        refs = (sys.getrefcount(t), sys.getrefcount(kernel), sys.getrefcount(f))
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(calls_for(world.engine) // 4):
            f(t, t)
            f(t, y=t)
            g(t)
            f.redispatch(cpu, t, t)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert (sys.getrefcount(t), sys.getrefcount(kernel), sys.getrefcount(f)) == refs
        assert after - before < 64 * 1024


def test_errors_leak_nothing(world):
    with world.library("leakerr", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        f = world.ops.leakerr.f.default
        bad = object()
        xla = world.tensor(K.XLA)

        def fail_many(n):
            for _ in range(n):
                for arg, exc in ((bad, TypeError), (xla, NotImplementedError)):
                    try:
                        f(arg)
                    except exc:
                        pass

        fail_many(10)
        gc.collect()
        refs = (sys.getrefcount(bad), sys.getrefcount(xla))
        fail_many(2000)
        gc.collect()
        assert (sys.getrefcount(bad), sys.getrefcount(xla)) == refs


class _Weird:
    """An object whose attribute access misbehaves."""

    def __getattr__(self, name):
        raise RuntimeError("boom")


def odd_values(world):
    """Hostile arguments, with tensors and keysets of ``world``'s engine."""
    return st.one_of(
        st.none(), st.integers(), st.floats(allow_nan=True), st.text(max_size=3), st.binary(max_size=3),
        st.just(object()), st.just(_Weird()), st.just(cpu_tensor(world)), st.just(world.tensor(K.XLA)),
        st.lists(st.just(cpu_tensor(world)), max_size=2), st.just(world.keyset(K.CPU)), st.just(K.CPU),
    )


@pytest.fixture
def hostile_ops(world):
    lib = world.library("hostile", "DEF")
    lib.define("f(Tensor x, Tensor? y=None, int n=1) -> Tensor")
    lib.define("g(Tensor[] xs, *, float s=1.0) -> Tensor")
    lib.impl("f", lambda x, y=None, n=1: x, "CPU")
    lib.impl("g", lambda xs, s=1.0: xs[0], "CPU")
    lib.impl("g", lambda ks, xs, s=1.0: xs[0], "AutogradCPU", with_keyset=True)
    yield world.ops.hostile
    lib.close()


@given(data=st.data())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_hostile_calls_raise_only_clean_exceptions(world, hostile_ops, data):
    # The arguments are drawn here, not by @given, since their tensors and
    # keysets are the engine's, which the fixtures choose.
    args = data.draw(st.lists(odd_values(world), max_size=4), label="args")
    kwargs = data.draw(st.dictionaries(st.sampled_from(["x", "y", "n", "xs", "s", "zz"]), odd_values(world), max_size=3),
                       label="kwargs")
    for op in (hostile_ops.f.default, hostile_ops.g.default, hostile_ops.f, hostile_ops.g):
        try:
            op(*args, **kwargs)
        except (TypeError, NotImplementedError, RuntimeError, ValueError):
            pass
    keyset = world.keyset(K.CPU)
    try:
        hostile_ops.f.default.redispatch(keyset, *args, **kwargs)
    except (TypeError, NotImplementedError, RuntimeError, ValueError):
        pass
