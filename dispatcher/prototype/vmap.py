"""vmap: write a function for one example, run it on a batch.

``vmap(f)(xs)`` wraps each input in a ``BatchedTensor``: a tensor-like whose
``value`` holds the whole batch (batch dimension first) and whose keyset
adds FuncTorchBatched, a key above autograd.  Every operator ``f`` calls on
it therefore dispatches to FuncTorchBatched first, where three kinds of
kernels compete, in the dispatcher's order of precedence:

1. hand-written *batching rules* (kernels on FuncTorchBatched) that run the
   operator once on the whole batch: pointwise ops, sum and mean, the
   matrix products, unsqueeze and squeeze_;
2. *decompositions* (kernels on the FuncTorchBatchedDecomposition alias):
   the CompositeImplicitAutograd kernels of matmul, reshape and to, as
   functorch decomposes them, so they batch through the operators they call;
3. the boxed *fallback*, for every other operator: call it once per example
   and stack the results (installed with the prototype's other backend
   fallbacks, see backend_fallbacks.py).

A BatchedTensor's ``level`` is the vmap nesting depth that made it; a rule
unwraps only the innermost level present, so vmap nests.  Autograd runs
below, on the plain tensors the rules produce, so gradients flow through
vmap.
"""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Callable, Optional, Sequence, Union

from dispatcher import (
    DispatchKey,
    DispatchKeySet,
    Library,
    OperatorHandle,
    Stack,
    TensorBase,
    box_returns,
    unbox_arguments,
)

from dispatcher.value_types import device as Device
from dispatcher.vmap_rules import register_batching

from . import shapes
from .composite import DECOMPOSITIONS, check_mean_dtype
from .dtypes import optional_dtype
from .operators import aten, overload
from .shapes import wrap_dim
from .tensor import TensorMethods

__all__ = ["BatchedTensor", "batched_fallback", "set_vmap_fallback_warning_enabled", "vmap"]

_BATCHED = DispatchKeySet(DispatchKey.FuncTorchBatched)


class BatchedTensor(TensorMethods, TensorBase):
    """One example's view of a batch: ``shape`` leaves out the batch dimension."""

    __slots__ = ("value", "level")

    def __init__(self, value: Any, level: int) -> None:
        TensorBase.__init__(self, value.key_set | _BATCHED)
        self.value = value
        self.level = level

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape[1:]

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def device(self) -> Device:
        return self.value.device

    @property
    def requires_grad(self) -> bool:
        return self.value.requires_grad

    def is_contiguous(self) -> bool:
        return self.value.is_contiguous()

    def stride(self) -> tuple[int, ...]:
        return self.value.stride()[1:]

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self.level}, bdim=0, value={self.value!r})"


class _VmapState(threading.local):
    level = 0


_state = _VmapState()
_warn_on_fallback = [False]


def set_vmap_fallback_warning_enabled(enabled: bool) -> None:
    """Warn whenever an operator runs through the per-example fallback (PyTorch's
    ``torch._C._functorch._set_vmap_fallback_warning_enabled``); off by default."""
    _warn_on_fallback[0] = bool(enabled)


def _level_of(value: Any) -> int:
    return value.level if isinstance(value, BatchedTensor) else 0


def _current_level(values: Sequence[Any]) -> int:
    return max(_level_of(x) for v in values for x in (v if isinstance(v, list) else (v,)))


def _slice(value: Any, i: int, level: int) -> Any:
    if isinstance(value, list):
        return [_slice(v, i, level) for v in value]
    if _level_of(value) == level:
        return aten.select.int(value.value, 0, i)
    return value


# -- the fallback ----------------------------------------------------------------------------
def _loop(op: OperatorHandle, values: Sequence[Any]) -> Any:
    """Run ``op`` once per example and stack each result along a new batch dimension.

    An in-place operator writes each example's slice; the stacked slices are
    then copied into the batched argument it writes, which it returns.
    """
    if _warn_on_fallback[0]:
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule for {op.name()}."
        )
    schema = op.schema
    level = _current_level(values)
    for argument, value in zip(schema.arguments, values):
        if argument.is_write and _level_of(value) != level:
            raise RuntimeError(
                f"vmap: {op.name()}(self, *extra_args) is not possible because self is not batched while "
                "another argument is; use the out-of-place operator instead."
            )
    size = next(x.value.shape[0] for v in values for x in (v if isinstance(v, list) else (v,))
                if _level_of(x) == level)
    per_example = []
    for i in range(size):
        args, kwargs = schema.split_call([_slice(v, i, level) for v in values])
        per_example.append(op(*args, **kwargs))
    if not schema.returns:
        return None
    columns = [per_example] if len(schema.returns) == 1 else list(zip(*per_example))
    results = []
    for j, column in enumerate(columns):
        if not all(isinstance(r, TensorBase) for r in column):
            raise NotImplementedError(f"vmap: the fallback cannot batch the non-tensor results of {op.name()}")
        stacked = aten.stack.default(list(column), 0)
        aliased = schema.aliased_arguments(j)
        if aliased and schema.returns[j].is_write:
            target = values[aliased[0]]
            aten.copy_.default(target.value, stacked)
            results.append(target)
        else:
            results.append(BatchedTensor(stacked, level))
    return results[0] if len(results) == 1 else tuple(results)


def batched_fallback(op: OperatorHandle, keyset: DispatchKeySet, stack: Stack) -> None:
    """The FuncTorchBatched backend fallback: the per-example loop."""
    values = unbox_arguments(op.schema, stack)
    box_returns(op.schema, _loop(op, values), stack)


# -- batching rules ----------------------------------------------------------------------------
_rules = Library("aten", "IMPL", "FuncTorchBatched")


def _rule(*names: str):
    def register(make: Callable[[OperatorHandle], Callable]) -> Callable:
        for name in names:
            _rules.impl(name, make(overload(name)))
        return make

    return register


def _physical(x: Any, level: int) -> Any:
    """The batch of ``x`` (batch dimension first) if it is batched at ``level``, else ``x``."""
    return x.value if _level_of(x) == level else x


@_rule("neg", "exp", "log", "reciprocal", "relu", "clone", "gt.Scalar", "rsub.Scalar")
def _elementwise(op: OperatorHandle) -> Callable:
    def rule(self: BatchedTensor, *args: Any, **kwargs: Any) -> BatchedTensor:
        # self is the only tensor, so it is batched at the current level.
        return BatchedTensor(op(self.value, *args, **kwargs), self.level)

    return rule


def _aligned(x: Any, level: int, rank: int) -> Any:
    """The physical value of ``x`` if batched at ``level``, with size-1 dimensions
    after the batch dimension so that it broadcasts like a rank-``rank`` tensor."""
    if _level_of(x) != level:
        return x
    value, missing = x.value, rank - x.ndim
    if not missing:
        return value
    return aten.reshape.default(value, [value.shape[0], *[1] * missing, *value.shape[1:]])


@_rule("add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor")
def _broadcasting(op: OperatorHandle) -> Callable:
    def rule(self: Any, other: Any, **kwargs: Any) -> BatchedTensor:
        level = max(_level_of(self), _level_of(other))
        rank = max(getattr(self, "ndim", 0), getattr(other, "ndim", 0))  # a number has none
        return BatchedTensor(op(_aligned(self, level, rank), _aligned(other, level, rank), **kwargs), level)

    return rule


# The products: checked as one example's, computed by matmul on the batches,
# which puts the batch dimension in front and broadcasts an unbatched operand.
_MATRIX_PRODUCT_CHECKS = {"mm": shapes.mm_shape, "bmm": shapes.bmm_shape}


@_rule("mm", "bmm")
def _matrix_products(op: OperatorHandle) -> Callable:
    check = _MATRIX_PRODUCT_CHECKS[op._opname]

    def rule(self: Any, mat2: Any) -> BatchedTensor:
        check(self, mat2)
        level = _current_level((self, mat2))
        return BatchedTensor(aten.matmul.default(_physical(self, level), _physical(mat2, level)), level)

    return rule


@_rule("mv")
def _mv(op: OperatorHandle) -> Callable:
    def rule(self: Any, vec: Any) -> BatchedTensor:
        shapes.mv_shape(self, vec)
        level = _current_level((self, vec))
        matrix, vector = _physical(self, level), _physical(vec, level)
        if _level_of(vec) != level:  # [B, n, k] @ [k]
            return BatchedTensor(aten.matmul.default(matrix, vector), level)
        if _level_of(self) != level:  # [B, k] @ [k, n]
            return BatchedTensor(aten.matmul.default(vector, aten.t.default(matrix)), level)
        columns = aten.matmul.default(matrix, aten.unsqueeze.default(vector, -1))  # [B, n, 1]
        return BatchedTensor(aten.squeeze.dim(columns, -1), level)

    return rule


@_rule("dot")
def _dot(op: OperatorHandle) -> Callable:
    def rule(self: Any, tensor: Any) -> BatchedTensor:
        shapes.dot_shape(self, tensor)
        level = _current_level((self, tensor))
        a, b = _physical(self, level), _physical(tensor, level)
        if _level_of(self) == _level_of(tensor):  # [B, k] . [B, k]
            return BatchedTensor(aten.sum.dim_IntList(aten.mul.Tensor(a, b), [1]), level)
        batch, vector = (a, b) if _level_of(self) == level else (b, a)
        return BatchedTensor(aten.matmul.default(batch, vector), level)

    return rule


@_rule("unsqueeze")
def _unsqueeze(op: OperatorHandle) -> Callable:
    def rule(self: BatchedTensor, dim: int) -> BatchedTensor:
        return BatchedTensor(op(self.value, wrap_dim(dim, self.ndim + 1) + 1), self.level)

    return rule


@_rule("squeeze_.dim")
def _squeeze_(op: OperatorHandle) -> Callable:
    def rule(self: BatchedTensor, dim: int) -> BatchedTensor:
        # In place: the batch changes shape, and the BatchedTensor's shape is the batch's.
        dim = wrap_dim(dim, self.ndim)
        if self.ndim:
            op(self.value, dim + 1)
        return self

    return rule


def _reduced_dims(self: BatchedTensor) -> list[int]:
    return list(range(1, self.value.ndim))


@_rule("sum")
def _sum(op: OperatorHandle) -> Callable:
    def rule(self: BatchedTensor, *, dtype: Any = None) -> Any:
        if self.ndim == 0:  # sum.dim_IntList would read an empty dim list as "all dims"
            return _loop(op, (self, dtype))
        return BatchedTensor(aten.sum.dim_IntList(self.value, _reduced_dims(self), False, dtype=dtype), self.level)

    return rule


@_rule("mean")
def _mean(op: OperatorHandle) -> Callable:
    def rule(self: BatchedTensor, *, dtype: Any = None) -> Any:
        dtype = optional_dtype(dtype)
        check_mean_dtype(self, dtype)
        if self.ndim == 0:  # as sum
            return _loop(op, (self, dtype))
        total = aten.sum.dim_IntList(self.value, _reduced_dims(self), False, dtype=dtype)
        return BatchedTensor(aten.div.Tensor(total, self.numel()), self.level)

    return rule


_decompositions = Library("aten", "IMPL", "FuncTorchBatchedDecomposition")
for _name, _fn in DECOMPOSITIONS.items():
    _decompositions.impl(_name, _fn)


# -- torch.library.register_vmap's rules (dispatcher/vmap_rules.py) ----------------------------------
class _Batching:
    """BatchedTensors as registered vmap rules see them: batch dimension 0 of ``value``."""

    def current_level(self, values: tuple[Any, ...]) -> Optional[tuple[int, int, str]]:
        level = max((_level_of(x) for v in values for x in (v if isinstance(v, (list, tuple)) else (v,))), default=0)
        if not level:
            return None
        size = next(x.value.shape[0] for v in values for x in (v if isinstance(v, (list, tuple)) else (v,))
                    if _level_of(x) == level)
        return level, size, "error"  # torch's default randomness: random operators under vmap raise

    def unwrap(self, value: Any, level: int) -> tuple[Any, Optional[int]]:
        return (value.value, 0) if _level_of(value) == level else (value, None)

    def wrap(self, value: Any, out_dim: int, level: int) -> Any:
        return BatchedTensor(_move_dim(value, out_dim, 0), level)


register_batching(_Batching())


# -- vmap ---------------------------------------------------------------------------------------
def _move_dim(x: Any, source: int, destination: int) -> Any:
    source, destination = wrap_dim(source, x.ndim), wrap_dim(destination, x.ndim)
    if source == destination:
        return x
    dims = [d for d in range(x.ndim) if d != source]
    dims.insert(destination, source)
    return aten.permute.default(x, dims)


def vmap(func: Callable, in_dims: Union[int, None, tuple[Optional[int], ...], list[Optional[int]]] = 0,
         out_dims: int = 0) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its positional inputs (None:
    not mapped); keyword arguments are passed to every call as they are (as
    torch.vmap does); results are stacked along ``out_dims``."""

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        dims = tuple(in_dims) if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries for {len(args)} inputs")
        sizes = {a.shape[wrap_dim(d, a.ndim)] for a, d in zip(args, dims) if d is not None}
        if not sizes:
            raise ValueError("vmap: at least one input must be mapped (an in_dims entry that is not None)")
        if len(sizes) > 1:
            raise ValueError(f"vmap: inputs have different sizes in the mapped dimension: {sorted(sizes)}")
        _state.level += 1
        level = _state.level
        try:
            batched = [a if d is None else BatchedTensor(_move_dim(a, d, 0), level) for a, d in zip(args, dims)]
            out = func(*batched, **kwargs)
        finally:
            _state.level -= 1
        size = sizes.pop()
        if isinstance(out, tuple):
            return tuple(_unbatched(o, level, size, out_dims) for o in out)
        return _unbatched(out, level, size, out_dims)

    return wrapped


def _unbatched(out: Any, level: int, size: int, out_dim: int) -> Any:
    if _level_of(out) == level:
        value = out.value
    elif isinstance(out, TensorBase):  # not batched: every example gave the same result
        value = aten.expand.default(aten.reshape.default(out, [1, *out.shape]), [size, *out.shape])  # type: ignore[attr-defined]  # a tensor-like
    else:
        raise ValueError(f"vmap: the function must return tensors, got {type(out).__name__}")
    return _move_dim(value, 0, out_dim)
