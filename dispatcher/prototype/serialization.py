"""``torch.save`` and ``torch.load`` of the prototype's tensors (torch.serialization).

``save(obj, f)`` writes ``obj`` (tensors, tensor subclasses, and the
containers and numbers around them) to a path or to a file object open for
writing; ``load(f)`` reads it back.  Tensors are written as their pickle
(copying.py: torch's ``__reduce_ex__``), so a wrapper subclass comes back as
its class with its size, strides, dtype and state.

As torch 2.13's, ``load`` is ``weights_only=True`` by default: it rebuilds
tensors, dtypes, numpy arrays and Python's containers and numbers, and any
other class or function only if the caller allows it (``add_safe_globals``,
or the ``safe_globals`` context manager); otherwise it raises torch's
``UnpicklingError``.  ``weights_only=False`` loads any pickle (run only on
files you trust).

What differs from torch: the file is a pickle stream, not torch's zip
archive, so files do not pass between this package and torch; and there is
no ``map_location``, ``mmap`` or ``pickle_module`` (the prototype keeps
tensors on the CPU, so nothing needs mapping).
"""
from __future__ import annotations

import collections
import contextlib
import os
import pickle
import threading
from typing import IO, Any, Iterator, Optional, Union

import numpy as np

from . import copying
from .dtypes import DType

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]

# What a weights-only load rebuilds without being told: tensors (and their
# dtypes), the numpy arrays their values travel in, and OrderedDict.
_DEFAULT_ALLOWED: tuple[Any, ...] = (
    copying.rebuild_tensor, copying.rebuild_wrapper_subclass, copying.rebuild_from_type, DType,
    np.ndarray, np.dtype, collections.OrderedDict,
)
# numpy's own rebuilders of arrays and scalars, and the one protocol 2 writes bytes with (torch allows it too).
_REBUILDERS = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"), ("_codecs", "encode")}

_user_allowed: list[Any] = []  # add_safe_globals: process-wide, as torch's
_scoped = threading.local()  # safe_globals(): this thread's, while its block runs

_DOCS = ("Check the documentation of torch.load to learn more about types accepted by default with weights_only "
         "https://pytorch.org/docs/stable/generated/torch.load.html.")
_TWO_OPTIONS = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those steps "
    "only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default value of "
    "the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` "
    "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
    "steps in the following error message.\n\tWeightsUnpickler error: ")


def add_safe_globals(safe_globals: list[Any]) -> None:
    """torch.serialization.add_safe_globals: allow these classes and functions in every weights-only load."""
    _user_allowed.extend(_checked_globals(safe_globals))


def get_safe_globals() -> list[Any]:
    """torch.serialization.get_safe_globals: what add_safe_globals allowed."""
    return list(_user_allowed)


def clear_safe_globals() -> None:
    """torch.serialization.clear_safe_globals."""
    _user_allowed.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """torch.serialization.safe_globals: allow these in weights-only loads inside the block."""
    checked = _checked_globals(safe_globals)
    outer = getattr(_scoped, "allowed", [])
    _scoped.allowed = outer + checked
    try:
        yield
    finally:
        _scoped.allowed = outer


def _checked_globals(safe: Any) -> list[Any]:
    if not isinstance(safe, (list, tuple)):
        raise TypeError(f"safe_globals must be a list of classes or functions, not {type(safe).__name__}")
    return list(safe)


def _qualified(obj: Any) -> tuple[str, str]:
    return getattr(obj, "__module__", ""), getattr(obj, "__qualname__", getattr(obj, "__name__", ""))


def _allowed_names() -> dict[tuple[str, str], Any]:
    allowed = [*_DEFAULT_ALLOWED, *_user_allowed, *getattr(_scoped, "allowed", [])]
    return {_qualified(obj): obj for obj in allowed}


class _WeightsUnpickler(pickle.Unpickler):
    """An unpickler that rebuilds only allowed globals (torch's weights-only unpickler)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _REBUILDERS:
            return super().find_class(module, name)
        found = _allowed_names().get((module, name))
        if found is not None:
            return found
        shown = f"{module}.{name}"
        raise pickle.UnpicklingError(
            _TWO_OPTIONS + f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
            "context manager to allowlist this global if you trust this class/function.\n\n" + _DOCS)


def save(obj: Any, f: FileLike, pickle_protocol: int = 2) -> None:
    """torch.save: write ``obj`` to the path or writable file object ``f``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as opened:
            pickle.dump(obj, opened, protocol=pickle_protocol)
        return
    if not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    pickle.dump(obj, f, protocol=pickle_protocol)


def load(f: FileLike, *, weights_only: Optional[bool] = None) -> Any:
    """torch.load: read what ``save`` wrote to the path or readable file object ``f``.

    ``weights_only`` (default True, as torch's since 2.6) rebuilds only
    tensors, containers, numbers and the globals allowed by add_safe_globals
    or safe_globals."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as opened:
            return _load_from(opened, weights_only)
    if not hasattr(f, "read"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'read' attribute")
    return _load_from(f, weights_only)


def _load_from(f: IO[bytes], weights_only: Optional[bool]) -> Any:
    if weights_only is False:
        return pickle.load(f)
    try:
        return _WeightsUnpickler(f).load()
    except pickle.UnpicklingError as exc:
        if str(exc).startswith(_TWO_OPTIONS):
            raise
        raise pickle.UnpicklingError(
            "Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
            "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
            "likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
            f"trusted source.\nPlease file an issue with the following so that we can make `weights_only=True` "
            f"compatible with your use case: WeightsUnpickler error: {exc}\n\n" + _DOCS) from None
