"""Boolean environment variables (``DISPATCHER_*``), read one way everywhere.

Unset, empty, ``0``, ``false``, ``no`` and ``off`` (any case, spaces
around ignored) mean off; ``1``, ``true``, ``yes`` and ``on`` mean on.
Anything else is a mistake: it warns, naming the variable and the accepted
spellings, and counts as on, as any value but ``0`` did before these
spellings were read.  setup.py keeps a copy of these two sets (it cannot
import the package it builds); tests/test_error_hints.py checks they agree.
"""
import os
import warnings

__all__ = ["FALSE_SPELLINGS", "TRUE_SPELLINGS", "env_flag"]

FALSE_SPELLINGS = frozenset({"", "0", "false", "no", "off"})
TRUE_SPELLINGS = frozenset({"1", "true", "yes", "on"})


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is set to an "on" value."""
    value = os.environ.get(name, "").strip().lower()
    if value in FALSE_SPELLINGS:
        return False
    if value not in TRUE_SPELLINGS:
        warnings.warn(f"{name}={os.environ[name]!r} is read as on; write 1/true/yes/on for on, "
                      "or 0/false/no/off (or leave it empty) for off", RuntimeWarning, stacklevel=2)
    return True
