"""``dispatcher.ops``: operators by attribute, like ``torch.ops``.

``ops.ns.name.overload`` (``.default`` for the unnamed overload) is the
operator's ``OperatorHandle`` itself, so calling it is the compiled fast
path.  ``ops.ns.name(...)`` is an overload packet: it calls the first overload
(the default one first, then the others in definition order) whose schema
accepts the arguments.
"""
from __future__ import annotations

from typing import Any

from .registry import Dispatcher
from .registry import default_registry

__all__ = ["OpNamespaces", "OpOverloadPacket", "ops"]


class OpOverloadPacket:
    """All overloads of ``ns::name``."""

    def __init__(self, qualified_name: str, registry: Dispatcher) -> None:
        self._qualified_name = qualified_name
        self._registry = registry

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self._qualified_name}>"

    def overloads(self) -> list[str]:
        """Overload names, ``default`` for the unnamed one."""
        return [name or "default" for name in self._registry.overload_names(self._qualified_name)]

    def __getattr__(self, overload: str) -> Any:
        if overload.startswith("__"):
            raise AttributeError(overload)
        name = self._qualified_name if overload == "default" else f"{self._qualified_name}.{overload}"
        op = self._registry.find_op(name)
        if op is None or op.schema is None:
            raise AttributeError(f"operator {self._qualified_name} has no overload {overload!r}")
        return op.handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = self._registry.overload_names(self._qualified_name)
        if not names:
            raise AttributeError(f"no operator named {self._qualified_name} is defined")
        errors = []
        for overload in names:
            op = self._registry.find_op(f"{self._qualified_name}.{overload}" if overload else self._qualified_name)
            if op is None or op.schema is None:
                continue
            try:
                op.handle.boxer.box(args, kwargs)  # binds and type-checks, as the JIT's matching does
            except TypeError as exc:
                errors.append(f"  {op.schema.schema}: {exc}")
                continue
            return op.handle(*args, **kwargs)
        raise TypeError(
            f"no overload of {self._qualified_name} accepts these arguments:\n" + "\n".join(errors)
        )


class _Namespace:
    def __init__(self, ns: str, registry: Dispatcher) -> None:
        self._ns = ns
        self._registry = registry

    def __repr__(self) -> str:
        return f"<ops namespace {self._ns}>"

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        qualified = f"{self._ns}::{name}"
        if not self._registry.overload_names(qualified):
            raise AttributeError(f"no operator named {qualified} is defined")
        return OpOverloadPacket(qualified, self._registry)


class OpNamespaces:
    """``ops``: a registry's operators as ``ops.ns.name.overload``."""

    def __init__(self, registry: Dispatcher) -> None:
        self._registry = registry

    def __getattr__(self, ns: str) -> _Namespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _Namespace(ns, self._registry)

    def __repr__(self) -> str:
        return "<dispatcher.ops>"


ops = OpNamespaces(default_registry)
