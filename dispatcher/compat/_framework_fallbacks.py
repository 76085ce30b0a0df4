"""torch 2.13's framework backend fallbacks, as its dump tables print them.

This package registers its standard fallbacks at import
(dispatcher/standard_fallbacks.py) on the keys where torch's framework has
one, with debug texts of its own.  Code that compares ``_dispatch_dump_table``
with torch's (PyTorch's own tests do) needs torch's lines for them:
``registered at /__w/pytorch/pytorch/<file>:<line> [backend fallback]``,
with ``fallthrough`` before it for torch's fallthroughs.  Recorded with torch
(tests/golden/registration_golden.json's ``framework_fallbacks``; the test
tests/test_compat_texts.py keeps the two equal).
"""
from __future__ import annotations

__all__ = ["TORCH_FALLBACK_SOURCES", "torch_fallback_line"]

# Key name -> (whether torch's fallback is a fallthrough, its source file:line).
TORCH_FALLBACK_SOURCES: dict[str, tuple[bool, str]] = {
    "BackendSelect": (True, "aten/src/ATen/core/BackendSelectFallbackKernel.cpp:3"),
    "ADInplaceOrView": (True, "aten/src/ATen/core/VariableFallbackKernel.cpp:103"),
    "AutogradOther": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:62"),
    "AutogradCPU": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:66"),
    "AutogradCUDA": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:74"),
    "AutogradXLA": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:86"),
    "AutogradMPS": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:94"),
    "AutogradXPU": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:70"),
    "AutogradHPU": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:107"),
    "AutogradLazy": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:90"),
    "AutogradMTIA": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:78"),
    "AutogradMAIA": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:82"),
    "AutogradPrivateUse1": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:111"),
    "AutogradMeta": (False, "aten/src/ATen/core/VariableFallbackKernel.cpp:98"),
    "AutocastCPU": (True, "aten/src/ATen/autocast_mode.cpp:330"),
    "AutocastMTIA": (True, "aten/src/ATen/autocast_mode.cpp:472"),
    "AutocastMAIA": (True, "aten/src/ATen/autocast_mode.cpp:510"),
    "AutocastXPU": (True, "aten/src/ATen/autocast_mode.cpp:548"),
    "AutocastMPS": (True, "aten/src/ATen/autocast_mode.cpp:221"),
    "AutocastCUDA": (True, "aten/src/ATen/autocast_mode.cpp:177"),
    "FuncTorchVmapMode": (True, "aten/src/ATen/functorch/VmapModeRegistrations.cpp:22"),
    "VmapMode": (True, "aten/src/ATen/VmapModeRegistrations.cpp:32"),
    "Python": (False, "aten/src/ATen/core/PythonFallbackKernel.cpp:192"),
    "PythonTLSSnapshot": (False, "aten/src/ATen/core/PythonFallbackKernel.cpp:200"),
    "PythonDispatcher": (False, "aten/src/ATen/core/PythonFallbackKernel.cpp:196"),
}


def torch_fallback_line(key_name: str) -> str:
    """torch's dump-table line for its framework fallback of ``key_name``."""
    fallthrough, source = TORCH_FALLBACK_SOURCES[key_name]
    kind = "fallthrough " if fallthrough else ""
    return f"{key_name}: {kind}registered at /__w/pytorch/pytorch/{source} [backend fallback]"
