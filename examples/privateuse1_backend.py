"""PyTorch's accelerator-integration recipe, end to end, in Python on the dispatcher.

PyTorch's guide for a new accelerator ("Operator Registration" in its
accelerator integration docs, and test/cpp_extensions/open_registration_extension)
goes: name the PrivateUse1 backend after the device; register, with aten's
own names, the few operators that must touch device memory (allocation,
views, resizing, copies, reading a scalar); send every other operator to a
CPU fallback, globally or for chosen operators; give the backend's own
operators an Autograd fallthrough while they are forward-only, and a Meta
(fake) kernel so that code can run without data.  This file does each step
with ``dispatcher`` and runs it (``python examples/privateuse1_backend.py``).

torch brings aten's CPU kernels and composite kernels (``_to_copy``,
``copy_``); this package brings no kernels at all, so section 1 plays ATen,
in miniature, with numpy: the handful of CPU kernels and composites the
walk-through calls.  Section 2 on is the backend, as the guide writes it.

Tensors are the example's own small class: a numpy storage with sizes,
strides and an offset, on a device ("cpu", "npu" or "meta").  The "npu"
device's memory is numpy too, but only the npu kernels of section 2 touch
it: every CPU kernel refuses tensors that are not on the CPU, as a real
device's memory would be out of the host's reach.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence

import numpy as np

import dispatcher
from dispatcher import (
    AutoDispatchBelowADInplaceOrView,
    DispatchKey,
    DispatchKeySet,
    Library,
    OperatorHandle,
    TensorBase,
    device,
    fallthrough_kernel,
    ops,
    register_fake,
    rename_privateuse1_backend,
)

K = DispatchKey
NPU = "npu"

# c10's ScalarType numbers of the dtypes used here (a dtype argument is its number).
FLOAT32, FLOAT64, INT64 = 6, 7, 4
_NUMPY_DTYPES = {FLOAT32: np.float32, FLOAT64: np.float64, INT64: np.int64}


# -- 0. tensors --------------------------------------------------------------------------------------
class Storage:
    """A device's memory: a flat numpy array (None on "meta", which has no data)."""

    def __init__(self, data: Optional[np.ndarray], where: device) -> None:
        self.data = data
        self.device = where

    def __len__(self) -> int:
        return 0 if self.data is None else len(self.data)


def _key_set(where: device) -> DispatchKeySet:
    backend = {"cpu": K.CPU, NPU: K.PrivateUse1, "meta": K.Meta}[where.type]
    autograd = {"cpu": K.AutogradCPU, NPU: K.AutogradPrivateUse1, "meta": K.AutogradMeta}[where.type]
    return DispatchKeySet([backend, K.ADInplaceOrView, autograd])


def contiguous_strides(size: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for n in reversed(size):
        strides.insert(0, step)
        step *= max(n, 1)
    return strides


class Tensor(TensorBase):
    """A strided view of a Storage; its DispatchKeySet comes from its device."""

    def __init__(self, storage: Storage, size: Sequence[int], stride: Sequence[int], offset: int, dtype: int) -> None:
        super().__init__(_key_set(storage.device))
        self.storage, self.dtype = storage, dtype
        self.size, self.stride, self.offset = list(size), list(stride), offset

    @property
    def device(self) -> device:
        return self.storage.device

    def numel(self) -> int:
        return int(np.prod(self.size, dtype=np.int64))

    def array(self) -> np.ndarray:
        """The tensor's elements as a numpy view of its storage."""
        data = self.storage.data
        assert data is not None, "a meta tensor has no data"
        itemsize = data.itemsize
        return np.lib.stride_tricks.as_strided(data[self.offset:], shape=self.size,
                                               strides=[s * itemsize for s in self.stride])

    def __repr__(self) -> str:
        if self.device.type == "meta":
            return f"Tensor(size={self.size}, device='meta')"
        values = ops.aten._to_copy.default(self, device="cpu").array().tolist() if self.device.type != "cpu" \
            else self.array().tolist()
        return f"Tensor({values}, device='{self.device}')"


def new_tensor(size: Sequence[int], dtype: Optional[int], where: device) -> Tensor:
    dtype = FLOAT32 if dtype is None else dtype
    n = int(np.prod(size, dtype=np.int64))
    data = None if where.type == "meta" else np.empty(n, dtype=_NUMPY_DTYPES[dtype])
    return Tensor(Storage(data, where), size, contiguous_strides(size), 0, dtype)


def cpu_tensor(values: Any, dtype: int = FLOAT32) -> Tensor:
    array = np.asarray(values, dtype=_NUMPY_DTYPES[dtype])
    t = new_tensor(list(array.shape), dtype, device("cpu"))
    t.array()[...] = array
    return t


# -- 1. ATen in miniature: CPU kernels and composites --------------------------------------------------
def _on_cpu(*tensors: Tensor) -> None:
    for t in tensors:
        if t.device.type != "cpu":
            raise RuntimeError(f"a CPU kernel cannot read memory on {t.device}")


def register_mini_aten() -> list[Library]:
    cpu = Library("aten", "IMPL", "CPU")
    meta = Library("aten", "IMPL", "Meta")
    composite = Library("aten", "IMPL", "CompositeExplicitAutograd")

    def empty_cpu(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return new_tensor(size, dtype, dispatcher.device("cpu"))

    def empty_meta(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return new_tensor(size, dtype, dispatcher.device("meta"))

    def binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., Tensor]:
        def kernel(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
            _on_cpu(self, other)
            return cpu_tensor(fn(self.array(), other.array() * alpha), self.dtype)
        return kernel

    def abs_cpu(self: Tensor) -> Tensor:
        _on_cpu(self)
        return cpu_tensor(np.abs(self.array()), self.dtype)

    def floor_cpu(self: Tensor) -> Tensor:
        _on_cpu(self)
        return cpu_tensor(np.floor(self.array()), self.dtype)

    def copy_cpu(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
        _on_cpu(self, src)
        np.copyto(self.array(), src.array(), casting="unsafe")
        return self

    cpu.impl("empty.memory_format", empty_cpu)
    meta.impl("empty.memory_format", empty_meta)
    cpu.impl("add.Tensor", binary(np.add))
    cpu.impl("mul.Tensor", binary(np.multiply))
    cpu.impl("abs", abs_cpu)
    cpu.impl("floor", floor_cpu)
    cpu.impl("copy_", copy_cpu)

    def to_copy(self: Tensor, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                memory_format=None) -> Tensor:
        # aten's composite: allocate on the target device (BackendSelect picks
        # its empty kernel), then copy_, which dispatches on both tensors.
        target = self.device if device is None else dispatcher.device(device)
        out = ops.aten.empty.memory_format(self.size, dtype=self.dtype if dtype is None else dtype, device=target)
        return ops.aten.copy_.default(out, self)

    def copy_composite(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
        # Reached when either side is off the CPU: a device copy is the backend's _copy_from.
        ops.aten._copy_from.default(src, self, non_blocking)
        return self

    composite.impl("_to_copy", to_copy)
    composite.impl("copy_", copy_composite)
    return [cpu, meta, composite]


# -- 2. the backend: its name and the operators that touch its memory ---------------------------------
def register_backend() -> Library:
    rename_privateuse1_backend(NPU)
    npu = Library("aten", "IMPL", "PrivateUse1")
    here = device(NPU)

    def empty_memory_format(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return new_tensor(size, dtype, here)

    def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
        n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
        t = new_tensor([n], dtype, here)
        return Tensor(t.storage, size, stride, 0, t.dtype)

    def as_strided(self, size, stride, storage_offset=None):
        offset = self.offset if storage_offset is None else storage_offset
        return Tensor(self.storage, size, stride, offset, self.dtype)

    def view(self, size):
        size = list(size)
        if -1 in size:
            known = int(np.prod([s for s in size if s != -1], dtype=np.int64))
            size[size.index(-1)] = self.numel() // known
        if self.stride != contiguous_strides(self.size):
            raise RuntimeError("view size is not compatible with input tensor's size and stride; use .reshape(...) instead.")
        return Tensor(self.storage, size, contiguous_strides(size), self.offset, self.dtype)

    def reshape_alias(self, size, stride):
        return Tensor(self.storage, size, stride, self.offset, self.dtype)

    def resize_(self, size, *, memory_format=None):
        needed = self.offset + int(np.prod(size, dtype=np.int64))
        if needed > len(self.storage):  # grow the storage in place, keeping its contents
            data = np.zeros(needed, dtype=_NUMPY_DTYPES[self.dtype])
            data[:len(self.storage)] = self.storage.data
            self.storage.data = data
        self.size, self.stride = list(size), contiguous_strides(size)
        return self

    def copy_from(self, dst, non_blocking=False):
        # The one kernel that crosses between host and device, either way.
        if dst.size != self.size:
            raise RuntimeError(f"_copy_from: sizes differ: {self.size} and {dst.size}")
        np.copyto(dst.array(), self.array(), casting="unsafe")
        return dst

    def copy_from_and_resize(self, dst):
        ops.aten.resize_.default(dst, self.size)
        return copy_from(self, dst)

    def local_scalar_dense(self):
        return self.array().item()

    def set_source_tensor(self, source):
        self.storage, self.size, self.stride, self.offset = source.storage, list(source.size), list(source.stride), source.offset
        return self

    def set_source_storage(self, source):
        return set_source_storage_offset(self, source, 0, [len(source)])

    def set_source_storage_offset(self, source, storage_offset, size, stride=()):
        self.storage, self.offset, self.size = source, storage_offset, list(size)
        self.stride = list(stride) if stride else contiguous_strides(size)
        return self

    def set_(self):
        return set_source_storage(self, Storage(np.empty(0, dtype=_NUMPY_DTYPES[self.dtype]), here))

    def fill_(self, value):
        self.array()[...] = value
        return self

    # torch.library.impl's way: the device type's name stands for its key (PrivateUse1 here).
    dispatcher.library.impl("aten::fill_.Scalar", NPU, fill_, lib=npu)
    for name, kernel in [
        ("empty.memory_format", empty_memory_format), ("empty_strided", empty_strided), ("as_strided", as_strided),
        ("view", view), ("_reshape_alias", reshape_alias), ("resize_", resize_), ("_copy_from", copy_from),
        ("_copy_from_and_resize", copy_from_and_resize), ("_local_scalar_dense", local_scalar_dense),
        ("set_.source_Tensor", set_source_tensor), ("set_.source_Storage", set_source_storage),
        ("set_.source_Storage_storage_offset", set_source_storage_offset), ("set_", set_),
    ]:
        npu.impl(name, kernel)
    return npu


# -- 3. the CPU fallback ----------------------------------------------------------------------------
def _map(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    return value


def cpu_fallback(op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
    """Run ``op`` on CPU copies of its npu tensors and bring the results back
    (torch's at::native::cpu_fallback), in torch's fallback convention."""
    def to_cpu(t: Tensor) -> Tensor:
        return ops.aten._to_copy.default(t, device="cpu") if t.device.type == NPU else t

    def to_npu(t: Tensor) -> Tensor:
        return ops.aten._to_copy.default(t, device=NPU)

    cpu_args, cpu_kwargs = _map(list(args), to_cpu), {k: _map(v, to_cpu) for k, v in kwargs.items()}
    result = op.redispatch(DispatchKeySet(K.CPU), *cpu_args, **cpu_kwargs)
    # Arguments the operator writes to get the CPU results copied back.
    for i, argument in enumerate(op._schema.arguments):
        if argument.is_write:
            written = args[i] if i < len(args) else kwargs[argument.name]
            ops.aten.copy_.default(written, cpu_args[i] if i < len(args) else cpu_kwargs[argument.name])
    if op._schema.returns and op._schema.returns[0].is_write:  # an in-place operator returns its argument
        return args[0]
    return _map(result, to_npu)


def selective_cpu_fallback(operators: Sequence[OperatorHandle]) -> Library:
    """The CPU fallback for the given operators only: a kernel of each on PrivateUse1
    (torch's guide registers a boxed wrapper of cpu_fallback per operator)."""
    library = Library("aten", "IMPL", "PrivateUse1")
    for op in operators:
        library.impl(op, functools.partial(cpu_fallback, op))  # an operator handle names the operator too
    return library


def global_cpu_fallback() -> Library:
    library = Library("_", "IMPL")
    library.fallback(cpu_fallback, "PrivateUse1")
    return library


# -- 4. the backend's own operator: forward only, with a fake kernel ---------------------------------
def register_custom_op() -> Library:
    lib = Library("npu_ops", "DEF")
    lib.define("custom_abs(Tensor self) -> Tensor")

    def custom_abs(self: Tensor) -> Tensor:
        out = new_tensor(self.size, self.dtype, self.device)
        np.abs(self.array(), out=out.array())
        return out

    lib.impl("custom_abs", custom_abs, "PrivateUse1")
    # Forward only: no derivative formula, so autograd lets the call through
    # (torch's guide registers a fallthrough, or autogradNotImplementedFallback).
    lib.impl("custom_abs", fallthrough_kernel, "AutogradPrivateUse1")

    @register_fake("npu_ops::custom_abs", lib=lib)
    def _(self: Tensor) -> Tensor:
        return ops.aten.empty.memory_format(self.size, dtype=self.dtype, device="meta")

    return lib


# -- 5. the backend's own autograd fallback -------------------------------------------------------------
def autograd_fallback(seen: list[str]) -> Library:
    """Replace the AutogradPrivateUse1 fallback, as torch allows for this one key:
    here one that notes every operator passing through autograd on npu tensors."""
    below = dispatcher.keysets.AFTER_AUTOGRAD_KEYSET

    def fallback(keyset: DispatchKeySet, op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
        seen.append(op.name())
        # Below autograd for the rest of the call, as torch's autograd kernels go:
        # the operators the kernel calls do not come back here.
        with AutoDispatchBelowADInplaceOrView():
            return op.redispatch(keyset & below, *args, **kwargs)

    library = Library("_", "IMPL")
    library.fallback(fallback, "AutogradPrivateUse1", with_keyset=True)
    return library


# -- the walk-through -----------------------------------------------------------------------------------
def main() -> None:
    libraries = register_mini_aten()
    libraries.append(register_backend())
    print(f"PrivateUse1 is named {dispatcher.get_privateuse1_backend_name()!r}")

    # Allocation: empty has no tensor argument; its BackendSelect kernel reads device=.
    x = ops.aten.empty.memory_format([2, 3], dtype=FLOAT32, device=NPU)
    print("empty on npu:", x.device, x.size, "keys", x.key_set)
    host = cpu_tensor([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]])
    ops.aten.copy_.default(x, host)  # host -> device: the composite copy_ calls the backend's _copy_from
    print("copied to npu:", x)

    # Views share the device memory.
    v = ops.aten.view.default(x, [3, 2])
    a = ops.aten.as_strided.default(x, [3], [1], 3)
    r = ops.aten._reshape_alias.default(x, [6], [1])
    assert v.storage is x.storage and a.storage is x.storage and r.storage is x.storage
    print("views:", v, a)
    element = ops.aten.as_strided.default(x, [], [], 4)  # x[1][1], a 0-dimensional view
    print("item:", ops.aten._local_scalar_dense.default(element))  # reads it back to the host

    # Resizing and set_.
    y = ops.aten.empty.memory_format([2], device=NPU)
    ops.aten.resize_.default(y, [4])
    ops.aten.set_.source_Tensor(y, x)
    assert y.storage is x.storage and y.size == [2, 3]
    ops.aten.set_.source_Storage_storage_offset(y, x.storage, 1, [2], [2])
    print("set_ with an offset:", y)
    strided = ops.aten.empty_strided.default([2, 2], [1, 2], device=NPU)
    assert strided.stride == [1, 2]
    print("filled:", ops.aten.fill_.Scalar(strided, 7.0))

    # Operators without an npu kernel: first a selective fallback (abs only) ...
    selective = selective_cpu_fallback([ops.aten.abs.default])
    print("abs through the selective fallback:", ops.aten.abs.default(x))
    try:
        ops.aten.add.Tensor(x, x)
    except NotImplementedError as exc:
        print("add without a fallback:", str(exc).split(". ")[0])
    selective.close()
    # ... then the global one: every operator without an npu kernel runs on the CPU.
    libraries.append(global_cpu_fallback())
    z = ops.aten.add.Tensor(x, x)
    print("add through the global fallback:", z, "on", z.device)
    print("mul:", ops.aten.mul.Tensor(z, x))
    back = ops.aten._to_copy.default(z, device="cpu")
    assert back.device.type == "cpu" and back.array().tolist() == [[-2.0, 4.0, -6.0], [8.0, -10.0, 12.0]]

    # The backend's own forward-only operator, and its fake kernel on meta tensors.
    libraries.append(register_custom_op())
    print("custom_abs:", ops.npu_ops.custom_abs.default(x))
    m = ops.npu_ops.custom_abs.default(ops.aten.empty.memory_format([5, 7], device="meta"))
    print("custom_abs on meta:", m)

    # Replacing the AutogradPrivateUse1 fallback (the standard one is a fallthrough):
    # it sees the operators without an autograd kernel of their own (floor here;
    # a tensor library such as dispatcher.prototype gives abs one).
    seen: list[str] = []
    replaced = autograd_fallback(seen)
    ops.aten.floor.default(x)
    ops.npu_ops.custom_abs.default(x)  # its own fallthrough kernel beats the fallback
    print("through the npu autograd fallback:", seen)
    replaced.close()
    ops.aten.floor.default(x)
    assert seen == ["aten::floor"]

    for library in reversed(libraries):
        library.close()
    print("done")


if __name__ == "__main__":
    main()
