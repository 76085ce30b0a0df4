"""Shared fixtures: every test of the core runs against both implementations.

``core`` is the compiled ``dispatcher._C`` or the pure-Python twin
``dispatcher._core_py`` (frozenlist/multidict style).  Higher-level modules use
whichever ``dispatcher._core`` selected; CI runs the whole suite once with the
extension and once with DISPATCHER_NO_EXTENSIONS=1.
"""
import importlib
import json
import pathlib
import sys

import pytest

from dispatcher import _engine

_compiled = _engine.compiled_engine()
_core_py = _engine.pure_engine()

GOLDEN = pathlib.Path(__file__).parent / "golden"

CORES = [
    pytest.param(_core_py, id="py"),
    pytest.param(
        _compiled,
        id="c",
        marks=pytest.mark.skipif(_compiled is None, reason="compiled core not built"),
    ),
]


@pytest.fixture(params=CORES)
def core(request):
    return request.param


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
