"""``Library``: registering operators, kernels and fallbacks, torch.library style
(the machinery behind dispatcher/library.py, torch.library's face, as torch's
``torch/_library`` is behind ``torch/library.py``).

Two layers, as in PyTorch.  The public methods (``define``, ``impl``,
``fallback``) take Python callables and check what ``torch.library.Library``
checks.  The underscore methods (``_def``, ``_impl``, ``_fallback``) are c10's
``torch::Library`` (library.cpp): they take parsed schemas and annotated
kernels, apply the rules of the library's block kind with c10's error texts,
and register.  ``dispatcher.compat.torch_C`` drives that layer directly.
The module functions ``define`` and ``impl`` are torch.library's, in both
of their forms (``impl(qualname, types, func)`` with device types, and
the older decorators taking a Library first).

A Library owns what it registered: ``close()`` (also on leaving a ``with``
block, and when the object is garbage-collected) removes exactly that, newest
first.  Every registration is all or nothing: a failed one leaves the
dispatcher as it was.
"""
from __future__ import annotations

import functools
import re
import weakref
from functools import partial
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar, Union

from ._kernel_kind import KernelKind
from .kernel import (
    AnnotatedKernel,
    Site,
    annotated_kernel,
    fallthrough_kernel,
    make_fallback_kernel,
    make_kernel,
    registration_site,
    registration_site_later,
)
from ._engine import loaded_engines
from .backends import dispatch_key_for_device
from .errors import DispatcherTypeError, DispatcherValueError
from .keys import DispatchKey, parse_dispatch_key
from .keysets import get_runtime_dispatch_key_set
from .registry import Dispatcher, RegistrationHandle
from .registry import default_registry
from .operator_tags import Tag, tag_names
from .schema import _IDENT, FunctionSchema, OperatorName, parse_operator_schema

__all__ = ["DeviceTypes", "KeyArg", "Library", "define", "fallthrough_kernel", "impl", "keys_for_types"]

_KINDS = {"DEF": "TORCH_LIBRARY", "IMPL": "TORCH_LIBRARY_IMPL", "FRAGMENT": "TORCH_LIBRARY_FRAGMENT"}
_RESERVED_NAMESPACES = ("prim",)  # torch.library._reserved_namespaces in 2.13
# What torch.library.Library.define accepts ("" means FROM_SCHEMA); c10's
# PURE_FUNCTION is reachable only through the low layer (_def).
_ALIAS_ANALYSIS_KINDS = ("", "FROM_SCHEMA", "CONSERVATIVE")
WILDCARD_NAMESPACE = "_"

KeyArg = Union[str, DispatchKey]
_F = TypeVar("_F", bound=Callable[..., Any])

# torch.library's record of what Python libraries registered, read by code
# written for it (torch.library._impls, torch.library._defs): an impl as
# ``"<ns>/<name>/<dispatch key as given>"``, a def as ``"<ns>::<name>[.overload]"``
# (what an overload's ``_defined_in_python`` asks).  Each
# library adds its own (its ``_op_impls`` and ``_op_defs``) and takes them out
# when it closes or is collected (Library._open).
_impls: set[str] = set()
_defs: set[str] = set()


def _forget_registrations(refs: "set[weakref.ref[Library]]", impls: set[str], op_impls: set[str], defs: set[str],
                          op_defs: set[str], ref: "Optional[weakref.ref[Library]]" = None) -> None:
    """A library's records out of _impls and _defs: when it closes or resets,
    and as its weak reference's callback (``ref``) when it is collected."""
    impls -= op_impls
    defs -= op_defs
    if ref is not None:
        refs.discard(ref)


# The weak references whose callbacks take collected libraries' records out
# (a weakref.ref and its callback: a weakref.finalize costs a Library() twice
# as much); each holds the sets once, as torch's finalizer does, whose
# references torch's tests count.
_LIBRARY_REFS: "set[weakref.ref[Library]]" = set()


# What _parse_key made of each key name it was given (impl() parses one per
# kernel); only names that parse are kept, so it stays small.
_PARSED_KEY_NAMES: dict[str, Optional[DispatchKey]] = {"": None}
_UNPARSED: Any = object()  # a key name not in _PARSED_KEY_NAMES yet
_META = DispatchKey.Meta
_UNBOXED, _WITH_KEYSET = KernelKind.UNBOXED, KernelKind.WITH_KEYSET

def _parse_key(key: KeyArg) -> Optional[DispatchKey]:
    """'' (and CatchAll/Undefined, as in c10) mean "no key"."""
    if isinstance(key, str):
        if key not in _PARSED_KEY_NAMES:
            parsed = parse_dispatch_key(key)
            _PARSED_KEY_NAMES[key] = None if parsed == DispatchKey.Undefined else parsed
        return _PARSED_KEY_NAMES[key]
    if isinstance(key, DispatchKey):
        return None if key == DispatchKey.Undefined else key
    raise TypeError(f"a dispatch key must be a DispatchKey or its name, got {type(key).__name__}")


class Library:
    """A set of registrations for one namespace, removed together.

    ``kind`` is "DEF" (defines the namespace's operators; one per namespace),
    "FRAGMENT" (defines more of them, any number) or "IMPL" (only kernels;
    in the wildcard namespace "_", only backend fallbacks); an IMPL library's
    ``dispatch_key`` applies to all its impls.

    Debug texts (shown by dumps) default to ``registered at FILE:LINE`` of
    each registration call; torch.library uses the line that created the
    library for all of them.
    """

    def __init__(self, ns: str, kind: str, dispatch_key: KeyArg = "", *,
                 registry: Optional[Dispatcher] = None) -> None:
        """``registry``: the Dispatcher to register with (default: the
        package's, on the default engine; see dispatcher/_engine)."""
        self._handles: list[RegistrationHandle] = []
        self._closed = False
        self._registry = default_registry if registry is None else registry
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        _check_namespace(ns)
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        self._open(ns, kind, _parse_key(dispatch_key), registration_site(), debug_at_site=False)

    @classmethod
    def _at_site(cls, ns: str, kind: str, dispatch_key: Optional[DispatchKey], site: str, *,
                 registry: Optional[Dispatcher] = None) -> "Library":
        """A library as c10 creates one: at ``site`` (``registered at FILE:LINE``),
        which is also the default debug text of all its registrations; on
        ``registry`` (default: the package's)."""
        library = cls.__new__(cls)
        library._handles = []
        library._closed = False
        library._registry = default_registry if registry is None else registry
        _check_namespace(ns)
        library._open(ns, kind, dispatch_key, site, debug_at_site=True)
        return library

    def _open(self, ns: str, kind: str, key: Optional[DispatchKey], site: str, debug_at_site: bool) -> None:
        """c10's Library constructor: the block rules, and a DEF library's claim."""
        self.ns = ns
        # This library's entries of _impls and _defs, which its weak reference's
        # callback takes out of them when it is collected (close() does it first
        # when called).
        self._op_impls: set[str] = set()
        self._op_defs: set[str] = set()
        # (_reset() takes them out too, through the callback's own references:
        # no more references to the sets than torch's, which its tests count,
        # and none to this module's globals, gone when a library is closed as
        # the interpreter exits.)
        self._records_ref = weakref.ref(self, partial(_forget_registrations, _LIBRARY_REFS, _impls, self._op_impls, _defs,
                                                    self._op_defs))
        _LIBRARY_REFS.add(self._records_ref)
        self._lock = self._registry.lock
        # How to remove what this library registered outside the dispatcher's
        # tables (torch_dispatch rules), run by close(), newest first.
        self._python_undos: list[Callable[[], None]] = []
        # Operator name -> the tags its define() gave, for this library's defs.
        self._tags: dict[OperatorName, tuple[str, ...]] = {}
        # What _name_for_impl made of each name it was given (and define()
        # of the names it returned): a library usually registers several
        # kernels of one operator.
        self._qualified_names: dict[str, OperatorName] = {}
        self.kind = kind
        self.dispatch_key = None if key == DispatchKey.Undefined else key
        # The debug text of a registration given none: where it was made, or
        # the library's site for a library made at one (_at_site).  Only
        # registering code calls it (Library's methods, the compat shim), so
        # registration_site skips its caller.
        self._default_debug: Callable[[], str] = (lambda: site) if debug_at_site else partial(registration_site, 1)
        # The same for impl's kernels, whose text waits until it is read
        # (Note [Registration sites read lazily] in dispatcher/kernel.py):
        # the library's site, or None for "where impl() was called", which
        # impl asks registration_site_later itself (through a partial, that
        # is a call from C into Python, which costs a tenth of an impl's time).
        self._fixed_site: Optional[Site] = site if debug_at_site else None
        block = _KINDS[kind]
        self._context = f"(Error occurred while processing {block} block at {site.removeprefix('registered at ')})"
        if kind != "IMPL":
            if ns == WILDCARD_NAMESPACE:
                raise RuntimeError(
                    f"{block}: cannot define {block} with the wildcard namespace _ "
                    f"(every {block} defines operators for a distinct namespace!) "
                    f"Did you mean to use TORCH_LIBRARY_IMPL instead?  {self._context}"
                )
            if self.dispatch_key is not None:
                # c10 asserts here; say what is wrong instead.
                raise RuntimeError(
                    f"{block}: a {block} block takes no dispatch key (got {self.dispatch_key}); only "
                    f"TORCH_LIBRARY_IMPL blocks do.  {self._context}"
                )
        if kind == "DEF":
            self._handles.append(self._registry.claim_namespace(ns, site))

    def __repr__(self) -> str:
        key = f", dispatch_key={self.dispatch_key.name}" if self.dispatch_key is not None else ""
        return f"Library(kind={self.kind}, ns={self.ns}{key}, registrations={len(self._handles)})"

    # -- the public layer (torch.library) ------------------------------------------
    def define(self, schema: Union[str, FunctionSchema], alias_analysis: str = "", *,
               tags: Union[Tag, str, Iterable[Union[Tag, str]]] = ()) -> str:
        """Define an operator of this namespace; returns its name without the
        namespace and the overload, as torch.library does.  ``tags`` (a tag
        name or several) are kept for ``tags_of`` and the overload's ``tags``.
        """
        if alias_analysis not in _ALIAS_ANALYSIS_KINDS:
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_open()
        names = () if type(tags) is tuple and not tags else tag_names(tags)  # most defines give none
        parsed = parse_operator_schema(schema) if isinstance(schema, str) else schema
        if not isinstance(parsed, FunctionSchema):
            raise TypeError(f"define() takes a schema string or FunctionSchema, got {type(schema).__name__}")
        name = self._def(parsed, alias_analysis or "FROM_SCHEMA", tags=names)
        self._tags[name] = names
        text = f"{name.name}.{name.overload_name}" if name.overload_name else name.name
        self._qualified_names[text] = name  # impl() is usually given it next
        # torch 2.13 records the name as the schema text writes it, after the
        # namespace: "ns::ns::f" for a schema "ns::f(...)" (a later torch drops the
        # repeated namespace; torch.library._defs and _defined_in_python read this).
        qualname = f"{self.ns}::{schema.partition('(')[0] if isinstance(schema, str) else text}"
        self._op_defs.add(qualname)
        _defs.add(qualname)
        return name.name

    def tags_of(self, name: str) -> tuple[str, ...]:
        """The tags ``define`` gave operator ``name`` (as ``define`` returned it,
        or qualified); KeyError if this library did not define it."""
        op = self._name_for_impl(name)
        try:
            return self._tags[op]
        except KeyError:
            raise KeyError(f"{op} was not defined by this library ({self!r})") from None

    def impl(
        self,
        op_name: Union[str, Any],
        fn: Callable[..., Any],
        dispatch_key: KeyArg = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = True,
        boxed: bool = False,
        debug: Optional[str] = None,
    ) -> None:
        """Register ``fn`` as the kernel of operator ``op_name`` (a name, with
        its overload, or an operator handle: ``ops.ns.f.default``) for
        ``dispatch_key`` (a DispatchKey or its name).

        No key (here and on the library) means CompositeImplicitAutograd, as
        in PyTorch.  ``with_keyset=True`` kernels are called as
        ``fn(keyset, *args, **kwargs)``; ``boxed=True`` ones (ours, not
        torch's) as ``fn(op, keyset, stack)``.  ``fn`` may be
        ``fallthrough_kernel``.  A kernel already registered for the key is
        overridden (with a warning) unless ``allow_override=False``.
        ``debug`` replaces the ``registered at FILE:LINE`` dumps show.
        """
        # The common case (a name, a plain callable, a key's name parsed
        # before) without the helpers' calls: registration is timed beside torch's.
        name = op_name if type(op_name) is str else _resolve_op_name(op_name, "impl")
        if boxed or fn is fallthrough_kernel or not callable(fn):
            # The other kinds, and the errors.
            kernel = AnnotatedKernel(make_kernel(fn, with_keyset=with_keyset, boxed=boxed), debug or self._default_debug())
        else:
            kernel = annotated_kernel(_WITH_KEYSET if with_keyset else _UNBOXED, fn, debug or (
                self._fixed_site if self._fixed_site is not None else registration_site_later(1)))
        parsed = _PARSED_KEY_NAMES.get(dispatch_key, _UNPARSED) if type(dispatch_key) is str else _UNPARSED
        key: Optional[DispatchKey] = _parse_key(dispatch_key) if parsed is _UNPARSED else parsed
        target = key if key is not None else self.dispatch_key or DispatchKey.CompositeImplicitAutograd
        if not allow_override or target == _META:
            op = self._name_for_impl(name)
            existing = self._registry.find_op(str(op))
            if not allow_override and existing is not None and existing.kernel_for(target) is not None:
                raise RuntimeError(
                    "This is not allowed since there's already a kernel registered from python overriding "
                    f"{str(op).partition('::')[2]}'s behavior for {target} dispatch key and {self.ns} namespace."
                )
            if target == DispatchKey.Meta and existing is not None and existing.kernel_for(DispatchKey.CompositeImplicitAutograd):
                # torch.library's rule: such an operator decomposes, and its parts have the meta kernels.
                raise RuntimeError(
                    f"We should not register a meta kernel directly to the operator '{name}', because it has a "
                    "CompositeImplicitAutograd kernel in core. Instead we should let the operator decompose, and "
                    "ensure that we have meta kernels for the base ops that it decomposes into."
                )
        self._impl(name, key, kernel)
        # As torch.library's key: the dispatch key as given, else the library's.
        given = dispatch_key if isinstance(dispatch_key, str) else dispatch_key.name
        if not given and self.dispatch_key is not None:
            given = self.dispatch_key.name
        registered = f"{self.ns}/{name.rpartition('::')[2]}/{given}"
        self._op_impls.add(registered)
        _impls.add(registered)

    def fallback(self, fn: Callable[..., Any], dispatch_key: KeyArg = "", *, with_keyset: bool = False,
                 boxed: bool = False, debug: Optional[str] = None) -> None:
        """Register ``fn`` as the backend fallback of ``dispatch_key`` (default:
        the library's key): what every operator without a kernel of its own
        there runs.  Only in a library of the wildcard namespace ``"_"``.

        As torch's: ``fn(op, *args, **kwargs)``, or ``fn(keyset, op, *args,
        **kwargs)`` with ``with_keyset=True``, where ``op`` is the operator's
        handle (an OpOverload), and what ``fn`` returns is the call's result.
        ``boxed=True`` (ours, the engine's own convention, cheaper for a
        fallback that passes values through untouched): ``fn(op, keyset,
        stack)``, which pops the arguments from the stack (an IValue
        ``Stack``) and pushes the results.  ``fn`` may be
        ``fallthrough_kernel``.  An alias key registers the fallback for each
        of its runtime keys.
        """
        if self.ns != WILDCARD_NAMESPACE:
            raise RuntimeError(
                'Fallback can only be registered using library fragment on the global namespace "_" '
                f"but it is {self.ns}"
            )
        kernel = AnnotatedKernel(make_fallback_kernel(fn, with_keyset=with_keyset, boxed=boxed),
                                 debug or self._default_debug())
        self._fallback(_parse_key(dispatch_key), kernel)

    # Note [torch_dispatch rules]
    # torch.library.register_torch_dispatch, as torch 2.13 runs it: where a
    # call of the operator would reach ``__torch_dispatch__`` of a mode, or of
    # a tensor subclass, of exactly that type (not a subclass of it), the rule
    # runs instead, as ``rule(mode, func, types, args, kwargs)`` for a mode and
    # ``rule(cls, func, types, args, kwargs)`` for a tensor type, with the
    # arguments normalized as for ``__torch_dispatch__``.  The engine reads
    # the rules (its TORCH_DISPATCH_RULES); this method is the only writer.
    def _register_torch_dispatch_rule(self, op_name: str, torch_dispatch_class: type,
                                      fn: Callable[..., Any]) -> None:
        """torch.library.Library's: ``fn`` runs instead of ``torch_dispatch_class``'s
        ``__torch_dispatch__`` for operator ``op_name`` (of this library's
        namespace), until this library closes (Note [torch_dispatch rules])."""
        if not isinstance(torch_dispatch_class, type):
            raise TypeError(
                "register_torch_dispatch(op, torch_dispatch_class): torch_dispatch_class must be a tensor "
                f"subclass or a TorchDispatchMode subclass, got {torch_dispatch_class!r}"
            )
        if not callable(fn):
            raise TypeError(f"register_torch_dispatch: the rule must be callable, got {type(fn).__name__}")
        name = str(self._name_for_impl(op_name))
        rules: dict[str, dict[type, Callable[..., Any]]] = self._registry.engine.TORCH_DISPATCH_RULES
        with self._registry.lock:  # Note [A closed library registers nothing]
            self._check_open()
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

            self._python_undos.append(remove)

    # -- the c10 layer (torch::Library) ------------------------------------------------
    def _def(self, schema: FunctionSchema, alias_analysis: str = "FROM_SCHEMA",
             alias_analysis_is_default: bool = False, tags: tuple[str, ...] = ()) -> OperatorName:
        """c10's Library::_def: define ``schema`` (its namespace defaults to the
        library's); returns the qualified operator name."""
        block = _KINDS[self.kind]
        if self.kind == "IMPL":
            raise RuntimeError(
                f'def("{schema.name}"): Cannot define an operator inside of a {block} block.  All def()s '
                f"should be placed in the (unique) TORCH_LIBRARY block for their namespace.  {self._context}"
            )
        name = schema.name
        if name.namespace and name.namespace != self.ns:
            raise RuntimeError(
                f"Explicitly provided namespace ({name.namespace}) in schema string does not match "
                f"namespace of enclosing {block} block ({self.ns}).  Move this definition to the "
                "(unique) TORCH_LIBRARY block corresponding to this namespace (and consider deleting the "
                f"namespace from your schema string.)  {self._context}"
            )
        if not name.namespace:
            name = name.with_namespace(self.ns)
            schema = schema.with_name(name)
        debug = self._default_debug()
        with self._lock:  # Note [A closed library registers nothing]
            if self._closed:
                self._check_open()
            self._handles.append(self._registry.register_def_locked(schema, debug, alias_analysis,
                                                                    alias_analysis_is_default, tags))
        return name

    def _def_with_kernel(self, schema: FunctionSchema, key: Optional[DispatchKey], kernel: AnnotatedKernel,
                         alias_analysis: str) -> None:
        """c10's def(schema or name, CppFunction): the def and its kernel, for
        ``key`` (no key: CompositeImplicitAutograd), both or neither."""
        with self._registry.lock:
            name = self._def(schema, alias_analysis)
            try:
                self._handles.append(
                    self._registry.register_impl(name, key or DispatchKey.CompositeImplicitAutograd, kernel)
                )
            except BaseException:
                self.undo_newest(1)
                raise

    def _impl(self, name: str, key: Optional[DispatchKey], kernel: AnnotatedKernel) -> None:
        """c10's Library::_impl: ``kernel`` for operator ``name`` at ``key``, or
        at the library's key (no key at all: CompositeImplicitAutograd)."""
        op = self._qualified_names.get(name) if type(name) is str else None
        if op is None:
            op = self._name_for_impl(name)
        if key is not None and self.dispatch_key is not None and key != self.dispatch_key:
            block = _KINDS[self.kind]
            raise RuntimeError(
                f'impl("{name}", ...): Explicitly provided dispatch key ({key}) is inconsistent with the '
                f"dispatch key of the enclosing {block} block ({self.dispatch_key}).  Please declare a "
                f"separate {block} block for this dispatch key and move your impl() there.  {self._context}"
            )
        if key is None:
            key = self.dispatch_key if self.dispatch_key is not None else DispatchKey.CompositeImplicitAutograd
        with self._lock:  # Note [A closed library registers nothing]
            if self._closed:
                self._check_open()
            self._handles.append(self._registry.register_impl_locked(op, key, kernel))

    def _name_for_impl(self, name: str) -> OperatorName:
        """c10's Library::_parseNameForLib: the name, qualified with the library's
        namespace, which an explicit namespace must match."""
        if not isinstance(name, str):
            raise TypeError(f"an operator name must be a str, got {type(name).__name__}")
        qualified = self._qualified_names.get(name)
        if qualified is None:
            qualified = self._qualified_names[name] = self._qualify(name)
        return qualified

    def _qualify(self, name: str) -> OperatorName:
        op = OperatorName.parse(name)
        block = _KINDS[self.kind]
        wildcard = self.ns == WILDCARD_NAMESPACE
        if op.namespace and (wildcard or op.namespace != self.ns):
            # c10 prints the wildcard library's empty namespace as std::nullopt.
            ns = "std::nullopt" if wildcard else self.ns
            raise RuntimeError(
                f'impl("{name}", ...): Explicitly provided namespace ({op.namespace}) in operator name does '
                f"not match namespace of enclosing {block} block ({ns}).  Move this definition to the "
                f"{block} block corresponding to this namespace (and consider deleting the namespace from "
                f"your schema string.)  {self._context}"
            )
        if wildcard:
            # c10 dereferences the missing namespace here and crashes.
            raise RuntimeError(
                f'impl("{name}", ...): a {block} block of the wildcard namespace _ registers only '
                f"fallbacks; register kernels in a block of the operator's namespace.  {self._context}"
            )
        return op if op.namespace else op.with_namespace(self.ns)

    def _fallback(self, key: Optional[DispatchKey], kernel: AnnotatedKernel) -> None:
        """c10's Library::_fallback: ``kernel`` as the backend fallback of every
        runtime key of ``key`` (default: the library's key).  A per-backend
        functionality key without a backend (Dense) has none: nothing happens."""
        block = _KINDS[self.kind]
        if self.kind != "IMPL":
            raise RuntimeError(
                f"fallback(...): Cannot define an operator inside of a {block} block.  Did you mean to "
                f"call this function inside a TORCH_LIBRARY_IMPL block?  {self._context}"
            )
        key = key if key is not None else self.dispatch_key
        if key is None:
            # c10 asserts here; say what is wrong instead.
            raise RuntimeError(
                "fallback(...): no dispatch key: a fallback needs one, given to fallback() or to the "
                f"{block} block.  {self._context}"
            )
        if self.ns != WILDCARD_NAMESPACE:
            raise RuntimeError(
                "fallback(...): Fallback functions which apply to only a single namespace (you specified "
                f"{self.ns}) are not supported.  If you intended to apply this fallback function globally, "
                f"please define a separate block:\n\n    TORCH_LIBRARY_IMPL(_, {key}, m) {{ m.fallback(...); }}"
                f"\n\n{self._context}"
            )
        keys = list(get_runtime_dispatch_key_set(key))
        with self._registry.defer():  # each operator is refreshed once, for all the keys
            self._check_open()  # Note [A closed library registers nothing]
            # All or nothing: check every slot before registering any.  (c10
            # registers key by key and keeps the ones before a failure.)
            for k in keys:
                self._registry.check_fallback(k, kernel)
            for k in keys:
                self._handles.append(self._registry.register_fallback(k, kernel))

    # -- lifetime ------------------------------------------------------------------
    # Note [A closed library registers nothing]
    # As torch's, a closed library refuses every registration ("Library
    # object has been destroyed").  A registration tests that and keeps its
    # handle under the registry's lock, which close() also holds, so that one
    # racing a close() on another thread either comes first and is removed
    # with the rest, or comes after and is refused: never registered and lost.
    def _check_open(self) -> None:
        if self._closed:
            raise AssertionError("Library object has been destroyed")

    def undo_newest(self, count: int) -> None:
        """Remove the ``count`` newest registrations of this library (a caller's
        rollback of a step that registers several things)."""
        with self._registry.lock:
            handles = self._handles[len(self._handles) - count:]
            del self._handles[len(self._handles) - count:]
            self._registry.undo(handles)

    def close(self) -> None:
        """Remove everything this library registered (newest first); idempotent.
        The library refuses registrations from then on."""
        with self._registry.lock:
            self._closed = True
            self._reset()

    def _reset(self) -> None:
        """Remove everything this library registered, and stay open (c10's
        Library::reset, the compat shim's ``reset()``)."""
        with self._registry.lock:
            handles, self._handles = self._handles, []
            undos, self._python_undos = self._python_undos, []
            self._tags = {}
            for undo in reversed(undos):
                undo()
            self._registry.undo(handles)
            forget: Any = self._records_ref.__callback__
            if forget is not None:
                forget(None)  # (not the ref: it stays until the library is collected)

    _destroy = close

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handles", None) or getattr(self, "_python_undos", None):
            self.close()


def _check_namespace(ns: object) -> None:
    # What an operator name's namespace may be (schema.py's grammar): the
    # parser would reject every define of any other namespace.
    if not isinstance(ns, str) or not (ns == WILDCARD_NAMESPACE or _IDENT.match(ns)):
        raise DispatcherValueError(
            f"a library namespace must be an identifier (ASCII letters, digits and underscores, "
            f"not starting with a digit) or '_', got {ns!r}"
        )


# Libraries created by the module functions live as long as the process, as
# torch.library's do (they are kept here so garbage collection keeps them).
_DECORATOR_LIBRARIES: list[Library] = []


def _parse_qualname(qualname: object) -> tuple[str, str]:
    """torch.library's parse_namespace: ``"ns::name"`` -> ("ns", "name")."""
    if not isinstance(qualname, str):
        raise TypeError(f"expected a qualified operator name 'namespace::name' (a str), got {type(qualname).__name__}")
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(
            f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname passed to '
            "the dispatcher.library APIs must consist of a namespace and a name, e.g. aten::sin"
        )
    return splits[0], splits[1]


def _library_for(namespace: str, lib: Optional[Library]) -> Library:
    """``lib``, or a FRAGMENT library of ``namespace`` kept for the process."""
    if lib is not None:
        if not isinstance(lib, Library):
            raise TypeError(f"lib must be a dispatcher.Library, got {type(lib).__name__}")
        return lib
    library = Library(namespace, "FRAGMENT")
    _DECORATOR_LIBRARIES.append(library)
    return library


def _resolve_op_name(op_name: object, api_name: str) -> str:
    """An operator name given as a str or an operator handle (torch's OpOverload)."""
    if isinstance(op_name, str):
        return op_name
    if any(isinstance(op_name, engine.OperatorHandle) for engine in loaded_engines()):
        return op_name.name()  # type: ignore[attr-defined, no-any-return]
    # A packet's class is named for it (Note [A packet's class names it]): torch's
    # message names the packet type, OverloadPacket here.
    shown = next((engine.OverloadPacket for engine in loaded_engines() if isinstance(op_name, engine.OverloadPacket)),
                 type(op_name))
    raise DispatcherTypeError(
        f"{api_name} should be passed either a name or an OpOverload object as the first argument, got {shown}"
    )


_NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


@functools.singledispatch
def define(qualname: Union[str, Library], schema: str, *, lib: Optional[Library] = None,
           tags: Union[Tag, str, Iterable[Union[Tag, str]]] = ()) -> Any:
    """Define the operator ``qualname`` ("namespace::name") with ``schema``, the
    part after the name (``"(Tensor x) -> Tensor"``), as torch.library.define:
    in ``lib``, or in a FRAGMENT library kept for the process.  ``tags``: tag
    names or Tags.

    ``define(lib, "name(Tensor x) -> Tensor", alias_analysis="")`` is
    torch's older form: a decorator that defines the operator in ``lib`` and
    registers the decorated function as its CompositeImplicitAutograd kernel.
    (Both forms are one function by the type of the first argument, as
    torch's: functools.singledispatch.)
    """
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    namespace, name = _parse_qualname(qualname)
    if not isinstance(schema, str) or not _NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(
            f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" but got "{schema}"'
        )
    _library_for(namespace, lib).define(name + schema, alias_analysis="", tags=tags)


@define.register
def _define_decorator(lib: Library, schema: str, alias_analysis: str = "") -> Callable[[_F], _F]:
    def wrap(f: _F) -> _F:
        name = lib.define(schema, alias_analysis)
        lib.impl(name, f)
        return f

    return wrap


DeviceTypes = Union[str, Sequence[str]]


@functools.singledispatch
def impl(qualname: Union[str, Library], types: DeviceTypes, func: Optional[Callable[..., Any]] = None, *,
         lib: Optional[Library] = None) -> Any:
    """Register an implementation of the operator ``qualname`` ("namespace::name",
    with an overload: "ns::f.out") for device types, as torch.library.impl.

    ``types``: a device type ("cpu", "cuda", the renamed PrivateUse1
    backend's name, ...; its dispatch key is ``dispatch_key_for_device``'s),
    ``"default"`` (CompositeExplicitAutograd: every device type), a dispatch
    key's name ("CPU", "AutogradCUDA"; torch allows these too), or a
    sequence of these.  With ``func`` it registers ``func``; without, it is
    a decorator (which returns the function; torch's returns None).  The
    registrations belong to ``lib``, else to a library kept for the process.

    ``impl(lib, name, dispatch_key="")`` is torch's older form: a decorator
    registering the function in ``lib`` as ``lib.impl(name, f, dispatch_key)``
    (one function by the first argument's type, as torch's: singledispatch).
    """
    if not isinstance(qualname, str):
        raise TypeError(f"impl(qualname, types): expected qualname to be a str 'namespace::name' or a Library, "
                        f"got {type(qualname).__name__}")
    namespace, _ = _parse_qualname(qualname)
    keys = keys_for_types(types)  # every type checked before anything is registered

    def register(f: _F) -> _F:
        use_lib = _library_for(namespace, lib)
        for key in keys:
            use_lib.impl(qualname, f, key)
        return f

    if func is None:
        return register
    register(func)
    return None


@impl.register
def _impl_decorator(lib: Library, name: str, dispatch_key: KeyArg = "") -> Callable[[_F], _F]:
    def wrap(f: _F) -> _F:
        lib.impl(name, f, dispatch_key)
        return f

    return wrap


def keys_for_types(types: DeviceTypes) -> list[DispatchKey]:
    """The dispatch keys of torch.library.impl's ``types``: each a dispatch key's
    name, "default" (CompositeExplicitAutograd) or a device type (its key,
    as dispatch_key_for_device gives it); duplicates once, in order."""
    if isinstance(types, str):
        types = (types,)
    try:
        listed = list(types)
    except TypeError:
        raise TypeError(
            f"types must be a device type such as 'cpu', a dispatch key name, or a sequence of these; got "
            f"{type(types).__name__}"
        ) from None
    keys: dict[DispatchKey, None] = {}
    for typ in listed:
        if not isinstance(typ, str):
            raise TypeError(f"a device type is a str such as 'cpu', got {type(typ).__name__}")
        key = DispatchKey.__members__.get(typ)  # torch's parser: canonical names only
        if key is None:
            key = DispatchKey.CompositeExplicitAutograd if typ == "default" else dispatch_key_for_device(typ)
        keys[key] = None
    return list(keys)
