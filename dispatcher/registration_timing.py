"""Registration timed step by step, next to PyTorch's, in one process.

The steps (``STEPS``) are those of torch.library code: create a DEF library
in a fresh namespace, define an operator, register three kernels, dump the
operator's table and state, destroy the library; and register a backend
fallback in a library of the wildcard namespace, then destroy that.  Each
step is timed on its own, and its figure is its median over the rounds, in
microseconds.

``registration_steps`` times any implementation of that API: this package's
``Library`` with ``dispatcher.compat.torch_C``'s dump functions, or
``torch.library.Library`` with ``torch._C``'s.  ``compare`` times ours and,
when torch is importable, torch's, alternating in blocks of rounds, so that
a noisy machine slows both alike.  ``python -m dispatcher.registration_timing``
prints the comparison.

The fallback steps run in rounds of their own, after the library rounds: a
backend fallback changes a slot of every operator (torch walks its ~3,600),
which leaves the caches cold for whatever runs next.  For the same reason
the subjects alternate in blocks, not round by round: only the first round
of a block runs after the other subject's.
"""
from __future__ import annotations

import gc
import itertools
import statistics
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Callable, Optional

__all__ = ["STEPS", "compare", "registration_steps"]

STEPS = (
    "Library",  # Library(ns, "DEF")
    "define",  # .define("f(Tensor x, Tensor y) -> Tensor")
    "impl CPU",  # .impl("f", kernel, "CPU")
    "impl AutogradCPU",
    "impl Meta",
    "dump_table",  # _dispatch_dump_table("ns::f")
    "dump",  # _dispatch_dump("ns::f")
    "destroy",  # ._destroy(): removes the def and the three kernels
    "fallback",  # Library("_", "IMPL").fallback(fn, FALLBACK_KEY)
    "fallback removal",  # that library's ._destroy()
)
SCHEMA = "f(Tensor x, Tensor y) -> Tensor"
# A key that neither this package nor torch gives a fallback at import.
FALLBACK_KEY = "PrivateUse3"
WARMUP_ROUNDS = 3
BLOCK = 10  # rounds of one subject before the next one's

LibraryFactory = Callable[[str, str], Any]  # (namespace, kind) -> a library
Dump = Callable[[str], str]  # qualified operator name -> text
Subject = tuple[LibraryFactory, Dump, Dump]  # (library_factory, dump_table, dump)

# Every round defines in a namespace of its own (a DEF library owns its
# namespace until destroyed), fresh for each subject and round.
_namespaces = itertools.count()


def _kernel(x: Any, y: Any) -> Any:
    return x


def _autograd_kernel(x: Any, y: Any) -> Any:
    return x


def _meta_kernel(x: Any, y: Any) -> Any:
    return x


def _fallback(*args: Any, **kwargs: Any) -> None:
    """Never called: only registered and removed."""


def _library_round(subject: Subject, samples: dict[str, list[float]]) -> None:
    """One round of the library's steps, adding each one's time (µs) to ``samples``."""
    library_factory, dump_table, dump = subject
    ns = f"regtime{next(_namespaces)}"
    name = f"{ns}::f"
    clock = time.perf_counter_ns
    t0 = clock()
    lib = library_factory(ns, "DEF")
    t1 = clock()
    lib.define(SCHEMA)
    t2 = clock()
    lib.impl("f", _kernel, "CPU")
    t3 = clock()
    lib.impl("f", _autograd_kernel, "AutogradCPU")
    t4 = clock()
    lib.impl("f", _meta_kernel, "Meta")
    t5 = clock()
    dump_table(name)
    t6 = clock()
    dump(name)
    t7 = clock()
    lib._destroy()
    t8 = clock()
    times = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6, t8 - t7)
    for step, ns_taken in zip(STEPS, times):
        samples[step].append(ns_taken / 1000)


def _fallback_round(subject: Subject, samples: dict[str, list[float]]) -> None:
    """One round of the fallback's steps, adding each one's time (µs) to ``samples``."""
    clock = time.perf_counter_ns
    fallbacks = subject[0]("_", "IMPL")
    t0 = clock()
    fallbacks.fallback(_fallback, FALLBACK_KEY)
    t1 = clock()
    fallbacks._destroy()
    t2 = clock()
    samples["fallback"].append((t1 - t0) / 1000)
    samples["fallback removal"].append((t2 - t1) / 1000)


@contextmanager
def _gc_disabled() -> Iterator[None]:
    # As timeit does: a collection would land on whichever step ran then.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _measure(subjects: Mapping[str, Subject], rounds: int) -> dict[str, dict[str, float]]:
    """Each subject's median per step, the subjects alternating in blocks."""
    samples: dict[str, dict[str, list[float]]] = {key: {step: [] for step in STEPS} for key in subjects}
    warmup: dict[str, list[float]] = {step: [] for step in STEPS}
    with _gc_disabled():
        for run_round in (_library_round, _fallback_round):
            for subject in subjects.values():
                for _ in range(WARMUP_ROUNDS):
                    run_round(subject, warmup)
            for start in range(0, rounds, BLOCK):
                for key, subject in subjects.items():
                    for _ in range(min(BLOCK, rounds - start)):
                        run_round(subject, samples[key])
    return {key: {step: statistics.median(times) for step, times in steps.items()}
            for key, steps in samples.items()}


def registration_steps(library_factory: LibraryFactory, dump_table: Dump, dump: Dump,
                       rounds: int = 200) -> dict[str, float]:
    """The median time of each of STEPS, in µs, over ``rounds`` rounds.

    ``library_factory(ns, kind)`` makes a library with torch.library's
    ``define``, ``impl``, ``fallback`` and ``_destroy``; ``dump_table`` and
    ``dump`` take a qualified operator name (``torch._C._dispatch_dump_table``
    and ``_dispatch_dump``).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    return _measure({"": (library_factory, dump_table, dump)}, rounds)[""]


def _ours() -> Subject:
    from .compat.torch_C import _dispatch_dump, _dispatch_dump_table
    from ._library import Library

    return Library, _dispatch_dump_table, _dispatch_dump


def _torch() -> Optional[tuple[Subject, str]]:
    try:
        import torch
    except ImportError:
        return None
    return (torch.library.Library, torch._C._dispatch_dump_table, torch._C._dispatch_dump), torch.__version__


def compare(rounds: int = 200) -> tuple[dict[str, float], Optional[dict[str, float]], Optional[str]]:
    """Our medians per step, torch's (timed in alternating rounds) and
    torch's version, or None and None when torch cannot be imported."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    subjects = {"ours": _ours()}
    torch = _torch()
    if torch is not None:
        subjects["torch"] = torch[0]
    medians = _measure(subjects, rounds)
    return medians["ours"], medians.get("torch"), None if torch is None else torch[1]


def format_table(ours: Mapping[str, float], torch: Optional[Mapping[str, float]] = None,
                 torch_version: Optional[str] = None) -> str:
    """A markdown table of the medians (µs), with torch's beside ours if given."""
    if torch is None:
        lines = ["| step | µs (median) |", "|---|---:|"]
        lines += [f"| {step} | {ours[step]:.1f} |" for step in STEPS]
    else:
        lines = [f"| step | µs (median) | torch {torch_version} (µs) | torch / ours |", "|---|---:|---:|---:|"]
        lines += [f"| {step} | {ours[step]:.1f} | {torch[step]:.1f} | {torch[step] / ours[step]:.2f}x |"
                  for step in STEPS]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> None:
    import argparse

    from ._cli_args import positive_int

    parser = argparse.ArgumentParser(prog="python -m dispatcher.registration_timing", description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=positive_int, default=200, help="rounds per step (default 200)")
    print(format_table(*compare(parser.parse_args(argv).rounds)))


if __name__ == "__main__":
    main()
