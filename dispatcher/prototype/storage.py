"""Storages: the memory tensors view, as torch's ``UntypedStorage`` and
``TypedStorage`` (``torch.Storage``), and ``Tensor.set_``, which makes a
tensor view one.

An ``UntypedStorage`` is bytes on a device: on the CPU a one-dimensional
uint8 numpy array, which the tensors viewing it share (a CPU tensor's
``untyped_storage()`` is the memory its numpy array lives in:
strided_views.storage_array); on the meta device a byte count and no data.
A ``TypedStorage`` is an untyped one read as elements of a dtype.

``set_`` (the ``aten::set_.source_Storage`` and
``.source_Storage_storage_offset`` operators) re-points a tensor at a
storage, as torch's CPU and Meta kernels do; the Tensor method passes a
TypedStorage's untyped storage after checking its dtype, as torch's
argument parser does, so a handler sees an UntypedStorage.  Its
Autograd kernel, as torch's, refuses a leaf that requires grad (an in-place
write) and records nothing: torch's formula of set_ is "not differentiable".
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from dispatcher import DispatchKeySet, Library, OperatorHandle
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET

from .dtypes import DType, check_dtype, default_float, optional_dtype, to_numpy_dtype
from .autograd import _check_inplace
from .operators import aten, overload
from .strided_views import storage_array
from .tensor import DeviceLike, Tensor, contiguous_strides, tensor_device

__all__ = ["StorageWeakRef", "TypedStorage", "UntypedStorage"]


class UntypedStorage:
    """torch.UntypedStorage: ``nbytes`` bytes of memory on a device (zeros on the CPU)."""

    def __init__(self, nbytes: int = 0, *, device: DeviceLike = "cpu") -> None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise TypeError(f"UntypedStorage(): the size is a non-negative number of bytes, not {nbytes!r}")
        self.device = tensor_device(device)
        if self.device.type not in ("cpu", "meta"):
            raise RuntimeError(f"UntypedStorage: the prototype keeps storages on the cpu and meta devices, not {device}")
        self._bytes: Optional[np.ndarray] = np.zeros(nbytes, dtype=np.uint8) if self.device.type == "cpu" else None
        self._nbytes = nbytes

    @classmethod
    def _of(cls, memory: np.ndarray) -> "UntypedStorage":
        """The storage of a CPU array's memory (shared, not copied)."""
        out = cls.__new__(cls)
        out.device, out._bytes, out._nbytes = tensor_device("cpu"), memory, memory.nbytes
        return out

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        if self._bytes is None:
            if self.device.type == "meta":
                return 0
            # A wrapper subclass's storage (untyped_storage): torch's invalid python storage.
            raise RuntimeError("Attempted to access the data pointer on an invalid python storage.")
        return int(self._bytes.__array_interface__["data"][0])

    def _weak_ref(self) -> int:
        """What tells this storage's memory from another's (torch's pointer to the
        StorageImpl): the numpy array that owns a CPU storage's bytes, or the
        storage object itself where there are none (a wrapper subclass's, which
        its tensor keeps, or a meta one's)."""
        if self._bytes is None:
            return id(self)
        return id(storage_array(self._bytes))

    def __getitem__(self, index: int) -> int:
        return int(self._cpu_bytes()[index])

    def tolist(self) -> list[int]:
        return self._cpu_bytes().tolist()

    def _cpu_bytes(self) -> np.ndarray:
        if self._bytes is None:
            raise NotImplementedError("Not available for 'meta' device type")
        return self._bytes

    def __repr__(self) -> str:
        return _storage_text([str(v) for v in self.tolist()] if self._bytes is not None else None,
                             f"torch.storage.UntypedStorage(device={self.device})", self._nbytes)


class TypedStorage:
    """torch.TypedStorage (``torch.Storage``): an UntypedStorage read as elements of ``dtype``.

    ``TypedStorage()`` is empty, ``TypedStorage(n)`` has n elements (zeros
    here), ``TypedStorage([1.0, 2.0])`` those values; the dtype defaults to
    the default float's."""

    def __init__(self, data: Union[int, Sequence[Any], None] = None, *, dtype: Optional[DType] = None,
                 device: DeviceLike = "cpu", wrap_storage: Optional[UntypedStorage] = None) -> None:
        self.dtype = default_float if dtype is None else check_dtype(optional_dtype(dtype))
        itemsize = to_numpy_dtype(self.dtype).itemsize
        if wrap_storage is not None:
            self._untyped = wrap_storage
            return
        values = None
        if data is None:
            count = 0
        elif isinstance(data, int) and not isinstance(data, bool):
            count = data
        elif isinstance(data, (list, tuple)):
            values = np.asarray(list(data), dtype=to_numpy_dtype(self.dtype))
            count = values.size
        else:
            raise TypeError(f"TypedStorage(): expected a size or a sequence of values, not {type(data).__name__}")
        self._untyped = UntypedStorage(count * itemsize, device=device)
        if values is not None:
            self._elements()[:] = values

    @property
    def device(self) -> Any:
        return self._untyped.device

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def element_size(self) -> int:
        return to_numpy_dtype(self.dtype).itemsize

    def size(self) -> int:
        return self._untyped.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def _elements(self) -> np.ndarray:
        return self._untyped._cpu_bytes()[:self.size() * self.element_size()].view(to_numpy_dtype(self.dtype))

    def __getitem__(self, index: int) -> Any:
        return self._elements()[index].item()

    def tolist(self) -> list[Any]:
        return self._elements().tolist()

    def __repr__(self) -> str:
        values = None if self.device.type == "meta" else [str(v) for v in self.tolist()]
        return _storage_text(values, f"torch.storage.TypedStorage(dtype={self.dtype!r}, device={self.device})",
                             self.size())


def _storage_text(values: Optional[list[str]], name: str, size: int) -> str:
    """torch's text of a storage: its elements one a line, then ``[name of size n]``."""
    info = f"[{name} of size {size}]"
    if values is None:
        return "...\n" + info
    return " " + "\n ".join(values) + "\n" + info


def untyped_storage(self: Tensor) -> UntypedStorage:
    """torch's ``t.untyped_storage()``: the memory ``t`` views (shared)."""
    data = self._data
    if not isinstance(data, np.ndarray):
        if self.device.type == "meta":
            out = UntypedStorage(0, device="meta")
            out._nbytes = (self.storage_offset() + self.numel()) * self.element_size()
            return out
        if data is None:  # a wrapper subclass's tensor: a storage without memory, as torch's
            return wrapper_storage(self)
        raise NotImplementedError(f"untyped_storage() of a tensor on {self.device.type}: the prototype's storages "
                                  "are on the cpu and meta devices")
    root = storage_array(data)
    return UntypedStorage._of(np.ravel(root, order="A").view(np.uint8))


def wrapper_storage(self: Tensor) -> UntypedStorage:
    """A wrapper subclass tensor's storage: no memory, but one object for the
    tensor's life (torch's TensorImpl holds one), which its views share
    (python_dispatch.return_and_correct_aliasing gives it to them)."""
    found = self.__dict__.get("_wrapper_storage")
    if found is None:
        found = UntypedStorage(0, device="meta" if self.device.type == "meta" else "cpu")
        found.device = self.device
        found._bytes = None
        found._nbytes = (self.storage_offset() + self.numel()) * self.element_size()
        self.__dict__["_wrapper_storage"] = found
    return found


class StorageWeakRef:
    """torch.multiprocessing.reductions.StorageWeakRef: equal for storages of one memory.

    torch's holds a weak reference to the StorageImpl, which keeps its address
    from being reused; this holds the storage's ``_weak_ref()`` key, which
    names its memory while a tensor of it lives."""

    __slots__ = ("cdata",)

    def __init__(self, storage: UntypedStorage) -> None:
        if isinstance(storage, TypedStorage):
            storage = storage.untyped()
        if not isinstance(storage, UntypedStorage):
            raise TypeError(f"StorageWeakRef() takes a storage, not {type(storage).__name__}")
        self.cdata = storage._weak_ref()

    def __hash__(self) -> int:
        return self.cdata

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorageWeakRef) and self.cdata == other.cdata


def typed_storage(self: Tensor) -> TypedStorage:
    """torch's ``t.storage()``: its untyped storage read as elements of its dtype."""
    return TypedStorage(wrap_storage=untyped_storage(self), dtype=self.dtype)


def _check_devices(self: Tensor, source: UntypedStorage) -> None:
    if source.device != self.device:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "{self.device}" to a storage on '
                           f'different device "{source.device}".  This is no longer allowed; the devices must match.')


def _geometry(self: Tensor, source: UntypedStorage, storage_offset: Optional[int], size: Optional[Sequence[int]],
              stride: Optional[Sequence[int]]) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    itemsize = self.element_size()
    offset = 0 if storage_offset is None else int(storage_offset)
    shape = (source.nbytes() // itemsize,) if size is None else tuple(int(s) for s in size)
    strides = contiguous_strides(shape) if not stride else tuple(int(s) for s in stride)
    if len(strides) != len(shape):
        raise RuntimeError("mismatch in length of strides and shape")
    if shape and min(shape) > 0:
        needed = (offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * itemsize
        if needed > source.nbytes():
            raise RuntimeError(
                f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset {offset}, and itemsize "
                f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of size "
                f"{source.nbytes()}")
    return offset, shape, strides


def set_storage(self: Tensor, source: UntypedStorage, storage_offset: Optional[int] = None,
                size: Optional[Sequence[int]] = None, stride: Optional[Sequence[int]] = None) -> Tensor:
    """The CPU kernel of set_.source_Storage(_storage_offset): ``self`` views ``source``."""
    _check_devices(self, source)
    offset, shape, strides = _geometry(self, source, storage_offset, size, stride)
    itemsize = self.element_size()
    self._data = np.ndarray(shape, dtype=to_numpy_dtype(self.dtype), buffer=source._cpu_bytes(),
                            offset=offset * itemsize, strides=tuple(s * itemsize for s in strides))
    self.shape = shape
    return self


def set_storage_meta(self: Tensor, source: UntypedStorage, storage_offset: Optional[int] = None,
                     size: Optional[Sequence[int]] = None, stride: Optional[Sequence[int]] = None) -> Tensor:
    """The Meta kernel: the shape (meta tensors are row-major here and hold no data)."""
    _check_devices(self, source)
    self.shape = _geometry(self, source, storage_offset, size, stride)[1]
    return self


def _set_method(self: Tensor, source: Union[Tensor, UntypedStorage, TypedStorage], storage_offset: Optional[int] = None,
                size: Optional[Sequence[int]] = None, stride: Optional[Sequence[int]] = None) -> Tensor:
    """torch's ``t.set_(source)`` of a tensor (aten::set_.source_Tensor), and
    ``t.set_(storage[, storage_offset, size, stride])``."""
    if isinstance(source, Tensor) and storage_offset is None and size is None and stride is None:
        return aten.set_.source_Tensor(self, source)
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype.c_type_name} or an UntypedStorage, but got type "
                               f"{source.dtype.scalar_type_name} for argument 1 'storage'")
        source = source.untyped()
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be a Storage, not {type(source).__name__}")
    if storage_offset is None and size is None:
        return aten.set_.source_Storage(self, source)
    if storage_offset is None or size is None:
        raise TypeError("set_(): storage_offset and size go together")
    return aten.set_.source_Storage_storage_offset(self, source, storage_offset, list(size),
                                                   [] if stride is None else list(stride))


def _checked_below_autograd(op: OperatorHandle) -> Any:
    """set_'s Autograd kernel: the in-place check, then the call below autograd
    (nothing recorded).  Other libraries' tensors, which share the aten
    operators and have no autograd state here, pass through."""
    def kernel(keyset: DispatchKeySet, self: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(self, Tensor):
            _check_inplace(self)
        return op.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, self, *args, **kwargs)

    return kernel


_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")
_autograd = Library("aten", "IMPL", "Autograd")
for _name in ("set_.source_Storage", "set_.source_Storage_storage_offset"):
    _cpu.impl(_name, set_storage)
    _meta.impl(_name, set_storage_meta)
    _autograd.impl(_name, _checked_below_autograd(overload(_name)), with_keyset=True)

# Tensor's own methods (Note [Methods set by the modules above] in tensor.py).
Tensor.untyped_storage = untyped_storage  # type: ignore[attr-defined]
Tensor.storage = typed_storage  # type: ignore[attr-defined]
Tensor.set_ = _set_method  # type: ignore[attr-defined]
