"""torch.utils._python_dispatch's names, for the prototype's tensors.

Code written for torch's ``__torch_dispatch__`` imports these from
``torch.utils._python_dispatch`` (and ``no_dispatch`` from
``torch.utils._mode_utils``); on prototype tensors it imports them from
here.  The mode stack's functions and the traceable-wrapper tests are
dispatcher.dispatch_modes'; the rest know prototype tensors:

* ``no_dispatch()`` (torch._C._DisableTorchDispatch): calls inside skip
  the Python keys, so they reach the kernels of a subclass's own data;
* ``return_and_correct_aliasing(func, args, kwargs, out)``: what a wrapper
  subclass's handler returns so that its results alias its inputs as
  ``func``'s schema says: an in-place or out= operator returns the very
  argument it wrote, a view shares its input's version counter and records
  it as its base, and a wrapper's view has its input's storage object
  (torch sets the view's storage to the input's; a prototype wrapper's
  storage has no memory, and shares its identity: storage.wrapper_storage).
"""
from __future__ import annotations

from typing import Any

from dispatcher.compat.torch_C import _DisableTorchDispatch
from dispatcher.dispatch_modes import (
    BaseTorchDispatchMode, TorchDispatchMode, _disable_current_modes, _get_current_dispatch_mode,
    _get_current_dispatch_mode_stack, _pop_mode, _pop_mode_temporarily, _push_mode, is_in_torch_dispatch_mode,
    is_traceable_wrapper_subclass, is_traceable_wrapper_subclass_type,
)

from .storage import wrapper_storage
from .tensor import Tensor

__all__ = [
    "BaseTorchDispatchMode", "TorchDispatchMode", "_DisableTorchDispatch", "_disable_current_modes",
    "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack", "_pop_mode", "_pop_mode_temporarily",
    "_push_mode", "is_in_torch_dispatch_mode", "is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type",
    "no_dispatch", "return_and_correct_aliasing",
]

# torch.utils._mode_utils.no_dispatch is the guard class itself.
no_dispatch = _DisableTorchDispatch


def return_and_correct_aliasing(func: Any, args: Any, kwargs: Any, out: Any) -> Any:
    """``out``, with its aliasing as ``func``'s schema has it (see the module's docstring)."""
    schema = func._schema
    kwargs = kwargs or {}
    values = {a.name: v for a, v in zip(schema.arguments, args)}
    values.update(kwargs)
    results = out if isinstance(out, tuple) else (out,)
    written = []  # the arguments a mutable alias return gives back
    for i, ret in enumerate(schema.returns):
        alias = ret.type.alias
        if alias is None:
            continue
        source = _argument_in_set(schema, values, alias.before_set)
        if source is None:
            continue
        if alias.is_write:
            written.append(source)
        elif i < len(results) and isinstance(results[i], Tensor) and isinstance(source, Tensor):
            view = results[i]
            view._base = source._base if source._base is not None else source
            view._version_counter = source._version_counter
            if view._data is None and source._data is None:  # wrappers: the view's storage is its input's
                view.__dict__["_wrapper_storage"] = wrapper_storage(source)
    if not written:
        return out
    return written[0] if not isinstance(out, tuple) else tuple(written)


def _argument_in_set(schema: Any, values: dict[str, Any], alias_set: tuple[str, ...]) -> Any:
    for argument in schema.arguments:
        alias = argument.type.alias
        if alias is not None and set(alias.before_set) & set(alias_set):
            return values.get(argument.name)
    return None
