"""``aten::alias``: the same memory as another tensor, as a view of it (torch 2.13's).

A CompositeExplicitAutograd kernel (a tensor of the same data, shape, dtype
and device), torch's ADInplaceOrView bookkeeping of a view (its base, and the
version counter it shares), and its derivative (the gradient flows through
unchanged: AliasBackward0).  torch's legacy constructor of a Tensor subclass
from a tensor, ``Sub(t)``, makes one (tensor.py's _subclass_init).
"""
from __future__ import annotations

from dispatcher import Library

from .autograd import Context, differentiable
from .inplace_or_view import _view
from .operators import overload
from .tensor import Tensor

__all__: list[str] = []

_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_inplace_or_view = Library("aten", "IMPL", "ADInplaceOrView")


def _alias(self: Tensor) -> Tensor:
    out = Tensor(self._data, self.shape, self.dtype, self.device)
    out._strides = self._strides
    return out


_explicit.impl("alias", _alias)
_inplace_or_view.impl("alias", _view(overload("alias")), with_keyset=True)


@differentiable("alias")
def _alias_derivative(ctx: Context, grad: Tensor) -> tuple:
    return (grad,)
