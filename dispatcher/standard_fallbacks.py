"""The backend fallbacks every process starts with, as PyTorch's framework registers.

Fallthroughs, so calls skip these keys unless an operator has a kernel there:
BackendSelect and ADInplaceOrView (included in every call by the default TLS),
AutogradOther and every Autograd<backend> key, the Autocast keys PyTorch
covers, VmapMode and FuncTorchVmapMode.  And the two fallbacks of the Python
key, which call ``__torch_dispatch__`` handlers (Note [The Python key] in
dispatcher/_engine/core.py): Python and PythonTLSSnapshot, the engine's
own WITH_OPERATOR kernels; and PythonDispatcher's, torch's Python dispatcher
(dispatcher/python_dispatcher_key.py), which only calls made while
``_EnablePythonDispatcher`` includes its key reach.

PyTorch 2.13 itself registers its autograd fallbacks as boxed kernels that
redispatch below autograd (and can warn about missing derivative formulas);
without autograd state of our own a fallthrough routes the same way and keeps
the call path short.  Tests that compare dumps with PyTorch's swap in
PyTorch's exact set with ``remove_standard_fallbacks``.
"""
from __future__ import annotations

from typing import Optional

from ._kernel_kind import KernelKind
from .kernel import AnnotatedKernel, Kernel, fallthrough_kernel
from .keys import BackendComponent, DispatchKey
from ._library import Library
from .python_dispatcher_key import python_dispatcher_fallback
from .registry import Dispatcher, default_registry

STANDARD_FALLTHROUGH_KEYS: tuple[DispatchKey, ...] = (
    DispatchKey.BackendSelect,
    DispatchKey.ADInplaceOrView,
    DispatchKey.AutogradOther,
    *(
        DispatchKey["Autograd" + b.name[: -len("Bit")]]
        for b in BackendComponent
        if b != BackendComponent.InvalidBit
    ),
    DispatchKey.AutocastCPU,
    DispatchKey.AutocastMTIA,
    DispatchKey.AutocastMAIA,
    DispatchKey.AutocastXPU,
    DispatchKey.AutocastMPS,
    DispatchKey.AutocastCUDA,
    DispatchKey.FuncTorchVmapMode,
    DispatchKey.VmapMode,
)

# Every standard fallback's debug text starts with this (PythonDispatcher
# hides these texts, as torch's hides its framework fallbacks' locations).
STANDARD_FALLBACK_DEBUG = "registered by dispatcher at import"

_library: Optional[Library] = None


def standard_fallbacks_library(registry: Optional[Dispatcher] = None) -> Library:
    """A library registering the standard fallbacks with ``registry``."""
    library = Library("_", "IMPL", registry=registry)
    for key in STANDARD_FALLTHROUGH_KEYS:
        library.fallback(fallthrough_kernel, key, debug=f"{STANDARD_FALLBACK_DEBUG} (standard {key.name} fallthrough)")
    owner = default_registry if registry is None else registry
    engine = owner.engine
    for key, fallback in ((DispatchKey.Python, engine.python_key_fallback),
                          (DispatchKey.PythonTLSSnapshot, engine.python_tls_snapshot_fallback),
                          (DispatchKey.PythonDispatcher, python_dispatcher_fallback(owner))):
        kernel = Kernel(KernelKind.WITH_OPERATOR, fallback)
        library._fallback(key, AnnotatedKernel(kernel, f"{STANDARD_FALLBACK_DEBUG} (standard {key.name} fallback)"))
    return library


def install_standard_fallbacks() -> None:
    """Register the standard fallbacks with the package's registry (once)."""
    global _library
    if _library is None:
        _library = standard_fallbacks_library()


def remove_standard_fallbacks() -> None:
    global _library
    if _library is not None:
        _library.close()
        _library = None
