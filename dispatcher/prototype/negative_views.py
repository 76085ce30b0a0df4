"""Negative views: torch's ``_neg_view``, a view whose values read negated, marked by
the Negative dispatch key (the "neg bit", one of torch 2.13's math bits).

* ``_neg_view``: CompositeExplicitAutograd, a view of the same memory with
  the bit flipped (set, or cleared on a negative view); ADInplaceOrView's
  view bookkeeping; its derivative is the gradient negated (NegViewBackward0).
* ``is_neg`` (whether the bit is set) and ``resolve_neg`` (the tensor itself
  without the bit, else a copy of its values): CompositeImplicitAutograd.
* Every operator reaches the Negative backend fallback (torch's
  negationFallback, a MathBitsFallback), which ``install()`` registers with
  the prototype's other fallbacks (backend_fallbacks.py): a view runs as it
  is and its results keep the bit; otherwise each argument with the bit is
  materialized (its values negated) and the call runs below the key; an
  argument written in place is written back through its view, as torch's.
* Reading values resolves the bit (``tolist``, ``item``, ``repr``);
  ``numpy()``, which would share the memory, refuses, as torch's does.
"""
from __future__ import annotations

from typing import Any

from dispatcher import DispatchKey, DispatchKeySet, Library, OperatorHandle

from .autograd import Context, differentiable
from .inplace_or_view import _view
from .operators import aten, overload
from .tensor import Tensor, TensorMethods, key_set_for_device

__all__ = ["negative_fallback"]

_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")

_NEGATIVE = DispatchKeySet(DispatchKey.Negative)
_BELOW_NEGATIVE = DispatchKeySet.full_after(DispatchKey.Negative)


def _is_negative(value: Any) -> bool:
    return isinstance(value, Tensor) and bool(value.key_set.has(DispatchKey.Negative))


def _same_memory(t: Tensor, negative: bool) -> Tensor:
    """A tensor of ``t``'s memory, shape, strides, dtype and device, with or without the bit."""
    out = Tensor(t._data, t.shape, t.dtype, t.device)
    out._strides = t._strides
    if negative:
        out.key_set = key_set_for_device(t.device) | _NEGATIVE
    return out


def _neg_view(self: Tensor) -> Tensor:
    return _same_memory(self, not _is_negative(self))


def _is_neg(self: Any) -> bool:
    return _is_negative(self)


def _resolve_neg(self: Any) -> Any:
    return aten.clone.default(self) if _is_negative(self) else self


_explicit.impl("_neg_view", _neg_view)
_inplace_or_view.impl("_neg_view", _view(overload("_neg_view")), with_keyset=True)
_implicit.impl("is_neg", _is_neg)
_implicit.impl("resolve_neg", _resolve_neg)


@differentiable("_neg_view")
def _neg_view_derivative(ctx: Context, grad: Tensor) -> tuple:
    return (aten.neg.default(grad),)


# -- the fallback (registered by install(): backend_fallbacks.py) ---------------------------
def _materialized(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_materialized(v) for v in value)
    if _is_negative(value):
        return aten.neg.default(_same_memory(value, False))
    return value


def negative_fallback(keyset: DispatchKeySet, op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
    """torch's negationFallback, in torch's Python fallback convention (with the keyset)."""
    schema = op._schema
    arguments = schema.arguments
    aliases = [a.type.alias for a in arguments if a.type.alias is not None]
    below = keyset & _BELOW_NEGATIVE
    if aliases and not any(alias.is_write for alias in aliases):
        # A view: the same memory, which reads negated too.  torch's views take
        # their input's keys, bit included (_neg_view then flips it); here a
        # view's result is given the bit after the call, but for _neg_view's.
        out = op.redispatch(below, *args, **kwargs)
        if op._name == "aten::_neg_view":
            return out
        for result in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(result, Tensor) and not _is_negative(result):
                result.key_set = result.key_set | _NEGATIVE
        return out
    values = schema.bind(args, kwargs)
    written = [(a, v) for a, v in zip(arguments, values)
               if a.type.alias is not None and a.type.alias.is_write and _is_negative(v)]
    resolved = tuple(_materialized(v) for v in values)
    call_args, call_kwargs = schema.split_call(resolved)
    out = op.redispatch(below, *call_args, **call_kwargs)
    for argument, original in written:
        # Written in place on the materialized values: store them back, negated, through the view.
        materialized = resolved[arguments.index(argument)]
        aten.copy_.default(_same_memory(original, False), aten.neg.default(materialized))
        out = original if out is materialized else out
    return out


# -- reading values ------------------------------------------------------------------------
def _is_neg_method(self: Any) -> bool:
    return bool(aten.is_neg.default(self))


def _neg_view_method(self: Any) -> Any:
    return aten._neg_view.default(self)


def _resolve_neg_method(self: Any) -> Any:
    return aten.resolve_neg.default(self)


_plain_numpy, _plain_tolist, _plain_item, _plain_repr = Tensor.numpy, Tensor.tolist, Tensor.item, Tensor.__repr__


def _numpy(self: Tensor) -> Any:
    if _is_negative(self):
        raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. Use tensor.resolve_neg().numpy() "
                           "instead.")
    return _plain_numpy(self)


def _tolist(self: Tensor) -> Any:
    return _plain_tolist(_resolve_neg(self))


def _item(self: Tensor) -> Any:
    return _plain_item(_resolve_neg(self))


def _repr(self: Tensor) -> str:
    return _plain_repr(_resolve_neg(self))


TensorMethods.is_neg = _is_neg_method  # type: ignore[attr-defined]
TensorMethods._neg_view = _neg_view_method  # type: ignore[attr-defined]
TensorMethods.resolve_neg = _resolve_neg_method  # type: ignore[attr-defined]
Tensor.numpy = _numpy  # type: ignore[method-assign]
Tensor.tolist = _tolist  # type: ignore[method-assign]
Tensor.item = _item  # type: ignore[method-assign]
Tensor.__repr__ = _repr  # type: ignore[method-assign]
