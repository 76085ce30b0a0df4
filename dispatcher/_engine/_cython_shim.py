"""The few names of Cython's ``cython`` module the engine uses in Python.

``dispatcher/_engine/core.py`` is written in Cython's pure-Python mode.  Run
as Python (the pure engine), it uses these stand-ins, whether or not Cython
is installed (it is needed only to build): none of them allocates, so none
can start a garbage collection.
"""
from typing import Any, TypeVar

T = TypeVar("T")

compiled = False

# cython.int, as declare() receives it (the type is ignored here).
int = int


def cast(_type: Any, value: T) -> T:
    return value


def declare(_type: Any, value: T) -> T:
    return value
