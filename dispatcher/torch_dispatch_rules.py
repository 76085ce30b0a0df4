"""``register_torch_dispatch``: one operator's own handler for one tensor type or mode type.

torch.library.register_torch_dispatch, as torch 2.13 runs it: where a call
of the operator would reach ``__torch_dispatch__`` of a mode, or of a
tensor subclass, of exactly that type (not a subclass of it), the rule runs
instead, as ``rule(mode, func, types, args, kwargs)`` for a mode and
``rule(cls, func, types, args, kwargs)`` for a tensor type, with the
arguments normalized as for ``__torch_dispatch__``.  The engine reads the
rules (Note [torch_dispatch rules] in dispatcher/_engine/core.py); this
module is the only writer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .library import Library

__all__ = ["add_torch_dispatch_rule"]


def add_torch_dispatch_rule(lib: "Library", op_name: str, torch_dispatch_class: type,
                            fn: Callable[..., Any]) -> None:
    """Library._register_torch_dispatch_rule: ``fn`` for operator ``op_name``
    (of ``lib``'s namespace) under ``torch_dispatch_class``, until ``lib`` closes."""
    if not isinstance(torch_dispatch_class, type):
        raise TypeError(
            "register_torch_dispatch(op, torch_dispatch_class): torch_dispatch_class must be a tensor "
            f"subclass or a TorchDispatchMode subclass, got {torch_dispatch_class!r}"
        )
    if not callable(fn):
        raise TypeError(f"register_torch_dispatch: the rule must be callable, got {type(fn).__name__}")
    name = str(lib._name_for_impl(op_name))
    rules: dict[str, dict[type, Callable[..., Any]]] = lib._registry.engine.TORCH_DISPATCH_RULES
    with lib._registry.lock:  # Note [A closed library registers nothing] in library.py
        lib._check_open()
        if torch_dispatch_class in rules.get(name, {}):
            raise RuntimeError(
                f"{torch_dispatch_class} already has a `__torch_dispatch__` rule registered for {name}"
            )
        # A new dict each time: a call under way keeps the one it read.
        rules[name] = {**rules.get(name, {}), torch_dispatch_class: fn}

        def remove() -> None:
            remaining = {cls: rule for cls, rule in rules.get(name, {}).items() if cls is not torch_dispatch_class}
            if remaining:
                rules[name] = remaining
            else:
                rules.pop(name, None)

        lib._python_undos.append(remove)
