"""Dispatch overhead next to a direct call of the same kernel, in one process.

Every case is timed in alternation with the direct call it is compared to,
and the reported ratio is the median of the per-round ratios, so a noisy
machine slows both sides alike and cancels out.  When torch is importable,
each case that has a torch counterpart (the same operators and Python
kernels registered with torch.library) times it in the same rounds, and the
table puts torch's figure beside ours.  Peers are timed like our cases when
installed: functools.singledispatch always; multipledispatch, plum and ovld
with ``pip install "c10-dispatcher[bench]"``.  Then the registration steps
(``registration_timing``) and ``import dispatcher`` are timed.

Run: ``python -m dispatcher bench`` or ``python benchmarks/compare.py``.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ._engine import pure_engine
from .standard_fallbacks import standard_fallbacks_library
# Module-level names, not local imports: plum and ovld resolve the (string)
# annotations of the peer functions below against this module's globals.
from ._core import HAS_EXTENSION, DispatchKeySet, TensorBase
from .keys import DispatchKey as K
from .keysets import AFTER_AUTOGRAD_KEYSET
from .dispatch_modes import TorchDispatchMode
from ._library import Library
from .ops import ops
from . import _svg, registration_timing, round_robin_timing
from ._cli_args import positive_int
from .registry import Dispatcher


@dataclass
class Case:
    """A statement timed against a direct call of its kernel, and against
    PyTorch's way of writing the same call (``torch_call``) when torch is
    importable.

    All are source text compiled by timeit into its loop, so no wrapper
    call is timed on any side.
    """

    name: str
    call: str
    direct: str
    env: dict
    note: str = ""
    torch_call: str = ""
    # What torch_call times on torch's side: most cases register the same
    # Python kernels with torch.library, so torch goes Python -> C++
    # dispatcher -> boxed Python kernel and back, a path no hot loop of a
    # torch user takes (torch.add on a real tensor is the row for scale).
    torch_path: str = "torch.ops call of the same Python kernel (torch.library)"
    peer: bool = False  # another library's dispatch, not ours
    # Names of context managers in the env (ours, and torch's when it is
    # there) entered around the case's rounds: a dispatch mode, say.
    active: tuple[str, ...] = ()


@dataclass
class Result:
    name: str
    ns_per_call: float
    direct_ns: float
    ratio: float
    note: str
    torch_ns: Optional[float] = None
    torch_ratio: Optional[float] = None  # torch's time / ours, median of the rounds' ratios
    peer: bool = False
    torch_path: str = ""  # what the torch figure times (Case.torch_path), when there is one


def measure(case: Case, rounds: int, number: int, torch_env: Optional[dict] = None) -> Result:
    env = case.env if torch_env is None else dict(case.env, **torch_env)
    call = timeit.Timer(case.call, globals=env)
    direct = timeit.Timer(case.direct, globals=env)
    torch_call = timeit.Timer(case.torch_call, globals=env) if case.torch_call and torch_env else None
    calls, directs, ratios, torch_times, torch_ratios = [], [], [], [], []
    with contextlib.ExitStack() as active:
        for name in case.active:
            if name in env:
                active.enter_context(env[name])
        call.timeit(1)  # warm up, and fail early if the call is broken
        if torch_call is not None:
            torch_call.timeit(1)
        for _ in range(rounds):
            d = direct.timeit(number) / number * 1e9
            c = call.timeit(number) / number * 1e9
            calls.append(c)
            directs.append(d)
            ratios.append(c / d)
            if torch_call is not None:
                t = torch_call.timeit(number) / number * 1e9
                torch_times.append(t)
                torch_ratios.append(t / c)
    return Result(case.name, statistics.median(calls), statistics.median(directs), statistics.median(ratios),
                  case.note, statistics.median(torch_times) if torch_times else None,
                  statistics.median(torch_ratios) if torch_ratios else None, case.peer,
                  case.torch_path if torch_times else "")


def kernel(x, y):
    return x


class NoOpMode(TorchDispatchMode):
    """A dispatch mode that runs every call as it is (the Python-key rows)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class NoOpWrapper(TensorBase):
    """A wrapper subclass that unwraps, calls and rewraps: torch's figure comes
    from the same handler on a torch wrapper subclass (_torch_env)."""

    __slots__ = ("elem",)

    def __init__(self, elem):
        TensorBase.__init__(self, elem.key_set)
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return cls(func(*[a.elem if type(a) is cls else a for a in args], **(kwargs or {})))


# The key the fallback case registers on: the one PyTorch reserves for tests,
# so the benchmark never collides with a fallback a library installed.
_FALLBACK_KEY = K.TESTING_ONLY_GenericMode


# The operators timed with torch too, registered alike on both sides (by
# _define_shared, with ``kernel`` for CPU); grad_add also gets an autograd layer.
_SHARED_OPERATORS = (
    "add(Tensor x, Tensor y) -> Tensor",
    "mul(Tensor x, Tensor y) -> Tensor",
    "mul.Scalar(Tensor x, Scalar y) -> Tensor",
    "grad_add(Tensor x, Tensor y) -> Tensor",
)


def _define_shared(lib: Any) -> None:
    """Define _SHARED_OPERATORS in ``lib`` (ours or a torch.library.Library)."""
    for schema in _SHARED_OPERATORS:
        lib.define(schema)
        lib.impl(schema.split("(")[0], kernel, "CPU")


def _our_cases(lib: Library, fallbacks: Library) -> list[Case]:
    _define_shared(lib)
    lib.define("add10(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e, Tensor f, Tensor g, Tensor h, Tensor i, "
               "Tensor j) -> Tensor")
    lib.define("keyset_add(Tensor x, Tensor y) -> Tensor")
    lib.define("boxed_add(Tensor x, Tensor y) -> Tensor")
    lib.define("fallback_add(Tensor x, Tensor y) -> Tensor")

    def kernel10(a, b, c, d, e, f, g, h, i, j):
        return a

    def with_keyset(keyset, x, y):
        return x

    def boxed(op, keyset, stack):
        # The operator's own Boxer: dispatcher.ivalue's functions of the same
        # names take a handle or a schema, and cost a Python call more each.
        boxer = op.boxer
        x, y = boxer.unbox_arguments(stack)
        boxer.box_returns(kernel(x, y), stack)

    lib.impl("add10", kernel10, "CPU")
    lib.impl("keyset_add", with_keyset, "CPU", with_keyset=True)
    lib.impl("boxed_add", boxed, "CPU", boxed=True)

    def autograd(keyset, x, y):
        # An autograd layer: record nothing, run the backend below it.
        return grad_add.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, x, y)

    def chained(x, y):
        return kernel(x, y)

    lib.impl("grad_add", autograd, "AutogradCPU", with_keyset=True)
    # fallback_add has no kernel of its own: every call lands on this fallback.
    fallbacks.fallback(boxed, _FALLBACK_KEY, boxed=True)
    namespace = getattr(ops, lib.ns)
    add, add10 = namespace.add.default, namespace.add10.default
    keyset_add, boxed_add = namespace.keyset_add.default, namespace.boxed_add.default
    fallback_add = namespace.fallback_add.default
    grad_add = namespace.grad_add.default
    t = TensorBase(DispatchKeySet([K.CPU, K.ADInplaceOrView, K.AutogradCPU]))
    f = TensorBase(DispatchKeySet([K.CPU, _FALLBACK_KEY]))
    cpu = DispatchKeySet(K.CPU)
    core = "compiled" if HAS_EXTENSION else "pure-Python"
    env = dict(add=add, add10=add10, keyset_add=keyset_add, boxed_add=boxed_add, fallback_add=fallback_add,
               grad_add=grad_add, chained=chained, ops=ops, kernel=kernel, kernel10=kernel10,
               with_keyset=with_keyset, t=t, f=f, cpu=cpu, w=NoOpWrapper(t), noop_mode=NoOpMode(),
               NoOpWrapper=NoOpWrapper)
    ns = lib.ns
    cases = [
        Case(f"call, 2 tensors ({core} core)", "add(t, t)", "kernel(t, t)", env, torch_call="torch_add(a, a)"),
        # For scale: the torch column here is no Python kernel but torch's own
        # C++ add of a real (1-element) tensor, the call a torch user writes.
        Case(f"call, 2 tensors ({core} core) vs torch.add on a real tensor", "add(t, t)", "kernel(t, t)", env,
             torch_call="torch.add(a, a)",
             torch_path="torch.add(a, a), a = torch.zeros(1): argument parser, autograd, C++ CPU kernel"),
        Case(f"`ops.{ns}.add.default(t, t)` written inline", f"ops.{ns}.add.default(t, t)", "kernel(t, t)", env,
             torch_call=f"torch.ops.{ns}.add.default(a, a)"),
        Case(f"`ops.{ns}.add(t, t)`: packet, one overload", f"ops.{ns}.add(t, t)", "kernel(t, t)", env,
             torch_call=f"torch.ops.{ns}.add(a, a)"),
        Case(f"`ops.{ns}.mul(t, 2)`: packet, two overloads", f"ops.{ns}.mul(t, 2)", "kernel(t, 2)", env,
             torch_call=f"torch.ops.{ns}.mul(a, 2)"),
        Case(f"`ops.{ns}.mul(t, t); ops.{ns}.mul(t, 2)`: alternating", f"ops.{ns}.mul(t, t); ops.{ns}.mul(t, 2)",
             "kernel(t, t); kernel(t, 2)", env, torch_call=f"torch.ops.{ns}.mul(a, a); torch.ops.{ns}.mul(a, 2)"),
        Case("Autograd kernel -> redispatch -> CPU kernel", "grad_add(t, t)", "chained(t, t)", env,
             note="direct: the same two Python functions, one calling the other", torch_call="torch_grad_add(a, a)"),
        Case(f"call, 10 tensors ({core} core)", "add10(t, t, t, t, t, t, t, t, t, t)",
             "kernel10(t, t, t, t, t, t, t, t, t, t)", env),
        Case(f"call with a keyword argument ({core} core)", "add(t, y=t)", "kernel(t, y=t)", env),
        Case(f"redispatch ({core} core)", "add.redispatch(cpu, t, t)", "kernel(t, t)", env,
             torch_call="torch_add.redispatch(torch_cpu, a, a)"),
        Case(f"with-keyset kernel ({core} core)", "keyset_add(t, t)", "with_keyset(cpu, t, t)", env),
        Case(f"boxed kernel: box, run, unbox ({core} core)", "boxed_add(t, t)", "kernel(t, t)", env),
        Case(f"boxed backend fallback: box, run, unbox ({core} core)", "fallback_add(f, f)", "kernel(f, f)", env),
        Case("no-op dispatch mode around a 2-tensor call", "add(t, t)", "kernel(t, t)", env,
             torch_call="torch_add(a, a)", active=("noop_mode", "torch_noop_mode"),
             torch_path="a TorchDispatchMode with the same handler, over the same Python kernel",
             note="the mode: return func(*args, **(kwargs or {}))"),
        Case("no-op wrapper subclass: unwrap, call, rewrap", "add(w, w)", "kernel(t, t)", env,
             torch_call="torch_add(torch_w, torch_w)", torch_path="a _make_wrapper_subclass with the same handler, over the same Python kernel",
             note="cls(func(*[a.elem if type(a) is cls else a for a in args], **(kwargs or {})))"),
        # The handlers' own cost: each called directly, as the Python key calls it.
        Case("  the mode's handler, called directly", "noop_mode.__torch_dispatch__(add, (), (t, t), {})",
             "kernel(t, t)", env, torch_call="torch_noop_mode.__torch_dispatch__(torch_add, (), (a, a), {})",
             torch_path="the same handler of torch's, called directly"),
        Case("  the wrapper's handler, called directly", "NoOpWrapper.__torch_dispatch__(add, (NoOpWrapper,), (w, w), {})",
             "kernel(t, t)", env,
             torch_call="torch_w.__torch_dispatch__(torch_add, (type(torch_w),), (torch_w, torch_w), {})",
             torch_path="the same handler of torch's, called directly"),
    ]
    cases += _prototype_wrapper_cases(env)
    if HAS_EXTENSION:
        cases.append(_twin_case(add, kernel))
    return cases


def _prototype_wrapper_cases(env: dict) -> list[Case]:
    """The no-op wrapper as torch users write it: a dispatcher.prototype Tensor
    subclass made by ``_make_wrapper_subclass``, beside torch's (the same class
    on torch.Tensor: _torch_env's TorchNoOpWrapper).  Needs numpy."""
    if not _available("numpy"):
        return []
    from .prototype import Tensor, tensor

    class ProtoNoOpWrapper(Tensor):
        elem: Any

        @staticmethod
        def __new__(cls, elem):
            wrapper = Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
            wrapper.elem = elem
            return wrapper

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return cls(func(*[a.elem if type(a) is cls else a for a in args], **(kwargs or {})))

    env.update(pw=ProtoNoOpWrapper(tensor([0.0])), ProtoNoOpWrapper=ProtoNoOpWrapper)
    return [
        Case("no-op prototype wrapper subclass (_make_wrapper_subclass)", "add(pw, pw)", "kernel(t, t)", env,
             torch_call="torch_add(torch_w, torch_w)", note="the same class and handler as torch's",
             torch_path="a _make_wrapper_subclass with the same handler, over the same Python kernel"),
        Case("  its handler, called directly", "ProtoNoOpWrapper.__torch_dispatch__(add, (ProtoNoOpWrapper,), (pw, pw), {})",
             "kernel(t, t)", env,
             torch_call="torch_w.__torch_dispatch__(torch_add, (type(torch_w),), (torch_w, torch_w), {})",
             torch_path="the same handler of torch's, called directly"),
    ]


def _twin_case(add, kernel) -> Case:
    # The same operator and kernel on the pure-Python engine: a registry of
    # its own, with tensors of that engine's types.
    engine = pure_engine()
    registry = Dispatcher(engine)
    fallbacks = standard_fallbacks_library(registry)
    library = Library("bench_pure", "DEF", registry=registry)
    library.define(str(add.schema).replace(str(add.schema.name), "bench_pure::add", 1))
    library.impl("add", kernel, "CPU")
    twin = registry.op_or_throw("bench_pure::add").handle
    t = engine.TensorBase(engine.DispatchKeySet([K.CPU, K.ADInplaceOrView, K.AutogradCPU]))
    env = dict(twin=twin, t=t, kernel=kernel, libraries=(fallbacks, library))
    return Case("call, 2 tensors (pure-Python engine)", "twin(t, t)", "kernel(t, t)", env)


def _peer_cases() -> list[Case]:
    import functools

    t = TensorBase(DispatchKeySet(K.CPU))
    env: dict = dict(t=t, kernel=kernel)
    cases = []

    @functools.singledispatch
    def sd(x, y):
        raise NotImplementedError

    sd.register(TensorBase)(kernel)
    cases.append(Case("functools.singledispatch", "sd(t, t)", "kernel(t, t)", dict(env, sd=sd), peer=True))

    if _available("multipledispatch"):
        from multipledispatch import Dispatcher

        md = Dispatcher("md")
        md.add((TensorBase, TensorBase), kernel)
        cases.append(Case("multipledispatch", "md(t, t)", "kernel(t, t)", dict(env, md=md), peer=True))
    if _available("plum"):
        import plum

        pd = plum.Dispatcher()

        @pd
        def pl(x: TensorBase, y: TensorBase):
            return x

        cases.append(Case("plum", "pl(t, t)", "kernel(t, t)", dict(env, pl=pl), peer=True))
    if _available("ovld"):
        from ovld import ovld

        @ovld
        def ov(x: TensorBase, y: TensorBase):
            return x

        cases.append(Case("ovld", "ov(t, t)", "kernel(t, t)", dict(env, ov=ov), peer=True))
    return cases


def _torch_env(ns: str) -> Optional[dict]:
    """The same operators and Python kernels registered with torch.library
    in namespace ``ns``, and the names the cases' ``torch_call`` use; None
    without torch."""
    if not _available("torch"):
        return None
    import torch

    lib = torch.library.Library(ns, "FRAGMENT")
    _define_shared(lib)
    after_autograd = torch._C._after_autograd_keyset
    grad_add = getattr(torch.ops, ns).grad_add.default

    def autograd(keyset, x, y):
        return grad_add.redispatch(keyset & after_autograd, x, y)

    lib.impl("grad_add", autograd, "AutogradCPU", with_keyset=True)
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    class TorchNoOpMode(TorchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class TorchNoOpWrapper(torch.Tensor):
        @staticmethod
        def __new__(cls, elem):
            wrapper = torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
            wrapper.elem = elem
            return wrapper

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return cls(func(*[a.elem if type(a) is cls else a for a in args], **(kwargs or {})))

    a = torch.zeros(1)
    # The library is kept in the env so its registrations live as long as the cases.
    return dict(torch=torch, torch_library=lib, a=a, torch_add=getattr(torch.ops, ns).add.default,
                torch_grad_add=grad_add, torch_cpu=torch._C.DispatchKeySet(torch._C.DispatchKey.CPU),
                torch_version=torch.__version__, torch_noop_mode=TorchNoOpMode(), torch_w=TorchNoOpWrapper(a))


def _available(module: str) -> bool:
    try:
        importlib.import_module(module)
    except Exception:  # an optional peer that is missing or broken is just skipped
        return False
    return True


def run(rounds: int = 15, number: int = 20000) -> tuple[list[Result], Optional[str]]:
    """The results, and the version of torch timed beside them (None without torch)."""
    if rounds < 1 or number < 1:
        raise ValueError(f"rounds and number must be at least 1, got rounds={rounds}, number={number}")
    with Library("dispatcher_bench", "DEF") as lib, Library("_", "IMPL") as fallbacks:
        ours = _our_cases(lib, fallbacks)
        torch_env = _torch_env(lib.ns)
        results = [measure(case, rounds, number, torch_env) for case in ours + _peer_cases()]
        return results, None if torch_env is None else torch_env["torch_version"]


def format_table(results: Sequence[Result], torch_version: Optional[str] = None) -> str:
    torch_columns = torch_version is not None
    head = "| case | ns per call (median) | direct kernel call (ns) | ratio to direct call |"
    rule = "|---|---:|---:|---:|"
    if torch_columns:
        head += f" torch {torch_version} (ns) | torch / ours | torch's path |"
        rule += "---:|---:|---|"
    lines = [head, rule]
    for r in results:
        line = f"| {r.name} | {r.ns_per_call:.0f} | {r.direct_ns:.0f} | {r.ratio:.2f}x |"
        if torch_columns:
            line += (f" {r.torch_ns:.0f} | {r.torch_ratio:.1f}x | {r.torch_path} |" if r.torch_ns is not None
                     and r.torch_ratio is not None else " | | |")
        lines.append(line)
    return "\n".join(lines)


def import_time_ms(runs: int = 7) -> dict[str, float]:
    """``import dispatcher`` in a fresh interpreter: the median over ``runs``
    of the package's cumulative time under ``python -X importtime``, in ms,
    with its bytecode cached (an installed package: pip compiles it) and
    without (every import compiles the sources, as with
    PYTHONDONTWRITEBYTECODE=1 and no cache).  The caches live in temporary
    directories (PYTHONPYCACHEPREFIX), so the checkout's __pycache__ changes neither."""
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cached, tempfile.TemporaryDirectory() as empty:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-c", "import dispatcher"], env={**env, "PYTHONPYCACHEPREFIX": cached},
                       check=True)  # fills the cache
        for state, extra in (("cached", {"PYTHONPYCACHEPREFIX": cached}),
                             ("uncached", {"PYTHONPYCACHEPREFIX": empty, "PYTHONDONTWRITEBYTECODE": "1"})):
            samples = []
            for _ in range(runs):
                out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import dispatcher"],
                                     capture_output=True, text=True, check=True, env={**env, **extra})
                line = next(line for line in reversed(out.stderr.splitlines()) if line.rstrip().endswith("| dispatcher"))
                samples.append(int(line.split("|")[1]) / 1000)
            times[state] = statistics.median(samples)
    return times


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python -m dispatcher bench`` (and benchmarks/compare.py)."""
    parser.add_argument("--rounds", type=positive_int, default=15, help="alternating rounds per case (default 15)")
    parser.add_argument("--number", type=positive_int, default=20000, help="calls per round (default 20000)")
    parser.add_argument("--registration-rounds", type=positive_int, default=200,
                        help="rounds of the registration steps (default 200)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--plot", metavar="FILE.svg", type=_svg.output_path,
                        help="also draw the ratios as a bar chart in FILE.svg (see dispatcher/bench_plot.py)")


def run_with(args: argparse.Namespace) -> None:
    """Run the benchmark as ``args`` (add_arguments' options) say."""
    # Registration with 0, then 10 catalog operators defined: first, as the
    # call cases define some (the prototype's kernels are on aten operators).
    registrations = {}
    for count in (0, 10):
        comparison = registration_timing.compare(args.registration_rounds, count)
        registrations[registration_timing.define_catalog_operators(count)] = comparison
    results, torch_version = run(args.rounds, args.number)
    if args.plot:
        # Written before the slower steps below, and failing before them if it cannot be.
        from . import bench_plot

        title = f"Dispatch overhead, {'compiled' if HAS_EXTENSION else 'pure-Python'} engine, Python {sys.version.split()[0]}"
        _svg.write(bench_plot.render(results, title), args.plot)
    # The catalog's first use, then registration with all of it defined (definitions stay).
    first_use = registration_timing.first_catalog_use()
    first_overload_use = registration_timing.first_overload_use()  # of the next names, not read yet
    comparison = registration_timing.compare(args.registration_rounds, None)
    registrations[registration_timing.define_catalog_operators(None)] = comparison
    round_robin = round_robin_timing.compare()
    import_ms = import_time_ms()
    if args.json:
        print(json.dumps({"torch": torch_version, "results": [r.__dict__ for r in results],
                          "registration_us": {defined: {"ours": r[0], "torch": r[1], "ours/torch": r[3]}
                                              for defined, r in registrations.items()},
                          "first_catalog_use_us": {"ours": first_use[0], "torch": first_use[1]},
                          "first_overload_use_us": {"ours": first_overload_use[0], "torch": first_overload_use[1]},
                          "round_robin": round_robin,
                          "import_ms": import_ms}, indent=1))
    else:
        print(format_table(results, torch_version))
        for defined, comparison in registrations.items():
            print(f"\nRegistration with {defined} catalog operators defined (ours / torch: median of per-round ratios):")
            print(registration_timing.format_table(*comparison))
        print()
        print(registration_timing.format_first_use(*first_use))
        print(registration_timing.format_first_use(*first_overload_use, overload=True))
        print(round_robin_timing.format_row(round_robin))
        print()
        print(f"import dispatcher: {import_ms['cached']:.1f} ms with its bytecode cached, "
              f"{import_ms['uncached']:.1f} ms compiling it (medians of 7, `python -X importtime`)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dispatcher bench", description=__doc__.splitlines()[0])
    add_arguments(parser)
    run_with(parser.parse_args(argv))
    return 0
