"""The hops of one call, as the engine reports them (``explain(run=True)``).

The engine tells a thread's dispatch observer of every kernel that thread's
calls run, as its dispatch trace prints them (Note [Dispatch observers] in
dispatcher/_engine/core.py).  Running a call with an observer set observes
every hop without touching a plan or a registration, and only this thread's.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

from .keys import DispatchKey

__all__ = ["TraceLine", "traced_call"]


class TraceLine(NamedTuple):
    """One hop as the engine reported it."""

    depth: int
    what: str  # "call" or "redispatch"
    operator: str
    key: DispatchKey


def traced_call(engine: Any, call: Callable[[], Any]) -> tuple[list[TraceLine], Any, Optional[Exception]]:
    """Run ``call()`` observed on ``engine``; returns the hops, the result, and
    the exception it raised (None if it returned).  The thread's observer
    before (an enclosing explain's) is put back, and told of the hops too."""
    lines: list[TraceLine] = []
    outer: Any = None

    def observe(what: str, operator: str, key: DispatchKey, depth: int) -> None:
        lines.append(TraceLine(depth, what, operator, key))
        if outer is not None:
            outer(what, operator, key, depth)

    outer = engine.set_dispatch_observer(observe)
    result: Any = None
    error: Optional[Exception] = None
    try:
        result = call()
    except Exception as exc:  # explained, not raised: the caller asked what happens
        error = exc
    finally:
        engine.set_dispatch_observer(outer)
    return lines, result, error
