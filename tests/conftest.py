"""Shared fixtures: every test of the engine runs against both engines.

``engine`` (also named ``core``, as older tests call it) is the compiled
engine or the pure-Python one, both from dispatcher/_engine/core.py
(frozenlist/multidict style).  Higher-level modules use the default engine
(dispatcher/_core.py); CI runs the whole suite once with each as the default.
"""
import importlib
import json
import pathlib
import sys

import pytest

from dispatcher import _engine

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


def load_golden(name):
    with open(GOLDEN / name) as f:
        return json.load(f)


# The test suite shares one dispatcher, and the prototype's backend fallbacks
# (installed when dispatcher.prototype is imported) serve every operator.  So
# once collection has imported it they come out, and the prototype's test
# modules put them back only while their own tests run.
def pytest_collection_finish(session):
    prototype = sys.modules.get("dispatcher.prototype")
    if prototype is not None:
        prototype.uninstall()


@pytest.fixture(scope="module")
def prototype_fallbacks():
    prototype = importlib.import_module("dispatcher.prototype")
    with prototype.installed():
        yield
