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
``device``          ``Device``          device strings such as ``"cpu"`` or ``"cuda:1"``
``dtype``           ``ScalarType``      ScalarType values: ints (an IntEnum such as the
                                        prototype's DType is one)
==================  ==================  ====================================================

Without torch there are no ``torch.device`` or ``torch.dtype`` objects: a
Device value is a string and a ScalarType value an int (what the
dispatcher's boxing takes for them), so ``device`` and ``dtype`` are
``typing.NewType``\\ s of ``str`` and ``int``: distinct annotations, plain
values.  torch's ``SymInt`` has no counterpart (``int`` already means
``SymInt`` in an inferred schema, as in torch), nor do the annotations that
need torch objects (``torch.distributed``'s ``GroupName``, opaque script
object types).
"""
from __future__ import annotations

from typing import NewType

from ._core import TensorBase

__all__ = ["Number", "Tensor", "device", "dtype"]

Tensor = TensorBase
"""The tensor annotation: the default engine's ``TensorBase``, which every tensor type subclasses."""

# torch.types.Number exactly; Union[int, float, bool] is equal to it, so an
# annotation spelled that way means Scalar too.
Number = int | float | bool

device = NewType("device", str)
"""A device: ``"cpu"``, ``"cuda:1"``, or the renamed PrivateUse1 backend's name."""

dtype = NewType("dtype", int)
"""A ScalarType: c10's ScalarType number (an int, or an IntEnum of those numbers)."""
