"""Composite kernels: operators written in terms of other operators, where torch 2.13 has them.

* CompositeImplicitAutograd (``DECOMPOSITIONS``): matmul, reshape, movedim
  and the ``to`` overloads, torch's decompositions.  Such a kernel serves every
  backend *and* autograd: autograd, the tracer and vmap (which reuses them as
  batching decompositions, vmap.py) see the operators it calls, so it needs
  no derivative of its own.
* CompositeExplicitAutograd: kernels that serve every backend but not
  autograd, which has a formula of its own for each (derivatives.py) or, for
  the factories, nothing to do.  They are sum and mean (through
  sum.dim_IntList), rsub, the copies (clone, copy_, _to_copy), the
  factories as "allocate, then fill" -- so a new device needs only ``empty``
  and ``_copy_from`` to get them all -- and those of torch's views every
  backend shares that a row-major buffer can express: t and transpose
  (through permute), and unsqueeze, squeeze, squeeze_ and _unsafe_view (the
  same memory in a new shape, Tensor._with_shape).  torch's other such views
  (permute, expand, select) need strides, which only numpy memory has here:
  they are CPU and Meta kernels, and the toy device runs them through its CPU
  fallback.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from dispatcher import DispatchKey, Library
from dispatcher.dispatch_modes import _get_current_dispatch_mode

from . import shapes
from .dtypes import DType, default_float, optional_dtype, result_type
from .kernels_cpu import copy_between_cpu_tensors
from .operators import aten
from .tensor import Tensor, contiguous_strides, cpu_tensor, normalize_device, tensor_operand
from .tensor_options import check_memory_format, contiguous_format, preserve_format, strided

__all__ = ["DECOMPOSITIONS", "check_mean_dtype"]

_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")
_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")

# Operator name -> its CompositeImplicitAutograd kernel.
DECOMPOSITIONS: dict[str, Callable] = {}


def _decomposition(*names: str):
    def register(fn: Callable) -> Callable:
        for name in names:
            _implicit.impl(name, fn)
            DECOMPOSITIONS[name] = fn
        return fn

    return register


def _explicit_kernel(*names: str):
    def register(fn: Callable) -> Callable:
        for name in names:
            _explicit.impl(name, fn)
        return fn

    return register


# -- CompositeImplicitAutograd: matmul --------------------------------------------------------
@_decomposition("matmul")
def matmul(self: Any, other: Any) -> Any:
    """torch's matmul (at::native::_matmul_impl): dot, mv or mm for vectors and
    matrices; the batch of the larger operand folded into one mm or mv where
    that copies nothing; else bmm over the broadcast batch dimensions."""
    dim1, dim2 = self.dim(), other.dim()
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D")
    if dim1 == 1 and dim2 == 1:
        return aten.dot.default(self, other)
    if dim1 == 2 and dim2 == 1:
        return aten.mv.default(self, other)
    if dim1 == 1 and dim2 == 2:
        return aten.squeeze_.dim(aten.mm.default(aten.unsqueeze.default(self, 0), other), 0)
    if dim1 == 2 and dim2 == 2:
        return aten.mm.default(self, other)
    if _should_fold(self, other):
        return _folded_matmul(self, other)
    return _batched_matmul(self, other)


def _transposed_matrices(t: Any) -> Any:
    """torch's ``t.mT`` (a CompositeImplicitAutograd operator: this transpose)."""
    return aten.transpose.int(t, -2, -1)


def _contiguous(t: Any) -> Any:
    """torch's ``t.contiguous()`` (a CompositeImplicitAutograd operator: t, or this clone)."""
    return t if t.is_contiguous() else aten.clone.default(t, memory_format=contiguous_format)


def _should_fold(tensor1: Any, tensor2: Any) -> bool:
    """Whether matmul folds the batch of the larger operand into one mm or mv
    (torch's should_fold): when the other operand requires grad (its gradient
    is then one product, not a batch of them summed), or when folding is a
    view."""
    tensor1_larger = tensor1.dim() >= tensor2.dim()
    t1 = tensor1 if tensor1_larger else _transposed_matrices(tensor2)
    smaller = tensor2 if tensor1_larger else tensor1
    if not (t1.dim() >= 3 and smaller.dim() <= 2):
        return False
    if smaller.requires_grad:
        return True
    if tensor1.dim() == 2:  # the result would need a transposing copy
        return False
    if t1.numel() == 0:
        return True
    sizes, strides = t1.shape, t1.stride()
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(t1.dim() - 2))


def _folded_matmul(tensor1: Any, tensor2: Any) -> Any:
    # t1 is the operand of 3 or more dimensions, t2 a matrix or vector; when
    # that is tensor2, (tensor1 @ tensor2).mT is computed as tensor2.mT @ tensor1.mT.
    transpose = tensor2.dim() > tensor1.dim()
    if transpose:
        t1 = _transposed_matrices(tensor2)
        t2 = aten.t.default(tensor1) if tensor1.dim() == 2 else tensor1
    else:
        t1, t2 = tensor1, tensor2
    output_shape = list(t1.shape[:-1])
    t1_folded = aten.reshape.default(t1, [math.prod(output_shape), t1.shape[-1]])
    if t2.dim() == 1:
        return aten._unsafe_view.default(aten.mv.default(t1_folded, t2), output_shape)
    output = aten._unsafe_view.default(aten.mm.default(t1_folded, t2), [*output_shape, t2.shape[1]])
    return _contiguous(_transposed_matrices(output)) if transpose else output


def _batched_matmul(tensor1: Any, tensor2: Any) -> Any:
    dim1, dim2 = tensor1.dim(), tensor2.dim()
    n = tensor1.shape[-2] if dim1 > 1 else 1
    m1 = tensor1.shape[-1]
    m2 = tensor2.shape[-2] if dim2 > 1 else tensor2.shape[0]
    p = tensor2.shape[-1] if dim2 > 1 else 1
    batch1, batch2 = tensor1.shape[:max(dim1 - 2, 0)], tensor2.shape[:max(dim2 - 2, 0)]
    if dim1 == 3 and dim2 == 3 and batch1[0] != batch2[0]:
        # As should_fold, for a batch of one that broadcasts.
        if batch1[0] == 1 and _needs_batch_gradient(tensor1):
            return matmul(aten.squeeze.dim(tensor1, 0), tensor2)
        if batch2[0] == 1 and _needs_batch_gradient(tensor2):
            return matmul(tensor1, aten.squeeze.dim(tensor2, 0))
    batch = list(shapes.broadcast_shapes(batch1, batch2))
    count = math.prod(batch)
    expanded1 = aten.reshape.default(aten.expand.default(tensor1, [*batch, n, m1]), [count, n, m1])
    if dim2 == 1:
        expanded2 = aten.unsqueeze.default(
            aten.reshape.default(aten.expand.default(tensor2, [*batch, m2]), [count, m2]), 2)
        product = aten.squeeze.dim(aten.bmm.default(expanded1, expanded2), -1)
    else:
        expanded2 = aten.reshape.default(aten.expand.default(tensor2, [*batch, m2, p]), [count, m2, p])
        product = aten.bmm.default(expanded1, expanded2)
    output_shape = batch + ([n] if dim1 > 1 else []) + ([p] if dim2 > 1 else [])
    return aten._unsafe_view.default(product, output_shape)


def _needs_batch_gradient(t: Any) -> bool:
    """``t.requires_grad``, or torch's isTensorSubclassLike(t) (a dispatch mode
    is active, or ``t`` has a Python handler), which torch treats alike here."""
    return t.requires_grad or _get_current_dispatch_mode() is not None or t.key_set.has(DispatchKey.Python)


# -- CompositeImplicitAutograd: reshape and to ---------------------------------------------
@_decomposition("reshape")
def reshape(self: Any, shape: Sequence[int]) -> Any:
    """A view when the memory allows one, else a copy (torch's reshape, as it
    runs under a dispatch mode: view where eager torch calls _reshape_alias,
    which make_fx never records)."""
    if self.is_contiguous():
        return aten.view.default(self, shape)
    size = list(shapes.view_shape(self.shape, shape))
    if shapes.compute_stride(self.shape, self.stride(), size) is not None:
        return aten.view.default(self, size)
    return aten._unsafe_view.default(aten.clone.default(self, memory_format=contiguous_format), size)


@_decomposition("movedim.int", "movedim.intlist")
def movedim(self: Any, source: Any, destination: Any) -> Any:
    """torch's movedim: a permute that puts each ``source`` dimension at its
    ``destination``, the others keeping their order in the places left."""
    sources = [source] if isinstance(source, int) else list(source)
    destinations = [destination] if isinstance(destination, int) else list(destination)
    if len(sources) != len(destinations):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({sources} dims) should contain "
                           f"the same number of dims as destination ({destinations} dims)")
    moved = [shapes.wrap_dim(d, self.ndim) for d in sources]
    placed = [shapes.wrap_dim(d, self.ndim) for d in destinations]
    for what, given, wrapped in (("source", sources, moved), ("destination", destinations, placed)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({given})")
    order: list[Optional[int]] = [None] * self.ndim
    for src, dst in zip(moved, placed):
        order[dst] = src
    rest = iter(d for d in range(self.ndim) if d not in moved)
    return aten.permute.default(self, [next(rest) if d is None else d for d in order])


def _to(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
        non_blocking: bool = False, copy: bool = False, memory_format: Any = None) -> Any:
    """torch's to_impl: the tensor itself when nothing would change, else a _to_copy."""
    dtype = optional_dtype(dtype)
    aliases = (dtype in (None, self.dtype) and layout in (None, strided)
               and (device is None or normalize_device(device) == self.device.type)
               and memory_format in (None, preserve_format))
    if aliases and not copy:
        return self
    return aten._to_copy.default(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                 non_blocking=non_blocking, memory_format=memory_format)


@_decomposition("to.dtype")
def to_dtype(self: Any, dtype: DType, non_blocking: bool = False, copy: bool = False,
             memory_format: Any = None) -> Any:
    return _to(self, dtype=dtype, non_blocking=non_blocking, copy=copy, memory_format=memory_format)


@_decomposition("to.device")
def to_device(self: Any, device: Any, dtype: DType, non_blocking: bool = False, copy: bool = False,
              memory_format: Any = None) -> Any:
    return _to(self, dtype=dtype, device=device, non_blocking=non_blocking, copy=copy, memory_format=memory_format)


@_decomposition("to.dtype_layout")
def to_dtype_layout(self: Any, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
                    pin_memory: Optional[bool] = None, non_blocking: bool = False, copy: bool = False,
                    memory_format: Any = None) -> Any:
    return _to(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory, non_blocking=non_blocking,
               copy=copy, memory_format=memory_format)


def contiguous(self: Any, *, memory_format: Any = contiguous_format) -> Any:
    """torch's ``contiguous``: the tensor itself when it is contiguous in
    ``memory_format`` (which a subclass's handler may say, python_metadata.py), else a clone in it."""
    if self.is_contiguous(memory_format=memory_format):
        return self
    return aten.clone.default(self, memory_format=memory_format)


def type_as(self: Any, other: Any) -> Any:
    """torch's ``type_as``: ``self.to(other.options())``, in ``other``'s dtype and on its device."""
    return _to(self, dtype=other.dtype, device=other.device)


# Not batching decompositions (DECOMPOSITIONS): vmap's tensors have no strides to ask.
_implicit.impl("contiguous", contiguous)
_implicit.impl("type_as", type_as)


# -- CompositeExplicitAutograd: arithmetic and reductions --------------------------------------
@_decomposition("view_as")
def view_as(self: Tensor, other: Tensor) -> Tensor:
    return aten.view.default(self, list(other.shape))


@_explicit_kernel("add.Scalar")
def add_scalar(self: Tensor, other: float, alpha: float = 1) -> Tensor:
    return aten.add.Tensor(self, other, alpha=alpha)


@_explicit_kernel("mul.Scalar")
def mul_scalar(self: Tensor, other: float) -> Tensor:
    return aten.mul.Tensor(self, other)


@_explicit_kernel("div.Scalar")
def div_scalar(self: Tensor, other: float) -> Tensor:
    return aten.div.Tensor(self, other)


@_explicit_kernel("rsub.Scalar")
def rsub(self: Tensor, other: float, alpha: float = 1) -> Tensor:
    return aten.sub.Tensor(other, self, alpha=alpha)


@_explicit_kernel("abs")
def abs_(self: Tensor) -> Tensor:
    # As torch's: into a new tensor, by abs.out (which resizes it).
    out = aten.empty.memory_format([0], dtype=self.dtype, device=self.device)
    return aten.abs.out(self, out=out)


@_explicit_kernel("sum")
def sum_(self: Tensor, *, dtype: Optional[DType] = None) -> Tensor:
    return aten.sum.dim_IntList(self, None, False, dtype=dtype)


def check_mean_dtype(self: Any, dtype: Optional[DType]) -> None:
    """mean is of floating-point numbers: the input's, or the dtype asked for."""
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                           f"complex dtype. Got: {dtype.scalar_type_name}")
    if dtype is None and not self.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {self.dtype.scalar_type_name}")


@_explicit_kernel("mean")
def mean(self: Tensor, *, dtype: Optional[DType] = None) -> Tensor:
    dtype = optional_dtype(dtype)
    check_mean_dtype(self, dtype)
    if (dtype or self.dtype) is DType.bfloat16:
        # torch sums and divides bfloat16 in float32 and rounds once: the
        # quotient of a rounded sum would be rounded twice.
        total = aten.sum.default(self, dtype=DType.float32)
        return aten._to_copy.default(aten.div.Tensor(total, self.numel()), dtype=DType.bfloat16)
    return aten.div.Tensor(aten.sum.default(self, dtype=dtype), self.numel())


# -- CompositeExplicitAutograd: views ------------------------------------------------------------
@_explicit_kernel("t")
def t(self: Tensor) -> Tensor:
    ndim = len(self.shape)
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    if type(getattr(self, "_data", None)) is np.ndarray:
        # numpy memory (a CPU tensor): permute's CPU kernel's view, without the
        # call (the ADInplaceOrView kernel of t recorded the view already).
        return cpu_tensor(self._data.T, self.dtype)
    return aten.permute.default(self, list(reversed(range(ndim))))


@_explicit_kernel("transpose.int")
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    dims = list(range(self.ndim))
    dim0, dim1 = shapes.wrap_dim(dim0, self.ndim), shapes.wrap_dim(dim1, self.ndim)
    dims[dim0], dims[dim1] = dim1, dim0
    return aten.permute.default(self, dims)


@_explicit_kernel("unsqueeze")
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    return self._with_shape(shapes.unsqueeze_shape(self.shape, dim))


@_explicit_kernel("squeeze.dim")
def squeeze(self: Tensor, dim: int) -> Tensor:
    return self._with_shape(shapes.squeeze_shape(self.shape, dim))


@_explicit_kernel("squeeze_.dim")
def squeeze_(self: Tensor, dim: int) -> Tensor:
    self._set_shape(shapes.squeeze_shape(self.shape, dim))
    return self


@_explicit_kernel("_unsafe_view")
def unsafe_view(self: Tensor, size: Sequence[int]) -> Tensor:
    # A view that autograd and ADInplaceOrView treat as a new tensor: torch
    # calls it on results nothing else sees (a fresh copy, mm's result).
    return self._with_shape(shapes.view_shape(self.shape, size))


# -- CompositeExplicitAutograd: copies --------------------------------------------------------------
@_explicit_kernel("copy_")
def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Broadcast ``src`` into ``self``.  A copy to or from another device is
    that device's ``_copy_from`` kernel, as in torch."""
    src = tensor_operand(src)  # a number (Note [Numbers where an operator takes a tensor])
    shapes.expand_shape(src.shape, self.shape)  # src must broadcast to self
    if self.device.type == "meta":
        return self  # nothing to write
    if src.device.type == "meta":
        raise RuntimeError("Cannot copy out of meta tensor; no data!")
    if self.device.type == src.device.type == "cpu":
        copy_between_cpu_tensors(self, src)
    else:
        aten._copy_from.default(src, self, non_blocking)
    return self


@_explicit_kernel("clone")
def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    check_memory_format(memory_format)
    return aten.copy_.default(aten.empty.memory_format(list(self.shape), dtype=self.dtype, device=self.device), self)


@_explicit_kernel("_to_copy")
def to_copy(self: Tensor, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
            pin_memory: Optional[bool] = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    check_memory_format(memory_format)
    out = aten.empty.memory_format(list(self.shape), dtype=optional_dtype(dtype) or self.dtype, layout=layout,
                                   device=device or self.device, pin_memory=pin_memory)
    return aten.copy_.default(out, self, non_blocking)


# -- CompositeExplicitAutograd: factories, "allocate, then fill" ------------------------------------
def _empty(size: Sequence[int], dtype: Optional[DType], layout: Any, device: Any, pin_memory: Any) -> Tensor:
    return aten.empty.memory_format(size, dtype=optional_dtype(dtype) or default_float, layout=layout, device=device,
                                    pin_memory=pin_memory)


@_explicit_kernel("zeros")
def zeros(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
          pin_memory: Optional[bool] = None) -> Tensor:
    return aten.fill_.Scalar(_empty(size, dtype, layout, device, pin_memory), 0)


@_explicit_kernel("ones")
def ones(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
         pin_memory: Optional[bool] = None) -> Tensor:
    return aten.fill_.Scalar(_empty(size, dtype, layout, device, pin_memory), 1)


@_explicit_kernel("full")
def full(size: Sequence[int], fill_value: float, *, dtype: Optional[DType] = None, layout: Any = None,
         device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    # As torch.full: without a dtype, the fill value's type decides.
    out = _empty(size, optional_dtype(dtype) or result_type(fill_value), layout, device, pin_memory)
    return aten.fill_.Scalar(out, fill_value)


def _like(self: Tensor, dtype: Optional[DType], layout: Any, device: Any, pin_memory: Any, memory_format: Any) -> Tensor:
    """empty_like's work: a new tensor of self's shape, and of its dtype and device unless given."""
    check_memory_format(memory_format)
    return aten.empty.memory_format(list(self.shape), dtype=optional_dtype(dtype) or self.dtype, layout=layout,
                                    device=device or self.device, pin_memory=pin_memory)


@_explicit_kernel("empty_like")
def empty_like(self: Tensor, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
               pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    return _like(self, dtype, layout, device, pin_memory, memory_format)


@_explicit_kernel("zeros_like")
def zeros_like(self: Tensor, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
               pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    return aten.fill_.Scalar(_like(self, dtype, layout, device, pin_memory, memory_format), 0)


@_explicit_kernel("ones_like")
def ones_like(self: Tensor, *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
              pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    return aten.fill_.Scalar(_like(self, dtype, layout, device, pin_memory, memory_format), 1)


@_explicit_kernel("full_like")
def full_like(self: Tensor, fill_value: float, *, dtype: Optional[DType] = None, layout: Any = None,
              device: Any = None, pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    return aten.fill_.Scalar(_like(self, dtype, layout, device, pin_memory, memory_format), fill_value)


def _new(self: Tensor, size: Sequence[int], dtype: Optional[DType], layout: Any, device: Any, pin_memory: Any) -> Tensor:
    """new_empty's work: a new tensor of ``size``, of self's dtype and device unless given."""
    return aten.empty.memory_format(list(size), dtype=optional_dtype(dtype) or self.dtype, layout=layout,
                                    device=device or self.device, pin_memory=pin_memory)


@_explicit_kernel("new_empty")
def new_empty(self: Tensor, size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None,
              device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    return _new(self, size, dtype, layout, device, pin_memory)


@_explicit_kernel("new_empty_strided")
def new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype: Optional[DType] = None,
                      layout: Any = None, device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    if tuple(stride) != contiguous_strides(size):
        raise NotImplementedError(
            f"new_empty_strided: dispatcher.prototype tensors are row-major; strides {list(stride)} for size "
            f"{list(size)} are not"
        )
    return _new(self, size, dtype, layout, device, pin_memory)


@_explicit_kernel("new_zeros")
def new_zeros(self: Tensor, size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None,
              device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    return aten.fill_.Scalar(_new(self, size, dtype, layout, device, pin_memory), 0)


@_explicit_kernel("new_ones")
def new_ones(self: Tensor, size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None,
             device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    return aten.fill_.Scalar(_new(self, size, dtype, layout, device, pin_memory), 1)


@_explicit_kernel("new_full")
def new_full(self: Tensor, size: Sequence[int], fill_value: float, *, dtype: Optional[DType] = None,
             layout: Any = None, device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    return aten.fill_.Scalar(_new(self, size, dtype, layout, device, pin_memory), fill_value)


@_explicit_kernel("lift_fresh")
def lift_fresh(self: Tensor) -> Tensor:
    return self


@_explicit_kernel("detach")
def detach(self: Tensor) -> Tensor:
    """The same memory, without autograd history (ADInplaceOrView shares the version counter)."""
    if type(getattr(self, "_data", None)) is np.ndarray:  # a CPU tensor's, made without Tensor.__init__'s general path
        return cpu_tensor(self._data, self.dtype)
    return Tensor(self._data, self.shape, self.dtype, self.device)


@_explicit_kernel("randn", "randn.generator")
def randn(size: Sequence[int], *, generator: Optional[np.random.Generator] = None, dtype: Optional[DType] = None,
          layout: Any = None, device: Any = None, pin_memory: Optional[bool] = None) -> Tensor:
    return aten.normal_.default(_empty(size, dtype, layout, device, pin_memory), generator=generator)

