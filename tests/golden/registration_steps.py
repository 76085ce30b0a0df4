"""The registration steps of registration_golden.json (see REGISTRATION.md),
run against a ``torch._C``-like module: one interpreter for the generator,
which runs them on torch (``torch._C``), and the test, which replays them on
``dispatcher.compat.torch_C``.

Neither torch nor dispatcher is imported here: the caller passes its ``C``
module and its ``fallthrough_kernel``.
"""
from typing import Any


def _kernel(*args: Any, **kwargs: Any) -> Any:
    return args[0] if args else None


def _kernel_with_keyset(keyset: Any, *args: Any, **kwargs: Any) -> Any:
    return args[0] if args else None


def _fallback(op: Any, *args: Any, **kwargs: Any) -> None:
    return None


def _fallback_with_keyset(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> None:
    return None


def run_step(C: Any, fallthrough_kernel: Any, libs: dict, s: dict) -> None:
    """Run step ``s``; ``libs`` holds the libraries the steps made, by number."""
    op = s["op"]
    if op == "new_library":
        libs[s["lib"]] = C._dispatch_library(s["kind"], s["ns"], s["dispatch_key"], s["file"], s["line"])
        return
    if op == "drop":
        libs.pop(s["lib"]).reset()
        return
    m = libs[s["lib"]]
    if op == "def":
        m.def_(s["schema"], s["alias"])
    elif op == "def_legacy":
        m.def_legacy(s["schema"])
    elif op == "def_name_t_t":
        m.def_name_t_t(s["name"], s["dispatch"], s["debug"])
    elif op == "def_schema_t_t":
        m.def_schema_t_t(s["schema"], s["dispatch"], s["alias"], s["debug"])
    elif op == "impl_t_t":
        m.impl_t_t(s["name"], s["dispatch"], s["debug"])
    elif op == "impl_python":
        m.impl(s["name"], s["dispatch"], _kernel_with_keyset if s["with_keyset"] else _kernel, s["with_keyset"])
    elif op == "impl_fallthrough":
        m.impl(s["name"], s["dispatch"], fallthrough_kernel)
    elif op == "fallback_fallthrough":
        m.fallback_fallthrough(s["dispatch"])
    elif op == "fallback_python":
        m.fallback(s["dispatch"], _fallback_with_keyset if s["with_keyset"] else _fallback, s["with_keyset"])
    elif op == "fallback_fallthrough_kernel":
        m.fallback(s["dispatch"], fallthrough_kernel, False)
    else:
        raise AssertionError(f"unknown step {op}")
