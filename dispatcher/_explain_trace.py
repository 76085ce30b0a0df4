"""The hops of one call, read from the engine's dispatch trace (``explain(run=True)``).

The engine prints ``[call] op=[ns::name], key=[CPU]`` (``[redispatch] ...``
for redispatches, indented one space per level of nesting) to ``sys.stderr``
before each kernel it runs, when the trace is on.  That trace is the one
place the call path reports what it does, so running a call with it on and
``sys.stderr`` pointing here observes every hop without touching a plan or a
registration.  Both are process-wide, so while the call runs: the lines of
other threads go to the real stderr (trace lines only if the trace was
already on), and one traced call runs at a time.
"""
from __future__ import annotations

import re
import sys
import threading
from typing import Any, Callable, NamedTuple, Optional, TextIO

__all__ = ["TraceLine", "traced_call"]

# The trace's format (dispatcher/_engine/core.py, _print_trace).
_TRACE_LINE = re.compile(r"( *)\[(call|redispatch)\] op=\[(.+)\], key=\[(\w+)\]")

# Held while a traced call runs (reentrant: a kernel may explain a call of its own).
_LOCK = threading.RLock()


class TraceLine(NamedTuple):
    """One hop as the trace printed it."""

    depth: int
    what: str  # "call" or "redispatch"
    operator: str
    key: str


class _Capture:
    """Stands in for ``sys.stderr``: keeps the calling thread's trace lines and
    passes everything else on to ``stream`` a line at a time."""

    def __init__(self, stream: TextIO, forward_trace: bool) -> None:
        self.lines: list[TraceLine] = []
        self._stream = stream
        self._forward_trace = forward_trace
        self._thread = threading.get_ident()
        self._pending: dict[int, str] = {}  # per thread, text after its last newline
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        thread = threading.get_ident()
        with self._lock:
            *complete, rest = (self._pending.pop(thread, "") + text).split("\n")
            if rest:
                self._pending[thread] = rest
        for line in complete:
            self._line(thread, line)
        return len(text)

    def _line(self, thread: int, line: str) -> None:
        match = _TRACE_LINE.fullmatch(line)
        if match is None:
            self._stream.write(line + "\n")
            return
        if thread == self._thread:
            spaces, what, operator, key = match.groups()
            self.lines.append(TraceLine(len(spaces), what, operator, key))
        if self._forward_trace:  # the user had the trace on: it still shows
            self._stream.write(line + "\n")

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        """Pass on text written without a final newline."""
        for text in self._pending.values():
            self._stream.write(text)
        self._pending.clear()

    def __getattr__(self, name: str) -> Any:
        # encoding, fileno, isatty, ...: those of the stream it stands in for.
        return getattr(self._stream, name)


def traced_call(engine: Any, call: Callable[[], Any]) -> tuple[list[TraceLine], Any, Optional[Exception]]:
    """Run ``call()`` with ``engine``'s trace on and read; returns the trace
    lines of this thread, the result, and the exception it raised (None if
    it returned).  The trace switch and ``sys.stderr`` are restored whatever happens."""
    with _LOCK:
        stream = sys.stderr
        was_on = engine.show_dispatch_trace()
        capture = _Capture(stream, forward_trace=was_on)
        sys.stderr = capture  # a TextIO in all that print uses (write, flush, the rest by __getattr__)
        engine.set_show_dispatch_trace(True)
        result: Any = None
        error: Optional[Exception] = None
        try:
            result = call()
        except Exception as exc:  # explained, not raised: the caller asked what happens
            error = exc
        finally:
            engine.set_show_dispatch_trace(was_on)
            sys.stderr = stream
            capture.close()
    return capture.lines, result, error
