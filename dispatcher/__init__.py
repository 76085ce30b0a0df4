"""A PyTorch-2.13-style operator dispatcher with a compiled core."""
from ._core import (
    DEFAULT_EXCLUDED_SET,
    DEFAULT_INCLUDED_SET,
    HAS_EXTENSION,
    DispatchKeySet,
    TensorBase,
    register_tensor_type,
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
from .keys import BackendComponent, DispatchKey
from .kernel import fallthrough_kernel
from .library import Library, define, impl
from .ops import ops
from ._framework import install_standard_fallbacks

install_standard_fallbacks()

__version__ = "0.1.0"
