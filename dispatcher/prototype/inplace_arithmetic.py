"""``sub_``, ``mul_`` and ``div_`` (their ``.Tensor`` overloads, which a Python
number reaches wrapped, as torch's Tensor methods pass it) and the in-place
dunders ``+=``, ``-=``, ``*=``, ``/=``.

Each operator is one CompositeExplicitAutograd kernel for every backend: the
out-of-place operator's result, checked to fit ``self`` (its shape and
dtype: torch's "result type Float can't be cast to the desired output type
Long"), copied into ``self``.  The kernel runs below ADInplaceOrView, which
bumps the version of ``self`` once (inplace_or_view.written_version_kernel),
and below autograd, which records the out-of-place operator's formula on the
original ``self`` (MulBackward0, as torch names it) -- through a view, the
base's history is rebased (view_history.py).

The dunders return ``self`` after the write, as torch's: ``x *= 2`` keeps
the object, its views see the write.
"""
from __future__ import annotations

from typing import Any, Callable

from dispatcher import Library

from . import derivatives, shapes
from .autograd import Context, differentiable
from .derivatives import Grads
from .inplace_or_view import written_version_kernel
from .operators import aten, overload
from .tensor import Tensor, tensor_operand

__all__: list[str] = []

_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")


def _writing(out_of_place: Callable[..., Any]) -> Callable[..., Any]:
    """The kernel of the in-place twin of ``out_of_place``: its result copied into ``self``."""
    def kernel(self: Tensor, other: Any, **kwargs: Any) -> Tensor:
        result = out_of_place(self, other, **kwargs)
        other_shape = tensor_operand(other).shape  # a number (Note [Numbers where an operator takes a tensor])
        shapes.check_inplace(self.shape, self.dtype, other_shape, result.dtype)
        aten.copy_.default(self, result)
        return self

    return kernel


_OUT_OF_PLACE = {"sub_.Tensor": aten.sub.Tensor, "mul_.Tensor": aten.mul.Tensor, "div_.Tensor": aten.div.Tensor}
for _name, _op in _OUT_OF_PLACE.items():
    _explicit.impl(_name, _writing(_op))
    _inplace_or_view.impl(_name, written_version_kernel(overload(_name)), with_keyset=True)


# The formulas are the out-of-place operators' (derivatives.py), read on the
# value ``self`` had before the write (autograd's original_self).
@differentiable("sub_.Tensor")
def _sub_(ctx: Context, grad: Tensor) -> Grads:
    return derivatives._sub(ctx, grad)


@differentiable("mul_.Tensor", saves=("self", "other"))
def _mul_(ctx: Context, grad: Tensor) -> Grads:
    return derivatives._mul(ctx, grad)


@differentiable("div_.Tensor", saves=("self", "other"))
def _div_(ctx: Context, grad: Tensor) -> Grads:
    return derivatives._div(ctx, grad)
