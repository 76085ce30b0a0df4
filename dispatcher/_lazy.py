"""Module attributes imported on first use (PEP 562's module ``__getattr__``):
what ``import dispatcher`` need not pay for (torch.library's custom-operator
API needs inspect and logging; explain is a tool)."""
from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_attributes(module_name: str, modules: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module_name`` that imports attribute
    ``name`` from ``dispatcher.<modules[name]>`` on first use and keeps it in
    the module's ``namespace`` (its globals), so that Python finds it there
    from then on."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"dispatcher.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
