"""A PyTorch-2.13-style operator dispatcher with a compiled core.

Registration (``Library``, ``define``, ``impl``) computes every operator's
runtime table ahead of time; calls (``ops.ns.name.overload(...)``) extract a
DispatchKeySet from the tensor arguments, apply the thread-local include and
exclude sets, and run the kernel in the table slot of the highest key.
"""
from . import keysets
from ._core import (
    DEFAULT_EXCLUDED_SET,
    DEFAULT_INCLUDED_SET,
    HAS_EXTENSION,
    AutoDispatchBelowADInplaceOrView,
    AutoDispatchBelowAutograd,
    DispatchKeySet,
    ExcludeDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    OperatorHandle,
    TensorBase,
    compute_dispatch_key_set,
    register_tensor_type,
    set_show_dispatch_trace,
    show_dispatch_trace,
    tensor_key_set,
    tls_is_dispatch_key_excluded,
    tls_is_dispatch_key_included,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
    tls_set_dispatch_key_included,
    tls_set_local_exclude_set,
    tls_set_local_include_set,
    unregister_tensor_type,
)
from .standard_fallbacks import install_standard_fallbacks
from .backends import get_privateuse1_backend_name, rename_privateuse1_backend
from .ivalue import IValue, IValueTag, Stack, box, box_returns, register_value_type, unbox_arguments, unbox_returns
from .kernel import fallthrough_kernel
from .explain import explain, explain_keyset
from .keys import BackendComponent, DispatchKey
from .library import Library, define, impl
from .operator_tags import Tag
from .ops import ops

install_standard_fallbacks()

__version__ = "0.1.0"

__all__ = [
    "AutoDispatchBelowADInplaceOrView",
    "AutoDispatchBelowAutograd",
    "BackendComponent",
    "DEFAULT_EXCLUDED_SET",
    "DEFAULT_INCLUDED_SET",
    "DispatchKey",
    "DispatchKeySet",
    "ExcludeDispatchKeyGuard",
    "HAS_EXTENSION",
    "IValue",
    "IncludeDispatchKeyGuard",
    "Library",
    "OperatorHandle",
    "Stack",
    "IValueTag",
    "Tag",
    "TensorBase",
    "box",
    "box_returns",
    "compute_dispatch_key_set",
    "define",
    "explain",
    "explain_keyset",
    "fallthrough_kernel",
    "get_privateuse1_backend_name",
    "impl",
    "keysets",
    "ops",
    "register_tensor_type",
    "register_value_type",
    "rename_privateuse1_backend",
    "set_show_dispatch_trace",
    "show_dispatch_trace",
    "tensor_key_set",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
    "tls_set_local_exclude_set",
    "tls_set_local_include_set",
    "unbox_arguments",
    "unbox_returns",
    "unregister_tensor_type",
]
