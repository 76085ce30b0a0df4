"""Shared fixtures: every test of the core runs against both implementations.

``core`` is the compiled ``dispatcher._C`` or the pure-Python twin
``dispatcher._core_py`` (frozenlist/multidict style).  Higher-level modules use
whichever ``dispatcher._core`` selected; CI runs the whole suite once with the
extension and once with DISPATCHER_NO_EXTENSIONS=1.
"""
import importlib
import json
import pathlib

import pytest

from dispatcher import _core_py

try:
    _compiled = importlib.import_module("dispatcher._C")
except ImportError:
    _compiled = None

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
