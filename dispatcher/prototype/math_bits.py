"""Math bits: views whose values read negated (torch's ``_neg_view``, the Negative
dispatch key) or conjugated (``conj()``'s ``_conj``, the Conjugate key), as torch 2.13 has them.

* ``_neg_view`` and ``_conj``: CompositeExplicitAutograd, a view of the same
  memory with the bit flipped (set, or cleared on a view that has it);
  ADInplaceOrView's view bookkeeping; their derivatives are the gradient
  negated (NegViewBackward0), conjugated (ConjBackward0).
* ``is_neg``/``is_conj`` (whether the bit is set), ``resolve_neg``/
  ``resolve_conj`` (the tensor itself without the bit, else a copy of its
  values), ``conj`` (``_conj`` of a complex tensor, else the tensor) and
  ``conj_physical`` (``_conj_physical`` of a complex tensor, else the
  tensor): CompositeImplicitAutograd.  ``_conj_physical``
  (CompositeExplicitAutograd) conjugates the values.
* Every operator reaches the key's backend fallback (torch's negation and
  conjugate fallbacks, MathBitsFallback), which ``install()`` registers with
  the prototype's other fallbacks (backend_fallbacks.py): a view runs as it
  is and its results keep the bit; otherwise each argument with the bit is
  materialized (its values negated, conjugated) and the call runs below the
  key; an argument written in place is written back through its view, as
  torch's.
* Reading values resolves the bits (``tolist``, ``item``, ``repr``);
  ``numpy()``, which would share the memory, refuses, as torch's does.
"""
from __future__ import annotations

from typing import Any, Optional, Callable, NamedTuple

from dispatcher import DispatchKey, DispatchKeySet, Library, OperatorHandle

from .autograd import Context, differentiable
from .inplace_or_view import _view, aliases_without_writes
from .operators import aten, overload
from .tensor import Tensor, TensorMethods, key_set_for_device

__all__ = ["conjugate_fallback", "negative_fallback"]

_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")

_MATH_BITS = DispatchKeySet([DispatchKey.Negative, DispatchKey.Conjugate])


class MathBit(NamedTuple):
    """One bit: its key, the view operator that flips it, what materializes its
    values (an operator on the same memory without the bit), and its name in torch's texts."""

    key: DispatchKey
    view: str
    materialize: Callable[[Any], Any]
    name: str  # "negative", "conjugate"
    resolve: str  # "resolve_neg", "resolve_conj"


NEGATIVE = MathBit(DispatchKey.Negative, "_neg_view", lambda t: aten.neg.default(t), "negative", "resolve_neg")
CONJUGATE = MathBit(DispatchKey.Conjugate, "_conj", lambda t: aten._conj_physical.default(t), "conjugate", "resolve_conj")


def _has(value: Any, bit: MathBit) -> bool:
    return isinstance(value, Tensor) and bool(value.key_set.has(bit.key))


def _same_memory(t: Tensor, bits: DispatchKeySet) -> Tensor:
    """A plain tensor of ``t``'s memory, shape, strides, dtype and device, with the math bits ``bits``."""
    out = Tensor(t._data, t.shape, t.dtype, t.device)
    out._strides = t._strides
    if bits:
        out.key_set = key_set_for_device(t.device) | bits
    return out


def _bits_of(t: Tensor) -> DispatchKeySet:
    return t.key_set & _MATH_BITS


def _flipped(self: Tensor, bit: MathBit) -> Tensor:
    bits = _bits_of(self)
    key = DispatchKeySet(bit.key)
    return _same_memory(self, bits - key if bits.has(bit.key) else bits | key)


def _resolved(self: Any, bit: MathBit) -> Any:
    return aten.clone.default(self) if _has(self, bit) else self


def _conj(self: Any) -> Any:
    return aten._conj.default(self) if self.dtype.is_complex else self


def _conj_physical(self: Tensor) -> Tensor:
    out = Tensor(self._data.conj() if self._data is not None else None, self.shape, self.dtype, self.device)
    return out


_explicit.impl("_neg_view", lambda self: _flipped(self, NEGATIVE))
_explicit.impl("_conj", lambda self: _flipped(self, CONJUGATE))
_explicit.impl("_conj_physical", _conj_physical)
_implicit.impl("conj", _conj)
_implicit.impl("conj_physical", lambda self: aten._conj_physical.default(self) if self.dtype.is_complex else self)
for _bit in (NEGATIVE, CONJUGATE):
    _inplace_or_view.impl(_bit.view, _view(overload(_bit.view)), with_keyset=True)
    _implicit.impl("is_neg" if _bit is NEGATIVE else "is_conj", lambda self, bit=_bit: _has(self, bit))
    _implicit.impl(_bit.resolve, lambda self, bit=_bit: _resolved(self, bit))


@differentiable("_neg_view")
def _neg_view_derivative(ctx: Context, grad: Tensor) -> tuple:
    return (aten.neg.default(grad),)


@differentiable("_conj")
def _conj_derivative(ctx: Context, grad: Tensor) -> tuple:
    return (aten.conj.default(grad),)


@differentiable("_conj_physical")
def _conj_physical_derivative(ctx: Context, grad: Tensor) -> tuple:
    return (aten.conj_physical.default(grad) if grad.dtype.is_complex else grad,)


# -- the fallbacks (registered by install(): backend_fallbacks.py) ---------------------------
def _materialized(value: Any, bit: MathBit) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_materialized(v, bit) for v in value)
    if _has(value, bit):
        return bit.materialize(_same_memory(value, _bits_of(value) - DispatchKeySet(bit.key)))
    return value


def _math_bit_fallback(bit: MathBit) -> Callable[..., Any]:
    below_key = DispatchKeySet.full_after(bit.key)
    view_name = f"aten::{bit.view}"

    def fallback(keyset: DispatchKeySet, op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
        """torch's MathBitsFallback for the bit, in torch's Python fallback convention (with the keyset)."""
        schema = op._schema
        arguments = schema.arguments
        below = keyset & below_key
        if aliases_without_writes(schema):
            # A view: the same memory, which reads with the bit too.  torch's
            # views take their input's keys, bits included (the bit's own view
            # operator then flips it); here a view's result is given the bit
            # after the call, but for that operator's.
            out = op.redispatch(below, *args, **kwargs)
            if op._name == view_name:
                return out
            for result in out if isinstance(out, (list, tuple)) else (out,):
                if isinstance(result, Tensor) and not _has(result, bit):
                    result.key_set = result.key_set | DispatchKeySet(bit.key)
            return out
        values = schema.bind(args, kwargs)
        written = [(a, v) for a, v in zip(arguments, values)
                   if a.type.alias is not None and a.type.alias.is_write and _has(v, bit)]
        resolved = tuple(_materialized(v, bit) for v in values)
        call_args, call_kwargs = schema.split_call(resolved)
        out = op.redispatch(below, *call_args, **call_kwargs)
        for argument, original in written:
            # Written in place on the materialized values: store them back through the view, the bit applied.
            materialized = resolved[arguments.index(argument)]
            aten.copy_.default(_same_memory(original, _bits_of(original) - DispatchKeySet(bit.key)),
                               bit.materialize(materialized))
            out = original if out is materialized else out
        return out

    return fallback


negative_fallback = _math_bit_fallback(NEGATIVE)
conjugate_fallback = _math_bit_fallback(CONJUGATE)


# -- methods, and reading values -----------------------------------------------------------------
def _resolve_bits(self: Any) -> Any:
    for bit in (NEGATIVE, CONJUGATE):
        self = _resolved(self, bit)
    return self


TensorMethods.is_neg = lambda self: bool(aten.is_neg.default(self))  # type: ignore[attr-defined]
TensorMethods._neg_view = lambda self: aten._neg_view.default(self)  # type: ignore[attr-defined]
TensorMethods.resolve_neg = lambda self: aten.resolve_neg.default(self)  # type: ignore[attr-defined]
TensorMethods.is_conj = lambda self: bool(aten.is_conj.default(self))  # type: ignore[attr-defined]
TensorMethods.conj = lambda self: aten.conj.default(self)  # type: ignore[attr-defined]
TensorMethods.resolve_conj = lambda self: aten.resolve_conj.default(self)  # type: ignore[attr-defined]
TensorMethods.conj_physical = lambda self: aten.conj_physical.default(self)  # type: ignore[attr-defined]

_plain_numpy, _plain_tolist, _plain_item = Tensor.numpy, Tensor.tolist, Tensor.item
# mypy reads Tensor.__repr__ as object's (no tensor_contents keyword).
_plain_repr: Callable[..., str] = Tensor.__repr__


def _numpy(self: Tensor, *, force: bool = False) -> Any:
    for bit in (NEGATIVE, CONJUGATE):
        if _has(self, bit):
            raise RuntimeError(f"Can't call numpy() on Tensor that has {bit.name} bit set. Use tensor.{bit.resolve}()"
                               ".numpy() instead.")
    return _plain_numpy(self, force=force)


def _tolist(self: Tensor) -> Any:
    return _plain_tolist(_resolve_bits(self))


def _item(self: Tensor) -> Any:
    return _plain_item(_resolve_bits(self))


def _repr(self: Tensor, *, tensor_contents: Optional[str] = None) -> str:
    return _plain_repr(_resolve_bits(self), tensor_contents=tensor_contents)


Tensor.numpy = _numpy  # type: ignore[method-assign]
Tensor.tolist = _tolist  # type: ignore[method-assign]
Tensor.item = _item  # type: ignore[method-assign]
Tensor.__repr__ = _repr  # type: ignore[method-assign, assignment]
