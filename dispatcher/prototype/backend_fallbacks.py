"""Installing the prototype's backend fallbacks, and taking them out again.

A backend fallback serves every operator of the process, not only the
prototype's: the vmap loop (FuncTorchBatched), the ZeroTensor, Negative and
Conjugate fallbacks (zero_tensors.py, math_bits.py), torch's error for Meta
tensors reaching no Meta kernel (meta_fallback.py) and, once the toy device is
enabled (toy_device.enable_toy_device), its CPU fallback (PrivateUse1).  So
importing dispatcher.prototype installs neither: ``install()`` does,
``uninstall()`` takes them out, and ``with installed():`` keeps them for a
block, which a program sharing the dispatcher with other users of those keys
(a test suite, say) wants.  The prototype's other registrations are kernels
of aten operators at the keys its own tensors carry (see __init__.py).
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

from dispatcher import Library

from .toy_device import is_toy_device_enabled, set_fallbacks_installed, use_cpu_fallback
from .vmap import batched_fallback
from .math_bits import conjugate_fallback, negative_fallback
from .meta_fallback import meta_fallback
from .zero_tensors import zero_tensor_fallback

__all__ = ["install", "installed", "is_installed", "uninstall"]

_library: Optional[Library] = None


def install() -> None:
    """Register the FuncTorchBatched, ZeroTensor, Negative, Conjugate and Meta fallbacks,
    and the PrivateUse1 one if the toy device is enabled (idempotent)."""
    global _library
    if _library is not None:
        return
    library = Library("_", "IMPL")
    # The engine's IValue stack: fn(op, keyset, stack).
    library.fallback(batched_fallback, "FuncTorchBatched", boxed=True)
    # ZeroTensors' arguments materialized as zeros (zero_tensors.py).
    library.fallback(zero_tensor_fallback, "ZeroTensor", with_keyset=True)
    # Negative and conjugate views' arguments materialized (math_bits.py).
    library.fallback(negative_fallback, "Negative", with_keyset=True)
    library.fallback(conjugate_fallback, "Conjugate", with_keyset=True)
    # An operator without a Meta kernel refuses Meta tensors in torch's words.
    library.fallback(meta_fallback, "Meta", boxed=True)
    if is_toy_device_enabled():
        try:
            use_cpu_fallback()
        except BaseException:
            library.close()
            raise
    _library = library
    set_fallbacks_installed(True)


def uninstall() -> None:
    """Remove them (idempotent); the toy device's selective fallbacks go too."""
    global _library
    if _library is not None:
        _library.close()
        _library = None
    set_fallbacks_installed(False)
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
