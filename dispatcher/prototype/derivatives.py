"""Derivative formulas, one per differentiable primitive (PyTorch's derivatives.yaml).

Each formula gets the forward call's arguments on ``ctx`` and the gradient
of the result, and returns the gradient of each tensor argument.  Formulas
are written with operators, so they run on any device and under vmap.
Composite operators (sub, mean, relu, reshape, ...) need none: autograd
sees the primitives they decompose into.
"""
from __future__ import annotations

from typing import Sequence, Union

from .autograd import Context, TensorMeta, differentiable
from .operators import OP
from .shapes import matmul_shape, reduce_shape
from .tensor import Tensor

__all__ = ["sum_to"]

# One gradient per tensor argument: a Tensor, None (no gradient), or a list for a Tensor[].
Grads = tuple


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Undo broadcasting: sum ``grad`` down to ``shape``."""
    lead = grad.ndim - len(shape)
    if lead:
        grad = OP["sum.dim_IntList"](grad, list(range(lead)), False)
    dims = [i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1]
    if dims:
        grad = OP["sum.dim_IntList"](grad, dims, True)
    return grad


def _like(grad: Tensor, meta: Union[Tensor, TensorMeta]) -> Tensor:
    """``grad`` in the dtype and on the device of the input it belongs to."""
    return OP["to"](grad, dtype=meta.dtype, device=meta.device)


@differentiable("add.Tensor")
def _add(ctx: Context, grad: Tensor) -> Grads:
    other = grad if ctx.alpha == 1 else OP["mul.Scalar"](grad, ctx.alpha)
    return sum_to(grad, ctx.self.shape), sum_to(other, ctx.other.shape)


@differentiable("add_.Tensor")
def _add_(ctx: Context, grad: Tensor) -> Grads:
    return _add(ctx, grad)


@differentiable("add.Scalar")
def _add_scalar(ctx: Context, grad: Tensor) -> Grads:
    return (grad,)


@differentiable("mul.Tensor", saves=("self", "other"))
def _mul(ctx: Context, grad: Tensor) -> Grads:
    return (sum_to(OP["mul.Tensor"](grad, ctx.other), ctx.self.shape),
            sum_to(OP["mul.Tensor"](grad, ctx.self), ctx.other.shape))


@differentiable("mul.Scalar")
def _mul_scalar(ctx: Context, grad: Tensor) -> Grads:
    return (OP["mul.Scalar"](grad, ctx.other),)


@differentiable("div.Tensor", saves=("self", "other"))
def _div(ctx: Context, grad: Tensor) -> Grads:
    grad_self = OP["div.Tensor"](grad, ctx.other)
    # d(a/b)/db = -a/b^2 = -(grad/b) * (a/b)
    grad_other = OP["neg"](OP["mul.Tensor"](grad_self, OP["div.Tensor"](ctx.self, ctx.other)))
    return sum_to(grad_self, ctx.self.shape), sum_to(grad_other, ctx.other.shape)


@differentiable("neg")
def _neg(ctx: Context, grad: Tensor) -> Grads:
    return (OP["neg"](grad),)


@differentiable("exp", saves=("result",))
def _exp(ctx: Context, grad: Tensor) -> Grads:
    return (OP["mul.Tensor"](grad, ctx.result),)


@differentiable("log", saves=("self",))
def _log(ctx: Context, grad: Tensor) -> Grads:
    return (OP["div.Tensor"](grad, ctx.self),)


@differentiable("sum")
def _sum(ctx: Context, grad: Tensor) -> Grads:
    return (_like(OP["expand"](grad, list(ctx.self.shape)), ctx.self),)


@differentiable("sum.dim_IntList")
def _sum_dim(ctx: Context, grad: Tensor) -> Grads:
    if not ctx.keepdim:  # put the reduced dimensions back, as size 1
        grad = OP["reshape"](grad, list(reduce_shape(ctx.self.shape, ctx.dim, keepdim=True)))
    return (_like(OP["expand"](grad, list(ctx.self.shape)), ctx.self),)


@differentiable("matmul", saves=("self", "other"))
def _matmul(ctx: Context, grad: Tensor) -> Grads:
    a, b = ctx.self, ctx.other
    # Work with the operands as matmul promotes them (a vector is a 1xk or kx1
    # matrix) and the gradient with the dimensions that promotion removed.
    a2 = _reshaped(a, (1, -1) if a.ndim == 1 else a.shape)
    b2 = _reshaped(b, (-1, 1) if b.ndim == 1 else b.shape)
    g2 = _reshaped(grad, matmul_shape(a2.shape, b2.shape))
    grad_a = sum_to(OP["matmul"](g2, OP["transpose.int"](b2, -1, -2)), a2.shape)
    grad_b = sum_to(OP["matmul"](OP["transpose.int"](a2, -1, -2), g2), b2.shape)
    return _reshaped(grad_a, a.shape), _reshaped(grad_b, b.shape)


def _reshaped(t: Tensor, shape: Sequence[int]) -> Tensor:
    return t if t.shape == tuple(shape) else OP["reshape"](t, list(shape))


@differentiable("permute")
def _permute(ctx: Context, grad: Tensor) -> Grads:
    inverse = [0] * len(ctx.dims)
    for i, d in enumerate(ctx.dims):
        inverse[d % len(ctx.dims)] = i
    return (OP["permute"](grad, inverse),)


@differentiable("view")
def _view(ctx: Context, grad: Tensor) -> Grads:
    return (OP["reshape"](grad, list(ctx.self.shape)),)


@differentiable("expand")
def _expand(ctx: Context, grad: Tensor) -> Grads:
    return (sum_to(grad, ctx.self.shape),)


@differentiable("select.int")
def _select(ctx: Context, grad: Tensor) -> Grads:
    return (OP["select_backward"](grad, list(ctx.self.shape), ctx.dim, ctx.index),)


@differentiable("stack")
def _stack(ctx: Context, grad: Tensor) -> Grads:
    return ([OP["select.int"](grad, ctx.dim, i) for i in range(len(ctx.tensors))],)


@differentiable("clone")
def _clone(ctx: Context, grad: Tensor) -> Grads:
    return (grad,)


@differentiable("_to_copy")
def _to_copy(ctx: Context, grad: Tensor) -> Grads:
    return (_like(grad, ctx.self),)


@differentiable("copy_")
def _copy_(ctx: Context, grad: Tensor) -> Grads:
    # The old values of self are overwritten: no gradient flows to them.
    return None, _like(sum_to(grad, ctx.src.shape), ctx.src)


@differentiable("fill_.Scalar")
def _fill_(ctx: Context, grad: Tensor) -> Grads:
    return (None,)


@differentiable("normal_")
def _normal_(ctx: Context, grad: Tensor) -> Grads:
    return (None,)
