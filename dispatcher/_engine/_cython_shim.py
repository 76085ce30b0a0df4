"""The few names of Cython's ``cython`` module the engine uses in Python.

``dispatcher/_engine/core.py`` imports ``cython`` for its pure-Python mode;
where Cython is not installed (it is needed only to build), the engine
runs as plain Python with these stand-ins.
"""
from typing import Any, TypeVar

T = TypeVar("T")

compiled = False


def cast(_type: Any, value: T) -> T:
    return value


def declare(_type: Any, value: T) -> T:
    return value
