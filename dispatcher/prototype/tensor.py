"""``Tensor``: a TensorBase over numpy storage, and the methods every tensor-like shares.

A Tensor is plain data plus the DispatchKeySet PyTorch would give it: the
backend of its device (CPU, Meta, PrivateUse1, ...) and that backend's
autograd keys (ADInplaceOrView, Autograd<backend>).  Every tensor carries the
autograd keys, as in PyTorch: the autograd kernels decide per call whether
anything requires grad.  All computation happens in kernels; the methods
here only call operators.

Storage depends on the device: a numpy array on "cpu", nothing on "meta",
and whatever the device's own kernels keep on other devices (see
toy_device.py).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from dispatcher import BackendComponent, DispatchKey, DispatchKeySet, TensorBase
from dispatcher.backends import backend_component, device_type
from dispatcher.keysets import get_autograd_related_key_set_from_backend

from .dtypes import (
    DTYPE_NAMES, DType, check_dtype, default_float, float_result_type, from_numpy_dtype, optional_dtype,
    to_numpy_dtype,
)
from .operators import OP

if TYPE_CHECKING:
    from typing_extensions import Self

    from .autograd import AccumulateGrad, FunctionNode, Node

__all__ = ["Tensor", "TensorMethods", "VersionCounter", "device_backend", "key_set_for_device", "normalize_device", "tensor"]

Scalar = Union[bool, int, float]
Operand = Union["TensorMethods", Scalar]  # the other side of a binary operator

_KEY_SETS: dict[str, DispatchKeySet] = {}


def device_backend(device: str) -> BackendComponent:
    """The backend of a device string (backends.backend_component), with a hint for "toy" before enable_toy_device."""
    try:
        return backend_component(device)
    except ValueError:
        if isinstance(device, str) and device.partition(":")[0] == "toy":
            raise ValueError(
                'the "toy" device is not enabled: call dispatcher.prototype.enable_toy_device() first '
                "(it names the PrivateUse1 backend \"toy\")"
            ) from None
        raise


def normalize_device(device: str) -> str:
    """The device type of a device string ("toy:0" -> "toy"); one device per type here."""
    return device_type(device_backend(device))


def key_set_for_device(device: str) -> DispatchKeySet:
    """The keys of a tensor on ``device``: its backend plus that backend's autograd keys."""
    ks = _KEY_SETS.get(device)
    if ks is None:
        backend = device_backend(device)
        ks = DispatchKeySet([DispatchKey.Dense, backend]) | get_autograd_related_key_set_from_backend(backend)
        _KEY_SETS[device] = ks
    return ks


class VersionCounter:
    """Counts in-place writes to a tensor's memory; a view shares its base's counter.

    Autograd records the version of each tensor it saves and refuses to use
    one that was written to since (ADInplaceOrView kernels bump it).
    """

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class TensorMethods:
    """Python operators and methods of tensor-likes (Tensor, vmap's BatchedTensor).

    Each calls one operator of the proto library; a subclass provides
    ``shape``, ``dtype`` and ``device``.
    """

    __slots__ = ()
    # numpy must not treat a tensor as a scalar: ``ndarray * tensor`` defers to __rmul__.
    __array_ufunc__ = None

    if TYPE_CHECKING:  # read by the methods, provided by each subclass
        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def dtype(self) -> DType: ...

        @property
        def device(self) -> str: ...

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: Optional[int] = None) -> Union[int, tuple[int, ...]]:
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- arithmetic ------------------------------------------------------------------
    def __add__(self, other: Operand) -> Self:
        return self.add(other)

    __radd__ = __add__

    def __sub__(self, other: Operand) -> Self:
        return self.sub(other)

    def __rsub__(self, other: Scalar) -> Self:
        return OP["add.Scalar"](OP["neg"](self), other)

    def __mul__(self, other: Operand) -> Self:
        return self.mul(other)

    __rmul__ = __mul__

    def __truediv__(self, other: Operand) -> Self:
        return self.div(other)

    def __rtruediv__(self, other: Scalar) -> Self:
        numerator = OP["full"]([], other, dtype=float_result_type(self, other), device=self.device)
        return OP["div.Tensor"](numerator, self)

    def __matmul__(self, other: Operand) -> Self:
        return OP["matmul"](self, other)

    def __neg__(self) -> Self:
        return OP["neg"](self)

    def add(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        if isinstance(other, TensorBase):
            return OP["add.Tensor"](self, other, alpha=alpha)
        return OP["add.Scalar"](self, other, alpha)

    def sub(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        if isinstance(other, TensorBase):
            return OP["sub.Tensor"](self, other, alpha=alpha)
        return OP["sub.Scalar"](self, other, alpha)

    def mul(self, other: Operand) -> Self:
        return OP["mul.Tensor" if isinstance(other, TensorBase) else "mul.Scalar"](self, other)

    def div(self, other: Operand) -> Self:
        return OP["div.Tensor" if isinstance(other, TensorBase) else "div.Scalar"](self, other)

    def matmul(self, other: Operand) -> Self:
        return OP["matmul"](self, other)

    def neg(self) -> Self:
        return OP["neg"](self)

    def exp(self) -> Self:
        return OP["exp"](self)

    def log(self) -> Self:
        return OP["log"](self)

    def relu(self) -> Self:
        return OP["relu"](self)

    def gt(self, other: Scalar) -> Self:
        return OP["gt.Scalar"](self, other)

    def sum(self, dim: Union[int, Sequence[int], None] = None, keepdim: bool = False, *,
            dtype: Optional[DType] = None) -> Self:
        dtype = optional_dtype(dtype)
        if dim is None and not keepdim:
            return OP["sum"](self, dtype=dtype)
        return OP["sum.dim_IntList"](self, [dim] if isinstance(dim, int) else dim, keepdim, dtype=dtype)

    def mean(self, *, dtype: Optional[DType] = None) -> Self:
        return OP["mean"](self, dtype=optional_dtype(dtype))

    # -- shapes and views --------------------------------------------------------------
    def t(self) -> Self:
        return OP["t"](self)

    @property
    def T(self) -> Self:
        return OP["t"](self)

    def transpose(self, dim0: int, dim1: int) -> Self:
        return OP["transpose.int"](self, dim0, dim1)

    def permute(self, *dims: Any) -> Self:
        return OP["permute"](self, _sizes(dims))

    def view(self, *size: Any) -> Self:
        return OP["view"](self, _sizes(size))

    def reshape(self, *shape: Any) -> Self:
        return OP["reshape"](self, _sizes(shape))

    def expand(self, *size: Any) -> Self:
        return OP["expand"](self, _sizes(size))

    def select(self, dim: int, index: int) -> Self:
        return OP["select.int"](self, dim, index)

    # -- copies and in-place -------------------------------------------------------------
    def clone(self) -> Self:
        return OP["clone"](self)

    def copy_(self, src: "TensorMethods") -> Self:
        return OP["copy_"](self, src)

    def add_(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        return OP["add_.Tensor"](self, other, alpha=alpha)

    def to(self, *args: Any, dtype: Optional[DType] = None, device: Optional[str] = None,
           copy: bool = False) -> Self:
        """``t.to("toy")``, ``t.to(float64)``, ``t.to(device=..., dtype=...)``.

        A dtype may be given by its name: ``t.to("float64")``, ``t.to(dtype="float64")``;
        any other positional string is a device."""
        dtype = optional_dtype(dtype)
        for arg in args:
            if isinstance(arg, DType) or (isinstance(arg, str) and arg in DTYPE_NAMES):
                dtype = check_dtype(arg)
            elif isinstance(arg, str):
                device = arg
            else:
                raise TypeError(f"to() takes a device string or a dtype, not {type(arg).__name__}")
        return OP["to"](self, dtype=dtype, device=device, copy=copy)


def _sizes(args: tuple) -> list[int]:
    """``view(2, 3)`` and ``view((2, 3))`` both mean the list [2, 3]."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


class Tensor(TensorMethods, TensorBase):
    """A tensor: storage, shape, dtype, device, and autograd state.

    Make one with ``tensor(data)`` or a factory (``zeros``, ``randn``, ...);
    kernels make theirs with ``Tensor(storage, shape, dtype, device)``.
    """

    __slots__ = ("_data", "shape", "dtype", "device", "requires_grad", "_grad", "grad_fn", "_output_nr",
                 "_version", "_base", "_grad_accumulator")

    shape: tuple[int, ...]
    dtype: DType
    device: str

    def __init__(self, data: Any, shape: Sequence[int], dtype: DType, device: str) -> None:
        TensorBase.__init__(self, key_set_for_device(device))
        self._data = data
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.requires_grad = False
        self._grad: Optional[Tensor] = None
        self.grad_fn: Optional[Union[Node, FunctionNode]] = None
        self._output_nr = 0  # which of grad_fn's outputs this tensor is
        self._version = VersionCounter()
        self._base: Optional[Tensor] = None  # the tensor this one is a view of
        self._grad_accumulator: Optional[AccumulateGrad] = None  # autograd's node of a leaf, made on first use

    @staticmethod
    def from_numpy(array: np.ndarray) -> "Tensor":
        """A CPU tensor sharing ``array``'s memory."""
        return Tensor(array, array.shape, from_numpy_dtype(array.dtype), "cpu")

    # -- autograd ------------------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Optional["Tensor"]:
        """The gradient backward() accumulated into this leaf (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, grad: Optional["Tensor"]) -> None:
        # PyTorch's checks (THPVariable_set_grad): autograd adds every later
        # gradient to this one, so it must match the tensor exactly.
        if grad is not None:
            if not isinstance(grad, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(grad).__name__}"
                )
            if grad is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if grad.dtype != self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{grad.dtype}' to a tensor with dtype "
                    f"'{self.dtype}'. Please ensure that the gradient and the tensor have the same dtype"
                )
            if grad.device != self.device:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{grad.device}' to a tensor with device "
                    f"type '{self.device}'. Please ensure that the gradient and the tensor are on the same device"
                )
            if grad.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of size "
                    f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
        self._grad = grad

    def backward(self, gradient: Optional["Tensor"] = None, retain_graph: Optional[bool] = None) -> None:
        """Accumulate the gradients of this tensor into the leaves' ``.grad`` (see autograd.backward)."""
        from .autograd import backward  # autograd builds on this module

        backward(self, gradient, retain_graph=retain_graph)

    # -- leaving the dispatcher ----------------------------------------------------------
    def is_contiguous(self) -> bool:
        # Only CPU storage can be strided; other devices keep dense buffers and
        # meta tensors have no strides here.
        return self.device != "cpu" or self._data.flags.c_contiguous

    def numpy(self) -> np.ndarray:
        """The values as a numpy array (shared with a CPU tensor, a copy otherwise)."""
        if self.device == "meta":
            raise RuntimeError("Cannot copy out of meta tensor; no data!")
        if self.device != "cpu":
            from .autograd import no_grad

            with no_grad():
                return self.to("cpu")._data
        return self._data

    def item(self) -> Scalar:
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self.numpy().item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __repr__(self) -> str:
        extras = []
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.dtype not in (DType.float32, DType.int64, DType.bool):
            extras.append(f"dtype={self.dtype!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if self.device == "meta":
            body = f"..., size={self.shape}"
        else:
            body = np.array2string(self.numpy(), separator=", ", precision=4, prefix="tensor(")
        return f"tensor({', '.join([body, *extras])})"


def tensor(data: Any, *, dtype: Optional[DType] = None, device: str = "cpu",
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, or a numpy array).

    As torch.tensor: Python floats give float32, ints int64, bools bool;
    a numpy array keeps its dtype unless ``dtype`` says otherwise.  ``dtype``
    is a proto dtype or its name ("float32", "float64", "int64", "bool").
    """
    dtype = optional_dtype(dtype)
    array = np.array(data)
    if dtype is None:
        dtype = from_numpy_dtype(array.dtype) if isinstance(data, np.ndarray) else _inferred_dtype(array)
    out = Tensor.from_numpy(array.astype(to_numpy_dtype(dtype), order="C"))
    if normalize_device(device) != "cpu":
        out = OP["_to_copy"](out, device=device)
    return out.requires_grad_() if requires_grad else out


def _inferred_dtype(array: np.ndarray) -> DType:
    if array.dtype.kind == "b":
        return DType.bool
    if array.dtype.kind in "iu":
        return DType.int64
    if array.dtype.kind == "f":
        return default_float
    raise TypeError(f"cannot make a tensor from data of numpy dtype {array.dtype}")
