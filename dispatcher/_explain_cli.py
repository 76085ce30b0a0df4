"""``python -m dispatcher explain ns::op KEY...``: explain a call from the command line.

The call's dispatch arguments carry the keys named (``explain_keyset``); the
operator must be defined in the package's registry, so ``--import MODULE``
imports the modules that define it first.
"""
from __future__ import annotations

import argparse
import importlib

from .keys import DispatchKey, is_alias_key, parse_dispatch_key
from .registry import default_registry

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--import", dest="modules", action="append", default=[], metavar="MODULE",
                        help="import MODULE first, to define the operator and register its kernels (repeatable)")
    parser.add_argument("operator", metavar="OPERATOR", help="the operator: ns::name or ns::name.overload")
    parser.add_argument("keys", nargs="*", metavar="KEY", help="runtime dispatch keys of the arguments, e.g. CPU AutogradCPU")


def run(args: argparse.Namespace) -> None:
    """Print the explanation; a bad argument ends in ``args.parser.error`` naming it."""
    parser = args.parser
    keys = [_key(parser, name) for name in args.keys]
    for module in args.modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # whatever the module raised, report it as the argument's fault
            parser.error(f"argument --import: importing {module} failed: {type(exc).__name__}: {exc}")
    print(_explain(parser, args.operator, keys))


def _key(parser: argparse.ArgumentParser, name: str) -> DispatchKey:
    try:
        key = parse_dispatch_key(name)
    except ValueError as exc:
        parser.error(f"argument KEY: {exc}")
    if is_alias_key(key):
        parser.error(f"argument KEY: {name} is an alias key; a call's keys are runtime keys (CPU, AutogradCPU, ...)")
    return key


def _explain(parser: argparse.ArgumentParser, operator: str, keys: list[DispatchKey]) -> str:
    if "::" not in operator:
        parser.error(f"argument OPERATOR: expected ns::name or ns::name.overload, got {operator!r}")
    entry = default_registry.find_op(operator)
    if entry is None or entry.schema is None:
        overloads = default_registry.overload_names(operator)
        known = f"; its overloads: {', '.join(f'{operator}.{o}' if o else operator for o in overloads)}" if overloads else ""
        parser.error(f"argument OPERATOR: no operator {operator} is defined{known} "
                     "(use --import MODULE to import the module that defines it)")
    from .explanation import explain_keyset  # not imported for the other subcommands

    return str(explain_keyset(operator, keys))
