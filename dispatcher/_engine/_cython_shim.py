"""The few names of Cython's ``cython`` module the engine uses in Python.

``dispatcher/_engine/core.py`` is written in Cython's pure-Python mode.  Run
as Python (the pure engine), it uses these stand-ins, whether or not Cython
is installed (it is needed only to build): none of those called at run
time allocates, so none can start a garbage collection.
"""
from typing import Any, Callable, TypeVar

T = TypeVar("T")

compiled = False

# cython.int, as declare() receives it (the type is ignored here).
int = int


def cast(_type: Any, value: T) -> T:
    return value


def declare(_type: Any, value: T) -> T:
    return value


# Class decorators, applied once at import (see Note [Freelists for per-call objects] in core.py).
def cclass(cls: T) -> T:
    return cls


def freelist(_size: int) -> Callable[[T], T]:
    return cclass
