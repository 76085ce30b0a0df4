"""Element types: PyTorch's ScalarType numbering, numpy's storage, promotion.

``DType`` is an IntEnum, so the dispatcher's boxing accepts it wherever a
schema says ``ScalarType`` (ScalarType values are ints, as in c10).
"""
from __future__ import annotations

import builtins
import enum
from typing import Union

import numpy as np

__all__ = [
    "BAREBONES_UNSIGNED", "DTYPE_NAMES", "DType", "NUMPY_DTYPES", "bfloat16", "bool_", "can_cast", "check_dtype",
    "complex64", "default_float", "dtype_abbrs", "float16", "float32", "float64", "float_result_type",
    "from_numpy_dtype", "int16", "int32", "int64", "int8", "optional_dtype", "promote_types", "reduction_dtype",
    "result_type", "to_numpy_dtype", "uint16", "uint32", "uint64", "uint8",
]


class DType(enum.IntEnum):
    """The supported subset of c10::ScalarType, with its values.

    bfloat16 has no numpy type: its values are kept in float32 arrays,
    rounded to bfloat16 (round to nearest, ties to even) whenever a kernel
    computes them (see bfloat16_rounding.py and docs/prototype.md for what differs
    from torch).  uint16, uint32 and uint64 are torch's "barebones" unsigned
    types: they promote with nothing but themselves and floating types."""

    uint8 = 0
    int8 = 1
    int16 = 2
    int32 = 3
    int64 = 4
    float16 = 5
    float32 = 6
    float64 = 7
    complex64 = 9
    bool = 11
    bfloat16 = 15
    uint16 = 27
    uint32 = 28
    uint64 = 29

    def __repr__(self) -> str:
        # As torch prints its dtypes: code and messages written for torch read the same.
        return f"torch.{self.name}"

    __str__ = __repr__

    def __bool__(self) -> builtins.bool:
        # A dtype is truthy, as torch's dtype objects are; as an int, uint8
        # (ScalarType 0) would be falsy, and ``dtype or default`` would drop it.
        return True

    # Whether the dtype is a floating-point one: each member's own attribute,
    # set below (a property cost a call on every kernel's dtype check).
    is_floating_point: builtins.bool  # plain ``bool`` is the member above
    # torch's short name of the dtype (``torch.float32.abbr``): f32, i64, b8, ...
    abbr: str
    is_complex: builtins.bool
    # torch.dtype.is_signed and .itemsize (bfloat16's is 2, whatever its float32 array's is).
    is_signed: builtins.bool
    itemsize: int

    @property
    def scalar_type_name(self) -> str:
        """c10's ScalarType name, as torch's error messages print a dtype: Long, Float, Double, Bool."""
        return _SCALAR_TYPE_NAMES[self]

    @property
    def c_type_name(self) -> str:
        """The C++ type's name, as some of torch's error messages print a dtype: long int, float, ..."""
        return _C_TYPE_NAMES[self]


_ABBREVIATIONS = {"uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float16": "f16",
                  "float32": "f32", "float64": "f64", "complex64": "c64", "bool": "b8", "bfloat16": "bf16",
                  "uint16": "u16", "uint32": "u32", "uint64": "u64"}
_FLOATING = frozenset({DType.float16, DType.bfloat16, DType.float32, DType.float64})
# c10's isBarebonesUnsignedType: unsigned types with few kernels and no promotion with other integers.
BAREBONES_UNSIGNED = frozenset({DType.uint16, DType.uint32, DType.uint64})
_UNSIGNED = BAREBONES_UNSIGNED | {DType.uint8, DType.bool}
_ITEMSIZES = {DType.uint8: 1, DType.int8: 1, DType.int16: 2, DType.int32: 4, DType.int64: 8, DType.float16: 2,
              DType.float32: 4, DType.float64: 8, DType.complex64: 8, DType.bool: 1, DType.bfloat16: 2,
              DType.uint16: 2, DType.uint32: 4, DType.uint64: 8}
for _member in DType:
    _member.is_floating_point = _member in _FLOATING
    _member.abbr = _ABBREVIATIONS[_member.name]
    _member.is_complex = _member is DType.complex64
    _member.is_signed = _member not in _UNSIGNED
    _member.itemsize = _ITEMSIZES[_member]
del _member

# torch.utils._dtype_abbrs.dtype_abbrs: each dtype's abbreviation, as torch's
# logs and graph printouts write a tensor's type (``f32[2, 3]``).
dtype_abbrs: dict[DType, str] = {dt: dt.abbr for dt in DType}

_SCALAR_TYPE_NAMES = {DType.uint8: "Byte", DType.int8: "Char", DType.int16: "Short", DType.int32: "Int",
                      DType.int64: "Long", DType.float16: "Half", DType.float32: "Float", DType.float64: "Double",
                      DType.complex64: "ComplexFloat", DType.bool: "Bool", DType.bfloat16: "BFloat16",
                      DType.uint16: "UInt16", DType.uint32: "UInt32", DType.uint64: "UInt64"}
_C_TYPE_NAMES = {DType.uint8: "unsigned char", DType.int8: "signed char", DType.int16: "short int", DType.int32: "int",
                 DType.int64: "long int", DType.float16: "c10::Half", DType.float32: "float", DType.float64: "double",
                 DType.complex64: "c10::complex<float>", DType.bool: "bool", DType.bfloat16: "c10::BFloat16",
                 DType.uint16: "short unsigned int", DType.uint32: "unsigned int", DType.uint64: "long unsigned int"}

float16, float32, float64, int64, bool_ = DType.float16, DType.float32, DType.float64, DType.int64, DType.bool
int32 = DType.int32  # torch.int
complex64 = DType.complex64  # torch.cfloat
uint8, int8, int16 = DType.uint8, DType.int8, DType.int16
bfloat16, uint16, uint32, uint64 = DType.bfloat16, DType.uint16, DType.uint32, DType.uint64
default_float = DType.float32  # torch.get_default_dtype()

# The numpy dtype of each DType (kernels index it directly for a DType they
# know is one): bfloat16's values live in float32 arrays.
NUMPY_DTYPES: dict[DType, np.dtype] = {
    DType.uint8: np.dtype(np.uint8), DType.int8: np.dtype(np.int8), DType.int16: np.dtype(np.int16),
    DType.int32: np.dtype(np.int32), DType.int64: np.dtype(np.int64), DType.float16: np.dtype(np.float16),
    DType.float32: np.dtype(np.float32), DType.float64: np.dtype(np.float64),
    DType.complex64: np.dtype(np.complex64), DType.bool: np.dtype(np.bool_), DType.bfloat16: np.dtype(np.float32),
    DType.uint16: np.dtype(np.uint16), DType.uint32: np.dtype(np.uint32), DType.uint64: np.dtype(np.uint64)}
_NUMPY = NUMPY_DTYPES
# A numpy array's DType: float32 arrays are float32 tensors (bfloat16 is the tensor's word, not the array's).
_FROM_NUMPY = {v: k for k, v in _NUMPY.items() if k is not DType.bfloat16}
# Promotion's categories: bool < integer < floating < complex (can_cast compares them).
_CATEGORY = {dt: 3 if dt.is_complex else 2 if dt.is_floating_point else 0 if dt is DType.bool else 1 for dt in DType}


def to_numpy_dtype(dt: DType) -> np.dtype:
    try:
        return _NUMPY[dt]
    except (KeyError, TypeError):  # a dtype's name, or not a dtype at all: check_dtype says which
        return _NUMPY[check_dtype(dt)]


def from_numpy_dtype(np_dtype: np.dtype) -> DType:
    if isinstance(np_dtype, np.dtype):  # every array's: looked up without a conversion
        dtype = _FROM_NUMPY.get(np_dtype)
        if dtype is not None:
            return dtype
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"unsupported numpy dtype {np_dtype}; supported: {', '.join(str(v) for v in _NUMPY.values())}"
        ) from None


def _scalar_dtype(value: Union[bool, int, float]) -> DType:
    if isinstance(value, bool):
        return DType.bool
    if isinstance(value, int):
        return DType.int64
    if isinstance(value, complex):
        return DType.complex64  # the default complex dtype, the default float's
    return default_float


def promote_types(a: DType, b: DType) -> DType:
    """torch.promote_types: c10's promoteTypes, for the dtypes here."""
    if a is b:
        return a
    if a in BAREBONES_UNSIGNED or b in BAREBONES_UNSIGNED:
        if a.is_floating_point:
            return a
        if b.is_floating_point:
            return b
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a.scalar_type_name} and {b.scalar_type_name}")
    if a is DType.bool or b is DType.bool:
        return b if a is DType.bool else a
    if a.is_complex or b.is_complex:
        if DType.float64 in (a, b):
            raise _no_complex_of(DType.float64)
        return DType.complex64
    if a.is_floating_point and b.is_floating_point:
        if {a, b} == {DType.float16, DType.bfloat16}:
            return DType.float32  # neither holds the other's values
        return a if a.itemsize > b.itemsize else b
    if a.is_floating_point or b.is_floating_point:
        return a if a.is_floating_point else b
    if DType.uint8 in (a, b):  # uint8 with a signed integer: the signed one wide enough for both
        other = b if a is DType.uint8 else a
        return DType.int16 if other is DType.int8 else other
    return a if a.itemsize > b.itemsize else b


def _promote(a: "DType | None", b: DType) -> DType:
    """promote_types, where None (no operand of that tier yet) gives ``b``."""
    return b if a is None else promote_types(a, b)


def _no_complex_of(dtype: DType) -> TypeError:
    return TypeError(f"the complex dtype of {dtype!r} (torch's promotion of it with complex64) is not one "
                     "dispatcher.prototype has: complex64 is its only complex dtype")


def _to_complex(dtype: DType) -> DType:
    """c10's toComplexType, for the complex dtypes here."""
    if dtype is not DType.float32:
        raise _no_complex_of(dtype)
    return DType.complex64


def _combine_categories(higher: "DType | None", lower: "DType | None") -> "DType | None":
    """c10's combine_categories: a lower tier lifts a higher one's category, never its width."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        # A floating tier keeps its width (float32 with a complex number: complex64).
        return _to_complex(higher) if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher == DType.bool or lower.is_floating_point:
        return _promote(higher, lower)
    return higher


def result_type(*operands: object) -> DType:
    """torch.result_type of tensors (anything with ``.dtype`` and ``.shape``) and Python scalars.

    As c10's ResultTypeState, in three tiers: tensors with dimensions decide
    the dtype; 0-d tensors, then Python scalars and the 0-d "wrapped number"
    tensors made from them (see tensor.wrapped_scalar_tensor), only lift its
    category (an int64 tensor times 0.5 is float32, a float64 tensor times 2
    stays float64, a float32 tensor times a 0-d float64 tensor stays float32).
    A Python float counts as the default float.
    """
    if len(operands) == 2:
        # Two tensors of one dtype, neither a wrapped number (most calls): every
        # tier holds that dtype, so it is the result whatever the shapes.
        # (Anything without _wrapped_number, a number or another tensor type,
        # takes the general path below.)
        a, b = operands
        dtype = getattr(a, "dtype", None)
        if (getattr(b, "dtype", None) is dtype and not getattr(a, "_wrapped_number", True)
                and not getattr(b, "_wrapped_number", True) and type(dtype) is DType):
            return dtype
    dimensioned = zero_dim = scalars = None
    for op in operands:
        if not hasattr(op, "dtype"):
            scalars = _promote(scalars, _scalar_dtype(op))  # type: ignore[arg-type]
        elif getattr(op, "_wrapped_number", False):
            scalars = _promote(scalars, default_float if op.dtype.is_floating_point else op.dtype)
        elif len(op.shape):  # type: ignore[attr-defined]
            dimensioned = _promote(dimensioned, op.dtype)
        else:
            zero_dim = _promote(zero_dim, op.dtype)
    best = _combine_categories(dimensioned, _combine_categories(zero_dim, scalars))
    if best is None:
        raise ValueError("result_type() needs at least one operand")
    return best


def float_result_type(*operands: object) -> DType:
    """result_type, with integers and bools taken to the default float (true division, exp, ...)."""
    dt = result_type(*operands)
    return dt if dt.is_floating_point or dt.is_complex else default_float


def can_cast(source: DType, target: DType) -> bool:
    """Whether an in-place op may write a ``source`` result into a ``target`` tensor (torch.can_cast)."""
    return _CATEGORY[source] <= _CATEGORY[target]


_BY_NAME = {dt.name: dt for dt in DType}
DTYPE_NAMES = frozenset(_BY_NAME)  # "int64", "float16", "float32", ...: what check_dtype takes for a DType


def check_dtype(value: object) -> DType:
    """The DType ``value`` names: a DType, or one of the names ``"int64"``, ``"float16"``,
    ``"float32"``, ``"float64"``, ``"bool"``.  Schemas say ScalarType, which the
    dispatcher's boxing takes as any int; kernels taking a dtype check it here,
    and the Python-level functions (``tensor``, the factories, ``to``, ...)
    turn a name into its DType before calling an operator."""
    if isinstance(value, DType):
        return value
    names = ", ".join(repr(name) for name in _BY_NAME)
    if isinstance(value, str):
        try:
            return _BY_NAME[value]
        except KeyError:
            raise ValueError(f"unknown dtype {value!r}; expected a prototype DType or one of the names {names}") from None
    raise TypeError(f"dtype must be a prototype DType such as float32 or one of the names {names}, not {value!r}")


def optional_dtype(value: object) -> "DType | None":
    """check_dtype, letting None (no dtype requested) through."""
    return None if value is None else check_dtype(value)


def reduction_dtype(input_dtype: DType, requested: "DType | None") -> DType:
    """sum's result dtype: the requested one, else integers and bools accumulate in int64."""
    if requested is not None:
        return check_dtype(requested)
    return input_dtype if input_dtype.is_floating_point or input_dtype.is_complex else DType.int64
