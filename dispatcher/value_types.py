"""The Python types that stand for schema types in annotations: ``Tensor``, ``Number``, ``device``, ``dtype``.

``infer_schema`` (and so ``custom_op``) reads a function's annotations the
way ``torch.library.infer_schema`` does; these are the names a port writes
where torch code wrote ``torch.Tensor``, ``torch.types.Number``,
``torch.device`` and ``torch.dtype``:

==================  ==================  ====================================================
annotation          schema type         the values a call passes
==================  ==================  ====================================================
``Tensor``          ``Tensor``          tensors (``TensorBase`` and its subclasses)
``int``             ``SymInt``          ints (there are no symbolic ints here)
``Number``          ``Scalar``          ``int | float | bool``, as ``torch.types.Number``
``device``          ``Device``          ``device("cuda:1")`` or a device string such as ``"cpu"``
``dtype``           ``ScalarType``      ScalarType values: ints (an IntEnum such as the
                                        prototype's DType is one)
==================  ==================  ====================================================

``device`` is a small class like ``torch.device`` (a type and an optional
index; see its docstring); a Device argument also takes a string, as in
torch, and a kernel gets what the caller passed.  Without torch there are no
``torch.dtype`` objects: a ScalarType value is an int (c10's number), so
``dtype`` is a ``typing.NewType`` of ``int``: a distinct annotation, a plain
value.  torch's ``SymInt`` has no counterpart (``int`` already means
``SymInt`` in an inferred schema, as in torch), nor do the annotations that
need torch objects (``torch.distributed``'s ``GroupName``, opaque script
object types).
"""
from __future__ import annotations

from typing import Any, NewType, Optional, Union

from ._core import TensorBase
from .backends import PRIVATEUSE1_DEVICE_TYPE, get_privateuse1_backend_name, parse_device
from .errors import DispatcherTypeError, DispatcherValueError

__all__ = ["Number", "Tensor", "device", "dtype"]

Tensor = TensorBase
"""The tensor annotation: the default engine's ``TensorBase``, which every tensor type subclasses."""

# torch.types.Number exactly; Union[int, float, bool] is equal to it, so an
# annotation spelled that way means Scalar too.
Number = int | float | bool


class device:
    """Where a tensor lives, as ``torch.device``: a device type and an optional index.

    ``device("cuda:1")``, ``device("cuda", 1)``, ``device("cpu")``; the
    renamed PrivateUse1 backend's name (``rename_privateuse1_backend``) and
    ``"privateuseone"`` both name PrivateUse1.  ``.type`` and ``.index``
    (None without one), ``str()`` (``cuda:1``) and ``repr()``
    (``device(type='cuda', index=1)``) as torch's; equal to devices of the
    same type and index (not to strings, as torch's), hashable, immutable.
    A bad string raises torch's error (a ``DispatcherValueError``, which is
    a RuntimeError as torch's is).
    """

    __slots__ = ("_parsed",)
    # (device type as the parser gives it: "privateuseone" for PrivateUse1, index or None)
    _parsed: tuple[str, Optional[int]]

    def __init__(self, type: Union[str, "device"], index: Optional[int] = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise DispatcherTypeError("device(): an index goes with a device type string, not with a device")
            parsed = type._parsed
        elif isinstance(type, str):
            parsed = parse_device(type)
            if index is not None:
                if isinstance(index, bool) or not isinstance(index, int):
                    raise TypeError(f"device(): argument 'index' (position 2) must be int, not {_type_of(index)}")
                if parsed[1] is not None:
                    raise DispatcherValueError(
                        f"type (string) must not include an index because index was passed explicitly: {type}"
                    )
                if index < 0:
                    raise DispatcherValueError("Device index must not be negative")
                # One more check of the index, by the string parser's rule.
                parsed = parse_device(f"{parsed[0]}:{int(index)}")
        elif isinstance(type, int) and not isinstance(type, bool):
            raise DispatcherTypeError(
                f"device({type}): a bare index means a device of the current accelerator, which this package does "
                f"not know; name its type, as in device('cuda:{type}')"
            )
        else:
            raise TypeError(f"device(): argument 'type' must be a str such as 'cuda:1' or a device, not {_type_of(type)}")
        object.__setattr__(self, "_parsed", parsed)

    @property
    def type(self) -> str:
        """The device type: "cpu", "cuda", ..., the PrivateUse1 backend's current name."""
        kind = self._parsed[0]
        return get_privateuse1_backend_name() if kind == PRIVATEUSE1_DEVICE_TYPE else kind

    @property
    def index(self) -> Optional[int]:
        return self._parsed[1]

    def __str__(self) -> str:
        index = self._parsed[1]
        return self.type if index is None else f"{self.type}:{index}"

    def __repr__(self) -> str:
        index = self._parsed[1]
        return f"device(type='{self.type}')" if index is None else f"device(type='{self.type}', index={index})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self._parsed == other._parsed

    def __hash__(self) -> int:
        return hash(self._parsed)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a device is immutable: cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))


def _type_of(value: object) -> str:
    # The parameter of device() named "type" hides the builtin there.
    return type(value).__name__


dtype = NewType("dtype", int)
"""A ScalarType: c10's ScalarType number (an int, or an IntEnum of those numbers)."""
