"""The default engine's names, for the modules above the engine.

Which engine is the default is decided once, at import (see
dispatcher/_engine/__init__.py).  The registration side does not import
these: it is given its engine (``Dispatcher(engine)``).
"""
from typing import TYPE_CHECKING

from ._engine import HAS_EXTENSION as HAS_EXTENSION

if TYPE_CHECKING:
    # Both engines are built from core.py, which is what the type checker reads.
    from ._engine import core as ENGINE
else:
    from ._engine import default_engine

    ENGINE = default_engine()

AutoDispatchBelowADInplaceOrView = ENGINE.AutoDispatchBelowADInplaceOrView
AutoDispatchBelowAutograd = ENGINE.AutoDispatchBelowAutograd
DEFAULT_EXCLUDED_SET = ENGINE.DEFAULT_EXCLUDED_SET
DEFAULT_INCLUDED_SET = ENGINE.DEFAULT_INCLUDED_SET
DispatchKeySet = ENGINE.DispatchKeySet
ExcludeDispatchKeyGuard = ENGINE.ExcludeDispatchKeyGuard
IValue = ENGINE.IValue
IncludeDispatchKeyGuard = ENGINE.IncludeDispatchKeyGuard
KernelFunction = ENGINE.KernelFunction
OperatorHandle = ENGINE.OperatorHandle
Stack = ENGINE.Stack
TensorBase = ENGINE.TensorBase
disabled_torch_dispatch_impl = ENGINE.disabled_torch_dispatch_impl
compute_dispatch_key_set = ENGINE.compute_dispatch_key_set
register_tensor_type = ENGINE.register_tensor_type
set_show_dispatch_trace = ENGINE.set_show_dispatch_trace
show_dispatch_trace = ENGINE.show_dispatch_trace
tensor_key_set = ENGINE.tensor_key_set
tls_is_dispatch_key_excluded = ENGINE.tls_is_dispatch_key_excluded
tls_is_dispatch_key_included = ENGINE.tls_is_dispatch_key_included
tls_local_exclude_set = ENGINE.tls_local_exclude_set
tls_local_include_set = ENGINE.tls_local_include_set
tls_set_dispatch_key_excluded = ENGINE.tls_set_dispatch_key_excluded
tls_set_dispatch_key_included = ENGINE.tls_set_dispatch_key_included
tls_set_local_exclude_set = ENGINE.tls_set_local_exclude_set
tls_set_local_include_set = ENGINE.tls_set_local_include_set
unregister_tensor_type = ENGINE.unregister_tensor_type

