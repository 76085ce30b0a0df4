"""Registration timed step by step, next to PyTorch's, in one process.

The steps (``STEPS``) are those of torch.library code: create a DEF library
in a fresh namespace, define an operator, register kernels on backend keys
and on the alias keys custom operators use, dump the operator's table and
state, destroy the library; and register a backend fallback in a library of
the wildcard namespace, then destroy that.  Each step is timed on its own,
and its figure is its median over the rounds, in microseconds;
``TORCH_PATHS`` says what each step times on torch's side.

``compare`` can first define catalog operators (``catalog_operators``: the
first N of dispatcher/catalog, on first use as ops.aten.* would), so that
the steps run with 0, 10 or all 4,374 of them defined, as torch always has
its own; ``first_catalog_use`` times the first lookup of catalog operators
against torch's first ``torch.ops.aten`` lookup of the same names, and
``first_overload_use`` the first read of an overload (``ops.aten.<name>.<overload>``).

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
    "impl Autograd",
    "impl CompositeExplicitAutograd",
    "impl CompositeImplicitAutograd",  # on a second operator g (torch refuses f's Meta kernel beside it)
    "dump_table",  # _dispatch_dump_table("ns::f")
    "dump",  # _dispatch_dump("ns::f")
    "destroy",  # ._destroy(): removes the def and the three kernels
    "fallback",  # Library("_", "IMPL").fallback(fn, FALLBACK_KEY)
    "fallback removal",  # that library's ._destroy()
)
SCHEMA = "f(Tensor x, Tensor y) -> Tensor"
# Defined, untimed, after f: the CompositeImplicitAutograd kernel's operator.
SECOND_SCHEMA = "g(Tensor x, Tensor y) -> Tensor"
# What each step times on torch's side (torch 2.13: C++ behind torch.library's Python face).
TORCH_PATHS = {
    "Library": 'torch.library.Library(ns, "DEF")',
    "define": "Library.define(schema): parse + Dispatcher::registerDef",
    "impl CPU": "Library.impl(name, python_fn, key): Dispatcher::registerImpl of a boxed Python kernel",
    "impl AutogradCPU": "as impl CPU",
    "impl Meta": "as impl CPU",
    "impl Autograd": "as impl CPU (an alias key: c10 updates the slots it serves)",
    "impl CompositeExplicitAutograd": "as impl Autograd",
    "impl CompositeImplicitAutograd": "as impl Autograd",
    "dump_table": "torch._C._dispatch_dump_table(name)",
    "dump": "torch._C._dispatch_dump(name)",
    "destroy": "Library._destroy(): deregisters the two defs and five kernels",
    "fallback": 'Library("_", "IMPL").fallback(python_fn, key): c10 updates the slot of every operator',
    "fallback removal": "that library's _destroy()",
}
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
    lib.define(SECOND_SCHEMA)
    t2b = clock()
    lib.impl("f", _kernel, "CPU")
    t3 = clock()
    lib.impl("f", _autograd_kernel, "AutogradCPU")
    t4 = clock()
    lib.impl("f", _meta_kernel, "Meta")
    t5 = clock()
    lib.impl("f", _autograd_kernel, "Autograd")
    t6 = clock()
    lib.impl("f", _kernel, "CompositeExplicitAutograd")
    t7 = clock()
    lib.impl("g", _kernel, "CompositeImplicitAutograd")
    t8 = clock()
    dump_table(name)
    t9 = clock()
    dump(name)
    t10 = clock()
    lib._destroy()
    t11 = clock()
    times = (t1 - t0, t2 - t1, t3 - t2b, t4 - t3, t5 - t4, t6 - t5, t7 - t6, t8 - t7, t9 - t8, t10 - t9, t11 - t10)
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


def _measure(subjects: Mapping[str, Subject], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Each subject's samples per step (µs, in round order), the subjects alternating in blocks."""
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
    return samples


def _medians(samples: Mapping[str, list[float]]) -> dict[str, float]:
    return {step: statistics.median(times) for step, times in samples.items()}


def _median_ratios(ours: Mapping[str, list[float]], theirs: Mapping[str, list[float]]) -> dict[str, float]:
    """Per step, the median over rounds of our time over theirs in the same round."""
    return {step: statistics.median([a / b for a, b in zip(ours[step], theirs[step])]) for step in ours}


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
    return _medians(_measure({"": (library_factory, dump_table, dump)}, rounds)[""])


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


Comparison = tuple[dict[str, float], Optional[dict[str, float]], Optional[str], Optional[dict[str, float]]]


def define_catalog_operators(count: Optional[int]) -> int:
    """Define catalog operators in the default registry, overload set by
    overload set in catalog order, until at least ``count`` (None: all) are
    defined; return how many are.  (Catalog definitions stay: a count below
    what is already defined defines nothing.)"""
    from .registry import default_registry

    catalog = default_registry.catalog
    assert catalog is not None
    defined = 0
    for name in catalog.names():
        if count is not None and defined >= count:
            break
        default_registry.packet(name)
        defined += len(catalog.overloads(name))
    packets = set(default_registry.packet_names())
    return sum(len(catalog.overloads(name)) for name in catalog.names() if name in packets)


def compare(rounds: int = 200, catalog_operators: Optional[int] = 0) -> Comparison:
    """Our medians per step, torch's (timed in alternating rounds), torch's
    version and the medians of the per-round ratios ours / torch; None for
    the last three when torch cannot be imported.  ``catalog_operators``
    catalog operators are defined first (see define_catalog_operators)."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    define_catalog_operators(catalog_operators)
    subjects = {"ours": _ours()}
    torch = _torch()
    if torch is not None:
        subjects["torch"] = torch[0]
    samples = _measure(subjects, rounds)
    if torch is None:
        return _medians(samples["ours"]), None, None, None
    return _medians(samples["ours"]), _medians(samples["torch"]), torch[1], _median_ratios(samples["ours"], samples["torch"])


def first_catalog_use(names: int = 200) -> tuple[list[float], Optional[list[float]]]:
    """The first use of ``names`` catalog operators not read yet: our
    ``ops.aten.<name>`` (which hands out the operator's packet; its overloads
    are defined when first needed: see first_overload_use) against torch's
    first ``getattr(torch.ops.aten, name)`` of the same name (which builds
    its OpOverloadPacket), alternating name by name; µs per name, torch's
    None without torch."""
    return _first_reads(names, lambda aten, name, overload: getattr(aten, name))


def first_overload_use(names: int = 200) -> tuple[list[float], Optional[list[float]]]:
    """The first use of an overload of ``names`` catalog operators not read
    yet, as a program's first ``ops.aten.<name>.<overload>(...)`` makes it:
    ours reads the packet and its first overload (which defines the
    operator's overload set: Note [Packets of operators not defined yet] in
    dispatcher/_engine/core.py), torch reads ``torch.ops.aten.<name>`` and
    that overload (building its OpOverloadPacket and OpOverload), alternating
    name by name; µs per name, torch's None without torch."""
    return _first_reads(names, lambda aten, name, overload: getattr(getattr(aten, name), overload))


def _first_reads(names: int, read: Callable[[Any, str, str], Any]) -> tuple[list[float], Optional[list[float]]]:
    """``read(aten, name, overload)`` (an operator's name and the name of its
    first overload, found before the clock starts) timed on ``ops.aten`` and,
    when torch is importable, on ``torch.ops.aten``, alternating name by
    name, for the first ``names`` catalog operators neither has read; µs per
    name, torch's None without torch."""
    from .ops import ops

    torch_aten = None
    try:
        import torch

        torch_aten = torch.ops.aten
    except ImportError:
        pass
    candidates = _unread_catalog_names(torch_aten)
    targets = [(name[6:], _first_overload_name(name)) for name in candidates[:names] + candidates[-1:]]
    ours: list[float] = []
    theirs: list[float] = []
    clock = time.perf_counter_ns
    with _gc_disabled():
        # The catalog's files read once (its index and parts: Note [Catalog parts]), not timed.
        read(ops.aten, *targets.pop())
        for name, overload in targets:
            t0 = clock()
            read(ops.aten, name, overload)
            t1 = clock()
            ours.append((t1 - t0) / 1000)
            if torch_aten is not None:
                t0 = clock()
                read(torch_aten, name, overload)
                t1 = clock()
                theirs.append((t1 - t0) / 1000)
    return ours, theirs if torch_aten is not None else None


def _first_overload_name(qualified_name: str) -> str:
    """The name of the first overload of catalog operator ``ns::name`` ("default" for the unnamed one)."""
    from .registry import default_registry

    catalog = default_registry.catalog
    assert catalog is not None
    schema = catalog.overloads(qualified_name)[0].schema
    return schema[:schema.index("(")].partition(".")[2] or "default"


def _unread_catalog_names(torch_aten: Any) -> list[str]:
    """The aten catalog operators that neither ``ops.aten`` nor ``torch_aten``
    (torch's, if given) has read yet, in catalog order."""
    from .ops import ops
    from .registry import default_registry

    catalog = default_registry.catalog
    assert catalog is not None
    read = set(vars(ops.aten))
    return [n for n in catalog.names() if n.startswith("aten::") and n[6:] not in read
            and (torch_aten is None or n[6:] not in torch_aten.__dict__)]


def format_first_use(ours: list[float], torch: Optional[list[float]] = None, overload: bool = False) -> str:
    """first_catalog_use's samples as a line (first_overload_use's with
    ``overload``): medians and 90th percentiles."""
    def summary(samples: list[float]) -> str:
        ordered = sorted(samples)
        return f"median {statistics.median(ordered):.1f} µs, p90 {ordered[int(0.9 * (len(ordered) - 1))]:.1f} µs"

    what, read = ("an overload of a catalog operator", "<name>.<overload>") if overload else ("a catalog operator", "<name>")
    line = f"First use of {what} ({len(ours)} names): ops.aten.{read} {summary(ours)}"
    if torch:
        line += f"; torch's first torch.ops.aten.{read} {summary(torch)}"
    return line


def format_table(ours: Mapping[str, float], torch: Optional[Mapping[str, float]] = None,
                 torch_version: Optional[str] = None, ratios: Optional[Mapping[str, float]] = None) -> str:
    """A markdown table of the medians (µs), with torch's beside ours if
    given, the medians of the per-round ratios and torch's path per step."""
    if torch is None:
        lines = ["| step | µs (median) |", "|---|---:|"]
        lines += [f"| {step} | {ours[step]:.1f} |" for step in STEPS]
    else:
        if ratios is None:
            ratios = {step: ours[step] / torch[step] for step in STEPS}
        lines = [f"| step | µs (median) | torch {torch_version} (µs) | ours / torch | torch's path |",
                 "|---|---:|---:|---:|---|"]
        lines += [f"| {step} | {ours[step]:.1f} | {torch[step]:.1f} | {ratios[step]:.2f}x | {TORCH_PATHS[step]} |"
                  for step in STEPS]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> None:
    import argparse

    from ._cli_args import positive_int

    parser = argparse.ArgumentParser(prog="python -m dispatcher.registration_timing", description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=positive_int, default=200, help="rounds per step (default 200)")
    parser.add_argument("--catalog", type=int, default=None, metavar="N",
                        help="define the first N catalog operators first (default: none; -1: all 4,374)")
    args = parser.parse_args(argv)
    count = None if args.catalog == -1 else args.catalog or 0
    print(f"with {define_catalog_operators(count)} catalog operators defined:")
    print(format_table(*compare(args.rounds, count)))


if __name__ == "__main__":
    main()
