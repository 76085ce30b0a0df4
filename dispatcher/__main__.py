"""Command line: ``python -m dispatcher keys | table KEY... | bench | demo``."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .python_dispatcher import PythonDispatcher


def _keys(args: argparse.Namespace) -> None:
    from ._layout import SLOT_OF_KEY
    from .keys import DispatchKey, is_alias_key

    print(f"{'value':>5}  {'key':<40} {'table slot':>10}  kind")
    for key in DispatchKey:
        if is_alias_key(key):
            where, kind = "-", "alias"
        elif key in SLOT_OF_KEY:
            where, kind = str(SLOT_OF_KEY[key]), "runtime"
        else:
            where, kind = "-", "functionality (per-backend)"
        print(f"{key.value:>5}  {key.name:<40} {where:>10}  {kind}")
    print("\nA higher value is a higher priority among functionalities; the highest key of a")
    print("tensor's DispatchKeySet (after TLS include/exclude) selects the table slot.")


def _table(args: argparse.Namespace) -> None:
    d = PythonDispatcher()
    try:
        d.register(args.keys)
    except RuntimeError as e:
        args.parser.error(str(e))  # exits with status 2
    print(d.dispatchTable(), end="")


def _demo(args: argparse.Namespace) -> None:
    try:
        import numpy  # noqa: F401  (the prototype's one dependency)
    except ImportError:
        raise SystemExit('python -m dispatcher demo needs numpy: pip install "dispatcher[demo]"') from None
    from .prototype.demo import main as demo_main

    demo_main()


def _bench(bench_args: list[str]) -> int:
    from .bench import main as bench_main

    return bench_main(bench_args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dispatcher", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("keys", help="print the dispatch key catalog with values and table slots").set_defaults(
        run=_keys
    )
    table = sub.add_parser(
        "table",
        help="print the dispatch table PythonDispatcher computes for kernels on the given keys",
        description="Register a kernel fn_KEY on each KEY of a test operator and print the kernel every "
        f"runtime key dispatches to.  Keys: {', '.join(PythonDispatcher.supported_keys)} (also "
        f"{', '.join([*PythonDispatcher.legacy_names, *PythonDispatcher.extra_runtime_keys])}).",
    )
    table.add_argument("keys", nargs="*", metavar="KEY")
    table.set_defaults(run=_table, parser=table)
    sub.add_parser("demo", help="tour a numpy-backed tensor library built on the dispatcher").set_defaults(run=_demo)
    bench = sub.add_parser(
        "bench", add_help=False, help="time dispatch against direct calls and peers (bench --help for options)"
    )
    bench.set_defaults(run=_bench)
    # bench's options belong to dispatcher.bench's own parser: pass them on.
    args, extra = parser.parse_known_args(argv)
    if args.command == "bench":
        return _bench(extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
