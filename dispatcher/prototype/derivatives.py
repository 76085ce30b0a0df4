"""Derivative formulas, one per differentiable operator that does not decompose (PyTorch's derivatives.yaml).

Each formula gets the forward call's arguments on ``ctx`` and the gradient
of the result, and returns the gradient of each tensor argument.  Formulas
are written with operators, so they run on any device and under vmap, and
follow torch's where the prototype has the operators torch's use.  The
CompositeImplicitAutograd operators (matmul, reshape, to) need none:
autograd sees the operators they decompose into.
"""
from __future__ import annotations

import math
from typing import Callable, Optional, Sequence, Union

from .autograd import Context, TensorMeta, differentiable
from .operators import aten
from .shapes import reduce_shape, wrap_dim
from .tensor import Tensor, convert, wrapped_scalar_tensor

__all__ = ["sum_to"]

# One gradient per tensor argument: a Tensor, None (no gradient), or a list for a Tensor[].
Grads = tuple


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Undo broadcasting: sum ``grad`` down to ``shape``."""
    lead = grad.ndim - len(shape)
    if lead:
        grad = aten.sum.dim_IntList(grad, list(range(lead)), False)
    dims = [i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    return grad


def _like(grad: Tensor, meta: Union[Tensor, TensorMeta]) -> Tensor:
    """``grad`` in the dtype and on the device of the input it belongs to."""
    return convert(grad, dtype=meta.dtype, device=meta.device)


def _times(grad: Tensor, alpha: float) -> Tensor:
    """torch's maybe_multiply: ``grad * alpha``, or ``grad`` itself for an alpha of 1."""
    return grad if alpha == 1 else aten.mul.Tensor(grad, wrapped_scalar_tensor(alpha))


# -- pointwise ----------------------------------------------------------------------------
def _wanted(ctx: Context, name: str, gradient: Callable[[], Tensor]) -> Optional[Tensor]:
    """The gradient of argument ``name``, computed only if it is wanted."""
    return gradient() if ctx.needs_grad[name] else None


@differentiable("add.Tensor")
def _add(ctx: Context, grad: Tensor) -> Grads:
    return (_wanted(ctx, "self", lambda: sum_to(grad, ctx.self.shape)),
            _wanted(ctx, "other", lambda: sum_to(_times(grad, ctx.alpha), ctx.other.shape)))


@differentiable("add_.Tensor")
def _add_(ctx: Context, grad: Tensor) -> Grads:
    return _add(ctx, grad)


@differentiable("sub.Tensor")
def _sub(ctx: Context, grad: Tensor) -> Grads:
    return (_wanted(ctx, "self", lambda: sum_to(grad, ctx.self.shape)),
            _wanted(ctx, "other", lambda: sum_to(_times(aten.neg.default(grad), ctx.alpha), ctx.other.shape)))


@differentiable("rsub.Scalar")
def _rsub(ctx: Context, grad: Tensor) -> Grads:
    return (_times(aten.neg.default(grad), ctx.alpha),)


@differentiable("mul.Tensor", saves=("self", "other"))
def _mul(ctx: Context, grad: Tensor) -> Grads:
    return (_wanted(ctx, "self", lambda: sum_to(aten.mul.Tensor(grad, ctx.other), ctx.self.shape)),
            _wanted(ctx, "other", lambda: sum_to(aten.mul.Tensor(grad, ctx.self), ctx.other.shape)))


@differentiable("div.Tensor", saves=("self", "other"))
def _div(ctx: Context, grad: Tensor) -> Grads:
    def grad_other() -> Tensor:
        # d(a/b)/db = -a/b^2 = -grad * ((a/b) / b)
        quotient = aten.div.Tensor(aten.div.Tensor(ctx.self, ctx.other), ctx.other)
        return sum_to(aten.mul.Tensor(aten.neg.default(grad), quotient), ctx.other.shape)

    return (_wanted(ctx, "self", lambda: sum_to(aten.div.Tensor(grad, ctx.other), ctx.self.shape)),
            _wanted(ctx, "other", grad_other))


@differentiable("neg")
def _neg(ctx: Context, grad: Tensor) -> Grads:
    return (aten.neg.default(grad),)


@differentiable("reciprocal", saves=("result",))
def _reciprocal(ctx: Context, grad: Tensor) -> Grads:
    # d(1/x)/dx = -1/x^2 = -result^2
    return (aten.mul.Tensor(aten.neg.default(grad), aten.mul.Tensor(ctx.result, ctx.result)),)


@differentiable("exp", saves=("result",))
def _exp(ctx: Context, grad: Tensor) -> Grads:
    return (aten.mul.Tensor(grad, ctx.result),)


@differentiable("log", saves=("self",))
def _log(ctx: Context, grad: Tensor) -> Grads:
    return (aten.div.Tensor(grad, ctx.self),)


@differentiable("sin", saves=("self",))
def _sin(ctx: Context, grad: Tensor) -> Grads:
    return (aten.mul.Tensor(grad, aten.cos.default(ctx.self)),)


@differentiable("cos", saves=("self",))
def _cos(ctx: Context, grad: Tensor) -> Grads:
    # torch's grad * -self.sin().conj(): the negation is of sin's result.
    return (aten.mul.Tensor(grad, aten.neg.default(aten.sin.default(ctx.self))),)


@differentiable("relu", saves=("result",))
def _relu(ctx: Context, grad: Tensor) -> Grads:
    # torch's threshold_backward(grad, result, 0): the gradient where the result is positive.
    return (aten.mul.Tensor(grad, aten.gt.Scalar(ctx.result, 0)),)


# -- reductions and products ------------------------------------------------------------------
# The reductions' gradients have the result's dtype (sum's and mean's
# ``dtype``): backward converts each to its input's (autograd._validate_gradient).
@differentiable("sum")
def _sum(ctx: Context, grad: Tensor) -> Grads:
    return (aten.expand.default(grad, list(ctx.self.shape)),)


@differentiable("sum.dim_IntList")
def _sum_dim(ctx: Context, grad: Tensor) -> Grads:
    if not ctx.keepdim:  # put the reduced dimensions back, as size 1
        grad = aten.reshape.default(grad, list(reduce_shape(ctx.self.shape, ctx.dim, keepdim=True)))
    return (aten.expand.default(grad, list(ctx.self.shape)),)


@differentiable("mean")
def _mean(ctx: Context, grad: Tensor) -> Grads:
    spread = aten.expand.default(grad, list(ctx.self.shape))
    return (aten.div.Tensor(spread, wrapped_scalar_tensor(math.prod(ctx.self.shape))),)


@differentiable("mm", saves=("self", "mat2"))
def _mm(ctx: Context, grad: Tensor) -> Grads:
    return (_wanted(ctx, "self", lambda: aten.mm.default(grad, aten.t.default(ctx.mat2))),
            _wanted(ctx, "mat2", lambda: aten.mm.default(aten.t.default(ctx.self), grad)))


@differentiable("bmm", saves=("self", "mat2"))
def _bmm(ctx: Context, grad: Tensor) -> Grads:
    return (_wanted(ctx, "self", lambda: aten.bmm.default(grad, aten.transpose.int(ctx.mat2, 1, 2))),
            _wanted(ctx, "mat2", lambda: aten.bmm.default(aten.transpose.int(ctx.self, 1, 2), grad)))


@differentiable("mv", saves=("self", "vec"))
def _mv(ctx: Context, grad: Tensor) -> Grads:
    # torch's grad.ger(vec) for the matrix: the outer product, by broadcasting.
    return (_wanted(ctx, "self", lambda: aten.mul.Tensor(aten.unsqueeze.default(grad, 1), ctx.vec)),
            _wanted(ctx, "vec", lambda: aten.mv.default(aten.t.default(ctx.self), grad)))


@differentiable("dot", saves=("self", "tensor"))
def _dot(ctx: Context, grad: Tensor) -> Grads:
    return (_wanted(ctx, "self", lambda: aten.mul.Tensor(grad, ctx.tensor)),
            _wanted(ctx, "tensor", lambda: aten.mul.Tensor(grad, ctx.self)))


# -- views and shapes ---------------------------------------------------------------------------
@differentiable("permute")
def _permute(ctx: Context, grad: Tensor) -> Grads:
    inverse = [0] * len(ctx.dims)
    for i, d in enumerate(ctx.dims):
        inverse[d % len(ctx.dims)] = i
    return (aten.permute.default(grad, inverse),)


@differentiable("t")
def _t(ctx: Context, grad: Tensor) -> Grads:
    return (aten.t.default(grad),)


@differentiable("transpose.int")
def _transpose(ctx: Context, grad: Tensor) -> Grads:
    return (aten.transpose.int(grad, ctx.dim0, ctx.dim1),)


@differentiable("view")
def _view(ctx: Context, grad: Tensor) -> Grads:
    return (aten.reshape.default(grad, list(ctx.self.shape)),)


@differentiable("_unsafe_view")
def _unsafe_view(ctx: Context, grad: Tensor) -> Grads:
    return (aten.reshape.default(grad, list(ctx.self.shape)),)


@differentiable("expand")
def _expand(ctx: Context, grad: Tensor) -> Grads:
    return (sum_to(grad, ctx.self.shape),)


@differentiable("select.int")
def _select(ctx: Context, grad: Tensor) -> Grads:
    return (aten.select_backward.default(grad, list(ctx.self.shape), ctx.dim, ctx.index),)


@differentiable("select_backward")
def _select_backward(ctx: Context, grad: Tensor) -> Grads:
    return (aten.select.int(grad, ctx.dim, ctx.index),)


@differentiable("unsqueeze")
def _unsqueeze(ctx: Context, grad: Tensor) -> Grads:
    return (aten.squeeze.dim(grad, ctx.dim),)


def _unsqueeze_to(grad: Tensor, dim: int, shape: Sequence[int]) -> Tensor:
    """torch's unsqueeze_to: the dimension squeeze removed, if it did remove one."""
    if not shape:
        return grad
    dim = wrap_dim(dim, len(shape))
    return aten.unsqueeze.default(grad, dim) if shape[dim] == 1 else grad


@differentiable("squeeze.dim")
def _squeeze(ctx: Context, grad: Tensor) -> Grads:
    return (_unsqueeze_to(grad, ctx.dim, ctx.self.shape),)


@differentiable("squeeze_.dim")
def _squeeze_(ctx: Context, grad: Tensor) -> Grads:
    return (_unsqueeze_to(grad, ctx.dim, ctx.self.shape),)


@differentiable("stack")
def _stack(ctx: Context, grad: Tensor) -> Grads:
    return ([aten.select.int(grad, ctx.dim, i) for i in range(len(ctx.tensors))],)


# -- copies and in-place --------------------------------------------------------------------------
@differentiable("clone")
def _clone(ctx: Context, grad: Tensor) -> Grads:
    return (grad,)


@differentiable("_to_copy")
def _to_copy(ctx: Context, grad: Tensor) -> Grads:
    return (_like(grad, ctx.self),)


@differentiable("copy_")
def _copy_(ctx: Context, grad: Tensor) -> Grads:
    # The old values of self are overwritten: no gradient flows to them.
    return None, _wanted(ctx, "src", lambda: _like(sum_to(grad, ctx.src.shape), ctx.src))


@differentiable("fill_.Scalar")
def _fill_(ctx: Context, grad: Tensor) -> Grads:
    return (None,)


@differentiable("normal_")
def _normal_(ctx: Context, grad: Tensor) -> Grads:
    return (None,)
