"""The exception classes of errors torch raises as RuntimeError.

torch reports nearly every dispatcher error -- a bad call, a bad
registration, a key or device string that does not parse -- as a
``RuntimeError`` (its C++ ``c10::Error``), where Python code would raise
``TypeError`` or ``ValueError``.  Code written for torch catches
``RuntimeError``; code written for Python catches ``TypeError`` or
``ValueError``.  The dispatcher raises these two classes, which are both, so
that either ``except`` clause catches them::

    try:
        ops.myns.f.default(1)
    except RuntimeError:   # as with torch
        ...
    except TypeError:      # as with a Python function
        ...

Errors torch itself raises as ``TypeError``, ``ValueError``,
``NotImplementedError`` (a ``RuntimeError`` already) or ``AttributeError``
stay of those classes.  The module imports nothing: the engine raises these
too.
"""
from __future__ import annotations

__all__ = ["DispatcherTypeError", "DispatcherValueError"]


class DispatcherTypeError(TypeError, RuntimeError):
    """A value of the wrong type, or a call whose arguments do not fit the schema
    (torch: ``RuntimeError``)."""


class DispatcherValueError(ValueError, RuntimeError):
    """A value of the right type that is not acceptable: a key name or device string
    that does not parse, a key that cannot take a registration (torch: ``RuntimeError``)."""
