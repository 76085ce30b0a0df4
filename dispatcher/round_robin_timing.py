"""Calls that do not repeat: one call of each of 4,000 operators in turn.

The call rows of ``python -m dispatcher bench`` repeat one operator with one
keyset, so every call after the first finds its kernel in the plan's last
dispatch memo (Note [Last dispatch cache] in dispatcher/_engine/core.py).
Here each call is of another operator than the one before, as in a program
that runs many operators once each: the memo of each plan is cold again by
the time it is called next, and 4,000 plans do not fit in the CPU's caches
the way one does.

``compare`` defines ``count`` operators ``f(Tensor x, Tensor y) -> Tensor``
(each with a CPU kernel that returns ``x``) in a namespace of their own and
calls ``op_i.default(t, t)`` for i = 0 .. count-1 in a loop; torch's side, when
torch is importable, is the same with ``torch.library`` and a Python kernel,
called as ``torch.ops.<ns>.op_i.default(a, a)`` on a CPU tensor (torch's C++
dispatcher calling back into Python: not the path of torch's own kernels).
A third loop calls the kernel directly, for scale.  Each pass is timed as
a whole; the figures are medians over passes of ns per call, and of the
per-pass ratios, ours and torch's passes alternating.
"""
from __future__ import annotations

import gc
import itertools
import statistics
import time
from typing import Any, Callable, Optional

__all__ = ["compare", "format_row"]

SCHEMA = "(Tensor x, Tensor y) -> Tensor"
_namespaces = itertools.count()


def _kernel(x: Any, y: Any) -> Any:
    return x


def _pass(calls: list[Callable[..., Any]], x: Any) -> float:
    """ns per call of one pass over ``calls``."""
    start = time.perf_counter_ns()
    for call in calls:
        call(x, x)
    return (time.perf_counter_ns() - start) / len(calls)


def compare(count: int = 4000, passes: int = 15) -> dict[str, Optional[float]]:
    """Medians (ns per call) of ours, the direct kernel call and torch's
    (None without torch), and of the per-pass ratios ours / direct and ours / torch."""
    if count < 1 or passes < 1:
        raise ValueError(f"count and passes must be at least 1, got {count} and {passes}")
    from ._core import DispatchKeySet, TensorBase
    from ._library import Library
    from .keys import DispatchKey
    from .ops import ops

    ns = f"round_robin{next(_namespaces)}"
    lib = Library(ns, "DEF")
    torch_lib = None
    try:
        for i in range(count):
            lib.define(f"op{i}{SCHEMA}")
            lib.impl(f"op{i}", _kernel, "CPU")
        namespace = getattr(ops, ns)
        ours = [getattr(namespace, f"op{i}").default for i in range(count)]
        direct = [_kernel] * count
        t = TensorBase(DispatchKeySet([DispatchKey.CPU]))
        torch_calls: Optional[list[Callable[..., Any]]] = None
        a = None
        try:
            import torch
        except ImportError:
            pass
        else:
            torch_lib = torch.library.Library(ns, "DEF")
            for i in range(count):
                torch_lib.define(f"op{i}{SCHEMA}")
                torch_lib.impl(f"op{i}", _kernel, "CPU")
            torch_namespace = getattr(torch.ops, ns)
            torch_calls = [getattr(torch_namespace, f"op{i}").default for i in range(count)]
            a = torch.zeros(1)
        times: dict[str, list[float]] = {"ours": [], "direct": [], "torch": []}
        enabled = gc.isenabled()
        gc.disable()
        try:
            _pass(ours, t)  # each plan's first call, untimed
            if torch_calls is not None:
                _pass(torch_calls, a)
            for _ in range(passes):
                times["ours"].append(_pass(ours, t))
                times["direct"].append(_pass(direct, t))
                if torch_calls is not None:
                    times["torch"].append(_pass(torch_calls, a))
        finally:
            if enabled:
                gc.enable()
    finally:
        lib.close()
        if torch_lib is not None:
            torch_lib._destroy()
    result: dict[str, Optional[float]] = {
        "ours_ns": statistics.median(times["ours"]),
        "direct_ns": statistics.median(times["direct"]),
        "ours/direct": statistics.median([o / d for o, d in zip(times["ours"], times["direct"])]),
        "torch_ns": None,
        "ours/torch": None,
    }
    if times["torch"]:
        result["torch_ns"] = statistics.median(times["torch"])
        result["ours/torch"] = statistics.median([o / t for o, t in zip(times["ours"], times["torch"])])
    return result


def format_row(result: dict[str, Optional[float]], count: int = 4000) -> str:
    """compare's figures as one line."""
    line = (f"Round robin over {count} operators: ours {result['ours_ns']:.0f} ns per call, "
            f"direct kernel call {result['direct_ns']:.0f} ns ({result['ours/direct']:.2f}x)")
    if result["torch_ns"] is not None and result["ours/torch"] is not None:
        line += (f"; torch (torch.ops.<ns>.op_i.default(a, a), a Python kernel behind torch's dispatcher) "
                 f"{result['torch_ns']:.0f} ns (ours / torch {result['ours/torch']:.2f}x)")
    return line
