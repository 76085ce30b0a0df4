"""``Library``: registering operators, kernels and fallbacks, torch.library style.

A Library owns what it registered: ``close()`` (also on leaving a ``with``
block, and when the object is garbage-collected) removes exactly that, newest
first.  The checks and error texts are those of c10's ``torch::Library``
(library.cpp) and of ``torch.library``.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Callable, Iterable, Optional, Union

from .kernel import AnnotatedKernel, make_fallback_kernel, make_kernel, registration_site
from .keys import DispatchKey, parse_dispatch_key
from .keysets import get_runtime_dispatch_key_set
from .registry import RegistrationHandle, dispatcher
from .schema import FunctionSchema, OperatorName

__all__ = ["Library", "define", "impl"]

_KINDS = {"DEF": "TORCH_LIBRARY", "IMPL": "TORCH_LIBRARY_IMPL", "FRAGMENT": "TORCH_LIBRARY_FRAGMENT"}
_RESERVED_NAMESPACES = ("aten", "prim", "prims")
# The alias-analysis kinds a def() may name; "" means FROM_SCHEMA.
_ALIAS_ANALYSIS_KINDS = ("", "FROM_SCHEMA", "CONSERVATIVE", "PURE_FUNCTION")

KeyArg = Union[str, DispatchKey]


def _parse_key(key: KeyArg) -> Optional[DispatchKey]:
    """'' (and CatchAll/Undefined, as in c10) mean "no key"."""
    if isinstance(key, DispatchKey):
        parsed = key
    elif isinstance(key, str):
        if key == "":
            return None
        parsed = parse_dispatch_key(key)
    else:
        raise TypeError(f"a dispatch key must be a DispatchKey or its name, got {type(key).__name__}")
    return None if parsed == DispatchKey.Undefined else parsed


class Library:
    """A set of registrations for one namespace, removed together.

    ``kind`` is "DEF" (defines the namespace's operators; one per namespace),
    "FRAGMENT" (defines more of them, any number) or "IMPL" (only kernels and,
    in namespace "_", backend fallbacks); an IMPL library's ``dispatch_key``
    applies to all its impls.
    """

    def __init__(self, ns: str, kind: str, dispatch_key: KeyArg = "") -> None:
        self._handles: list[RegistrationHandle] = []
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind!r}; expected one of DEF, IMPL, FRAGMENT")
        if not isinstance(ns, str) or not (ns == "_" or ns.isidentifier()):
            raise ValueError(f"a library namespace must be an identifier or '_', got {ns!r}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = _parse_key(dispatch_key)
        self._site = registration_site()
        self._context = f"(Error occurred while processing {_KINDS[kind]} block at {self._site[len('registered at '):]})"
        if kind != "IMPL":
            if ns == "_":
                raise ValueError(
                    f"{_KINDS[kind]}: cannot define {_KINDS[kind]} with the wildcard namespace _ "
                    f"(every {_KINDS[kind]} defines operators for a distinct namespace!) "
                    f"Did you mean to use TORCH_LIBRARY_IMPL instead?  {self._context}"
                )
            if self.dispatch_key is not None:
                raise ValueError(f"a {kind} library takes no dispatch key (only IMPL libraries do)")
        if kind == "DEF":
            self._handles.append(dispatcher.claim_namespace(ns, self._site))

    def __repr__(self) -> str:
        key = f", dispatch_key={self.dispatch_key.name}" if self.dispatch_key is not None else ""
        return f"Library(kind={self.kind}, ns={self.ns}{key}, registrations={len(self._handles)})"

    # -- define --------------------------------------------------------------------
    def define(self, schema: Union[str, FunctionSchema], alias_analysis: str = "", tags: Iterable = ()) -> str:
        """Define an operator of this namespace; returns its name (``name.overload``)."""
        if self.kind == "IMPL":
            raise RuntimeError(
                f"Cannot define an operator inside of a {_KINDS[self.kind]} block.  All def()s should be "
                f"placed in the (unique) TORCH_LIBRARY block for their namespace.  {self._context}"
            )
        if alias_analysis not in _ALIAS_ANALYSIS_KINDS:
            raise ValueError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = FunctionSchema.parse(schema) if isinstance(schema, str) else schema
        if not isinstance(parsed, FunctionSchema):
            raise TypeError(f"define() takes a schema string or FunctionSchema, got {type(schema).__name__}")
        if parsed.name.namespace and parsed.name.namespace != self.ns:
            raise RuntimeError(
                f"Explicitly provided namespace ({parsed.name.namespace}) in schema string does not match "
                f"namespace of enclosing {_KINDS[self.kind]} block ({self.ns}).  Move this definition to the "
                "(unique) TORCH_LIBRARY block corresponding to this namespace (and consider deleting the "
                f"namespace from your schema string.)  {self._context}"
            )
        if not parsed.name.namespace:
            name = parsed.name
            parsed = dataclasses.replace(parsed, name=OperatorName(self.ns, name.name, name.overload_name))
        self._handles.append(
            dispatcher.register_def(parsed, registration_site(), alias_analysis or "FROM_SCHEMA")
        )
        name = parsed.name
        return f"{name.name}.{name.overload_name}" if name.overload_name else name.name

    # -- impl ----------------------------------------------------------------------
    def _operator_name(self, name: str) -> OperatorName:
        if not isinstance(name, str):
            raise TypeError(f"an operator name must be a str, got {type(name).__name__}")
        op = OperatorName.parse(name if "::" in name else f"{self.ns}::{name}")
        if op.namespace != self.ns and self.ns != "_":
            raise RuntimeError(
                f"Explicitly provided namespace ({op.namespace}) in operator name does not match namespace "
                f"of enclosing {_KINDS[self.kind]} block ({self.ns}).  Move this definition to the "
                f"{_KINDS[self.kind]} block corresponding to this namespace (and consider deleting the "
                f"namespace from your schema string.)  {self._context}"
            )
        return op

    def _resolve_key(self, dispatch_key: KeyArg) -> Optional[DispatchKey]:
        key = _parse_key(dispatch_key)
        if key is not None and self.dispatch_key is not None and key != self.dispatch_key:
            raise RuntimeError(
                f"Explicitly provided dispatch key ({key.name}) is inconsistent with the dispatch key of the "
                f"enclosing {_KINDS[self.kind]} block ({self.dispatch_key.name}).  Please declare a separate "
                f"{_KINDS[self.kind]} block for this dispatch key and move your impl() there.  {self._context}"
            )
        return key if key is not None else self.dispatch_key

    def impl(
        self,
        name: str,
        fn: Callable,
        dispatch_key: KeyArg = "",
        *,
        with_keyset: bool = False,
        boxed: bool = False,
        debug: Optional[str] = None,
    ) -> None:
        """Register ``fn`` as the kernel of operator ``name`` for ``dispatch_key``.

        No key (here and on the library) means CompositeImplicitAutograd, as
        in PyTorch.  ``with_keyset=True`` kernels are called as
        ``fn(keyset, *args, **kwargs)``; ``boxed=True`` ones as
        ``fn(op, keyset, stack)``.
        """
        op = self._operator_name(name)
        key = self._resolve_key(dispatch_key) or DispatchKey.CompositeImplicitAutograd
        kernel = AnnotatedKernel(make_kernel(fn, with_keyset=with_keyset, boxed=boxed), debug or registration_site())
        self._register_impl(op, key, kernel)

    def _register_impl(self, op: OperatorName, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        existing = dispatcher.find_op(str(op))
        if existing is not None and existing.kernel_for(key) is not None:
            operator = existing.schema.schema if existing.schema is not None else op
            where = existing.schema.debug if existing.schema is not None else "no debug info"
            warnings.warn(
                "Overriding a previously registered kernel for the same operator and the same dispatch key\n"
                f"  operator: {operator}\n    {where}\n  dispatch key: {key.name}\n"
                f"  previous kernel: {existing.kernel_for(key).debug}\n       new kernel: {kernel.debug}",
                UserWarning,
                stacklevel=3,
            )
        self._handles.append(dispatcher.register_impl(op, key, kernel))

    # -- fallback ------------------------------------------------------------------
    def fallback(self, fn: Callable, dispatch_key: KeyArg = "", *, with_keyset: bool = False,
                 debug: Optional[str] = None) -> None:
        """Register a boxed backend fallback: ``fn(op, stack)``, or
        ``fn(op, keyset, stack)`` with ``with_keyset=True``.  An alias key
        registers the fallback for each of its runtime keys."""
        if self.kind != "IMPL":
            raise RuntimeError(f"fallback(...) can only be called from TORCH_LIBRARY_IMPL.  {self._context}")
        if self.ns != "_":
            raise RuntimeError(
                'Fallback can only be registered using libary fragment on the global namespace "_" '
                f"but it is {self.ns}"
            )
        key = self._resolve_key(dispatch_key)
        if key is None:
            raise RuntimeError("Fallback for catch all function not supported")
        kernel = AnnotatedKernel(make_fallback_kernel(fn, with_keyset), debug or registration_site())
        self._register_fallback(key, kernel)

    def _register_fallback(self, key: DispatchKey, kernel: AnnotatedKernel) -> None:
        keys = list(get_runtime_dispatch_key_set(key))
        # All or nothing: check every slot before registering any.
        for k in keys:
            if dispatcher.has_backend_fallback(k):
                dispatcher.register_fallback(k, kernel)  # raises the duplicate error
        for k in keys:
            self._handles.append(dispatcher.register_fallback(k, kernel))

    # -- lifetime ------------------------------------------------------------------
    def close(self) -> None:
        """Remove everything this library registered (newest first); idempotent."""
        handles, self._handles = self._handles, []
        for handle in reversed(handles):
            handle()

    _destroy = close

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handles", None):
            self.close()


def _library_for(qualname: str, kind: str, dispatch_key: KeyArg = "") -> tuple[Library, str]:
    ns, sep, _name = qualname.partition("::")
    if not sep:
        raise ValueError(f"expected a qualified operator name 'namespace::name', got {qualname!r}")
    return Library(ns, kind, dispatch_key), qualname


# Libraries created by the decorator forms live as long as the process, as
# torch.library's do (they are kept here so garbage collection keeps them).
_DECORATOR_LIBRARIES: list[Library] = []


def define(qualname: str, schema: str, *, lib: Optional[Library] = None, alias_analysis: str = "") -> str:
    """Define ``qualname`` with ``schema`` (the part after the name, e.g.
    ``"(Tensor x) -> Tensor"``), in ``lib`` or a fresh FRAGMENT library."""
    if lib is None:
        lib, _ = _library_for(qualname, "FRAGMENT")
        _DECORATOR_LIBRARIES.append(lib)
    name = qualname.partition("::")[2]
    return lib.define(name + schema, alias_analysis=alias_analysis)


def impl(qualname: str, dispatch_key: KeyArg = "", *, lib: Optional[Library] = None,
         with_keyset: bool = False, boxed: bool = False) -> Callable[[Callable], Callable]:
    """Decorator: register the function as the kernel of ``qualname`` for ``dispatch_key``."""

    def register(fn: Callable) -> Callable:
        library = lib
        if library is None:
            library, _ = _library_for(qualname, "FRAGMENT")
            _DECORATOR_LIBRARIES.append(library)
        library.impl(qualname, fn, dispatch_key, with_keyset=with_keyset, boxed=boxed)
        return fn

    return register
