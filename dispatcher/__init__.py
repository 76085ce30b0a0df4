"""A PyTorch-2.13-style operator dispatcher with a compiled core.

Registration (``Library``, ``define``, ``impl``) computes every operator's
runtime table ahead of time; calls (``ops.ns.name.overload(...)``) extract a
DispatchKeySet from the tensor arguments, apply the thread-local include and
exclude sets, and run the kernel in the table slot of the highest key.
"""
from typing import TYPE_CHECKING

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
    disabled_torch_dispatch_impl,
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
from ._lazy import lazy_attributes
from .standard_fallbacks import install_standard_fallbacks
from .backends import get_privateuse1_backend_name, rename_privateuse1_backend
from .dispatch_modes import TorchDispatchMode
from .ivalue import IValue, IValueTag, Stack, box, box_returns, register_value_type, unbox_arguments, unbox_returns
from .kernel import fallthrough_kernel
from .call_checks import checked_calls, checked_calls_enabled, set_checked_calls
from .errors import DispatcherTypeError, DispatcherValueError
from .keys import BackendComponent, DispatchKey
from .library import Library, define, impl
from .operator_tags import Tag
from .ops import ops
from .tensor_protocols import (
    AutogradEngine,
    TensorChecks,
    register_autograd_engine,
    register_tensor_checks,
    unregister_autograd_engine,
    unregister_tensor_checks,
)
from .value_types import Number, Tensor, device, dtype

if TYPE_CHECKING:
    from .custom_ops import (
        CustomOpDef as CustomOpDef,
        custom_op as custom_op,
        get_ctx as get_ctx,
        register_autograd as register_autograd,
        register_fake as register_fake,
        register_kernel as register_kernel,
    )
    from .explanation import explain as explain, explain_keyset as explain_keyset
    from .optests import opcheck as opcheck
    from .schema_inference import infer_schema as infer_schema

install_standard_fallbacks()

# Imported on first use: torch.library's custom-operator API needs inspect
# and logging, which would double the time ``import dispatcher`` takes, and
# explain is a tool, not something calls need.
_LAZY = {
    "CustomOpDef": "custom_ops",
    "custom_op": "custom_ops",
    "explain": "explanation",
    "explain_keyset": "explanation",
    "get_ctx": "custom_ops",
    "infer_schema": "schema_inference",
    "opcheck": "optests",
    "register_autograd": "custom_ops",
    "register_fake": "custom_ops",
    "register_kernel": "custom_ops",
}


__getattr__ = lazy_attributes(__name__, _LAZY, globals())


__version__ = "0.1.0"

__all__ = [
    "AutoDispatchBelowADInplaceOrView",
    "AutoDispatchBelowAutograd",
    "AutogradEngine",
    "BackendComponent",
    "CustomOpDef",
    "DEFAULT_EXCLUDED_SET",
    "DEFAULT_INCLUDED_SET",
    "DispatchKey",
    "DispatchKeySet",
    "DispatcherTypeError",
    "DispatcherValueError",
    "ExcludeDispatchKeyGuard",
    "HAS_EXTENSION",
    "IValue",
    "IncludeDispatchKeyGuard",
    "Library",
    "Number",
    "OperatorHandle",
    "Stack",
    "IValueTag",
    "Tag",
    "Tensor",
    "TensorBase",
    "TensorChecks",
    "TorchDispatchMode",
    "box",
    "box_returns",
    "checked_calls",
    "checked_calls_enabled",
    "compute_dispatch_key_set",
    "custom_op",
    "define",
    "explain",
    "explain_keyset",
    "device",
    "disabled_torch_dispatch_impl",
    "dtype",
    "fallthrough_kernel",
    "get_ctx",
    "get_privateuse1_backend_name",
    "impl",
    "infer_schema",
    "keysets",
    "opcheck",
    "ops",
    "register_autograd",
    "register_autograd_engine",
    "register_fake",
    "register_kernel",
    "register_tensor_checks",
    "register_tensor_type",
    "register_value_type",
    "rename_privateuse1_backend",
    "set_checked_calls",
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
    "unregister_autograd_engine",
    "unregister_tensor_checks",
    "unregister_tensor_type",
]
