"""Shared fixtures: every test of keysets, TLS, calls or boxing runs on both engines.

``engine`` (also named ``core``, as older tests call it) is the compiled
engine or the pure-Python one, both from dispatcher/_engine/core.py
(frozenlist/multidict style).  ``world`` is a registry of its own on that
engine, with the standard fallbacks and an ``ops`` on it.  ``compat`` is the
compat shim (dispatcher.compat.torch_C) pointed at the world's registry, so the
golden suites built on it run on both engines too.  The prototype, built on the
default registry, runs on the default engine: the compiled one when it is built.
"""
import importlib
import json
import pathlib

import pytest

from dispatcher import _engine
from dispatcher.catalog import TORCH_2_13
from dispatcher.compat import torch_C
from dispatcher.library import Library
from dispatcher.ops import OpNamespaces
from dispatcher.registry import Dispatcher, using_registry
from dispatcher.standard_fallbacks import standard_fallbacks_library

_compiled = _engine.compiled_engine()

GOLDEN = pathlib.Path(__file__).parent / "golden"

ENGINES = [
    pytest.param(_engine.pure_engine(), id="py"),
    pytest.param(
        _compiled,
        id="c",
        marks=pytest.mark.skipif(_compiled is None, reason="compiled engine not built"),
    ),
]


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


@pytest.fixture
def core(engine):
    return engine


class World:
    """One engine's registry with the standard fallbacks, its ops, and the
    engine's types, so a test written against it runs on either engine."""

    def __init__(self, engine):
        self.engine = engine
        self.registry = Dispatcher(engine, TORCH_2_13)
        self.fallbacks = standard_fallbacks_library(self.registry)
        self.ops = OpNamespaces(self.registry)

    def library(self, ns, kind="FRAGMENT", key=""):
        return Library(ns, kind, key, registry=self.registry)

    def keyset(self, *keys):
        return self.engine.DispatchKeySet(list(keys))

    def tensor(self, *keys):
        return self.engine.TensorBase(self.keyset(*keys))

    def own(self, keyset):
        """A keyset of the default engine (dispatcher.keysets' constants) as this engine's."""
        return self.engine.DispatchKeySet.from_raw_repr(keyset.raw_repr())


@pytest.fixture
def tls_restored(engine):
    """Put this thread's include/exclude sets back as they were (a test may set keys outside a guard)."""
    saved = engine.tls_local_include_set(), engine.tls_local_exclude_set()
    yield
    engine.tls_set_local_include_set(saved[0])
    engine.tls_set_local_exclude_set(saved[1])


@pytest.fixture
def world(engine, tls_restored):
    return World(engine)


@pytest.fixture
def in_use(world):
    """The world's registry in use while the test runs (Note [The registry in use]
    in dispatcher/registry.py): custom_op, torch.library's functions, the compat
    shim and dispatch modes work on it."""
    with using_registry(world.registry):
        yield world


@pytest.fixture
def compat(in_use):
    """dispatcher.compat.torch_C on the world's registry while the test runs."""
    yield torch_C


def load_golden(name):
    with open(GOLDEN / name) as f:
        return json.load(f)


# The test suite shares one dispatcher, and the prototype's backend fallbacks
# serve every operator: the prototype's test modules install them only while
# their own tests run.  (Importing dispatcher.prototype installs nothing; the
# toy device, once enabled, stays enabled: a backend is named once per process.)
@pytest.fixture(scope="module")
def prototype_fallbacks():
    prototype = importlib.import_module("dispatcher.prototype")
    prototype.enable_toy_device()
    with prototype.installed():
        yield
