"""A new device, "toy", on the PrivateUse1 backend, with two kernels of its own.

This is how an out-of-tree backend starts in PyTorch: name the PrivateUse1
device (``rename_privateuse1_backend``), write, with aten's names, the kernels
that must touch device memory -- allocation (``empty.memory_format``) and
copies to and from the device (``_copy_from``, which aten's composite
``copy_`` calls) -- and send every other operator through a boxed *CPU
fallback*: copy the toy inputs to CPU, run the operator there, copy the
results back (PyTorch's ``at::native::cpu_fallback``).  The composite kernels
(factories, ``clone``, ``_to_copy``, ...) need nothing more, and autograd
works unchanged because AutogradPrivateUse1 is covered by the Autograd alias.

Toy memory is a dense row-major bytearray, opaque to numpy-based kernels:
whatever runs on toy tensors either is one of the two kernels here, a
composite made of operators that do, or went through the fallback.  The
fallback is installed with the prototype's other backend fallbacks
(backend_fallbacks.py); ``use_cpu_fallback(["aten::add.Tensor", ...])``
limits it to chosen operators (a per-operator boxed kernel instead of a
backend fallback), so the others fail loudly until they get a kernel.

Naming the backend is process-wide and once only, and the two kernels are
PrivateUse1's kernels of aten operators, so importing the prototype does
neither: ``enable_toy_device()`` does both, and until then the PrivateUse1
backend is free for a backend of the user's own.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from dispatcher import (
    AutoDispatchBelowADInplaceOrView,
    DispatchKey,
    DispatchKeySet,
    Library,
    OperatorHandle,
    Stack,
    box_returns,
    get_privateuse1_backend_name,
    rename_privateuse1_backend,
    unbox_arguments,
)

from .dtypes import DType, default_float, optional_dtype, to_numpy_dtype
from .operators import aten
from .tensor import Tensor
from .tensor_options import check_options

__all__ = ["DEVICE", "cpu_fallback", "enable_toy_device", "is_toy_device_enabled", "use_cpu_fallback"]

DEVICE = "toy"


def enable_toy_device() -> None:
    """Name the PrivateUse1 backend "toy" (once per process; again is a no-op) and
    register its kernels, so that tensors can live on it; if the prototype's
    fallbacks are installed, the toy device's CPU fallback joins them.  Raises
    RuntimeError if PrivateUse1 already has another name."""
    global _own_kernels
    rename_privateuse1_backend(DEVICE)
    if _own_kernels is None:
        _own_kernels = Library("aten", "IMPL", "PrivateUse1")
        _own_kernels.impl("empty.memory_format", _empty)
        _own_kernels.impl("_copy_from", _copy_from)
    if _join_installed_fallbacks and not _fallbacks:
        use_cpu_fallback()


# Whether the prototype's fallbacks are installed (backend_fallbacks.py, which
# builds on this module, says so), so that enabling the device joins them.
_join_installed_fallbacks = False


def set_fallbacks_installed(installed: bool) -> None:
    """backend_fallbacks.install/uninstall: the toy device's CPU fallback joins them when it is enabled."""
    global _join_installed_fallbacks
    _join_installed_fallbacks = installed


def is_toy_device_enabled() -> bool:
    return get_privateuse1_backend_name() == DEVICE

_CPU = DispatchKeySet(DispatchKey.CPU)


# -- the device's own kernels ---------------------------------------------------------------
def _array(t: Tensor) -> np.ndarray:
    """A numpy view of a toy tensor's memory (writable: the memory is a bytearray)."""
    return np.frombuffer(t._data, dtype=to_numpy_dtype(t.dtype)).reshape(t.shape)


def _empty(size: Sequence[int], *, dtype: Optional[DType] = None, layout: Any = None, device: Any = None,
           pin_memory: Optional[bool] = None, memory_format: Any = None) -> Tensor:
    check_options(pin_memory, memory_format)
    dtype = optional_dtype(dtype) or default_float
    nbytes = int(np.prod(size, dtype=np.int64)) * to_numpy_dtype(dtype).itemsize
    return Tensor(bytearray(nbytes), size, dtype, DEVICE)


def _copy_from(self: Tensor, dst: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``self`` into ``dst`` (broadcast), either being on toy: reached when
    either side is (PrivateUse1 outranks CPU), so it is also the toy -> CPU copy."""
    source = _array(self) if self.device.type == DEVICE else self._data
    np.copyto(_array(dst) if dst.device.type == DEVICE else dst._data, source, casting="unsafe")
    return dst


# Registered by enable_toy_device(): PrivateUse1's kernels of aten operators concern whoever names PrivateUse1.
_own_kernels: Optional[Library] = None


# -- the CPU fallback -------------------------------------------------------------------------
def _map_tensors(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, list):
        return [fn(v) if isinstance(v, Tensor) else v for v in value]
    return value


def _to_cpu(t: Tensor) -> Tensor:
    if t.device.type == DEVICE:
        return aten._to_copy.default(t, device="cpu")
    if t.device.type == "cpu" and t.ndim == 0:  # a CPU scalar may join any device's computation
        return t
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {DEVICE} and {t.device}!"
    )


def _to_toy(t: Tensor) -> Tensor:
    return aten._to_copy.default(t, device=DEVICE)


def cpu_fallback(op: OperatorHandle, keyset: DispatchKeySet, stack: Stack) -> None:
    """Run ``op`` on CPU copies of its toy tensors; copy results and written arguments back."""
    schema = op.schema
    values = unbox_arguments(schema, stack)
    # A backend kernel runs below autograd: the copies made here must not be
    # recorded, whichever way the call arrived.
    with AutoDispatchBelowADInplaceOrView():
        cpu_values = [_map_tensors(v, _to_cpu) for v in values]
        args, kwargs = schema.split_call(cpu_values)
        result = op.redispatch(_CPU, *args, **kwargs)
        for i, argument in enumerate(schema.arguments):
            if argument.is_write:
                aten.copy_.default(values[i], cpu_values[i])
        results = (result,) if len(schema.returns) == 1 else tuple(result or ())
        out = []
        for j, r in enumerate(results):
            aliased = schema.aliased_arguments(j)
            if aliased and schema.returns[j].is_write:  # an in-place op returns its (toy) argument
                out.append(values[aliased[0]])
                continue
            if aliased:
                # PyTorch's Note [CPU Fallback Does Not Handle View Operators].
                warnings.warn(
                    f"The operator {op.name()} appears to be a view operator, but it has no implementation for the "
                    f"backend \"{DEVICE}\". View operators don't support falling back to run on the CPU, since "
                    "the tensor's storage cannot be shared across devices; it returns a copy here."
                )
            out.append(_map_tensors(r, _to_toy))
    box_returns(schema, out[0] if len(out) == 1 else (tuple(out) or None), stack)


_fallbacks: list[Library] = []


def use_cpu_fallback(operators: Optional[Iterable[str]] = None) -> None:
    """Send every operator without a toy kernel to the CPU fallback (the default),
    or only ``operators`` (``"aten::exp"``; a bare name means namespace aten;
    none at all for an empty list).  Needs the toy device (enable_toy_device)."""
    by_namespace: dict[str, list[str]] = {}
    for name in operators or ():
        namespace, _, op = name.rpartition("::")
        by_namespace.setdefault(namespace or "aten", []).append(op)
    if (operators is None or by_namespace) and not is_toy_device_enabled():
        raise RuntimeError(
            "the toy device's CPU fallback serves the toy device, which is not enabled: call "
            "dispatcher.prototype.enable_toy_device() first"
        )
    while _fallbacks:
        _fallbacks.pop().close()
    if operators is None:
        library = Library("_", "IMPL")
        library.fallback(cpu_fallback, "PrivateUse1", boxed=True)
        _fallbacks.append(library)
        return
    try:
        for namespace, names in by_namespace.items():
            _fallbacks.append(Library(namespace, "IMPL", "PrivateUse1"))
            for name in names:
                _fallbacks[-1].impl(name, cpu_fallback, boxed=True)
    except Exception:
        while _fallbacks:  # all or nothing: a bad name leaves no fallback at all
            _fallbacks.pop().close()
        raise

