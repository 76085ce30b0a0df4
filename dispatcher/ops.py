"""``dispatcher.ops``: operators by attribute, like ``torch.ops``.

``ops.ns.name.overload`` (``.default`` for the unnamed overload) is the
operator's ``OperatorHandle`` itself, so calling it is the compiled fast
path.  ``ops.ns.name`` is the engine's ``OverloadPacket``: calling it calls
the first overload, in definition order, whose schema accepts the arguments
(see Note [Overload choice by argument types] in dispatcher/_engine/core.py).

Note [ops at attribute speed]
``ops.ns.name.overload`` written inline is three attribute reads before the
call.  Python reads an attribute of a plain object in a few nanoseconds
(its bytecode specialises the read), but a class with ``__getattr__`` loses
that: every read goes through the slow generic path (~40 ns here).  So
nothing on the way has ``__getattr__``: the registry tells an
``OpNamespaces`` whenever the overloads of a name change, and it sets or
deletes the namespace and packet attributes then.  The packet keeps its
overloads as instance attributes the same way.  Unknown names are plain
AttributeErrors; each user namespace has a class of its own, named
``ops.<ns>``, so that they say which namespace ("'ops.myns' object has no
attribute 'nope'"), and Python's traceback adds the nearest names.

The namespaces of the registry's operator catalog (``ops.aten``, ...) are the
exception: their operators are defined on first use (Note [Catalog operators
are defined on first use] in registry.py), so their class has a
``__getattr__`` that asks the registry for a name not seen yet.  It gets the
operator's packet before anything is defined (Note [Packets of operators not
defined yet] in dispatcher/_engine/core.py), which it keeps as a plain
attribute like any other; the packet defines the operator's overloads when
something first needs them.  Only the namespace read itself pays for the hook.
"""
from __future__ import annotations

import difflib
import functools
import weakref
from typing import TYPE_CHECKING, Any, Iterator

from .packet_matching import packet_arguments
from .registry import Dispatcher
from .registry import default_registry

__all__ = ["CatalogNamespace", "OpNamespace", "OpNamespaces", "forget_namespace", "namespace", "ops"]


class OpNamespace:
    """``ops.ns``: the packets of one namespace, as attributes (see Note [ops at attribute speed])."""

    # The name in a mangled slot: no operator is called _OpNamespace__name.
    __slots__ = ("__dict__", "__name")

    def __init__(self, name: str) -> None:
        self.__name = name

    def __repr__(self) -> str:
        return f"<ops.{self.__name}>"

    @property
    def _dir(self) -> list[str]:
        """The names of the namespace's packets, as torch's ``_OpNamespace._dir``
        lists the packets it has cached: here every packet is an attribute from
        its definition on, and goes when its last overload does."""
        return list(vars(self))

    def __iter__(self) -> Iterator[str]:
        """The packets' names, as iterating torch's namespace gives them."""
        return iter(self._dir)

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...


# Note [__getattr__ of a user namespace]
# torch's namespaces bind a packet in ``__getattr__`` on its first read, and
# code written for torch reads (and patches) ``type(torch.ops.ns).__getattr__``.
# Here a namespace's packets are attributes from their definition on (Note [ops
# at attribute speed]), so ``__getattr__`` would only run for a name that is not
# an operator, and a class defining one reads every attribute on Python's slow
# path (about 70 ns a read instead of 13).  So the user namespaces' classes have
# none of their own: their metaclass has it, which makes ``type(ns).__getattr__``
# a method bound to the class, called as torch's is, ``(namespace, name)``: what
# reading a name the namespace has no packet of does.  Python itself calls it
# with ``(name)`` alone for a name the class has not.  Code that sets it on the
# class (as torch's tests do, to watch it) gets the hook for that class.
class _NamespaceClass(type):
    """The metaclass of the user namespaces' classes (``ops.<ns>``)."""

    def __getattr__(cls, *args: Any) -> Any:
        if len(args) == 1:  # Python's hook: ``type(ns).<name>`` the class has not
            name = args[0]
            raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}", name=name, obj=cls)
        namespace, name = args  # type(ns).__getattr__(ns, name), as torch's is called
        raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}", name=name, obj=namespace)


class _UnreadNamespace(OpNamespace):
    """A user namespace before ``ops.<ns>`` is first read: it holds its packets
    until then (Note [Namespace classes on first read])."""

    __slots__ = ()


# Note [Namespace classes on first read]
# Each user namespace has a class of its own, ``ops.<ns>``, for its
# AttributeError's wording (Note [ops at attribute speed]), and making a
# class costs about 6 µs, a third of a define in a fresh namespace.  So a
# new namespace's packets go to an _UnreadNamespace, and its name is a
# _NamespaceOnFirstRead on the OpNamespaces' own class (each has one, made
# with it).  The first read of ``ops.<ns>`` makes the namespace object of
# its own class, moves the packets there, sets it as an attribute of the
# instance (where later reads find it at attribute speed) and takes the
# descriptor off the class.  Nothing else hands out a namespace object
# before that read.  The object is made anew rather than given its class
# by assigning ``__class__``, and set with setattr rather than through the
# instance's ``__dict__``: either turns the object's attribute values into
# a dict of their own, whose reads Python 3.11 does not specialise (25 ns
# instead of 10 per read).
class _NamespaceOnFirstRead:
    """``ops.<ns>`` until its first read (a non-data descriptor: once the
    instance has the attribute, Python reads that)."""

    __slots__ = ("name", "watcher")

    def __init__(self, name: str, watcher: _Watcher) -> None:
        self.name = name
        self.watcher = watcher

    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return self.watcher.first_read(self.name)


class CatalogNamespace(OpNamespace):
    """``ops.aten`` and the other catalog namespaces: an unknown name is
    looked up in the registry's catalog, which defines it."""

    __slots__ = ("_registry",)

    def __init__(self, name: str, registry: Dispatcher) -> None:
        super().__init__(name)
        self._registry = registry

    def __getattr__(self, name: str) -> Any:
        # Only for a name not yet an attribute; the registry's watcher sets it
        # while the catalog defines the operator.
        namespace = self._OpNamespace__name
        # Defined when first needed (Note [Packets of operators not defined yet]
        # in dispatcher/_engine/core.py); aten has dunder operators: __and__.
        packet = self._registry.catalog_packet(f"{namespace}::{name}")
        if packet is not None:
            # Read at attribute speed from now on; the registry's watcher sets
            # the same packet again once its overloads are defined.
            setattr(self, name, packet)
            return packet
        if name.startswith("__") and name.endswith("__"):  # copy, pickle and inspect probe for these
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")
        raise AttributeError(_no_operator(namespace, name, self._registry), name=name, obj=self)


def _no_operator(namespace: str, name: str, registry: Dispatcher) -> str:
    """What ``ops.<namespace>.<name>`` says when there is no such operator:
    the namespace, and the nearest names it has."""
    prefix = f"{namespace}::"
    known = {q[len(prefix):] for q in registry.packet_names() if q.startswith(prefix)}
    if registry.catalog is not None:
        known.update(q[len(prefix):] for q in registry.catalog.names() if q.startswith(prefix))
    nearest = difflib.get_close_matches(name, sorted(known), n=3)
    hint = f"; did you mean {', '.join(nearest)}?" if nearest else ""
    return f"no operator named {name!r} in namespace dispatcher.ops.{namespace} ({namespace}::{name} is not defined){hint}"


class OpNamespaces:
    """``ops``: a registry's operators as ``ops.ns.name.overload``.

    Its only attributes are the namespaces (the watcher that keeps them is
    an object of its own), so no namespace name can shadow a method.
    """

    def __new__(cls, registry: Dispatcher) -> OpNamespaces:
        # Of a class of its own, which holds the namespaces not read yet (Note
        # [Namespace classes on first read]), still named as this one; made
        # here rather than by assigning __class__, which would turn the
        # instance's attribute values into a dict of their own.
        own = type(cls.__name__, (cls,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
        instance: OpNamespaces = object.__new__(own)
        return instance

    def __init__(self, registry: Dispatcher) -> None:
        _install_packet_rules(registry.engine)
        watcher = _WATCHERS[self] = _Watcher(self, registry)
        if registry.catalog is not None:
            for ns in registry.catalog.namespaces:
                watcher.add_namespace(ns, CatalogNamespace(ns, registry))
        registry.watch_overloads(watcher.update)
        for qualified_name in registry.packet_names():
            watcher.update(qualified_name, registry.packet(qualified_name))

    def __repr__(self) -> str:
        return "<dispatcher.ops>"

    if TYPE_CHECKING:
        def __getattr__(self, ns: str) -> OpNamespace: ...


# Each OpNamespaces' watcher, for namespace() and forget_namespace().
_WATCHERS: "weakref.WeakKeyDictionary[OpNamespaces, _Watcher]" = weakref.WeakKeyDictionary()


def namespace(name: str, of: "OpNamespaces | None" = None) -> OpNamespace:
    """``ops.<name>`` as ``torch.ops.<name>`` gives it for any name: the
    namespace, made (empty) if nothing defined an operator in it yet; the
    operators defined in it later appear on this same object.  (``ops.<name>``
    itself stays a plain attribute read, an AttributeError for a namespace
    that does not exist: see Note [ops at attribute speed].)"""
    watcher = _WATCHERS[ops if of is None else of]
    if not name.isidentifier() or name.startswith("__"):
        raise ValueError(f"an operator namespace is an identifier not starting with '__', not {name!r}")
    found = watcher.by_name.get(name)
    if found is None:
        return watcher.add_namespace(name, _own_class_namespace(name))
    # Note [Namespace classes on first read]: this is a read of ops.<name>.
    return watcher.first_read(name) if type(found) is _UnreadNamespace else found


def forget_namespace(name: str, of: "OpNamespaces | None" = None) -> None:
    """``del torch.ops.<name>``: an empty namespace is dropped (namespace() makes
    a new one); one that has operators stays, as their packets live in it."""
    watcher = _WATCHERS[ops if of is None else of]
    found = watcher.by_name.get(name)
    if found is None:
        raise AttributeError(f"no operator namespace {name!r} to delete")
    if not vars(found) and not isinstance(found, CatalogNamespace):
        del watcher.by_name[name]
        delattr(watcher.namespaces, name)


# The engines whose packets choose overloads by torch's packet rules (dispatcher/packet_matching.py).
_ENGINES_WITH_PACKET_RULES: set[int] = set()


def _install_packet_rules(engine: Any) -> None:
    if id(engine) not in _ENGINES_WITH_PACKET_RULES:
        engine.set_packet_argument_rules(functools.partial(packet_arguments, tensor_type=engine.TensorBase))
        _ENGINES_WITH_PACKET_RULES.add(id(engine))


def _own_class_namespace(ns: str) -> OpNamespace:
    """A user namespace's object, of a class of its own named ``ops.<ns>``."""
    namespace: OpNamespace = _NamespaceClass(f"ops.{ns}", (OpNamespace,), {"__slots__": ()})(ns)
    return namespace


class _Watcher:
    """Makes ``ops.ns.name`` match the registry after the overloads of
    ``ns::name`` change.  Everything it uses hangs off the object, not this
    module's globals: a library closed at interpreter exit calls it after
    those are cleared."""

    def __init__(self, namespaces: OpNamespaces, registry: Dispatcher) -> None:
        self.namespaces = namespaces
        self.registry = registry
        # What it has set, so that it never looks up an attribute that may be
        # missing (a miss raises and catches an AttributeError: slow), nor
        # reads an instance's __dict__ (which Python 3.11 then reads more slowly).
        self.by_name: dict[str, OpNamespace] = {}
        # ns::name -> the namespace and the name it set there.
        self.published: dict[str, tuple[OpNamespace, str]] = {}

    def add_namespace(self, ns: str, namespace: OpNamespace) -> OpNamespace:
        self.by_name[ns] = namespace
        setattr(self.namespaces, ns, namespace)
        return namespace

    def add_unread_namespace(self, ns: str) -> OpNamespace:
        """A user namespace's object, which takes a class of its own named
        ``ops.<ns>`` when ``ops.<ns>`` is first read: an unknown name's
        AttributeError then says which namespace (and Python's traceback
        suggests the nearest names, from the namespace's attributes), without
        a __getattr__ that would slow every read (Note [ops at attribute
        speed], Note [Namespace classes on first read])."""
        if ns.startswith("__"):  # a dunder on the class would be Python's, not a namespace
            return self.add_namespace(ns, _own_class_namespace(ns))
        namespace = self.by_name[ns] = _UnreadNamespace(ns)
        setattr(type(self.namespaces), ns, _NamespaceOnFirstRead(ns, self))
        return namespace

    def first_read(self, ns: str) -> OpNamespace:
        """``ops.<ns>`` read for the first time: its object of its own class,
        made now (Note [Namespace classes on first read])."""
        with self.registry.lock:  # as update(), which runs under it
            unread = self.by_name[ns]
            if type(unread) is not _UnreadNamespace:  # another thread's read made it
                return unread
            namespace = self.by_name[ns] = _own_class_namespace(ns)
            for name, packet in vars(unread).items():
                setattr(namespace, name, packet)
                self.published[f"{ns}::{name}"] = namespace, name
            setattr(self.namespaces, ns, namespace)
            owner = type(self.namespaces)
            if isinstance(owner.__dict__.get(ns), _NamespaceOnFirstRead):
                delattr(owner, ns)
            return namespace

    def update(self, qualified_name: str, packet: Any) -> None:
        """The registry's watcher (a method, not __call__: Python calls it faster)."""
        if packet is None:
            where = self.published.pop(qualified_name, None)
            # A user may have deleted the packet already (``del ops.ns.name``,
            # as torch's tests do to drop torch.ops' cached packets).
            if where is not None and where[1] in vars(where[0]):
                delattr(*where)
            return
        ns, name = qualified_name.split("::", 1)
        namespace = self.by_name.get(ns)
        if namespace is None:
            namespace = self.add_unread_namespace(ns)
        setattr(namespace, name, packet)
        self.published[qualified_name] = namespace, name


ops = OpNamespaces(default_registry)
