"""Opaque types: names a schema may use for an argument or return that is any
Python object, as ``torch._C._register_opaque_type`` makes them in torch 2.13.

A registered name (``my_module.MyClass``) parses as the schema type
``PyObject`` and prints so (``foo(PyObject a) -> Tensor``); a call passes any
object for it.  ``PyObject`` itself is no type a schema may spell, and an
unregistered name is torch's "unknown type specifier".  Registering a name
twice is an error; unregistering one not registered does nothing, as in torch.
Operators already defined keep their schemas.

(torch's ``torch.library`` layer over this, ``register_opaque_type(cls, typ=...)``
with its value and reference types, members and guards, is for torch.compile's
tracing of such objects, which this package has not.)
"""
from __future__ import annotations

import threading

from . import schema

__all__ = ["is_opaque_type_registered", "register_opaque_type", "unregister_opaque_type"]

_lock = threading.Lock()
_names: set[str] = set()


def _check_name(name: object, where: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{where}(): an opaque type's name is a str, got {type(name).__name__} {name!r}")
    return name


def register_opaque_type(name: str) -> None:
    """Make ``name`` parse as an opaque type (PyObject) in schemas."""
    _check_name(name, "register_opaque_type")
    with _lock:
        if name in _names:
            raise RuntimeError(f"Type '{name}' is already registered as an opaque type")
        _names.add(name)
        schema._set_opaque_type_names(_names)


def unregister_opaque_type(name: str) -> None:
    """Take ``name`` out of the opaque types (nothing happens if it is not one)."""
    _check_name(name, "unregister_opaque_type")
    with _lock:
        if name in _names:
            _names.discard(name)
            schema._set_opaque_type_names(_names)


def is_opaque_type_registered(name: str) -> bool:
    return _check_name(name, "is_opaque_type_registered") in _names
