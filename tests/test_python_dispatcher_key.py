"""torch's Python dispatcher: ``_EnablePythonDispatcher`` and the PythonDispatcher
key's fallback (dispatcher/python_dispatcher_key.py).

Its choice of kernel (torch._ops.resolve_key) is checked against torch 2.13's
on the registrations of tests/golden/python_dispatcher_key_cases.py
(tests/golden/python_dispatcher_key_golden.json), with torch's own backend
fallbacks where the two differ; calls made while it is on reach the fallback
and give what they give without it.  Every test runs on both engines.
"""
from __future__ import annotations

import pytest

from dispatcher import DispatchKey
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET
from dispatcher.python_dispatcher_key import resolve_key

from .conftest import load_golden
from .golden.python_dispatcher_key_cases import REGISTRATIONS, RUNTIME_KEYS

GOLDEN = load_golden("python_dispatcher_key_golden.json")
K = DispatchKey
pytestmark = pytest.mark.usefixtures("compat")


def torch_has_backend_fallback(key):
    return GOLDEN["backend_fallbacks"][key.name]


def choice(entry, key):
    try:
        return resolve_key(entry, key, torch_has_backend_fallback).name
    except (NotImplementedError, RuntimeError) as exc:
        return {"raises": [type(exc).__name__, str(exc).replace(str(entry.handle), "{op}")]}


@pytest.mark.parametrize("i", range(len(REGISTRATIONS)), ids=lambda i: "+".join(REGISTRATIONS[i]) or "nothing")
def test_the_kernel_chosen_is_torchs(world, i):
    with world.library("h23pdk", "FRAGMENT") as lib:
        lib.define(f"f{i}(Tensor x) -> Tensor")
        for key in REGISTRATIONS[i]:
            lib.impl(f"f{i}", lambda x: x, key)
        entry = world.registry.find_op(f"h23pdk::f{i}")
        assert {name: choice(entry, K[name]) for name in RUNTIME_KEYS} == GOLDEN["choices"][i]


@pytest.fixture
def logged(world):
    """An operator with an Autograd kernel that redispatches and a CPU kernel,
    each logging whether its keyset has PythonDispatcher."""
    log = []
    with world.library("h23pdcall", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        op = world.ops.h23pdcall.f.default

        def autograd(keyset, x):
            log.append(("Autograd", keyset.has(K.PythonDispatcher)))
            return op.redispatch(keyset & world.own(AFTER_AUTOGRAD_KEYSET), x)

        def cpu(keyset, x):
            log.append(("CPU", keyset.has(K.PythonDispatcher)))
            return "cpu result"

        lib.impl("f", autograd, "Autograd", with_keyset=True)
        lib.impl("f", cpu, "CPU", with_keyset=True)
        yield op, log


def test_calls_reach_the_fallback_while_it_is_on(world, compat, logged):
    op, log = logged
    x = world.tensor(K.CPU, K.AutogradCPU)
    assert op(x) == "cpu result"
    assert log == [("Autograd", False), ("CPU", False)]
    log.clear()
    enabled = compat._EnablePythonDispatcher()
    assert op(x) == "cpu result"
    # The fallback ran each kernel with the call's keyset, PythonDispatcher in
    # it: the Autograd kernel's redispatch came back to the fallback.
    assert log == [("Autograd", True), ("CPU", True)]
    del enabled
    log.clear()
    assert op(x) == "cpu result"
    assert log == [("Autograd", False), ("CPU", False)]


def test_a_call_without_a_kernel_says_so(world, compat):
    with world.library("h23pdnone", "FRAGMENT") as lib:
        lib.define("g(Tensor x) -> Tensor")
        op = world.ops.h23pdnone.g.default
        enabled = compat._EnablePythonDispatcher()
        try:
            with pytest.raises(NotImplementedError, match=r"could not find kernel for h23pdnone\.g\.default at "
                                                          r"dispatch key DispatchKey\.CPU"):
                op(world.tensor(K.CPU))
        finally:
            del enabled


def test_a_backend_fallback_serves_a_key_without_kernels(world, compat):
    seen = []
    with world.library("h23pdfb", "FRAGMENT") as lib, world.library("_", "IMPL") as fallbacks:
        lib.define("h(Tensor x) -> Tensor")
        fallbacks.fallback(lambda op, x: seen.append(str(op)) or x, "XLA")
        x = world.tensor(K.XLA)
        enabled = compat._EnablePythonDispatcher()
        try:
            assert world.ops.h23pdfb.h.default(x) is x
        finally:
            del enabled
        assert seen == ["h23pdfb.h.default"]
