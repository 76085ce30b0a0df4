"""Command line: ``python -m dispatcher COMMAND`` (``--help`` lists the commands).

Each subcommand is one function decorated with ``@command(name, summary)``:
it adds the subcommand's arguments to the parser it is given and returns the
function that runs it (its docstring is the subcommand's ``--help`` text).
A user's mistake ends in one line on stderr that names the argument, with
exit status 2 (``UsageError``, argparse's own errors); output cut short by
a closed pipe (``| head``) ends quietly.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING, Callable, NoReturn, Optional, Sequence

from . import HAS_EXTENSION, __version__
from ._svg import output_path
from .keys import DispatchKey, parse_dispatch_key

if TYPE_CHECKING:
    # Imported where used: `python -m dispatcher keys` needs neither.
    from .operator_entry import OperatorEntry
    from .table_view import TableView

Run = Callable[[argparse.Namespace], None]
Setup = Callable[[argparse.ArgumentParser], Run]

# What a process killed by SIGPIPE exits with in a shell (128 + 13), as
# `yes | head` does: the output was cut short, quietly.
EXIT_BROKEN_PIPE = 141


class UsageError(Exception):
    """A bad argument found while running a command; ``argument`` names it."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"argument {argument}: {message}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line: argparse prints the usage first, which buries the error.
        self.exit(2, f"{self.prog}: error: {message}\n")


_COMMANDS: list[tuple[str, str, Setup]] = []


def command(name: str, summary: str) -> Callable[[Setup], Setup]:
    """Add the subcommand ``name``, listed by ``--help`` with ``summary``
    (keep it to one line: under 55 characters)."""

    def register(setup: Setup) -> Setup:
        _COMMANDS.append((name, summary, setup))
        return setup

    return register


# -- keys ------------------------------------------------------------------------------
@command("keys", "print every dispatch key with its value and slot")
def _keys(parser: argparse.ArgumentParser) -> Run:
    """Print every dispatch key: its value, its runtime table slot and its kind."""
    return _print_keys


def _print_keys(args: argparse.Namespace) -> None:
    from ._layout import SLOT_OF_KEY
    from .keys import is_alias_key

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


# -- table -----------------------------------------------------------------------------
@command("table", "print or draw (--svg) an operator's dispatch table")
def _table(parser: argparse.ArgumentParser) -> Run:
    """Print the computed dispatch table of a test operator with a kernel fn_KEY on
    each KEY (any dispatch key, alias keys included), or of a registered operator
    (--op).  The rows are PythonDispatcher's example keys and the keys with a kernel
    of their own (--all: every runtime slot), in its format.  --svg draws all 137
    slots instead, coloured by where each entry comes from.  For example:
    python -m dispatcher table --import dispatcher.prototype --op aten::mean --svg mean.svg"""
    parser.add_argument("keys", nargs="*", metavar="KEY", type=_dispatch_key,
                        help="a key to register a kernel on (python -m dispatcher keys lists them)")
    parser.add_argument("--op", metavar="OPERATOR", help="a registered operator (ns::name[.overload]) instead")
    parser.add_argument("--import", dest="modules", metavar="MODULE", action="append", default=[],
                        help="import MODULE first, for the operators it registers (repeatable)")
    parser.add_argument("--all", action="store_true", help="print every runtime slot that has an entry")
    parser.add_argument("--svg", metavar="FILE", type=output_path,
                        help="draw the table in FILE (an SVG picture; -: standard output) instead of printing it")
    return _run_table


def _dispatch_key(name: str) -> DispatchKey:
    try:
        return parse_dispatch_key(name)
    except ValueError as e:  # names the input and the closest key names
        raise argparse.ArgumentTypeError(f"{e} (python -m dispatcher keys lists the keys)") from None


def _run_table(args: argparse.Namespace) -> None:
    from ._library import Library
    from .table_view import TableView

    for module in args.modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise UsageError("--import", str(e)) from None
    if args.op is not None:
        if args.keys:
            raise UsageError("KEY", "give KEYs or --op, not both")
        _show_table(TableView(_find_operator(args.op)), args)
        return
    keys: list[DispatchKey] = args.keys
    for key in keys:
        if keys.count(key) > 1:
            raise UsageError("KEY", f"{key.name} is given twice")
        if key == DispatchKey.Undefined:
            raise UsageError("KEY", "Undefined is not a key a kernel can be registered on")
    # The test operator lives as long as the command: a program calling
    # main() twice, as the tests do, gets the same table twice.
    with Library("__test__", "FRAGMENT") as library:
        library.define("foo(Tensor x) -> Tensor")
        for key in keys:
            library.impl("foo", _identity, key, debug=f"fn_{key.name}")
        _show_table(TableView(_find_operator("__test__::foo")), args)


def _identity(x: object) -> object:
    return x


def _find_operator(name: str) -> OperatorEntry:
    from .registry import default_registry

    op = default_registry.find_op(name)
    if op is None and name.endswith(".default"):  # torch.ops' name of the overload without a name
        op = default_registry.find_op(name[: -len(".default")])
    if op is None:
        from ._suggest import closest_operator_names

        close = closest_operator_names(name, default_registry.all_op_names())
        hint = f"; did you mean {' or '.join(close)}?" if close else " (--import the module that registers it)"
        raise UsageError("--op", f"no operator {name} is registered{hint}")
    return op


def _show_table(view: TableView, args: argparse.Namespace) -> None:
    if args.svg is not None:
        from . import _svg, table_svg

        _svg.write(table_svg.render(view), args.svg)
    else:
        from ._layout import RUNTIME_SLOT_KEYS

        print(view.text(RUNTIME_SLOT_KEYS if args.all else None), end="")


# -- demo ------------------------------------------------------------------------------
@command("explain", "explain which kernel a call reaches, and why")
def _explain(parser: argparse.ArgumentParser) -> Run:
    """Explain which kernel a call of OPERATOR reaches, and why, when its tensor
    arguments carry the given runtime keys (with this process's thread-local
    include/exclude sets): each key's part, the fallthroughs skipped, the slot
    and the precedence rule that put the kernel there.  For example:
    python -m dispatcher explain --import dispatcher.prototype aten::mean CPU AutogradCPU"""
    from ._explain_cli import add_arguments, run

    add_arguments(parser)
    return run


@command("demo", "tour a numpy-backed tensor library built on it")
def _demo(parser: argparse.ArgumentParser) -> Run:
    """Walk through dispatcher.prototype, a numpy-backed tensor library built on the
    dispatcher's public API, one dispatch key at a time (needs numpy)."""
    return _run_demo


def _run_demo(args: argparse.Namespace) -> None:
    try:
        import numpy  # noqa: F401  (the prototype's one dependency)
    except ImportError:
        raise SystemExit('python -m dispatcher demo needs numpy: pip install "c10-dispatcher[demo]"') from None
    from .prototype.demo import main as demo_main

    demo_main()


# -- bench -----------------------------------------------------------------------------
@command("bench", "time dispatch against direct calls (--plot: SVG)")
def _bench(parser: argparse.ArgumentParser) -> Run:
    """Time every case against a direct call of its kernel, then the registration
    steps and `import dispatcher` (see dispatcher/bench.py)."""
    from . import bench

    bench.add_arguments(parser)
    return bench.run_with


# -- the program -----------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m dispatcher",
                     description="PyTorch's operator dispatcher without PyTorch: look at it and time it.")
    engine = "compiled" if HAS_EXTENSION else "pure-Python"
    parser.add_argument("--version", action="version", version=f"dispatcher {__version__} ({engine} engine)")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for name, summary, setup in _COMMANDS:
        sub = commands.add_parser(name, help=summary, description=setup.__doc__)
        sub.set_defaults(run=setup(sub), parser=sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        try:
            args.run(args)
        except UsageError as e:
            args.parser.error(str(e))
        # Output still buffered meets a closed pipe here, where it can be caught.
        sys.stdout.flush()
    except BrokenPipeError:
        # As the Python docs advise (signal module, "Note on SIGPIPE"): point
        # stdout at devnull, so that the flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return 0


if __name__ == "__main__":
    sys.exit(main())
