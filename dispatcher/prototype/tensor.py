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
import numbers
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import numpy as np

from dispatcher import (
    AutoDispatchBelowADInplaceOrView, AutoDispatchBelowAutograd, BackendComponent, DispatchKey, DispatchKeySet, TensorBase,
    disabled_torch_dispatch_impl,
)
from dispatcher.backends import backend_component, device_type
from dispatcher.keysets import AUTOGRAD_DISPATCH_KEYSET_WITH_ADINPLACEORVIEW, get_autograd_related_key_set_from_backend
from dispatcher.value_types import device as Device

from .bfloat16_rounding import round_to_bfloat16
from .inference_mode import (
    INFERENCE_VERSION_COUNTER, NO_VERSION, REQUIRES_GRAD_OUTSIDE, _threads_inside as _threads_in_inference_mode,
    is_inference_mode_enabled, making_inference_tensors,
)
from .dtypes import (
    DTYPE_NAMES, DType, check_dtype, default_float, from_numpy_dtype, optional_dtype, to_numpy_dtype,
)
from .operators import aten
from .printing import tensor_text, text_with_suffixes
from . import contiguity
from .tensor_options import channels_last, channels_last_3d, strided

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Tensor", "TensorMethods", "VersionCounter", "contiguous_strides", "convert", "device_backend",
           "is_tensor", "key_set_for_device", "normalize_device", "stack", "tensor", "tensor_device", "tensor_operand",
           "wrapped_scalar_tensor"]

Scalar = Union[bool, int, float]
DeviceLike = Union[str, Device]  # what a device argument takes: "cpu", "toy:0", device("meta")
Operand = Union["TensorMethods", Scalar]  # the other side of a binary operator

_KEY_SETS: dict[DeviceLike, DispatchKeySet] = {}


def device_backend(device: DeviceLike) -> BackendComponent:
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


_NORMALIZED: dict[DeviceLike, str] = {}


def normalize_device(device: DeviceLike) -> str:
    """The device type of a device string or device ("toy:0" -> "toy"); one device per type here.

    Remembered per string (parsing one costs microseconds), but for the
    PrivateUse1 backend's, whose name can change (rename_privateuse1_backend).
    """
    known = isinstance(device, (str, Device))
    found = _NORMALIZED.get(device) if known else None
    if found is None:
        backend = device_backend(device)
        found = device_type(backend)
        if backend != BackendComponent.PrivateUse1Bit and known:
            _NORMALIZED[device] = found
    return found


def key_set_for_device(device: DeviceLike) -> DispatchKeySet:
    """The keys of a tensor on ``device``: its backend plus that backend's autograd keys."""
    ks = _KEY_SETS.get(device)
    if ks is None:
        backend = device_backend(device)
        ks = DispatchKeySet([DispatchKey.Dense, backend]) | get_autograd_related_key_set_from_backend(backend)
        _KEY_SETS[device] = ks
    return ks


# A tensor's ``.device``: torch.device's type, index, printing and equality
# (dispatcher.device, not equal to a string).  One device per type here
# (normalize_device), so each tensor of a type holds the same object.
_DEVICES: dict[DeviceLike, Device] = {}
# id of each such device -> (it, the keys of its tensors): Tensor.__init__
# finds a tensor's own device there without calling the device's Python
# __hash__, which a dict keyed by devices would on every lookup.
_BY_IDENTITY: dict[int, tuple[Device, DispatchKeySet]] = {}


def tensor_device(where: DeviceLike) -> Device:
    """The one device of the type ``where`` (a device string or a device) names."""
    found = _DEVICES.get(where)
    if found is None:
        kind = normalize_device(where)
        found = _DEVICES.get(kind)
        if found is None:
            found = _DEVICES[kind] = Device(kind)
            _BY_IDENTITY[id(found)] = (found, key_set_for_device(found))
        if device_backend(where) != BackendComponent.PrivateUse1Bit:  # as normalize_device: its name can change
            _DEVICES[where] = found
    return found


class VersionCounter:
    """Counts in-place writes to a tensor's memory; a view shares its base's counter.

    Autograd records the version of each tensor it saves and refuses to use
    one that was written to since (ADInplaceOrView kernels bump it).
    """

    # Made with no __init__ (one per tensor: a Python frame each was a fifth
    # of making a tensor): the count reads the class's 0 until the first write.
    value = 0


class TensorMethods:
    """Python operators and methods of tensor-likes (Tensor, vmap's BatchedTensor).

    Each calls the aten operator torch's Tensor method calls; a number where
    an operator takes a tensor is passed as the number (``x * 2`` is
    ``mul.Tensor(x, 2)``, as a torch handler sees it: Note [Numbers where an
    operator takes a tensor]).  A subclass provides ``shape``, ``dtype`` and
    ``device``.
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
        def device(self) -> Device: ...

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def layout(self) -> int:
        """torch's ``layout``: strided, the only layout here (c10::Layout's number, as schemas pass it)."""
        return strided

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: Optional[int] = None) -> Union[int, tuple[int, ...]]:
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return math.prod(self.shape)

    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize  # (bfloat16: 2, though its values are in a float32 array)

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
        return aten.rsub.Scalar(self, other)

    def __mul__(self, other: Operand) -> Self:
        return self.mul(other)

    __rmul__ = __mul__

    def __truediv__(self, other: Operand) -> Self:
        return self.div(other)

    def __rtruediv__(self, other: Scalar) -> Self:
        # torch's Tensor.__rdiv__: the reciprocal, times the number.
        return aten.mul.Tensor(aten.reciprocal.default(self), _number_or_tensor(other))

    def __pow__(self, exponent: Scalar) -> Self:
        return aten.pow.Tensor_Scalar(self, exponent)

    def pow(self, exponent: Scalar) -> Self:
        return aten.pow.Tensor_Scalar(self, exponent)

    def __matmul__(self, other: Operand) -> Self:
        return aten.matmul.default(self, other)

    def __neg__(self) -> Self:
        return aten.neg.default(self)

    # An argument at its default is left out of the call, as torch's argument
    # parser's call reaches a handler (it sees no alpha=1 either way): the
    # kernels then get a positional call, which binds fastest.
    def add(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        if alpha == 1:
            return aten.add.Tensor(self, _number_or_tensor(other))
        return aten.add.Tensor(self, _number_or_tensor(other), alpha=alpha)

    def sub(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        if alpha == 1:
            return aten.sub.Tensor(self, _number_or_tensor(other))
        return aten.sub.Tensor(self, _number_or_tensor(other), alpha=alpha)

    def mul(self, other: Operand) -> Self:
        return aten.mul.Tensor(self, _number_or_tensor(other))

    def div(self, other: Operand) -> Self:
        return aten.div.Tensor(self, _number_or_tensor(other))

    def matmul(self, other: Operand) -> Self:
        return aten.matmul.default(self, other)

    def abs(self) -> Self:
        return aten.abs.default(self)

    def neg(self) -> Self:
        return aten.neg.default(self)

    def reciprocal(self) -> Self:
        return aten.reciprocal.default(self)

    def exp(self) -> Self:
        return aten.exp.default(self)

    def log(self) -> Self:
        return aten.log.default(self)

    def relu(self) -> Self:
        return aten.relu.default(self)

    def gt(self, other: Scalar) -> Self:
        return aten.gt.Scalar(self, other)

    def __ne__(self, other: Any) -> Self:  # type: ignore[override]  # elementwise, as torch's
        return self.ne(other)

    # __ne__ alone leaves == as identity, and the hash with it (torch's tensors hash by id too).
    __hash__ = object.__hash__

    def ne(self, other: Operand) -> Self:
        return aten.ne.Tensor(self, other) if isinstance(other, TensorBase) else aten.ne.Scalar(self, other)

    def any(self) -> Self:
        return aten.any.default(self)

    def sin(self) -> Self:
        return aten.sin.default(self)

    def cos(self) -> Self:
        return aten.cos.default(self)

    def acos(self) -> Self:
        return aten.acos.default(self)

    def rsqrt(self) -> Self:
        return aten.rsqrt.default(self)

    def sin_(self) -> Self:
        return aten.sin_.default(self)

    def nonzero(self) -> Self:
        return aten.nonzero.default(self)

    def __getitem__(self, index: Any) -> Self:
        from .indexing import getitem  # (indexing imports this module)

        return getitem(self, index)  # type: ignore[arg-type,return-value]  # (getitem takes and gives Tensor, not Self)

    def sum(self, dim: Union[int, Sequence[int], None] = None, keepdim: bool = False, *,
            dtype: Optional[DType] = None) -> Self:
        dtype = optional_dtype(dtype)
        if dim is None and not keepdim:
            return aten.sum.default(self, dtype=dtype)
        return aten.sum.dim_IntList(self, [dim] if isinstance(dim, int) else dim, keepdim, dtype=dtype)

    def mean(self, *, dtype: Optional[DType] = None) -> Self:
        if dtype is None:
            return aten.mean.default(self)
        return aten.mean.default(self, dtype=optional_dtype(dtype))

    # -- shapes and views --------------------------------------------------------------
    def t(self) -> Self:
        return aten.t.default(self)

    @property
    def T(self) -> Self:
        # torch's numpy_T, a CompositeImplicitAutograd operator: the dimensions reversed.
        return aten.permute.default(self, list(reversed(range(self.ndim))))

    def transpose(self, dim0: int, dim1: int) -> Self:
        return aten.transpose.int(self, dim0, dim1)

    def permute(self, *dims: Any) -> Self:
        return aten.permute.default(self, _sizes(dims))

    def unsqueeze(self, dim: int) -> Self:
        return aten.unsqueeze.default(self, dim)

    def movedim(self, source: Any, destination: Any) -> Self:
        if isinstance(source, int) and isinstance(destination, int):
            return aten.movedim.int(self, source, destination)
        return aten.movedim.intlist(self, source, destination)

    def view(self, *size: Any) -> Self:
        if len(size) == 1 and isinstance(size[0], DType):  # view(dtype): the memory as another dtype
            return aten.view.dtype(self, size[0])
        return aten.view.default(self, _sizes(size))

    def view_as(self, other: "Tensor") -> Self:
        return aten.view_as.default(self, other)

    def reshape(self, *shape: Any) -> Self:
        return aten.reshape.default(self, _sizes(shape))

    def expand(self, *size: Any) -> Self:
        return aten.expand.default(self, _sizes(size))

    def select(self, dim: int, index: int) -> Self:
        return aten.select.int(self, dim, index)

    # -- copies and in-place -------------------------------------------------------------
    def clone(self) -> Self:
        return aten.clone.default(self)

    def contiguous(self, memory_format: Any = None) -> Self:
        if memory_format is None:
            return aten.contiguous.default(self)
        return aten.contiguous.default(self, memory_format=memory_format)

    def type_as(self, other: "TensorMethods") -> Self:
        return aten.type_as.default(self, other)

    def record_stream(self, stream: Any) -> None:
        """Tell the caching allocator ``stream`` uses this memory (a CUDA kernel's
        business in torch: on the CPU only a dispatch mode or subclass handles it)."""
        aten.record_stream.default(self, stream)

    def detach(self) -> Self:
        return aten.detach.default(self)

    def cpu(self) -> Self:
        return convert(self, device="cpu")

    # -- new tensors like this one -------------------------------------------------------
    def new_empty(self, *size: Any, dtype: Optional[DType] = None, device: Optional[DeviceLike] = None) -> Self:
        return aten.new_empty.default(self, _sizes(size), dtype=optional_dtype(dtype), device=device)

    def new_zeros(self, *size: Any, dtype: Optional[DType] = None, device: Optional[DeviceLike] = None) -> Self:
        return aten.new_zeros.default(self, _sizes(size), dtype=optional_dtype(dtype), device=device)

    def new_ones(self, *size: Any, dtype: Optional[DType] = None, device: Optional[DeviceLike] = None) -> Self:
        return aten.new_ones.default(self, _sizes(size), dtype=optional_dtype(dtype), device=device)

    def new_full(self, size: Sequence[int], fill_value: Scalar, *, dtype: Optional[DType] = None,
                 device: Optional[DeviceLike] = None) -> Self:
        return aten.new_full.default(self, list(size), fill_value, dtype=optional_dtype(dtype), device=device)

    def copy_(self, src: "TensorMethods") -> Self:
        return aten.copy_.default(self, src)

    def add_(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        return aten.add_.Tensor(self, _number_or_tensor(other), alpha=alpha)

    def sub_(self, other: Operand, *, alpha: Scalar = 1) -> Self:
        return aten.sub_.Tensor(self, _number_or_tensor(other), alpha=alpha)

    def mul_(self, other: Operand) -> Self:
        return aten.mul_.Tensor(self, _number_or_tensor(other))

    def div_(self, other: Operand) -> Self:
        return aten.div_.Tensor(self, _number_or_tensor(other))

    # ``x += y`` writes x in place and keeps the object, as torch's (inplace_arithmetic.py).
    def __iadd__(self, other: Operand) -> Self:
        return aten.add_.Tensor(self, _number_or_tensor(other))

    def __isub__(self, other: Operand) -> Self:
        return aten.sub_.Tensor(self, _number_or_tensor(other))

    def __imul__(self, other: Operand) -> Self:
        return aten.mul_.Tensor(self, _number_or_tensor(other))

    def __itruediv__(self, other: Operand) -> Self:
        return aten.div_.Tensor(self, _number_or_tensor(other))

    def to(self, *args: Any, dtype: Optional[DType] = None, device: Optional[DeviceLike] = None,
           copy: bool = False) -> Self:
        """``t.to("toy")``, ``t.to(float64)``, ``t.to(device=..., dtype=...)``.

        A dtype may be given by its name: ``t.to("float64")``, ``t.to(dtype="float64")``;
        any other positional string is a device."""
        dtype = optional_dtype(dtype)
        for arg in args:
            if isinstance(arg, DType) or (isinstance(arg, str) and arg in DTYPE_NAMES):
                dtype = check_dtype(arg)
            elif isinstance(arg, (str, Device)):
                device = arg
            else:
                raise TypeError(f"to() takes a device (or its string) or a dtype, not {type(arg).__name__}")
        return convert(self, dtype=dtype, device=device, copy=copy)


def convert(t: Any, dtype: Optional[DType] = None, device: Optional[DeviceLike] = None, copy: bool = False) -> Any:
    """``t.to(...)``: the ``to`` overload torch's Tensor.to calls for these arguments.

    All three are CompositeImplicitAutograd: ``t`` itself when nothing
    changes and no copy is asked for, else a call of ``_to_copy``.
    """
    if device is None and dtype is not None:
        return aten.to.dtype(t, dtype, copy=copy)
    if device is not None and dtype is not None:
        return aten.to.device(t, device, dtype, copy=copy)
    return aten.to.dtype_layout(t, device=device, copy=copy)


# Note [Numbers where an operator takes a tensor]
# ``x * 2`` calls mul.Tensor; torch's argument parser makes the 2 a 0-d
# "wrapped number" tensor, and gives it back to Python code as the number
# again (torch::jit::toPyObject): a __torch_dispatch__ handler sees
# ``aten.mul.Tensor(x, 2)``, in forward and in the backward formulas that
# use it.  Here the number itself goes through the dispatcher (which takes
# one for these operators: dispatcher/_numbers_as_tensors.py), so handlers
# see what torch's see; the kernels that compute make it a wrapped number
# (tensor_operand), which type promotion treats as the number it was.


def _number_or_tensor(other: Any) -> Any:
    """What an operator taking a tensor gets for a method's ``other``: the
    tensor, or the number as a Python number (a numpy scalar becomes one)."""
    if isinstance(other, (TensorBase, bool, int, float)):
        return other
    if isinstance(other, np.generic) and isinstance(other.item(), (bool, int, float)):
        return other.item()
    raise TypeError(f"expected a tensor or a number (bool, int, float), got {type(other).__name__}")


def tensor_operand(value: Any) -> "Tensor":
    """A kernel's Tensor argument as a tensor: a number given for it becomes a
    wrapped number (Note [Numbers where an operator takes a tensor])."""
    return value if isinstance(value, Tensor) else wrapped_scalar_tensor(value)


def wrapped_scalar_tensor(value: Scalar) -> "Tensor":
    """A Python number as the 0-d CPU tensor torch's argument parser makes of it, a "wrapped number".

    Type promotion treats it as the number it was (dtypes.result_type).  As
    any 0-d CPU tensor, it joins a computation on another device.
    """
    if isinstance(value, bool):
        dtype = DType.bool
    elif isinstance(value, numbers.Integral):
        dtype = DType.int64
    elif isinstance(value, numbers.Real):
        dtype = DType.float64
    else:
        raise TypeError(f"expected a tensor or a number (bool, int, float), got {type(value).__name__}")
    out = Tensor.from_numpy(np.array(value, dtype=to_numpy_dtype(dtype)))
    out._wrapped_number = True
    return out


def _sizes(args: tuple) -> list[int]:
    """``view(2, 3)`` and ``view((2, 3))`` both mean the list [2, 3]."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


_BFLOAT16 = DType.bfloat16


def cpu_tensor(array: np.ndarray, dtype: DType) -> "Tensor":
    """A CPU tensor of ``array``, whose numpy dtype is ``dtype``'s: what every CPU
    kernel returns, made without Tensor.__init__'s general path (device
    lookup, subclass check), which is most of a small kernel's cost."""
    if dtype is _BFLOAT16:  # numpy has none: bfloat16 values in a float32 array (bfloat16_rounding.py)
        array = round_to_bfloat16(array)
    t = _new_tensor(Tensor)
    _init_keys(t, _CPU_KEY_SET)
    t._data = array
    t.shape = array.shape
    t.dtype = dtype
    t.device = _CPU
    t.requires_grad = False
    t.grad_fn = None
    t._version_counter = VersionCounter()
    if _threads_in_inference_mode[0] and making_inference_tensors():
        make_inference_tensor(t)
    return t


def make_inference_tensor(t: "Tensor") -> None:
    """``t`` made in inference mode: without autograd and ADInplaceOrView keys, and without a version counter."""
    _init_keys(t, t.key_set - AUTOGRAD_DISPATCH_KEYSET_WITH_ADINPLACEORVIEW)
    t._version_counter = INFERENCE_VERSION_COUNTER  # type: ignore[assignment]  # (its value answers as a counter's)


class Tensor(TensorMethods, TensorBase):
    """A tensor: storage, shape, dtype, device, and autograd state.

    Make one with ``tensor(data)`` or a factory (``zeros``, ``randn``, ...);
    kernels make theirs with ``Tensor(storage, shape, dtype, device)``.
    """

    # What every tensor sets is a slot.  What most tensors leave at its
    # default is a class attribute, written to the instance's __dict__ by the
    # few that change it: a tensor is made with six stores fewer (cpu_tensor
    # makes one per kernel call).
    __slots__ = ("_data", "shape", "dtype", "device", "requires_grad", "grad_fn", "_version_counter", "__dict__")

    shape: tuple[int, ...]
    dtype: DType
    device: Device
    _grad: Optional["Tensor"] = None
    _output_nr = 0  # which of grad_fn's outputs this tensor is
    _base: Optional["Tensor"] = None  # the tensor this one is a view of
    # How a view is made again on another base (None: as an as_strided of it), and
    # why an in-place write through it is refused (None: it is not); view_history.py.
    _view_fn: Optional[Callable[["Tensor"], "Tensor"]] = None
    _creation_meta: Optional[str] = None
    _grad_accumulator: Optional[Any] = None  # autograd's AccumulateGrad of a leaf, made on first use
    _wrapped_number = False  # see wrapped_scalar_tensor
    # A wrapper subclass's, which has no data to read them from (None: contiguous).
    _strides: Optional[tuple[int, ...]] = None
    _storage_offset = 0  # a wrapper subclass's (strided_views.py reads the others' from their memory)

    # torch.Tensor's: a subclass's handler reaches it with super() and runs
    # the call below the Python key; the engine counts a type whose handler
    # is this one as having none, so plain tensors carry no Python key.
    # (The function itself, not a staticmethod: the engine compares what the
    # type's dict holds.)
    __torch_dispatch__: Any = disabled_torch_dispatch_impl

    def __init__(self, data: Any = None, shape: Sequence[int] = (), dtype: DType = DType.float32,
                 device: DeviceLike = "cpu") -> None:
        if type(self) is not Tensor and self._bits:
            # A subclass's __new__ made it with _make_wrapper_subclass or
            # _make_subclass (its keys are set), and its __init__ calls
            # super().__init__() (see __init_subclass__).
            return
        known = _BY_IDENTITY.get(id(device))
        if known is not None and known[0] is device:  # another tensor's .device
            device, keys = known
        else:
            keys, device = key_set_for_device(device), tensor_device(device)
        TensorBase.__init__(self, keys)
        self._data = data
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.requires_grad = False
        # autograd.py's Node or FunctionNode (autograd builds on this module).
        self.grad_fn: Optional[Any] = None
        self._version_counter = VersionCounter()
        if _threads_in_inference_mode[0] and making_inference_tensors():
            make_inference_tensor(self)

    # -- subclasses (torch.Tensor's staticmethods of these names; see subclassing.py) ------------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Python calls __init__ with the arguments the subclass's __new__ got,
        # which are not Tensor's: torch.Tensor's __init__ takes any.  A
        # subclass that would run Tensor's own __init__ (none of its classes
        # but Tensor has one) gets one that does; a subclass of a subclass
        # with an __init__ runs that, as in Python.
        super().__init_subclass__(**kwargs)
        if cls.__init__ is Tensor.__init__:
            cls.__init__ = _subclass_init  # type: ignore[method-assign]
        for hook in SUBCLASS_HOOKS:
            hook(cls)

    if TYPE_CHECKING:  # torch.Tensor's names, set by subclassing.py and strided_views.py (Note [Methods set by the modules above])
        @staticmethod
        def _make_wrapper_subclass(cls: type, size: Sequence[int], strides: Optional[Sequence[int]] = None,
                                   storage_offset: Optional[int] = None, memory_format: Any = None,
                                   dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
                                   pin_memory: bool = False, requires_grad: bool = False,
                                   dispatch_sizes_strides_policy: Optional[str] = None, dispatch_device: bool = False,
                                   dispatch_layout: bool = False, _extra_dispatch_keys: Optional[DispatchKeySet] = None,
                                   storage_size: Optional[int] = None) -> Any: ...

        @staticmethod
        def _make_subclass(cls: type, data: "Tensor", require_grad: bool = False, *,
                           dispatch_sizes_strides_policy: Optional[str] = None, dispatch_device: bool = False,
                           dispatch_layout: bool = False, device_for_backend_keys: Any = None) -> Any: ...

        def storage_offset(self) -> int: ...

        def data_ptr(self) -> int: ...

        def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> "Tensor": ...

        def as_strided(self, size: Sequence[int], stride: Sequence[int],
                       storage_offset: Optional[int] = None) -> "Tensor": ...

        def as_subclass(self, cls: type) -> Any: ...

        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any: ...

    @staticmethod
    def from_numpy(array: np.ndarray) -> "Tensor":
        """A CPU tensor sharing ``array``'s memory."""
        return cpu_tensor(array, from_numpy_dtype(array.dtype))

    # -- autograd ------------------------------------------------------------------------
    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's memory has had (torch's ``_version``)."""
        if self._version_counter is INFERENCE_VERSION_COUNTER:
            raise RuntimeError(NO_VERSION)
        return self._version_counter.value

    def is_inference(self) -> bool:
        """torch's: whether the tensor was made in inference mode (inference_mode.py)."""
        return self._version_counter is INFERENCE_VERSION_COUNTER

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (torch's ``_is_view``: it has a ``_base``)."""
        return self._base is not None

    @property
    def data(self) -> "Tensor":
        """torch's ``.data``: the same memory, cut from the graph, with a version
        counter of its own (a write through it is not seen by autograd's checks
        of this tensor).  A subclass with a ``__torch_dispatch__`` makes it with
        ``aten::detach``, which its handler sees, as torch's does; no other
        tensor's is an operator call."""
        if answers_its_operators(type(self)):
            with AutoDispatchBelowADInplaceOrView():
                out: Tensor = aten.detach.default(self)
        else:
            out = Tensor(self._data, self.shape, self.dtype, self.device)
            out._strides = self._strides
        out._version_counter = VersionCounter()
        return out

    @data.setter
    def data(self, new: "Tensor") -> None:
        # torch's set_data: this tensor takes new's memory and metadata, keeping
        # its own type, autograd state and version counter.
        if not isinstance(new, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
        if new.device != self.device:
            raise RuntimeError(f"data set to a tensor on {new.device} cannot replace the data of a tensor on "
                               f"{self.device}: prototype tensors keep their device's keys")
        self._data, self.shape, self.dtype, self._strides = new._data, new.shape, new.dtype, new._strides

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.is_inference() and not is_inference_mode_enabled():
            raise RuntimeError(REQUIRES_GRAD_OUTSIDE)
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

    if TYPE_CHECKING:  # set by autograd.py, which builds on this module (Note [Methods set by the modules above])
        def backward(self, gradient: Optional["Tensor"] = None, retain_graph: Optional[bool] = None) -> None: ...

    # -- memory layout -------------------------------------------------------------------
    # Only CPU storage (numpy) can be strided; other devices keep dense
    # row-major buffers, and meta tensors have no strides here, so they count
    # as contiguous.
    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the elements are dense in ``memory_format``'s order (row-major by default)."""
        if memory_format is not None and memory_format in (channels_last, channels_last_3d):
            return contiguity.is_channels_last_contiguous(self.shape, self.stride(), 4 if memory_format == channels_last else 5)
        if self._strides is not None:
            return contiguity.is_contiguous(self.shape, self._strides)
        return self.device is not _CPU or self._data is None or self._data.flags.c_contiguous

    def stride(self) -> tuple[int, ...]:
        """The step, in elements, between neighbours along each dimension."""
        if self._strides is not None:
            return self._strides
        if self.device is not _CPU or self._data is None:  # no numpy memory: row-major
            return contiguous_strides(self.shape)
        itemsize = self._data.itemsize
        return tuple([step // itemsize for step in self._data.strides])


    def _with_shape(self, shape: Sequence[int]) -> "Tensor":
        """The same elements, in row-major order, in another shape: a view of the same
        memory where the layout allows (always when only dimensions of size 1 are
        added or removed), else a copy.  The kernels of unsqueeze, squeeze and
        _unsafe_view, which torch writes for every backend, are made of it."""
        data = self._data.reshape(shape) if self.device is _CPU else self._data
        return Tensor(data, shape, self.dtype, self.device)

    def _set_shape(self, shape: Sequence[int]) -> None:
        """``_with_shape`` in place (squeeze_): the tensor views its memory in ``shape``."""
        if self.device is _CPU:
            self._data = self._data.reshape(shape)
        self.shape = tuple(shape)

    # -- leaving the dispatcher ----------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a numpy array (shared with a CPU tensor, a copy otherwise).

        ``force``, as torch's: the values of the tensor detached and on the CPU
        (here a tensor that requires grad or is on another device gives its values
        without it too).  A tensor of a subclass with a ``__torch_dispatch__`` has
        none to give (torch refuses it, as its values are whatever its handler
        makes of its operators)."""
        if answers_its_operators(type(self)):
            raise RuntimeError(".numpy() is not supported for tensor subclasses.")
        return self._values()

    def _values(self) -> np.ndarray:
        """numpy(), for any tensor with values of its own (repr prints them)."""
        if self.device is _META:
            raise RuntimeError("Cannot copy out of meta tensor; no data!")
        if self._data is None and self.device is _CPU:
            raise RuntimeError(
                f"Cannot access data of a {type(self).__name__}: a wrapper subclass has no data of its own "
                "(its __torch_dispatch__ decides what its operators compute)"
            )
        if self.device is not _CPU:
            with AutoDispatchBelowAutograd():  # no_grad
                return self.to("cpu")._data
        return self._data

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def item(self) -> Scalar:
        if answers_its_operators(type(self)):
            # As torch: through aten::_local_scalar_dense, which the subclass's handler answers.
            result: Scalar = aten._local_scalar_dense.default(self)
            return result
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._values().item()

    def tolist(self) -> Any:
        if answers_its_operators(type(self)):
            raise RuntimeError(f".tolist() is not supported for tensor subclasses, got {type(self).__name__}")
        return self._values().tolist()

    def __format__(self, format_spec: str) -> str:
        # torch's: a plain 0-d tensor formats as its number (f"{loss:.3f}").
        if self.dim() == 0 and type(self) is Tensor and self.device is not _META:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

    def __repr__(self, *, tensor_contents: Optional[str] = None) -> str:
        """torch's: ``tensor([...], dtype=..., ...)``; a subclass's begins with its
        class's name, and ``tensor_contents`` (a subclass's own text of what it
        holds, as a wrapper subclass gives it) stands for the values."""
        prefix = "tensor(" if type(self) is Tensor else f"{type(self).__name__}("
        extras = []
        if self.device is not _CPU:
            extras.append(f"device='{self.device}'")
        empty = self.numel() == 0
        if empty and self.dim() != 1:
            extras.append(f"size={tuple(self.shape)}")
        # torch names the dtype unless it is the default float, int64 or bool
        # (an empty tensor: unless it is the default float).
        if self.dtype is not DType.float32 and (empty or self.dtype not in (DType.int64, DType.bool)):
            extras.append(f"dtype={self.dtype!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if tensor_contents is not None:
            return text_with_suffixes(prefix, tensor_contents, extras)
        if self.device is _META:
            return f"{prefix}{', '.join([f'..., size={self.shape}', *extras])})"
        return tensor_text(self._values(), self.dtype.is_floating_point, extras, prefix)


def tensor(data: Any, *, dtype: Optional[DType] = None, device: DeviceLike = "cpu",
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
    out = cpu_tensor(array.astype(to_numpy_dtype(dtype), order="C"), dtype)
    if normalize_device(device) != "cpu":
        out = aten._to_copy.default(out, device=device)
    # As torch.tensor: the new tensor is handed to lift_fresh, so that a
    # dispatch mode sees it made (a fake-tensor mode replaces it there).
    out = aten.lift_fresh.default(out)
    return out.requires_grad_() if requires_grad else out


def is_tensor(obj: object) -> bool:
    """torch.is_tensor: whether ``obj`` is a Tensor (or a subclass's instance)."""
    return isinstance(obj, Tensor)


def stack(tensors: Sequence[Any], dim: int = 0) -> Any:
    """torch.stack: the tensors, of one shape, along a new dimension ``dim``."""
    return aten.stack.default(list(tensors), dim)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides of a row-major tensor of ``shape``, in elements."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def answers_its_operators(cls: type) -> bool:
    """Whether tensors of ``cls`` have a ``__torch_dispatch__`` of their own: their
    values are what it makes of their operators (torch's is_python_dispatch)."""
    return getattr(cls, "__torch_dispatch__", disabled_torch_dispatch_impl) is not disabled_torch_dispatch_impl


def check_not_owned_by_handler(t: Tensor, cls: type) -> None:
    """torch's check that a tensor made a ``cls`` (``_make_subclass``,
    ``as_subclass``, ``cls(t)``) is not one a handler answers for: torch's
    alias of it would come back from that handler as an object of its type."""
    owner = type(t)
    if answers_its_operators(owner) and not issubclass(owner, cls):
        raise RuntimeError(
            f"Creating a new Tensor subclass {cls.__name__} but the raw Tensor object is already associated to a "
            f"python object of type {owner.__name__} which is not a subclass of the requested type"
        )


def _subclass_init(self: Tensor, *args: Any, **kwargs: Any) -> None:
    """The __init__ of a Tensor subclass that has none: nothing to do for an
    instance its __new__ made (its keys are set: a made tensor has a backend
    key, a new one none).  ``Sub(t)`` of one tensor and ``Sub(2, 3)`` are
    torch's legacy constructor: an alias of ``t`` (``aten::alias``: the same
    memory, a view of ``t`` in the autograd graph), an uninitialized float
    tensor of that size; anything else is Tensor.__init__'s."""
    if self._bits:
        return
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
        check_not_owned_by_handler(args[0], type(self))
        view = aten.alias.default(args[0])
        Tensor.__init__(self, view._data, view.shape, view.dtype, view.device)
        self._strides, self._base, self._version_counter = view._strides, view._base, view._version_counter
        self.requires_grad, self.grad_fn, self._output_nr = view.requires_grad, view.grad_fn, view._output_nr
        return
    if args and not kwargs and all(type(size) is int for size in args):  # Sub(2, 3): a new float tensor of that size
        made = aten.empty.memory_format(list(args))
        Tensor.__init__(self, made._data, made.shape, made.dtype, made.device)
        return
    Tensor.__init__(self, *args, **kwargs)


def _inferred_dtype(array: np.ndarray) -> DType:
    if array.dtype.kind == "b":
        return DType.bool
    if array.dtype.kind in "iu":
        return DType.int64
    if array.dtype.kind == "f":
        return default_float
    if array.dtype.kind == "c":
        return DType.complex64  # the default complex dtype
    raise TypeError(f"cannot make a tensor from data of numpy dtype {array.dtype}")


# Note [Methods set by the modules above]
# A few of Tensor's methods are what modules that build on this one do:
# backward (autograd.py), the subclass factories and the default
# __torch_function__ (subclassing.py).  Those modules set them as Tensor's own
# attributes when imported (dispatcher.prototype imports them all), so that
# this module imports neither and no forwarding call sits on a handler's
# path; Tensor declares them for type checkers.  subclassing.py reads these:
# Called with each new subclass of Tensor (torch_function_methods.py gives it
# its checking methods).  A list here rather than a new Tensor.__init_subclass__
# set from that module, so that Tensor's class stays as this module makes it
# (measured once, that late attribute put the training step 0.8% more
# instructions over the build without it; layout alone moves that count ~2%).
SUBCLASS_HOOKS: list[Callable[[type], None]] = []
_new_tensor = Tensor.__new__
_init_keys = TensorBase.__init__
_CPU_KEY_SET = key_set_for_device("cpu")
# Every tensor of a type holds its one device (tensor_device): the methods above compare by identity.
_CPU = tensor_device("cpu")
_META = tensor_device("meta")
