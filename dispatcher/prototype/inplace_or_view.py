"""ADInplaceOrView kernels: the bookkeeping in-place and view operators need.

Every tensor has the ADInplaceOrView key and the thread-local include set
has it too, so these run on each call of the operators below (other
operators skip the key: its standard fallback is a fallthrough).  They are
torch's: the operators torch 2.13 has ADInplaceOrView kernels for.

* An in-place operator bumps the version counter of the tensor it wrote,
  which autograd checks before using a saved tensor; an out= operator, its
  ``out`` argument's.
* A view operator records the base it views and shares its version
  counter, so a write through either is seen by both.
* ``detach`` shares the version counter but records no base: torch's
  detached tensor is an alias, not a view (``_base`` is None).

As in PyTorch, this sits below autograd and above the backends, and
redispatches with the keys below itself.  The operators are aten's, which
other tensor types may call too: their tensors, which have no version
counter, pass through untouched.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Optional

from dispatcher import AutoDispatchBelowADInplaceOrView, DispatchKey, DispatchKeySet, Library, OperatorHandle
from dispatcher.keysets import AFTER_ADINPLACEORVIEW_KEYSET

from .operators import overload
from .tensor import Tensor, tensor_device

__all__ = ["ALIAS_OPERATORS", "INPLACE_OPERATORS", "META_VIEWS", "OUT_OPERATORS", "VIEW_OPERATORS",
           "aliases_without_writes", "track_view", "written_version_kernel"]

INPLACE_OPERATORS = ("add_.Tensor", "fill_.Scalar", "normal_", "copy_", "squeeze_.dim", "sin_", "set_.source_Tensor",
                     "set_.source_Storage", "set_.source_Storage_storage_offset")
VIEW_OPERATORS = ("permute", "t", "transpose.int", "view", "expand", "select.int", "unsqueeze", "squeeze.dim",
                  "as_strided", "diagonal", "slice.Tensor")
ALIAS_OPERATORS = ("detach",)
OUT_OPERATORS = ("abs.out",)  # they write their ``out`` argument

_library = Library("aten", "IMPL", "ADInplaceOrView")


def aliases_without_writes(schema: Any) -> bool:
    """Whether ``schema`` aliases an argument and writes none (a view
    operator's), which the math-bit and ZeroTensor fallbacks run as it is."""
    aliases = [a.type.alias for a in schema.arguments if a.type.alias is not None]
    return bool(aliases) and not any(alias.is_write for alias in aliases)


def _inplace(op: OperatorHandle):
    redispatch = op.redispatch  # (read once: a handle's method read makes a bound method each time)

    def kernel(keyset: DispatchKeySet, self: Any, *args: Any, **kwargs: Any) -> Any:
        out = redispatch(keyset & AFTER_ADINPLACEORVIEW_KEYSET, self, *args, **kwargs)
        if isinstance(self, Tensor):
            self._version_counter.value += 1
        return out

    return kernel


class _MetaViews(threading.local):
    """How many views of meta tensors this thread has made.  Meta tensors here
    count as contiguous (meta.py), as torch's are until a view changes their
    layout: opcheck compares a fake result's strides with the real one's only
    if its fake call made none (PrototypeTensorChecks.meta_views_made)."""

    made = 0


META_VIEWS = _MetaViews()
_META = tensor_device("meta")


def _view(op: OperatorHandle):
    redispatch = op.redispatch  # (read once: a handle's method read makes a bound method each time)

    def kernel(keyset: DispatchKeySet, self: Any, *args: Any, **kwargs: Any) -> Any:
        out = redispatch(keyset & AFTER_ADINPLACEORVIEW_KEYSET, self, *args, **kwargs)
        if isinstance(self, Tensor) and isinstance(out, Tensor):
            out._base = base = self._base if self._base is not None else self
            out._version_counter = self._version_counter
            if base.grad_fn is not None:
                track_view(base, out)
            if type(self) is not Tensor and self.key_set.has(DispatchKey.Python):
                out._view_fn = _replay(self, op, args, kwargs)
            if self.device is _META:
                META_VIEWS.made += 1
        return out

    return kernel


def track_view(base: Tensor, view: Tensor) -> None:
    """Remember ``view`` of ``base``, a tensor with history, so that its grad_fn is
    made again when an in-place write changes the base's (view_history.py)."""
    # A list of weak references, not a WeakValueDictionary: a training step makes
    # one such base per step, and a dictionary costs ten times a list to make.
    views = base.__dict__.get("_views")
    if views is None:
        base.__dict__["_views"] = [weakref.ref(view)]
        return
    n = len(views)
    if n >= 16 and n & (n - 1) == 0:  # the dead ones dropped at every power of two: amortized O(1)
        views[:] = [ref for ref in views if ref() is not None]
    views.append(weakref.ref(view))


def _replay(source: Tensor, op: OperatorHandle, args: tuple, kwargs: dict) -> Optional[Callable[[Tensor], Any]]:
    """How a view of ``source`` (whose handler sees the view operators: torch's
    is_python_dispatch, which keeps no as_strided view) made by ``op`` is made again
    on another base: the view operators from its base, called again (None: not known)."""
    previous = source._view_fn
    if source._base is not None and previous is None:
        return None

    def replay(new_base: Tensor) -> Any:
        return op(new_base if previous is None else previous(new_base), *args, **kwargs)

    return replay


def _alias(op: OperatorHandle):
    redispatch = op.redispatch  # (read once: a handle's method read makes a bound method each time)

    def kernel(keyset: DispatchKeySet, self: Any, *args: Any, **kwargs: Any) -> Any:
        out = redispatch(keyset & AFTER_ADINPLACEORVIEW_KEYSET, self, *args, **kwargs)
        if isinstance(self, Tensor) and isinstance(out, Tensor):
            out._version_counter = self._version_counter
        return out

    return kernel


for _name in INPLACE_OPERATORS:
    _library.impl(_name, _inplace(overload(_name)), with_keyset=True)
for _name in VIEW_OPERATORS:
    _library.impl(_name, _view(overload(_name)), with_keyset=True)
for _name in ALIAS_OPERATORS:
    _library.impl(_name, _alias(overload(_name)), with_keyset=True)


def written_version_kernel(op: OperatorHandle) -> Any:
    """The ADInplaceOrView kernel of an in-place or out= operator: the call below,
    then a bump of the version counter of the argument it writes (the first
    one its schema marks ``!``), as torch's generated kernels do.  The call below
    runs with ADInplaceOrView excluded, as torch's: an operator it calls in
    turn (randperm.out calls randperm.generator_out) does not count the write
    a second time."""
    schema = op.schema
    written = next(i for i, argument in enumerate(schema.arguments) if argument.is_write)

    def kernel(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        with AutoDispatchBelowADInplaceOrView():
            out = op.redispatch(keyset & AFTER_ADINPLACEORVIEW_KEYSET, *args, **kwargs)
        target = schema.bind(args, kwargs)[written]
        if isinstance(target, Tensor):
            target._version_counter.value += 1
        return out

    return kernel


for _name in OUT_OPERATORS:
    _library.impl(_name, written_version_kernel(overload(_name)), with_keyset=True)
