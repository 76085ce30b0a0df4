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

from .autograd import Context, TensorMeta, differentiable, not_differentiable_out, sum_to
from .indexing import slice_shape
from .operators import aten
from .shapes import wrap_dim
from .tensor import Tensor, convert

__all__ = ["sum_to"]

# One gradient per tensor argument: a Tensor, None (no gradient), or a list for a Tensor[].
Grads = tuple


def _like(grad: Tensor, meta: Union[Tensor, TensorMeta]) -> Tensor:
    """``grad`` in the dtype and on the device of the input it belongs to.

    torch's formulas call ``grad.to(options)``, which returns ``grad`` itself,
    calling no operator, when nothing changes (CompositeImplicitAutograd runs
    at the autograd key in torch, under no_grad too); here no_grad skips that
    key, so the call is not made at all then: a handler must not see it."""
    if grad.dtype is meta.dtype and grad.device == meta.device:
        return grad
    return convert(grad, dtype=meta.dtype, device=meta.device)


def _times(grad: Tensor, alpha: float) -> Tensor:
    """torch's maybe_multiply: ``grad * alpha``, or ``grad`` itself for an alpha of 1."""
    return grad if alpha == 1 else aten.mul.Scalar(grad, alpha)


# -- pointwise ----------------------------------------------------------------------------
# A formula's gradients keep the broadcast shape: backward sums each down to
# its input's shape (autograd._validate_gradient), as torch's engine does.
def _wanted(ctx: Context, name: str, gradient: Callable[[], Tensor]) -> Optional[Tensor]:
    """The gradient of argument ``name``, computed only if it is wanted."""
    return gradient() if ctx.needs_grad[name] else None


def _binary(ctx: Context, of_self: Callable[[], Tensor], of_other: Callable[[], Tensor]) -> Grads:
    """The gradients of ``self`` and ``other``, the one of ``other`` computed
    first, as torch's generated formulas do (their operators run in that order)."""
    other = _wanted(ctx, "other", of_other)
    return _wanted(ctx, "self", of_self), other


# The formulas of the operators every training step runs (add, mul, mm) test
# needs_grad inline, without _binary's closures.
@differentiable("add.Tensor")
def _add(ctx: Context, grad: Tensor) -> Grads:
    wanted = ctx.needs_grad
    return grad if wanted["self"] else None, _times(grad, ctx.alpha) if wanted["other"] else None


@differentiable("add_.Tensor")
def _add_(ctx: Context, grad: Tensor) -> Grads:
    return _add(ctx, grad)


@differentiable("sub.Tensor")
def _sub(ctx: Context, grad: Tensor) -> Grads:
    return _binary(ctx, lambda: grad, lambda: _times(aten.neg.default(grad), ctx.alpha))


@differentiable("rsub.Scalar")
def _rsub(ctx: Context, grad: Tensor) -> Grads:
    return (_times(aten.neg.default(grad), ctx.alpha),)


@differentiable("mul.Tensor", saves=("self", "other"))
def _mul(ctx: Context, grad: Tensor) -> Grads:
    wanted = ctx.needs_grad
    other = aten.mul.Tensor(grad, ctx.self) if wanted["other"] else None  # the second first, as torch
    return aten.mul.Tensor(grad, ctx.other) if wanted["self"] else None, other


@differentiable("div.Tensor", saves=("self", "other"))
def _div(ctx: Context, grad: Tensor) -> Grads:
    def grad_other() -> Tensor:
        # d(a/b)/db = -a/b^2 = -grad * ((a/b) / b)
        quotient = aten.div.Tensor(aten.div.Tensor(ctx.self, ctx.other), ctx.other)
        return aten.mul.Tensor(aten.neg.default(grad), quotient)

    return _binary(ctx, lambda: aten.div.Tensor(grad, ctx.other), grad_other)


@differentiable("add.Scalar")
def _add_scalar(ctx: Context, grad: Tensor) -> Grads:
    return (grad,)


@differentiable("mul.Scalar")
def _mul_scalar(ctx: Context, grad: Tensor) -> Grads:
    return (aten.mul.Scalar(grad, ctx.other),)


@differentiable("div.Scalar")
def _div_scalar(ctx: Context, grad: Tensor) -> Grads:
    return (aten.div.Scalar(grad, ctx.other),)


@differentiable("abs", saves=("self",))
def _abs(ctx: Context, grad: Tensor) -> Grads:
    return (aten.mul.Tensor(grad, aten.sgn.default(ctx.self)),)


@differentiable("sgn")
def _sgn(ctx: Context, grad: Tensor) -> Grads:
    return (aten.zeros_like.default(grad),)  # torch's sgn_backward of a real tensor


@differentiable("neg")
def _neg(ctx: Context, grad: Tensor) -> Grads:
    return (aten.neg.default(grad),)


@differentiable("reciprocal", saves=("result",))
def _reciprocal(ctx: Context, grad: Tensor) -> Grads:
    # d(1/x)/dx = -1/x^2 = -result^2; torch's -grad * (result * result) squares first.
    square = aten.mul.Tensor(ctx.result, ctx.result)
    return (aten.mul.Tensor(aten.neg.default(grad), square),)


@differentiable("exp", saves=("result",))
def _exp(ctx: Context, grad: Tensor) -> Grads:
    return (aten.mul.Tensor(grad, ctx.result),)


@differentiable("log", saves=("self",))
def _log(ctx: Context, grad: Tensor) -> Grads:
    return (aten.div.Tensor(grad, ctx.self),)


@differentiable("sin", saves=("self",))
def _sin(ctx: Context, grad: Tensor) -> Grads:
    return (aten.mul.Tensor(grad, aten.cos.default(ctx.self)),)


@differentiable("sin_", saves=("self",))
def _sin_(ctx: Context, grad: Tensor) -> Grads:
    return _sin(ctx, grad)  # ctx.self: the values before the write (see autograd._context_plan)


@differentiable("pow.Tensor_Scalar", saves=("self",))
def _pow_tensor_scalar(ctx: Context, grad: Tensor) -> Grads:
    """torch's pow_backward: ``grad * exponent * self ** (exponent - 1)``, zeros for an exponent of 0."""
    if ctx.exponent == 0:
        return (aten.zeros_like.default(ctx.self),)
    power = aten.pow.Tensor_Scalar(ctx.self, ctx.exponent - 1)
    return (aten.mul.Tensor(grad, aten.mul.Scalar(power, ctx.exponent)),)


@differentiable("cos", saves=("self",))
def _cos(ctx: Context, grad: Tensor) -> Grads:
    # torch's grad * -self.sin().conj(): the negation is of sin's result.  The
    # temporaries live until the formula returns, as C++'s do until the end
    # of the expression (a handler tracking memory sees them alive).
    sin = aten.sin.default(ctx.self)
    minus_sin = aten.neg.default(sin)
    return (aten.mul.Tensor(grad, minus_sin),)


@differentiable("acos", saves=("self",))
def _acos(ctx: Context, grad: Tensor) -> Grads:
    # torch's grad * -((-self * self + 1).rsqrt()), its operators in its order.
    square = aten.mul.Tensor(aten.neg.default(ctx.self), ctx.self)
    root = aten.rsqrt.default(aten.add.Scalar(square, 1))
    return (aten.mul.Tensor(grad, aten.neg.default(root)),)


@differentiable("rsqrt", saves=("result",))
def _rsqrt(ctx: Context, grad: Tensor) -> Grads:
    # torch's -0.5 * grad * result.pow(3)
    return (aten.mul.Tensor(aten.mul.Tensor(grad, -0.5), aten.pow.Tensor_Scalar(ctx.result, 3)),)


@differentiable("relu", saves=("result",))
def _relu(ctx: Context, grad: Tensor) -> Grads:
    # The gradient where the result is positive.
    return (aten.threshold_backward.default(grad, ctx.result, 0),)


@differentiable("threshold_backward", saves=("self",))
def _threshold_backward(ctx: Context, grad: Tensor) -> Grads:
    # torch's formulas, in the order its generated code runs them (grad_output's first here).
    grad_output = _wanted(ctx, "grad_output", lambda: aten.threshold_backward.default(grad, ctx.self, ctx.threshold))
    return grad_output, _wanted(ctx, "self", lambda: aten.zeros_like.default(grad))


# -- reductions and products ------------------------------------------------------------------
# The reductions' gradients have the result's dtype (sum's and mean's
# ``dtype``): backward converts each to its input's (autograd._validate_gradient).
@differentiable("sum")
def _sum(ctx: Context, grad: Tensor) -> Grads:
    return (aten.expand.default(grad, list(ctx.self.shape)),)


@differentiable("sum.dim_IntList")
def _sum_dim(ctx: Context, grad: Tensor) -> Grads:
    if not ctx.keepdim:  # put the reduced dimensions back, as size 1, lowest first (torch's unsqueeze_multiple)
        ndim = len(ctx.self.shape)
        dims = range(ndim) if not ctx.dim else sorted({wrap_dim(d, ndim) for d in ctx.dim})
        for d in dims:
            grad = aten.unsqueeze.default(grad, d)
    return (aten.expand.default(grad, list(ctx.self.shape)),)


@differentiable("mean")
def _mean(ctx: Context, grad: Tensor) -> Grads:
    spread = aten.expand.default(grad, list(ctx.self.shape))
    return (aten.div.Scalar(spread, math.prod(ctx.self.shape)),)


@differentiable("mm", saves=("self", "mat2"))
def _mm(ctx: Context, grad: Tensor) -> Grads:
    wanted = ctx.needs_grad
    mat2 = aten.mm.default(aten.t.default(ctx.self), grad) if wanted["mat2"] else None  # the second first, as torch
    return aten.mm.default(grad, aten.t.default(ctx.mat2)) if wanted["self"] else None, mat2


@differentiable("bmm", saves=("self", "mat2"))
def _bmm(ctx: Context, grad: Tensor) -> Grads:
    mat2 = _wanted(ctx, "mat2", lambda: aten.bmm.default(aten.transpose.int(ctx.self, 1, 2), grad))
    return _wanted(ctx, "self", lambda: aten.bmm.default(grad, aten.transpose.int(ctx.mat2, 1, 2))), mat2


@differentiable("addmv", saves=("mat", "vec"))
def _addmv(ctx: Context, grad: Tensor) -> Grads:
    # torch's: grad * beta; alpha * grad.ger(vec) (the outer product, by broadcasting); alpha * mat.t() @ grad.
    vec = _wanted(ctx, "vec", lambda: _times(aten.mv.default(aten.t.default(ctx.mat), grad), ctx.alpha))
    mat = _wanted(ctx, "mat", lambda: _times(aten.mul.Tensor(aten.unsqueeze.default(grad, 1), ctx.vec), ctx.alpha))
    return _wanted(ctx, "self", lambda: _times(grad, ctx.beta)), mat, vec


@differentiable("_foobar")
def _foobar(ctx: Context, grad: Tensor) -> Grads:
    # torch has no formula for it: its result's grad_fn raises when backward reaches it.
    raise RuntimeError("derivative for aten::_foobar is not implemented")


@differentiable("set_.source_Tensor")
def _set_(ctx: Context, grad: Tensor) -> Grads:
    # torch has no formula for it: the result's grad_fn raises when backward reaches it.
    raise RuntimeError("derivative for aten::set_ is not implemented")


@differentiable("mv", saves=("self", "vec"))
def _mv(ctx: Context, grad: Tensor) -> Grads:
    # torch's grad.ger(vec) for the matrix: the outer product, by broadcasting.
    vec = _wanted(ctx, "vec", lambda: aten.mv.default(aten.t.default(ctx.self), grad))
    return _wanted(ctx, "self", lambda: aten.mul.Tensor(aten.unsqueeze.default(grad, 1), ctx.vec)), vec


@differentiable("dot", saves=("self", "tensor"))
def _dot(ctx: Context, grad: Tensor) -> Grads:
    other = _wanted(ctx, "tensor", lambda: aten.mul.Tensor(grad, ctx.self))
    return _wanted(ctx, "self", lambda: aten.mul.Tensor(grad, ctx.tensor)), other


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


@differentiable("slice.Tensor")
def _slice(ctx: Context, grad: Tensor) -> Grads:
    _, dim, start, end = slice_shape(ctx.self.shape, ctx.dim, ctx.start, ctx.end, ctx.step)
    return (aten.slice_backward.default(grad, list(ctx.self.shape), dim, start, end, ctx.step),)


@differentiable("slice_backward")
def _slice_backward(ctx: Context, grad: Tensor) -> Grads:
    return (aten.slice.Tensor(grad, ctx.dim, ctx.start, ctx.end, ctx.step),)


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


# -- out= operators: never recorded ---------------------------------------------------------
not_differentiable_out("abs.out")
