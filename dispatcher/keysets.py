"""Named DispatchKeySets and the expansion of alias keys, as in c10.

Mirrors the constants of ``c10/core/DispatchKeySet.h`` and the alias
functions of ``DispatchKeySet.cpp`` (getRuntimeDispatchKeySet,
isIncludedInAlias, getBackendKeySetFromAutograd, ...).  Registration uses
these to fold alias-key kernels into runtime table slots.
"""
from __future__ import annotations

from ._core import DEFAULT_EXCLUDED_SET, DEFAULT_INCLUDED_SET, DispatchKeySet
from ._layout import FULL_BACKEND_MASK
from .keys import (
    BackendComponent,
    DispatchKey,
    KeyLike,
    as_dispatch_key,
    get_autograd_key_from_backend,
    is_alias_key,
    to_functionality_key,
)

K = DispatchKey

__all__ = [
    "AFTER_ADINPLACEORVIEW_KEYSET",
    "AFTER_AUTOGRAD_KEYSET",
    "AFTER_FUNC_KEYSET",
    "AUTOCAST_DISPATCH_KEYSET",
    "AUTOGRADOTHER_BACKENDS",
    "AUTOGRAD_DISPATCH_KEYSET",
    "AUTOGRAD_DISPATCH_KEYSET_WITH_ADINPLACEORVIEW",
    "BACKEND_BITSET_MASK",
    "BACKEND_DISPATCH_KEYSET",
    "DEFAULT_EXCLUDED_SET",
    "DEFAULT_INCLUDED_SET",
    "FUNCTORCH_BATCHED_KEYSET",
    "MATH_DISPATCH_KEYSET",
    "NESTED_DISPATCH_KEYSET",
    "NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET",
    "PYTHON_KEYSET",
    "get_autocast_related_key_set_from_backend",
    "get_autograd_related_key_set_from_backend",
    "get_backend_key_set_from_autograd",
    "get_runtime_dispatch_key_set",
    "is_backend_dispatch_key",
    "is_included_in_alias",
]

# Note [Functionality-only sets]
# Several constants hold a functionality bit with no backend bit (Autograd-
# Functionality alone, Dense alone).  Iterating such a set yields nothing for
# that functionality, but OR-ing it with a tensor's backend bits gives every
# runtime key of it: "all autograd keys" is AUTOGRAD_DISPATCH_KEYSET plus the
# backend mask.  That is why the alias expansions below OR in the mask.
BACKEND_BITSET_MASK = DispatchKeySet.from_raw_repr(FULL_BACKEND_MASK)

AUTOGRAD_DISPATCH_KEYSET = DispatchKeySet([K.AutogradFunctionality, K.AutogradOther, K.AutogradNestedTensor])
AUTOCAST_DISPATCH_KEYSET = DEFAULT_EXCLUDED_SET
AUTOGRAD_DISPATCH_KEYSET_WITH_ADINPLACEORVIEW = AUTOGRAD_DISPATCH_KEYSET | DispatchKeySet(K.ADInplaceOrView)
PYTHON_KEYSET = DispatchKeySet([K.Python, K.PythonTLSSnapshot])
AUTOGRADOTHER_BACKENDS = (
    DispatchKeySet(
        [K.FPGA, K.Vulkan, K.Metal, K.CustomRNGKeyId, K.MkldnnCPU, K.Sparse, K.SparseCsr, K.Quantized]
    )
    | BACKEND_BITSET_MASK
)
AFTER_AUTOGRAD_KEYSET = DispatchKeySet.full_after(K.AutogradOther)
AFTER_ADINPLACEORVIEW_KEYSET = DispatchKeySet.full_after(K.ADInplaceOrView)
AFTER_FUNC_KEYSET = DispatchKeySet.full_after(K.Functionalize).remove(K.ADInplaceOrView)

# CompositeExplicitAutograd's runtime keys: every backend functionality.
BACKEND_DISPATCH_KEYSET = AUTOGRADOTHER_BACKENDS | DispatchKeySet(K.Dense)
# CompositeExplicitAutogradNonFunctional: the same minus the functional
# backends XLA and Lazy (and Sparse), which want whole functional kernels.
NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET = (
    BACKEND_DISPATCH_KEYSET.remove(K.Sparse)
    .remove_backend(BackendComponent.XLABit)
    .remove_backend(BackendComponent.LazyBit)
)
# CompositeImplicitAutograd: backends and autograd, plus NestedTensor (which
# takes implicit but not explicit composites).
MATH_DISPATCH_KEYSET = BACKEND_DISPATCH_KEYSET | AUTOGRAD_DISPATCH_KEYSET | DispatchKeySet(K.NestedTensor)
NESTED_DISPATCH_KEYSET = DispatchKeySet([K.AutogradNestedTensor, K.NestedTensor]) | BACKEND_BITSET_MASK
FUNCTORCH_BATCHED_KEYSET = DispatchKeySet(K.FuncTorchBatched)


def _alias(alias: KeyLike) -> DispatchKey:
    key = as_dispatch_key(alias)
    if key == K.Undefined:
        raise ValueError("Undefined is not an alias key and has no runtime key set")
    return key


def get_runtime_dispatch_key_set(alias: KeyLike) -> DispatchKeySet:
    """The runtime keys an alias stands for; a non-alias key stands for itself."""
    key = _alias(alias)
    if key == K.Autograd:
        return AUTOGRAD_DISPATCH_KEYSET | BACKEND_BITSET_MASK
    if key == K.CompositeImplicitAutograd:
        return MATH_DISPATCH_KEYSET
    if key == K.CompositeImplicitAutogradNestedTensor:
        return NESTED_DISPATCH_KEYSET
    if key == K.CompositeExplicitAutograd:
        return BACKEND_DISPATCH_KEYSET
    if key == K.CompositeExplicitAutogradNonFunctional:
        return NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET
    if key == K.FuncTorchBatchedDecomposition:
        return FUNCTORCH_BATCHED_KEYSET
    return DispatchKeySet(key)


def _runtime_dispatch_key_set_has(alias: DispatchKey, k: DispatchKey) -> bool:
    # c10's runtimeDispatchKeySetHas: membership tests that, unlike
    # get_runtime_dispatch_key_set(alias).has(k), treat a bare functionality
    # key (NestedTensor, Dense) correctly.
    if alias == K.Autograd:
        return AUTOGRAD_DISPATCH_KEYSET.has(to_functionality_key(k))
    if alias == K.CompositeImplicitAutograd:
        return MATH_DISPATCH_KEYSET.has(k)
    if alias == K.CompositeImplicitAutogradNestedTensor:
        return NESTED_DISPATCH_KEYSET.has(k)
    if alias == K.CompositeExplicitAutograd:
        return k != K.NestedTensor and BACKEND_DISPATCH_KEYSET.has(k)
    if alias == K.CompositeExplicitAutogradNonFunctional:
        return k != K.NestedTensor and NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET.has(k)
    if alias == K.FuncTorchBatchedDecomposition:
        return FUNCTORCH_BATCHED_KEYSET.has(k)
    return alias == k


def is_included_in_alias(key: KeyLike, alias: KeyLike) -> bool:
    """True if a kernel registered to ``alias`` serves runtime key ``key``."""
    k = as_dispatch_key(key)
    return k != K.Undefined and _runtime_dispatch_key_set_has(_alias(alias), k)


def is_backend_dispatch_key(key: KeyLike) -> bool:
    """c10's isBackendDispatchKey (NestedTensor is deliberately not one)."""
    k = as_dispatch_key(key)
    return (
        k != K.Undefined
        and not is_alias_key(k)
        and k != K.NestedTensor
        and BACKEND_DISPATCH_KEYSET.has(k)
    )


_BACKEND_OF_AUTOGRAD_KEY = {
    K.AutogradCPU: K.CPU,
    K.AutogradCUDA: K.CUDA,
    K.AutogradXLA: K.XLA,
    K.AutogradLazy: K.Lazy,
    K.AutogradMeta: K.Meta,
    K.AutogradMPS: K.MPS,
    K.AutogradHPU: K.HPU,
    K.AutogradIPU: K.IPU,
    K.AutogradXPU: K.XPU,
    K.AutogradMAIA: K.MAIA,  # but not AutogradMTIA, in 2.13
    K.AutogradPrivateUse1: K.PrivateUse1,
    K.AutogradPrivateUse2: K.PrivateUse2,
    K.AutogradPrivateUse3: K.PrivateUse3,
}


def get_backend_key_set_from_autograd(key: KeyLike) -> DispatchKeySet:
    """The backend keys an autograd key guards; empty for other keys."""
    k = as_dispatch_key(key)
    if k in _BACKEND_OF_AUTOGRAD_KEY:
        return DispatchKeySet(_BACKEND_OF_AUTOGRAD_KEY[k])
    if k == K.AutogradNestedTensor:
        return DispatchKeySet(K.NestedTensor) | BACKEND_BITSET_MASK
    if k == K.AutogradOther:
        return AUTOGRADOTHER_BACKENDS
    return DispatchKeySet()


_AUTOGRAD_RELATED = {
    b: DispatchKeySet([K.ADInplaceOrView, get_autograd_key_from_backend(b)]) for b in BackendComponent
}
_AUTOCAST_OF_BACKEND = {
    BackendComponent[b + "Bit"]: DispatchKeySet(DispatchKey["Autocast" + b])
    for b in ("CPU", "MTIA", "MAIA", "XPU", "IPU", "HPU", "CUDA", "XLA", "PrivateUse1", "MPS")
}


def get_autograd_related_key_set_from_backend(backend: int) -> DispatchKeySet:
    """The keys a tensor of ``backend`` gets for autograd: ADInplaceOrView and
    its Autograd<backend> key (AutogradOther for backends without one)."""
    return _AUTOGRAD_RELATED[BackendComponent(backend)]


def get_autocast_related_key_set_from_backend(backend: int) -> DispatchKeySet:
    return _AUTOCAST_OF_BACKEND.get(BackendComponent(backend), DispatchKeySet())
