"""Installing the prototype's backend fallbacks, and taking them out again.

A backend fallback serves every operator of the process, not only the
prototype's: the vmap loop (FuncTorchBatched), the tracer (Tracer) and the
toy device's CPU fallback (PrivateUse1).  Importing dispatcher.prototype
installs them; a program that shares the dispatcher with other users of
those keys (a test suite, say) can ``uninstall()`` them, or keep them only
``with installed():``.  The prototype's other registrations are kernels of
its own ``proto`` operators, which concern no one else.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

from dispatcher import Library

from .toy_device import use_cpu_fallback
from .tracing import tracer_fallback
from .vmap import batched_fallback

__all__ = ["install", "installed", "is_installed", "uninstall"]

_library: Optional[Library] = None


def install() -> None:
    """Register the FuncTorchBatched, Tracer and PrivateUse1 fallbacks (idempotent)."""
    global _library
    if _library is not None:
        return
    library = Library("_", "IMPL")
    library.fallback(batched_fallback, "FuncTorchBatched", with_keyset=True)
    library.fallback(tracer_fallback, "Tracer", with_keyset=True)
    use_cpu_fallback()
    _library = library


def uninstall() -> None:
    """Remove them (idempotent); the toy device's selective fallbacks go too."""
    global _library
    if _library is not None:
        _library.close()
        _library = None
    use_cpu_fallback([])


def is_installed() -> bool:
    return _library is not None


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Install the fallbacks for the duration of a ``with`` block, if they are not already."""
    if is_installed():
        yield
        return
    install()
    try:
        yield
    finally:
        uninstall()
