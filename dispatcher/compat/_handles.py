"""``torch._C``'s operator handles: ``_dispatch_find_schema_or_throw`` finds
one, ``_dispatch_call_boxed`` calls the operator through it, and
``_dispatch_set_report_error_callback`` gives it the function that reports a
call that finds no kernel."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ._common import keyset_arg, shim_registry, str_arg

if TYPE_CHECKING:
    from ..operator_entry import OperatorEntry, RegisteredSchema
    from ..registry import Dispatcher
    from ..schema import FunctionSchema


class _DispatchOperatorHandle:
    """c10's OperatorHandle of a defined operator, on the registry it was found in."""

    __slots__ = ("registry", "entry")

    def __init__(self, registry: Dispatcher, entry: OperatorEntry) -> None:
        self.registry = registry
        self.entry = entry

    def __repr__(self) -> str:
        return f"<_DispatchOperatorHandle {self.entry.name}>"

    def _registered(self) -> RegisteredSchema:
        # torch's handle dangles once its operator is gone; ours says so.
        schema = self.entry.schema
        if schema is None:
            raise RuntimeError(f"operator {self.entry.name} is no longer defined: the def this handle was found by was removed")
        return schema

    def schema(self) -> FunctionSchema:
        return self._registered().schema

    def debug(self) -> str:
        """Where the operator was defined."""
        return self._registered().debug

    def redispatch_boxed(self, keyset: Any, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel for ``keyset`` as given (no TLS, no mask) on the boxed arguments."""
        ks = keyset_arg(keyset, self.registry.engine, "redispatch_boxed")
        return self.boxed(lambda handle, stack: handle.redispatch_boxed(ks, stack), args, kwargs)

    def boxed(self, run: Callable[[Any, Any], None], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Box the arguments as the schema says, ``run(engine_handle, stack)``,
        and unbox the results: None for no returns, the value for one, else a tuple."""
        self._registered()
        handle = self.entry.handle
        boxer = handle.boxer
        try:
            stack = boxer.box(args, kwargs)
        except TypeError as e:
            # Arguments that do not fit the schema: a RuntimeError in torch (our binder's text).
            raise RuntimeError(str(e)) from e
        run(handle, stack)
        return boxer.unbox_returns(stack)


def _handle_arg(handle: object, function: str) -> _DispatchOperatorHandle:
    if not isinstance(handle, _DispatchOperatorHandle):
        raise TypeError(
            f"{function}(): expected a _DispatchOperatorHandle (from _dispatch_find_schema_or_throw), "
            f"got {type(handle).__name__}"
        )
    return handle


def _dispatch_find_schema_or_throw(name: str, overload_name: str) -> _DispatchOperatorHandle:
    """The handle of the defined operator ``name`` (``ns::op``) with ``overload_name``."""
    name = str_arg(name, "_dispatch_find_schema_or_throw", "name")
    overload_name = str_arg(overload_name, "_dispatch_find_schema_or_throw", "overload_name")
    registry = shim_registry()
    # c10 looks the OperatorName {name, overload_name} up as given, without
    # parsing it: a name holding the overload ("ns::op.ov") matches nothing.
    op = None if "." in name else registry.find_op(f"{name}.{overload_name}" if overload_name else name)
    if op is None or op.schema is None:
        found = "" if op is None else " but we found an implementation; did you forget to def() the operator?"
        raise RuntimeError(f"Could not find schema for {name}.{overload_name}{found}")
    return _DispatchOperatorHandle(registry, op)


def _dispatch_call_boxed(handle: _DispatchOperatorHandle, *args: Any, **kwargs: Any) -> Any:
    """Call the operator with the arguments boxed (c10's callBoxed)."""
    return _handle_arg(handle, "_dispatch_call_boxed").boxed(lambda h, stack: h.call_boxed(stack), args, kwargs)


def _dispatch_set_report_error_callback(handle: _DispatchOperatorHandle, callback: Callable[[str], object]) -> None:
    """From now on, a call of the operator that finds no kernel calls
    ``callback(key_name)``, which is to raise the error, instead of raising
    the dispatcher's."""
    op = _handle_arg(handle, "_dispatch_set_report_error_callback").entry
    # torch takes any object and fails when a call tries to call it; we say so now.
    if not callable(callback):
        raise TypeError(f"_dispatch_set_report_error_callback(): callback must be callable, got {type(callback).__name__}")
    op.set_report_error_callback(callback)
