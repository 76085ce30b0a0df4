"""PyTorch's function schema language: parse, print, query, bind.

A schema such as::

    aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor

becomes a tree of frozen value objects (``FunctionSchema`` > ``Argument`` /
``Return`` > ``Type``), in the style of ``torchgen/model.py``.
``FunctionSchema.parse(text)`` and ``str(schema)`` round-trip: ``str`` prints
PyTorch's canonical form (``operator<<`` of ``c10::FunctionSchema``), so every
line of PyTorch 2.13's registered schemas parses and prints back unchanged.

The parser follows ``torch/csrc/jit/frontend/function_schema_parser.cpp`` and
``schema_type_parser.cpp``; where PyTorch accepts input it cannot print back
(e.g. ``Device d="cpu"`` prints as ``d=cpu``) or stores nonsense
(``int x="s"``), this parser rejects it or prints something that parses again,
so that ``parse(str(s)) == s`` holds for every schema.

Besides the grammar, a schema precomputes what the call path needs, once:
the dispatch-relevant arguments (``dispatch_args``, ``dispatch_layout``) and
the tables behind ``bind``.
"""
from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Callable, NamedTuple, Optional, Union

from ._frozen import Frozen, slot_setters
from .errors import DispatcherTypeError, DispatcherValueError

__all__ = [
    "AliasInfo",
    "Argument",
    "BaseTy",
    "BaseType",
    "ClassType",
    "DispatchArg",
    "FunctionSchema",
    "ListType",
    "NO_DEFAULT",
    "OperatorName",
    "OptionalType",
    "ParameterizedType",
    "Return",
    "SchemaParseError",
    "TensorArgKind",
    "TupleType",
    "Type",
    "TypeVar",
    "WILDCARD",
    "tensor_arg_kind",
]

# Argument and Return have a field named "type", which their __init__ takes.
_type_of = type
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _fits_int64(digits: str, negative: bool = False) -> bool:
    """Whether the decimal ``digits`` (negated if ``negative``) make an int64, without
    converting a string too long for int() (more than 4300 digits)."""
    significant = digits.lstrip("0")
    if len(significant) > 19:
        return False
    number = int(significant or "0")
    return _INT64_MIN <= (-number if negative else number) <= _INT64_MAX


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Deep enough for any real schema, shallow enough that a hostile input such as
# "((((((..." or "Tensor[][][]..." is a SchemaParseError rather than a
# RecursionError (in the parser, or later when the type is printed or hashed).
_MAX_TYPE_NESTING = 64


def _check_ident(text: object, what: str) -> None:
    if not isinstance(text, str) or not _IDENT.match(text):
        raise ValueError(f"{what} must be an identifier, got {text!r}")


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------
class SchemaParseError(DispatcherValueError):
    """A schema (or operator name) that does not parse.

    Like ``json.JSONDecodeError`` it carries where things went wrong
    (``msg``, ``source``, ``pos``, ``lineno``, ``colno``), and its text shows
    the offending line with the spot marked, as PyTorch's parser does::

        expected ',' or ')' but found identifier 'y':
        aten::f(int x y) -> ()
                      ^ <--- HERE
    """

    def __init__(self, msg: str, source: str, pos: int, width: int = 1) -> None:
        line_start = source.rfind("\n", 0, pos) + 1
        line_end = source.find("\n", pos)
        if line_end < 0:
            line_end = len(source)
        line = source[line_start:line_end]
        col = pos - line_start
        # Mark at least one column (the end of input has no characters) and
        # never run past the end of the line.
        width = max(1, min(width, len(line) - col))
        marker = " " * col + "^" + "~" * (width - 1)
        super().__init__(f"{msg}:\n{line}\n{marker} <--- HERE")
        self.msg = msg
        self.source = source
        self.pos = pos
        self.width = width
        self.lineno = source.count("\n", 0, pos) + 1
        self.colno = col + 1

    def __reduce__(self) -> Any:
        # Exceptions pickle as cls(*args); ours has a different signature.
        return (SchemaParseError, (self.msg, self.source, self.pos, self.width))


# --------------------------------------------------------------------------
# Alias annotations
# --------------------------------------------------------------------------
WILDCARD = "*"


class AliasInfo(Frozen):
    """An alias annotation: ``(a)``, ``(a!)``, ``(a -> *)``, ``(a|b)``, ``(*)``.

    ``before_set`` names the alias sets the value is in when the operator
    starts, ``after_set`` those it is in when it returns (the same unless an
    ``->`` says otherwise); ``is_write`` is the ``!``.  PyTorch keeps the sets
    as unordered sets, so equality ignores their order, while printing keeps
    the order they were written in (which is how the corpus spells them).
    """

    __slots__ = ("before_set", "is_write", "after_set", "_sets")
    _fields = ("before_set", "is_write", "after_set")
    _compared = ("is_write", "_sets")

    before_set: tuple[str, ...]
    is_write: bool
    after_set: tuple[str, ...]
    _sets: tuple[frozenset[str], frozenset[str]]

    def __init__(self, before_set: tuple[str, ...], is_write: bool = False,
                 after_set: Optional[tuple[str, ...]] = None) -> None:
        # Sets, kept in written order without repeats: (a|a) is (a).
        before = tuple(dict.fromkeys(before_set))
        after = before if after_set is None else tuple(dict.fromkeys(after_set))
        if not before or not after:
            raise ValueError("each side of an alias annotation needs at least one alias set")
        for name in (*before, *after):
            if name != WILDCARD:
                _check_ident(name, "an alias set")
        object.__setattr__(self, "before_set", before)
        object.__setattr__(self, "is_write", is_write)
        object.__setattr__(self, "after_set", after)
        object.__setattr__(self, "_sets", (frozenset(before), frozenset(after)))

    def __str__(self) -> str:
        text = "|".join(self.before_set)
        if self.is_write:
            text += "!"
        if self._sets[1] != self._sets[0]:
            text += " -> " + "|".join(self.after_set)
        return f"({text})"


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------
class BaseTy(enum.Enum):
    """The named leaf types of the schema language (value = spelling)."""

    Tensor = "Tensor"
    int = "int"
    float = "float"
    bool = "bool"
    str = "str"
    complex = "complex"
    Scalar = "Scalar"
    ScalarType = "ScalarType"
    Layout = "Layout"
    Device = "Device"
    MemoryFormat = "MemoryFormat"
    Generator = "Generator"
    Storage = "Storage"
    Stream = "Stream"
    Dimname = "Dimname"
    QScheme = "QScheme"
    SymInt = "SymInt"
    SymFloat = "SymFloat"
    SymBool = "SymBool"
    Any = "Any"
    AnyClassType = "AnyClassType"
    AnyEnumType = "AnyEnumType"
    Capsule = "Capsule"
    NoneType = "NoneType"
    # An opaque type: any Python object.  No schema spells it: a name registered
    # with dispatcher.opaque_types parses as it (and prints as "PyObject").
    PyObject = "PyObject"


_BASE_TYPES = {ty.value: ty for ty in BaseTy}


class Type(Frozen):
    """Base class of the schema types."""

    __slots__ = ()

    @property
    def alias(self) -> Optional[AliasInfo]:
        """The alias annotation written directly on this type, if any."""
        return None

    def strip_annotations(self) -> "Type":
        """This type without any alias annotation (how error messages name it)."""
        raise NotImplementedError


class BaseType(Type):
    """A named type: ``Tensor``, ``int``, ``Scalar``, ... with an optional annotation."""

    __slots__ = _fields = ("name", "alias")

    name: BaseTy
    alias: Optional[AliasInfo]

    def __init__(self, name: BaseTy, alias: Optional[AliasInfo] = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "alias", alias)

    def __str__(self) -> str:
        return self.name.value if self.alias is None else f"{self.name.value}{self.alias}"

    def strip_annotations(self) -> "Type":
        return self if self.alias is None else BaseType(self.name)


class TypeVar(Type):
    """A type variable (``t``, ``t1``): any lower-case name that is not a known type."""

    __slots__ = _fields = ("name", "alias")

    name: str
    alias: Optional[AliasInfo]

    def __init__(self, name: str, alias: Optional[AliasInfo] = None) -> None:
        _check_ident(name, "a type variable")
        if not name[0].islower() or name in _BASE_TYPES:
            raise ValueError(f"{name!r} cannot be a type variable")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "alias", alias)

    def __str__(self) -> str:
        return self.name if self.alias is None else f"{self.name}{self.alias}"

    def strip_annotations(self) -> "Type":
        return self if self.alias is None else TypeVar(self.name)


_CLASS_PREFIX = "__torch__.torch.classes."


class ClassType(Type):
    """A custom class, ``__torch__.torch.classes.<namespace>.<name>``."""

    __slots__ = _fields = ("qualified_name",)

    qualified_name: str

    def __init__(self, qualified_name: str) -> None:
        parts = qualified_name.split(".") if isinstance(qualified_name, str) else ()
        if len(parts) != 5 or not qualified_name.startswith(_CLASS_PREFIX):
            raise ValueError(
                f"a class type is spelled {_CLASS_PREFIX}<namespace>.<name>, "
                f"got {qualified_name!r}"
            )
        _check_ident(parts[3], "a class namespace")
        _check_ident(parts[4], "a class name")
        object.__setattr__(self, "qualified_name", qualified_name)

    def __str__(self) -> str:
        return self.qualified_name

    def strip_annotations(self) -> "Type":
        return self


class OptionalType(Type):
    """``T?``."""

    __slots__ = _fields = ("elem",)

    elem: Type

    def __init__(self, elem: Type) -> None:
        object.__setattr__(self, "elem", elem)

    def __str__(self) -> str:
        return f"{self.elem}?"

    def strip_annotations(self) -> "Type":
        elem = self.elem.strip_annotations()
        return self if elem is self.elem else OptionalType(elem)


class ListType(Type):
    """``T[]``, or ``T[N]`` (``size``: only at the top level of an argument)."""

    __slots__ = _fields = ("elem", "size", "alias")

    elem: Type
    size: Optional[int]
    alias: Optional[AliasInfo]

    def __init__(self, elem: Type, size: Optional[int] = None, alias: Optional[AliasInfo] = None) -> None:
        if size is not None and (type(size) is not int or not 0 <= size <= _INT64_MAX):
            raise ValueError(f"a list size must be a non-negative int64, got {size!r}")
        object.__setattr__(self, "elem", elem)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "alias", alias)

    def __str__(self) -> str:
        size = "" if self.size is None else self.size
        alias = "" if self.alias is None else self.alias
        return f"{self.elem}[{size}]{alias}"

    def strip_annotations(self) -> "Type":
        elem = self.elem.strip_annotations()
        if elem is self.elem and self.alias is None:
            return self
        return ListType(elem, self.size)


class TupleType(Type):
    """``(T1, T2, ...)``; ``()`` is the empty tuple."""

    __slots__ = _fields = ("elems",)

    elems: tuple[Type, ...]

    def __init__(self, elems: tuple[Type, ...]) -> None:
        object.__setattr__(self, "elems", elems)

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elems)) + ")"

    def strip_annotations(self) -> "Type":
        return TupleType(tuple(e.strip_annotations() for e in self.elems))


# name -> (min args, max args, may carry an alias annotation)
_PARAMETERIZED = {
    "Dict": (2, 2, True),
    "Future": (1, 1, False),
    "RRef": (1, 1, False),
    "Await": (1, 1, False),
    "Union": (1, None, False),
}


class ParameterizedType(Type):
    """``Dict(K, V)``, ``Future(T)``, ``RRef(T)``, ``Await(T)``, ``Union(T1, ...)``."""

    __slots__ = _fields = ("name", "args", "alias")

    name: str
    args: tuple[Type, ...]
    alias: Optional[AliasInfo]

    def __init__(self, name: str, args: tuple[Type, ...], alias: Optional[AliasInfo] = None) -> None:
        if name not in _PARAMETERIZED:
            raise ValueError(f"unknown parameterized type {name!r}")
        lo, hi, annotatable = _PARAMETERIZED[name]
        if len(args) < lo or (hi is not None and len(args) > hi):
            raise ValueError(f"{name} takes {lo if lo == hi else f'at least {lo}'} type(s)")
        if alias is not None and not annotatable:
            raise ValueError(f"{name}(...) cannot carry an alias annotation")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "alias", alias)

    def __str__(self) -> str:
        text = f"{self.name}({', '.join(map(str, self.args))})"
        return text if self.alias is None else f"{text}{self.alias}"

    def strip_annotations(self) -> "Type":
        return ParameterizedType(self.name, tuple(a.strip_annotations() for a in self.args))


def _top_alias(t: Type) -> Optional[AliasInfo]:
    if isinstance(t, OptionalType):
        t = t.elem
    return t.alias


def _is_write(t: Type) -> bool:
    """PyTorch's ``alias_info()->isWrite()`` for an argument of type ``t``."""
    if isinstance(t, OptionalType):
        t = t.elem
    if t.alias is not None:
        return t.alias.is_write
    # Tensor(a!)[]: PyTorch gives the list a set-less annotation that copies
    # the element's write flag, so such out= lists count as mutated.
    if isinstance(t, ListType):
        elem_alias = _top_alias(t.elem)
        return elem_alias is not None and elem_alias.is_write
    return False


class TensorArgKind(enum.IntEnum):
    """How a dispatch-relevant argument holds tensors."""

    TENSOR = 0  # Tensor
    OPTIONAL_TENSOR = 1  # Tensor?
    TENSOR_LIST = 2  # Tensor[]
    OPTIONAL_TENSOR_LIST = 3  # Tensor?[]


def _is_tensor(t: Type) -> bool:
    return isinstance(t, BaseType) and t.name is BaseTy.Tensor


def tensor_arg_kind(t: Type) -> Optional[TensorArgKind]:
    """The kind of ``t`` if the dispatcher extracts keys from it, else None.

    Exactly the four types PyTorch's DispatchKeyExtractor looks at; in
    particular ``Tensor[]?`` and tensors inside tuples or dicts do not count.
    """
    if _is_tensor(t):
        return TensorArgKind.TENSOR
    if isinstance(t, OptionalType):
        return TensorArgKind.OPTIONAL_TENSOR if _is_tensor(t.elem) else None
    if isinstance(t, ListType):
        if _is_tensor(t.elem):
            return TensorArgKind.TENSOR_LIST
        if isinstance(t.elem, OptionalType) and _is_tensor(t.elem.elem):
            return TensorArgKind.OPTIONAL_TENSOR_LIST
    return None


# Read once for _Signature's loop: an enum member read through its class
# costs a lookup each time, and the namedtuple's own __new__ a Python frame.
_TENSOR_TY = BaseTy.Tensor
_KIND_TENSOR = TensorArgKind.TENSOR
_KIND_NUMBERS = {kind: int(kind) for kind in TensorArgKind}


# --------------------------------------------------------------------------
# Default values
# --------------------------------------------------------------------------
class _NoDefault:
    """The type of ``NO_DEFAULT``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""``Argument.default`` of an argument without a default (None is a default)."""

_INT_LIKE = frozenset(
    {BaseTy.int, BaseTy.SymInt, BaseTy.ScalarType, BaseTy.Layout, BaseTy.MemoryFormat}
)
_FLOAT_LIKE = frozenset({BaseTy.float, BaseTy.SymFloat})
_NUMBER_LIKE = _FLOAT_LIKE | {BaseTy.complex, BaseTy.Scalar}
_BOOL_LIKE = frozenset({BaseTy.bool, BaseTy.SymBool})
_STR_LIKE = frozenset({BaseTy.str, BaseTy.Dimname, BaseTy.Device})
_NONE_ONLY = frozenset({BaseTy.Tensor, BaseTy.Generator, BaseTy.NoneType})
# Element types whose lists may have a default (PyTorch: convertToList).
_LIST_DEFAULT_ELEMS = frozenset(
    {BaseTy.int, BaseTy.SymInt, BaseTy.float, BaseTy.SymFloat, BaseTy.bool, BaseTy.SymBool}
)
# "int[N] x=1" stores N copies; bound N so a typo cannot allocate gigabytes.
_MAX_REPEATED_DEFAULT = 1024


def _default_error(t: Type, value: object, expected: str) -> ValueError:
    return ValueError(f"a default for {t} must be {expected}, got {value!r}")


def _scalar_default(t: BaseType, value: Any, float_from_int: bool) -> Any:
    ty = t.name
    if ty in _NONE_ONLY:
        if value is None:
            return None
        raise _default_error(t, value, "None")
    if ty in _BOOL_LIKE:
        if type(value) is bool:
            return value
        raise _default_error(t, value, "True or False")
    if ty in _INT_LIKE:
        if type(value) is int and _INT64_MIN <= value <= _INT64_MAX:
            return value
        raise _default_error(t, value, "a 64-bit integer")
    if ty in _STR_LIKE:
        if type(value) is str and _is_utf8(value):
            return value
        raise _default_error(t, value, "a string (of valid Unicode)")
    if ty in _NUMBER_LIKE:
        if type(value) in (int, float) or ty is BaseTy.Scalar and type(value) is bool:
            value = _checked_number(t, value)
            # PyTorch stores a number written for a float argument as a double
            # ("float x=5" prints "5."), but keeps the literal's kind under
            # Optional ("float? x=5" prints "5") and for Scalar and complex.
            return float(value) if float_from_int and ty in _FLOAT_LIKE else value
        raise _default_error(t, value, "True, False or a number" if ty is BaseTy.Scalar else "a number")
    raise ValueError(f"an argument of type {t} cannot have a default value")


def _is_utf8(text: str) -> bool:
    """False for strings with lone surrogates, which have no bytes to print."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _checked_number(t: Type, value: Any) -> Any:
    if type(value) is float and not math.isfinite(value):
        raise _default_error(t, value, "finite")
    if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
        raise _default_error(t, value, "within 64 bits")
    return value


def _normalize_default(t: Type, value: Any) -> Any:
    """``value`` as a default of an argument of type ``t``, or ValueError.

    Mirrors what PyTorch's parser stores: ``float`` defaults become floats,
    a scalar for a sized list ``int[2] x=1`` is repeated (``(1, 1)``), lists
    become tuples (defaults are shared, so they must be immutable).
    Idempotent: a normalized default normalizes to itself.
    """
    if value is NO_DEFAULT:
        return value
    if isinstance(t, OptionalType):
        if value is None:
            return None
        inner = t.elem
        if isinstance(inner, BaseType):
            return _scalar_default(inner, value, float_from_int=False)
        return _normalize_default(inner, value)
    if isinstance(t, BaseType):
        return _scalar_default(t, value, float_from_int=True)
    if isinstance(t, ListType):
        elem = t.elem
        if not (isinstance(elem, BaseType) and elem.name in _LIST_DEFAULT_ELEMS):
            raise ValueError(
                f"an argument of type {t} cannot have a default value "
                "(list defaults exist for int, SymInt, float and bool lists)"
            )
        if isinstance(value, (tuple, list)):
            return tuple(_scalar_default(elem, v, float_from_int=True) for v in value)
        if t.size is not None:
            if t.size > _MAX_REPEATED_DEFAULT:
                raise ValueError(
                    f"a single default for {t} would be repeated {t.size} times "
                    f"(at most {_MAX_REPEATED_DEFAULT}); write the list"
                )
            return (_scalar_default(elem, value, float_from_int=True),) * t.size
        raise _default_error(t, value, "a list")
    raise ValueError(f"an argument of type {t} cannot have a default value")


def _format_float(value: float) -> str:
    # c10's IValue printer: integral doubles that fit in int64 print as the
    # integer plus a dot ("1.", "-0." prints "0."), everything else with
    # max_digits10 significant digits, i.e. printf's %.17g.
    if value.is_integer() and -(2.0**63) <= value < 2.0**63:
        return f"{int(value)}."
    return "%.17g" % value


_ESCAPES = {
    "\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b",
    "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
}


def _quote(text: str) -> str:
    # c10::printQuotedString works on bytes: printable ASCII as is, the usual
    # escapes, every other byte (including UTF-8 ones) as \ooo octal.
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend("\\%03o" % b for b in ch.encode("utf-8"))
    out.append('"')
    return "".join(out)


def _format_value(value: Any) -> str:
    if value is None or type(value) is bool:
        return str(value)
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return _format_float(value)
    if type(value) is str:
        return _quote(value)
    return "[" + ", ".join(map(_format_value, value)) + "]"


def _format_default(t: Type, value: Any) -> str:
    # PyTorch prints an int list default whose elements are all equal as one
    # number ("int[2] stride=1"), but only for plain int lists: SymInt[2] and
    # int[2]? print the whole list.  It does so for any length, printing
    # "int[] x=[2, 2]" as "int[] x=2", which it cannot parse back; so here only
    # a list of exactly N items of an int[N] collapses, which parses back to it.
    if (
        isinstance(t, ListType)
        and t.size == len(value) > 1
        and isinstance(t.elem, BaseType)
        and t.elem.name is BaseTy.int
        and value.count(value[0]) == len(value)
    ):
        return _format_value(value[0])
    return _format_value(value)


def _is_default(value: Any, default: Any) -> bool:
    """Whether an argument's ``value`` is its ``default`` as torch sees it once
    the value has its argument's type: numbers by value (an int argument's 1
    and 1.0 alike, an enum's number too), but a bool is no number; a list equal
    to a tuple default; a Device default (a string here) equal to a device
    that prints as it."""
    if default is NO_DEFAULT:
        return False
    if default is None or type(default) is bool:
        return value is default
    if type(default) is tuple:
        return (type(value) in (list, tuple) and len(value) == len(default)
                and all(_is_default(v, d) for v, d in zip(value, default)))
    if type(default) in (int, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value == default
    if type(default) is str and type(value) is not str:
        return type(value).__name__ == "device" and str(value) == default
    return type(value) is type(default) and bool(value == default)


def _default_key(value: Any) -> Any:
    # Equality must tell 1, 1.0 and True apart: they print differently.
    if type(value) is tuple:
        return tuple(map(_default_key, value))
    return (type(value), value)


# --------------------------------------------------------------------------
# Arguments, returns, names
# --------------------------------------------------------------------------
class Argument(Frozen):
    """One parameter: ``Tensor(a!) self``, ``int[2] stride=1``, ``*, Scalar alpha=1``.

    The alias annotation lives in ``type`` (where it was written: on the
    tensor in ``Tensor(a!)[]``, on the list in ``t[](a!)``); ``alias_info``
    gives the argument-level one.
    """

    __slots__ = ("name", "type", "default", "kwarg_only", "_default_key")
    _fields = ("name", "type", "default", "kwarg_only")
    _compared = ("name", "type", "kwarg_only", "_default_key")

    name: str
    type: Type
    default: Any
    kwarg_only: bool
    _default_key: Any

    def __init__(self, name: str, type: Type, default: Any = NO_DEFAULT, kwarg_only: bool = False) -> None:
        _check_ident(name, "an argument name")
        if not isinstance(type, Type):
            raise TypeError(f"Argument.type must be a Type, got {_type_of(type).__name__}")
        if _type_of(kwarg_only) is not bool:
            raise TypeError(f"Argument.kwarg_only must be a bool, got {kwarg_only!r}")
        default = _normalize_default(type, default)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "kwarg_only", kwarg_only)
        object.__setattr__(self, "_default_key", _default_key(default))

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def has_default_value(self) -> bool:
        """torch._C.Argument's name for ``has_default``."""
        return self.default is not NO_DEFAULT

    @property
    def default_value(self) -> Any:
        """torch._C.Argument's: the default as torch gives it to Python (None
        without one): a list as a list, a Device's as a device (an optional
        Device's stays its text, as in torch), a ScalarType's as its number."""
        default = self.default
        if default is NO_DEFAULT:
            return None
        if isinstance(default, tuple):
            return list(default)
        if isinstance(self.type, BaseType) and self.type.name is BaseTy.Device and isinstance(default, str):
            from .value_types import device  # on first use: value_types imports the engine

            return device(default)
        return default

    @property
    def alias_info(self) -> Optional[AliasInfo]:
        """The annotation of the argument itself (``Tensor(a!)``, ``Tensor(a)?``, ``t[](a)``)."""
        return _top_alias(self.type)

    @property
    def is_write(self) -> bool:
        """True if the operator may write to this argument (PyTorch's ``isWrite``)."""
        return _is_write(self.type)

    def __str__(self) -> str:
        text = f"{self.type} {self.name}"
        if self.default is NO_DEFAULT:
            return text
        return f"{text}={_format_default(self.type, self.default)}"


class Return(Frozen):
    """One result: ``Tensor``, ``Tensor(a!) out``, ``(Tensor values, Tensor indices)`` items."""

    __slots__ = _fields = ("type", "name")

    type: Type
    name: Optional[str]

    def __init__(self, type: Type, name: Optional[str] = None) -> None:
        if name is not None:
            _check_ident(name, "a return name")
        if not isinstance(type, Type):
            raise TypeError(f"Return.type must be a Type, got {_type_of(type).__name__}")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "name", name)

    @property
    def alias_info(self) -> Optional[AliasInfo]:
        return _top_alias(self.type)

    @property
    def is_write(self) -> bool:
        return _is_write(self.type)

    def __str__(self) -> str:
        return str(self.type) if self.name is None else f"{self.type} {self.name}"


class OperatorName(Frozen):
    """``namespace::name.overload_name``; namespace and overload may be empty."""

    __slots__ = ("namespace", "name", "overload_name", "qualified_name", "_text")
    _fields = ("namespace", "name", "overload_name")

    namespace: str
    name: str
    overload_name: str
    # ``ns::name`` without the overload (PyTorch's ``OperatorName::name``).
    qualified_name: str
    # str(self), made once: registration looks operators up by it.
    _text: str

    def __init__(self, namespace: str, name: str, overload_name: str = "") -> None:
        if namespace:
            _check_ident(namespace, "an operator namespace")
        _check_ident(name, "an operator name")
        if overload_name:
            _check_ident(overload_name, "an overload name")
        self._set(namespace, name, overload_name)

    def _set(self, namespace: str, name: str, overload_name: str) -> None:
        qualified_name = f"{namespace}::{name}" if namespace else name
        _set_namespace(self, namespace)
        _set_name(self, name)
        _set_overload_name(self, overload_name)
        _set_qualified_name(self, qualified_name)
        _set_text(self, f"{qualified_name}.{overload_name}" if overload_name else qualified_name)

    def with_namespace(self, namespace: str) -> "OperatorName":
        """This name in ``namespace`` (which is checked; the rest was when this was made)."""
        _check_ident(namespace, "an operator namespace")
        name = OperatorName.__new__(OperatorName)
        name._set(namespace, self.name, self.overload_name)
        return name

    def __str__(self) -> str:
        return self._text

    def __hash__(self) -> int:
        # Equal names have equal texts; the text's hash is cached by the str.
        return hash(self._text)

    @staticmethod
    def parse(text: str) -> "OperatorName":
        """Parse ``ns::name`` or ``ns::name.overload`` (a text parsed before
        gives the same, immutable, name again)."""
        name = _NAME_CACHE.get(text) if type(text) is str else None
        if name is None:
            # Most names are plain identifiers: a regex reads those, the parser the rest (and the errors).
            plain = _PLAIN_OPERATOR_NAME.fullmatch(text) if type(text) is str else None
            if plain is not None:
                first, second, overload = plain.groups()
                name = OperatorName.__new__(OperatorName)
                name._set(first if second else "", second or first, overload or "")
            else:
                parser = _Parser(text)
                name = parser.operator_name()
                parser.expect(_EOF, "end of the operator name")
            _remember(_NAME_CACHE, text, name)
        return name


# A library's every def names an operator (with_namespace): see slot_setters.
_set_namespace, _set_name, _set_overload_name, _set_qualified_name, _set_text = slot_setters(
    OperatorName, "namespace", "name", "overload_name", "qualified_name", "_text"
)


class DispatchArg(NamedTuple):
    """A dispatch-relevant argument: where it is and how it holds tensors."""

    position: int
    name: str
    kind: TensorArgKind


# DispatchArg(position, name, kind) without the Python frame of the
# namedtuple's __new__: _new_dispatch_arg(DispatchArg, (position, name, kind)).
_new_dispatch_arg = tuple.__new__

def _and_list(names: list[str]) -> str:
    # Python's own wording: 'a' / 'a' and 'b' / 'a', 'b', and 'c'.
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --------------------------------------------------------------------------
# FunctionSchema
# --------------------------------------------------------------------------
class FunctionSchema(Frozen):
    """A whole operator schema.

    Equal schemas print identically, but for the order of alias sets in an
    annotation such as ``(a|b)``, which are sets.

    Derived data the call path reads on every call is computed once (and
    shared by the schema's renamed copies): ``dispatch_args``,
    ``dispatch_layout`` and the binding tables.
    """

    __slots__ = ("name", "arguments", "returns", "is_vararg", "is_varret", "dispatch_args", "dispatch_layout", "_sig",
                 "_hash")
    _fields = ("name", "arguments", "returns", "is_vararg", "is_varret")

    name: OperatorName
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    is_vararg: bool
    is_varret: bool
    dispatch_args: tuple[DispatchArg, ...]
    # The dispatch arguments as a call plan takes them (CallPlan in
    # dispatcher/_engine/core.py): (position, name, kind, required) of each,
    # and the positional span: when every one is a required Tensor that can
    # be passed positionally, how many positional arguments a call must pass
    # to pass them all; -1 otherwise.
    dispatch_layout: tuple[tuple[tuple[int, str, int, bool], ...], int]
    _sig: "_Signature"
    _hash: Optional[int]

    def __init__(self, name: OperatorName, arguments: Iterable[Argument], returns: Iterable[Return],
                 is_vararg: bool = False, is_varret: bool = False) -> None:
        if type(arguments) is not tuple:
            arguments = tuple(arguments)
        if type(returns) is not tuple:
            returns = tuple(returns)
        if not isinstance(name, OperatorName):
            raise TypeError(f"FunctionSchema.name must be an OperatorName, got {name!r}")
        if type(is_vararg) is not bool or type(is_varret) is not bool:
            raise TypeError("FunctionSchema.is_vararg and is_varret must be bools")
        for r in returns:
            if not isinstance(r, Return):
                raise TypeError(f"FunctionSchema.returns must be Returns, got {r!r}")
        # Also checks the arguments.
        self._set(name, arguments, returns, is_vararg, is_varret, _Signature(name, arguments, is_vararg))

    def _set(self, name: OperatorName, arguments: tuple[Argument, ...], returns: tuple[Return, ...],
             is_vararg: bool, is_varret: bool, sig: "_Signature") -> None:
        _set_schema_name(self, name)
        _set_arguments(self, arguments)
        _set_returns(self, returns)
        _set_is_vararg(self, is_vararg)
        _set_is_varret(self, is_varret)
        _set_dispatch_args(self, sig.dispatch_args)
        _set_dispatch_layout(self, sig.dispatch_layout)
        _set_sig(self, sig)
        _set_hash(self, None)

    def with_name(self, name: OperatorName) -> "FunctionSchema":
        """This schema under another name; what the name does not change
        (the checked arguments, the binding tables) is shared, not rebuilt."""
        if not isinstance(name, OperatorName):
            raise TypeError(f"FunctionSchema.name must be an OperatorName, got {name!r}")
        schema = FunctionSchema.__new__(FunctionSchema)
        schema._set(name, self.arguments, self.returns, self.is_vararg, self.is_varret, self._sig)
        return schema

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.name, self.arguments, self.returns, self.is_vararg, self.is_varret))
            object.__setattr__(self, "_hash", h)
        return h

    # -- parsing and printing ----------------------------------------------
    @staticmethod
    def parse(text: str) -> "FunctionSchema":
        """Parse a schema; SchemaParseError (a ValueError) says where it went wrong.

        Schemas are immutable, so parsing a text parsed before returns the
        schema it gave then.
        """
        if type(text) is not str:
            return _Parser(text).schema()  # raises the TypeError
        schema = _SCHEMA_CACHE.get(text)
        if schema is None:
            schema = _parse_new_schema(text)
            _remember(_SCHEMA_CACHE, text, schema)
        return schema

    def __str__(self) -> str:
        sig = self._sig
        if sig.text is None:
            sig.text = self._format_after_name()
        return self.name._text + sig.text

    def _format_after_name(self) -> str:
        params: list[str] = []
        for a in self.arguments:
            if a.kwarg_only and len(params) == self._sig.n_positional:
                params.append("*")
            params.append(str(a))
        if self.is_vararg:
            params.append("...")
        returns = [str(r) for r in self.returns]
        if self.is_varret:
            returns.append("...")
        if len(returns) == 1 and not returns[0].startswith("("):
            # A single return prints bare, unless it starts with "(", which
            # would read back as a return list: "-> ((str, str))".
            result = returns[0]
        else:
            result = "(" + ", ".join(returns) + ")"
        return f"({', '.join(params)}) -> {result}"

    # -- queries -----------------------------------------------------------
    @property
    def is_mutable(self) -> bool:
        """True if any argument may be written to (PyTorch's ``is_mutable()``)."""
        return any(a.is_write for a in self.arguments)

    def aliased_arguments(self, return_index: int) -> tuple[int, ...]:
        """Positions of the arguments that return ``return_index`` may alias.

        Two values may alias when their after-sets share a set, as in c10's
        ``FunctionSchema::may_alias``: ``Tensor(a) self -> Tensor(a)``.  For
        tensors this is also what ``torch._C._SchemaInfo.may_alias`` says;
        for type variables, lists and generators, which SchemaInfo leaves
        out, the annotations are taken at their word.
        """
        ret = self.returns[return_index].alias_info
        if ret is None:
            return ()
        after = ret._sets[1]
        return tuple(
            i
            for i, a in enumerate(self.arguments)
            if (info := a.alias_info) is not None and info._sets[1] & after
        )

    def has_argument(self, name: str) -> bool:
        """Whether an argument is called ``name``."""
        return name in self._sig.index

    # -- binding -----------------------------------------------------------
    def bind(self, args: Union[tuple[Any, ...], list[Any]], kwargs: Optional[Mapping[str, Any]] = None) -> tuple[Any, ...]:
        """All arguments in schema order, defaults filled in, like a Python call.

        Raises TypeError worded as Python's own for a missing, surplus,
        duplicate or unknown argument and for a keyword-only argument passed
        positionally.  Extra positionals of a ``...`` schema follow the
        declared arguments.
        """
        sig = self._sig
        n = len(args)
        if not kwargs:
            if n == sig.n_declared == sig.n_positional:
                return args if type(args) is tuple else tuple(args)
            tail = sig.tail
            if tail is not None and sig.n_required <= n <= sig.n_positional:
                return tuple(args) + tail[n - sig.n_required :]
        elif type(kwargs) is dict and n <= sig.n_positional:
            return sig.bind_keywords(self.name, args, kwargs)
        return sig.bind_slow(self.name, args, kwargs or {})

    def split_call(self, values: Union[tuple[Any, ...], list[Any]]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The inverse of ``bind``: ``(args, kwargs)`` to call a Python kernel
        with ``values`` (all arguments in schema order), the keyword-only ones
        by name.  Values past the declared arguments (a ``...`` schema's
        extras) stay positional."""
        sig = self._sig
        n_pos, n_declared = sig.n_positional, sig.n_declared
        args = tuple(values[:n_pos]) + tuple(values[n_declared:])
        return args, dict(zip(sig.names[n_pos:n_declared], values[n_pos:n_declared]))

    def split_call_without_defaults(self, values: Union[tuple[Any, ...], list[Any]]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``split_call`` as torch calls a Python kernel or fallback (its
        parseIValuesToPyArgsKwargs): the trailing positional arguments that
        equal their defaults and the keyword-only ones that do are left out,
        so the Python function sees its own defaults there."""
        sig = self._sig
        n_pos, n_declared, defaults = sig.n_positional, sig.n_declared, sig.defaults
        end = n_pos
        while end > 0 and _is_default(values[end - 1], defaults[end - 1]):
            end -= 1
        if end < n_pos and n_declared < len(values):  # a "..."'s extras follow: keep every positional
            end = n_pos
        args = tuple(values[:end]) + tuple(values[n_declared:])
        kwargs = {name: value for name, value, default in zip(sig.names[n_pos:n_declared], values[n_pos:n_declared],
                                                              defaults[n_pos:n_declared])
                  if not _is_default(value, default)}
        return args, kwargs

    @property
    def handler_arity(self) -> int:
        """How many arguments a call passes, all positionally, when it is already
        in the form a Python-key handler gets (see ``handler_call``): those
        before the first default, when every later one has a default; -1 if
        there is no such form (a required keyword-only argument, a ``...``)."""
        sig = self._sig
        return sig.n_required if sig.tail is not None and not sig.is_vararg else -1

    def handler_call(self, args: Union[tuple[Any, ...], list[Any]],
                     kwargs: Optional[Mapping[str, Any]] = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(args, kwargs)`` as a ``__torch_dispatch__`` handler gets the call
        ``op(*args, **kwargs)`` (see ``split_call_without_defaults``).
        Raises ``bind``'s TypeError for a call the schema does not accept."""
        return self.split_call_without_defaults(self.bind(args, kwargs))


# Every def renames a schema (with_name): see slot_setters.
(_set_schema_name, _set_arguments, _set_returns, _set_is_vararg, _set_is_varret, _set_dispatch_args,
 _set_dispatch_layout, _set_sig, _set_hash) = slot_setters(
    FunctionSchema, "name", "arguments", "returns", "is_vararg", "is_varret", "dispatch_args", "dispatch_layout", "_sig",
    "_hash"
)


class _Signature:
    """The tables behind ``FunctionSchema.bind``, built once per schema, and
    ``text``, the schema as printed after its name, made when first printed
    (dumps and error messages print schemas).  Nothing here depends on the
    name: a schema's renamed copies share it."""

    __slots__ = (
        "names", "index", "ambiguous", "defaults", "n_declared",
        "n_positional", "n_required", "tail", "is_vararg", "dispatch_args", "dispatch_layout", "text",
        "_required", "last_required",
    )

    def __init__(self, schema_name: OperatorName, arguments: tuple[Argument, ...], is_vararg: bool) -> None:
        # One pass over the arguments, which also yields the schema's
        # dispatch_args and dispatch_layout: this runs for every schema
        # parsed or defined (a catalog operator's first use parses all its
        # overloads), so the loop reads each field once and makes no calls
        # for the common cases.
        names: list[str] = []
        index: dict[str, int] = {}
        ambiguous: list[str] = []
        defaults: list[Any] = []
        required: list[int] = []
        dispatch_args: list[DispatchArg] = []
        layout: list[tuple[int, str, int, bool]] = []
        span = 0
        n_positional = n_required = -1  # -1: not reached yet
        i = 0
        for a in arguments:
            if type(a) is not Argument:
                raise TypeError(f"FunctionSchema.arguments must be Arguments, got {a!r}")
            t = a.type
            name = a.name
            default = a.default
            kwarg_only = a.kwarg_only
            # Most types are plain base types: answer those without a call.
            if type(t) is BaseType:
                kind = _KIND_TENSOR if t.name is _TENSOR_TY else None
            else:
                kind = tensor_arg_kind(t)
            if kind is not None:
                dispatch_args.append(_new_dispatch_arg(DispatchArg, (i, name, kind)))
                # A required tensor argument that is missing is the caller's
                # mistake, reported as Python would (through bind).
                layout.append((i, name, _KIND_NUMBERS[kind], default is NO_DEFAULT))
                if span >= 0:
                    span = i + 1 if kind is _KIND_TENSOR and default is NO_DEFAULT and not kwarg_only else -1
            if name in index:
                ambiguous.append(name)  # the corpus has one schema with a repeated name
            else:
                index[name] = i
            names.append(name)
            defaults.append(default)
            if default is NO_DEFAULT:
                required.append(i)
            if kwarg_only:
                if n_positional < 0:
                    n_positional = i
            elif n_positional >= 0:
                raise ValueError(
                    f"{schema_name}: positional argument '{name}' follows a keyword-only one"
                )
            elif default is not NO_DEFAULT:
                if n_required < 0:
                    n_required = i
            elif n_required >= 0:
                raise ValueError(
                    f"{schema_name}: non-default argument '{name}' follows default argument"
                )
            i += 1
        self.names = tuple(names)
        self.index = index
        self.ambiguous = frozenset(ambiguous)
        self.defaults = tuple(defaults)
        self.n_declared = i
        self.n_positional = i if n_positional < 0 else n_positional
        self.n_required = self.n_positional if n_required < 0 else n_required
        # The positions of the arguments without a default (keyword-only ones included).
        self._required = tuple(required)
        self.last_required = required[-1] if required else -1
        # What completes a call that passes only positionals, if anything can:
        # the defaults from n_required on, unless one of them is missing.
        self.tail = None if self.last_required >= self.n_required else self.defaults[self.n_required:]
        self.is_vararg = is_vararg
        self.dispatch_args = tuple(dispatch_args)
        self.dispatch_layout = (tuple(layout), span)
        self.text: Optional[str] = None

    def bind_keywords(self, schema_name: OperatorName, args: Union[tuple[Any, ...], list[Any]],
                      kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """bind for a call with keywords (alpha=, dtype=, ...) and no surplus
        positionals: a copy of the defaults, filled in.  A call this cannot
        finish (an unknown, duplicate or ambiguous name, a required argument
        left out) is bind_slow's, which says what is wrong.  (Its own method,
        so that bind's frame, which every positional call makes, stays small.)"""
        n = len(args)
        bound = [*args, *self.defaults[n:]]
        index = self.index
        for key, value in kwargs.items():
            i = index.get(key, -1)
            if i < n:  # unknown (-1), or also passed positionally
                return self.bind_slow(schema_name, args, kwargs)
            bound[i] = value
        if self.ambiguous or (self.last_required >= n and any(bound[i] is NO_DEFAULT for i in self.required_after(n))):
            return self.bind_slow(schema_name, args, kwargs)
        return tuple(bound)

    def required_after(self, n: int) -> tuple[int, ...]:
        """The positions at or after ``n`` of the arguments without a default:
        those a call passing ``n`` positionals must name."""
        if self.last_required < n:
            return ()
        return tuple(i for i in self._required if i >= n)

    def bind_slow(self, schema_name: OperatorName, args: Union[tuple[Any, ...], list[Any]],
                  kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
        if not isinstance(kwargs, Mapping):
            raise TypeError(f"keyword arguments must be a mapping, not {type(kwargs).__name__}")
        names = self.names
        n_pos = self.n_positional
        n_args = len(args)
        bound = list(args[:n_pos]) + [NO_DEFAULT] * (self.n_declared - min(n_args, n_pos))
        for key, value in kwargs.items():
            i = self.index.get(key)
            if i is None:
                raise DispatcherTypeError(f"{schema_name}() got an unexpected keyword argument '{key}'")
            if key in self.ambiguous:
                raise DispatcherTypeError(
                    f"{schema_name}() has more than one argument named '{key}'; pass it positionally"
                )
            if i < n_args and i < n_pos:
                raise DispatcherTypeError(f"{schema_name}() got multiple values for argument '{key}'")
            bound[i] = value
        if n_args > n_pos and not self.is_vararg:
            if n_pos > self.n_required:
                takes = f"from {self.n_required} to {n_pos} positional arguments"
            else:
                takes = _plural(n_pos, "positional argument")
            given = f"{n_args} {'was' if n_args == 1 else 'were'} given"
            n_kw = sum(1 for key in kwargs if self.index[key] >= n_pos)
            if n_kw:
                given = (
                    f"{_plural(n_args, 'positional argument')} "
                    f"(and {_plural(n_kw, 'keyword-only argument')}) were given"
                )
            raise DispatcherTypeError(f"{schema_name}() takes {takes} but {given}")
        missing_pos: list[str] = []
        missing_kw: list[str] = []
        for i, value in enumerate(bound):
            if value is NO_DEFAULT:
                default = self.defaults[i]
                if default is NO_DEFAULT:
                    (missing_pos if i < n_pos else missing_kw).append(names[i])
                bound[i] = default
        for missing, kind in ((missing_pos, "positional"), (missing_kw, "keyword-only")):
            if missing:
                raise DispatcherTypeError(
                    f"{schema_name}() missing {len(missing)} required {kind} "
                    f"argument{'s' if len(missing) > 1 else ''}: {_and_list(missing)}"
                )
        if n_args > n_pos:
            bound.extend(args[n_pos:])
        return tuple(bound)


# --------------------------------------------------------------------------
# The parser: one regex pass to tokenize, then recursive descent.
# --------------------------------------------------------------------------
# One token per match, whitespace skipped.  Only the texts are kept: the
# grammar tells tokens apart by text (punctuation) or first character
# (identifier, number, string); positions are recomputed for an error only.
_TOKEN = re.compile(
    r"""\s*(
       [A-Za-z_][A-Za-z0-9_]*
     | (?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?
     | "(?:[^"\\\n]|\\[^\n])*" | '(?:[^'\\\n]|\\[^\n])*'
     | -> | \.\.\. | :: | [()\[\],.?!*|=:-]
     | \S
    )""",
    re.VERBOSE,
)
# ``name``, ``ns::name``, ``ns::name.overload`` or ``name.overload``, identifiers as _TOKEN reads them.
_PLAIN_OPERATOR_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:::([A-Za-z_][A-Za-z0-9_]*))?(?:\.([A-Za-z_][A-Za-z0-9_]*))?")
_ID_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGITS = frozenset("0123456789")
_EOF = ""  # the token after the last one

# Names PyTorch's parser accepts where an integer default is expected.
_NAMED_CONSTANTS = {"float": 6, "long": 4, "strided": 0, "Mean": 1, "contiguous_format": 0}
_KEYWORD_VALUES = {"None": None, "True": True, "False": False}
# torch 2.13's dtype names (``torch.<name>``) and their ScalarType numbers: the
# defaults its parser takes for a ScalarType argument (and ScalarType? ones).
# tests/golden/api_gaps_golden.json has torch's answer for each name.
_DTYPE_NUMBERS = {
    "uint8": 0, "int8": 1, "int16": 2, "short": 2, "int32": 3, "int": 3, "int64": 4, "long": 4, "float16": 5,
    "half": 5, "float32": 6, "float": 6, "float64": 7, "double": 7, "complex32": 8, "chalf": 8, "complex64": 9,
    "cfloat": 9, "complex128": 10, "cdouble": 10, "bool": 11, "qint8": 12, "quint8": 13, "qint32": 14,
    "bfloat16": 15, "quint4x2": 16, "quint2x4": 17, "bits1x8": 18, "bits2x4": 19, "bits4x2": 20, "bits8": 21,
    "bits16": 22, "float8_e5m2": 23, "float8_e4m3fn": 24, "float8_e5m2fnuz": 25, "float8_e4m3fnuz": 26,
    "uint16": 27, "uint32": 28, "uint64": 29, "uint1": 30, "bit": 30, "uint2": 31, "uint3": 32, "uint4": 33,
    "uint5": 34, "uint6": 35, "uint7": 36, "int1": 37, "int2": 38, "int3": 39, "int4": 40, "int5": 41,
    "int6": 42, "int7": 43, "float8_e8m0fnu": 44, "float4_e2m1fn_x2": 45,
}

_SIMPLE_ESCAPES = {
    "\\": 0x5C, "'": 0x27, '"': 0x22, "a": 0x07, "b": 0x08,
    "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B,
}
_OCTAL = frozenset("01234567")


def _is_id(tok: str) -> bool:
    return tok[:1] in _ID_START


def _is_num(tok: str) -> bool:
    return tok[:1] in _DIGITS or (tok[:1] == "." and tok[1:2] in _DIGITS)


def _is_str(tok: str) -> bool:
    return len(tok) >= 2 and tok[0] in "\"'"


class _Parser:
    """Recursive descent over the token texts; ``i`` is always the next token.

    ``depth`` counts the types being parsed around the current token, which
    bounds the parser's recursion; ``height`` is how deeply the type parsed
    last nests (``Tensor[][]``: 3), which bounds the recursion of whatever
    walks the type later.  Both stop at ``_MAX_TYPE_NESTING``.
    """

    __slots__ = ("src", "toks", "i", "depth", "height", "allow_typevars")

    def __init__(self, src: str, allow_typevars: bool = True) -> None:
        if not isinstance(src, str):
            raise TypeError(f"a schema must be a str, not {type(src).__name__}")
        self.src = src
        self.allow_typevars = allow_typevars
        self.toks: list[str] = _TOKEN.findall(src)
        self.toks.append(_EOF)
        self.i = 0
        self.depth = 0
        self.height = 0

    # -- token helpers -----------------------------------------------------
    def error(self, msg: str, token: Optional[int] = None, end: Optional[int] = None) -> SchemaParseError:
        """An error at ``token`` (default: the current one), marking through token ``end``."""
        starts = [m.start(1) for m in _TOKEN.finditer(self.src)]
        starts.append(len(self.src))
        first = self.i if token is None else token
        last = first if end is None else end
        width = starts[last] + len(self.toks[last]) - starts[first]
        return SchemaParseError(msg, self.src, starts[first], width)

    def found(self) -> str:
        tok = self.toks[self.i]
        if tok == _EOF:
            return "end of input"
        if _is_id(tok):
            return f"identifier '{tok}'"
        if _is_num(tok):
            return f"number '{tok}'"
        if _is_str(tok):
            return "a string literal"
        if tok in "\"'":
            return "an unterminated string literal"
        if tok in _PUNCTUATION:
            return f"'{tok}'"
        return f"invalid character {tok!r}"

    def nest(self, height: int) -> int:
        """The height of a type around one of ``height``; too tall is an error here."""
        if height >= _MAX_TYPE_NESTING:
            raise self.error("types are nested too deeply")
        return height + 1

    def expected(self, what: str) -> SchemaParseError:
        return self.error(f"expected {what} but found {self.found()}")

    def expect(self, punct: str, what: str) -> None:
        if self.toks[self.i] != punct:
            raise self.expected(what)
        self.i += 1

    def accept(self, punct: str) -> bool:
        if self.toks[self.i] == punct:
            self.i += 1
            return True
        return False

    def identifier(self, what: str) -> str:
        tok = self.toks[self.i]
        if not _is_id(tok):
            raise self.expected(what)
        self.i += 1
        return tok

    # -- declarations ------------------------------------------------------
    def operator_name(self) -> OperatorName:
        first = self.identifier("an operator name")
        namespace = ""
        name = first
        if self.accept("::"):
            namespace = first
            name = self.identifier("an operator name after '::'")
        overload = ""
        if self.accept("."):
            overload = self.identifier("an overload name after '.'")
        return OperatorName(namespace, name, overload)

    def schema(self) -> FunctionSchema:
        name = self.operator_name()
        arguments, is_vararg = self.parameters()
        self.expect("->", "'->'")
        returns, is_varret = self.return_list()
        self.expect(_EOF, "end of the schema")
        return FunctionSchema(name, arguments, returns, is_vararg, is_varret)

    def parameters(self) -> tuple[tuple[Argument, ...], bool]:
        self.expect("(", "'(' to start the argument list")
        toks = self.toks
        args: list[Argument] = []
        kwarg_only = False
        vararg = False
        star: Optional[int] = None  # token of a '*' not yet followed by an argument
        seen_default = False
        if toks[self.i] != ")":
            while True:
                if vararg:
                    raise self.error("'...' must be the last element of the argument list")
                tok = toks[self.i]
                if tok == "*":
                    if kwarg_only:
                        raise self.error("'*' may appear only once in an argument list")
                    kwarg_only = True
                    star = self.i
                    self.i += 1
                elif tok == "...":
                    vararg = True
                    self.i += 1
                else:
                    first = self.i
                    arg = self.memoized(kwarg_only, self.argument, kwarg_only)
                    if not kwarg_only:
                        if arg.default is not NO_DEFAULT:
                            seen_default = True
                        elif seen_default:
                            raise self.error(
                                f"non-default argument '{arg.name}' follows default argument",
                                first,
                                self.i - 1,
                            )
                    star = None
                    args.append(arg)
                if toks[self.i] != ",":
                    break
                self.i += 1
        if star is not None and toks[self.i] == ")":
            raise self.error("named arguments must follow bare '*'", star)
        self.expect(")", "',' or ')'")
        return tuple(args), vararg

    def return_list(self) -> tuple[tuple[Return, ...], bool]:
        if self.accept("..."):
            return (), True
        if not self.accept("("):
            return (self.memoized(_RETURN, self.return_),), False
        returns: list[Return] = []
        varret = False
        if self.toks[self.i] != ")":
            while True:
                if varret:
                    raise self.error("'...' must be the last element of the return list")
                if self.accept("..."):
                    varret = True
                else:
                    returns.append(self.memoized(_RETURN, self.return_))
                if not self.accept(","):
                    break
        self.expect(")", "',' or ')'")
        return tuple(returns), varret

    def return_(self) -> Return:
        t = self.sized_type()
        tok = self.toks[self.i]
        if _is_id(tok):
            self.i += 1
            return Return(t, tok)
        return Return(t)

    def memoized(self, head: Any, parse: Callable[..., Any], *args: Any) -> Any:
        """``parse(*args)`` for an argument or a return, memoized on its tokens.

        Schemas repeat most of them ("Tensor self", "Scalar alpha=1",
        "-> Tensor"), and a hit skips parsing one again.  The element ends at
        the next ',' or ')' outside brackets; ``head`` tells apart elements
        whose tokens parse differently (a return, a keyword-only argument).
        """
        toks = self.toks
        start = self.i
        end = start
        depth = 0
        while True:
            tok = toks[end]
            if tok in _OPENERS:
                depth += 1
            elif tok in _CLOSERS:
                if depth == 0:
                    break
                depth -= 1
            elif tok == "," and depth == 0 or tok == _EOF:
                break
            end += 1
        key = (head, *toks[start:end])
        element = _ELEMENT_CACHE.get(key) if self.allow_typevars else None  # (strict: parse it again)
        if element is not None:
            self.i = end
            return element
        element = parse(*args)
        if self.i == end:
            _remember(_ELEMENT_CACHE, key, element)
        return element

    def argument(self, kwarg_only: bool) -> Argument:
        t = self.sized_type()
        name = self.identifier("an argument name")
        if self.toks[self.i] != "=":
            return Argument(name, t, NO_DEFAULT, kwarg_only)
        self.i += 1
        first = self.i
        value = self.dtype_name_literal(t)
        if value is NO_DEFAULT:
            value = self.literal()
        try:
            default = _normalize_default(t, value)
        except ValueError as exc:
            raise self.error(str(exc), first, self.i - 1) from None
        return Argument(name, t, default, kwarg_only)

    # -- types -------------------------------------------------------------
    def sized_type(self) -> Type:
        """A type, then PyTorch's argument-level size ``[N]``: ``int[2]``, ``int[1]?``."""
        t = self.type_()
        if self.toks[self.i] == "[":
            height = self.nest(self.height)
            self.i += 1
            size = self.toks[self.i]
            if not (size.isascii() and size.isdigit()):  # str.isdigit takes "²" too
                raise self.expected("a list size (a non-negative integer) or ']'")
            if not _fits_int64(size):  # torch's parser reads sizes as int64 and refuses bigger ones
                raise self.error("list size out of the 64-bit range")
            self.i += 1
            self.expect("]", "']'")
            t = ListType(t, int(size), self.alias_annotation())
            if self.toks[self.i] == "?":
                self.nest(height)
                self.i += 1
                t = OptionalType(t)
        return t

    def type_(self) -> Type:
        self.depth = self.nest(self.depth)
        toks = self.toks
        tok = toks[self.i]
        t: Type
        height = 1
        if tok == "(":
            self.i += 1
            t = TupleType(self.type_list())
            height += self.height
        elif _is_id(tok):
            first = self.i
            self.i += 1
            opaque = self.opaque_type_name(tok) if _OPAQUE_TYPE_NAMES and tok != "Tensor" else None
            plain = _PLAIN.get(tok) if opaque is None else _PLAIN_PYOBJECT
            if plain is not None:
                alias = self.alias_annotation() if toks[self.i] == "(" else None
                t = plain if alias is None else BaseType(plain.name, alias)
            elif tok in _PARAMETERIZED:
                self.expect("(", f"'(' after {tok}")
                args = self.type_list()
                lo, hi, annotatable = _PARAMETERIZED[tok]
                if len(args) < lo or (hi is not None and len(args) > hi):
                    count = f"{lo}" if lo == hi else f"at least {lo}"
                    raise self.error(f"{tok} takes {count} type(s), got {len(args)}", first, self.i - 1)
                height += self.height
                t = ParameterizedType(tok, args, self.alias_annotation() if annotatable else None)
            elif tok == "__torch__":
                t = self.class_type()
            elif tok[0].islower():
                # A dotted name is no type variable: an opaque type's name not registered.
                if not self.allow_typevars or toks[self.i] == ".":
                    raise self.error(_not_a_type(tok), first)
                t = TypeVar(tok, self.alias_annotation())
            else:
                # torch's words for any name that is not a type (PyObject, Foo).
                raise self.error(_UNKNOWN_TYPE, first)
        else:
            raise self.expected("a type")
        # Postfix: T[] (with an optional annotation on the list) and T?.
        while True:
            tok = toks[self.i]
            if tok == "[" and toks[self.i + 1] == "]":
                height = self.nest(height)
                self.i += 2
                t = ListType(t, None, self.alias_annotation())
            elif tok == "?":
                height = self.nest(height)
                self.i += 1
                t = OptionalType(t)
            else:
                break
        self.depth -= 1
        self.height = height
        return t

    def opaque_type_name(self, tok: str) -> Optional[str]:
        """The registered opaque type name starting at ``tok`` (a dotted name,
        ``my_module.MyClass``, whose first part was just read), read to its end;
        None, reading nothing more, if there is none."""
        toks = self.toks
        name, end = tok, self.i
        found = name if name in _OPAQUE_TYPE_NAMES else None
        found_end = end
        while toks[end] == "." and _is_id(toks[end + 1]):
            name, end = f"{name}.{toks[end + 1]}", end + 2
            if name in _OPAQUE_TYPE_NAMES:
                found, found_end = name, end
        if found is not None:
            self.i = found_end
        return found

    def type_list(self) -> tuple[Type, ...]:
        """``T1, T2, ...)``: the rest of a parenthesized list of types; leaves
        ``height`` at that of the tallest (0 for none)."""
        elems: list[Type] = []
        height = 0
        if self.toks[self.i] != ")":
            elems.append(self.type_())
            height = self.height
            while self.accept(","):
                elems.append(self.type_())
                height = max(height, self.height)
        self.expect(")", "',' or ')'")
        self.height = height
        return tuple(elems)

    def class_type(self) -> ClassType:
        hint = f"(custom classes are {_CLASS_PREFIX}<namespace>.<name>)"
        for part in ("torch", "classes"):
            self.expect(".", f"'.' {hint}")
            if self.toks[self.i] != part:
                raise self.expected(f"'{part}' {hint}")
            self.i += 1
        self.expect(".", f"'.' {hint}")
        namespace = self.identifier(f"the class namespace {hint}")
        self.expect(".", f"'.' {hint}")
        name = self.identifier(f"the class name {hint}")
        return ClassType(f"{_CLASS_PREFIX}{namespace}.{name}")

    def alias_annotation(self) -> Optional[AliasInfo]:
        if self.toks[self.i] != "(":
            return None
        self.i += 1
        before = self.alias_sets()
        is_write = self.accept("!")
        after = self.alias_sets() if self.accept("->") else None
        self.expect(")", "')' to close the alias annotation")
        return AliasInfo(before, is_write, after)

    def alias_sets(self) -> tuple[str, ...]:
        sets: list[str] = []
        while True:
            tok = self.toks[self.i]
            if tok != WILDCARD and not _is_id(tok):
                raise self.expected("an alias set name or '*'")
            self.i += 1
            sets.append(tok)
            if not self.accept("|"):
                return tuple(sets)

    # -- literals ----------------------------------------------------------
    def dtype_name_literal(self, t: Type) -> Any:
        """The number of a dtype named as torch names it (``float32``, ``int``,
        ``cfloat``) as the default of a ``ScalarType`` or ``ScalarType?``
        argument, as torch's parser reads it there (infer_schema writes a dtype
        default so: ``ScalarType f=float32``); NO_DEFAULT for any other default."""
        base = t.elem if isinstance(t, OptionalType) else t
        number = _DTYPE_NUMBERS.get(self.toks[self.i])
        if number is None or not (isinstance(base, BaseType) and base.name is BaseTy.ScalarType):
            return NO_DEFAULT
        self.i += 1
        return number

    def literal(self) -> Any:
        """A default value as written: None, True, False, number, string, name, [list]."""
        if not self.accept("["):
            return self.scalar_literal()
        values: list[Any] = []
        if self.toks[self.i] != "]":
            values.append(self.scalar_literal())
            while self.accept(","):
                values.append(self.scalar_literal())
        self.expect("]", "',' or ']'")
        return values

    def scalar_literal(self) -> Any:
        tok = self.toks[self.i]
        if _is_id(tok):
            if tok in _KEYWORD_VALUES:
                self.i += 1
                return _KEYWORD_VALUES[tok]
            if tok in _NAMED_CONSTANTS:
                self.i += 1
                return _NAMED_CONSTANTS[tok]
            raise self.error(
                # torch's words first, then which names it would have taken.
                f"invalid numeric default value: '{tok}' is not a number, a string, True, "
                f"False, None or one of {', '.join(_NAMED_CONSTANTS)} (nor, for a ScalarType, a dtype's name)"
            )
        if _is_str(tok):
            value = self.string_value(tok)  # errors point at the literal
            self.i += 1
            return value
        first = self.i
        negative = self.accept("-")
        tok = self.toks[self.i]
        if not _is_num(tok):
            raise self.expected("a default value")
        self.i += 1
        if "." in tok or "e" in tok or "E" in tok:
            number: Any = float(tok)
            if math.isinf(number):
                raise self.error("float literal out of range", first, self.i - 1)
        elif not _fits_int64(tok, negative):
            # Checked on the digits: int() refuses more than 4300 of them with its own ValueError.
            raise self.error("integer literal out of the 64-bit range", first, self.i - 1)
        else:
            number = int(tok)
        return -number if negative else number

    def string_value(self, token: str) -> str:
        """Decode a quoted literal the way PyTorch's parseStringLiteral does, on bytes."""
        body = token[1:-1]
        if "\\" not in body:
            return body
        out = bytearray()
        i = 0
        n = len(body)
        while i < n:
            ch = body[i]
            if ch != "\\":
                out += ch.encode("utf-8")
                i += 1
                continue
            nxt = body[i + 1]  # the token regex guarantees a character here
            if nxt in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[nxt])
                i += 2
            elif len(digits := body[i + 1 : i + 4]) == 3 and set(digits) <= _OCTAL:
                code = int(digits, 8)
                if code > 0xFF:
                    raise self.error(f"octal escape \\{digits} is above \\377")
                out.append(code)
                i += 4
            else:
                raise self.error(
                    f"invalid escape sequence '\\{nxt}' in string literal "
                    "(use \\\\ \\' \\\" \\a \\b \\f \\n \\r \\t \\v or \\ooo octal)"
                )
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            raise self.error("string literal is not valid UTF-8") from None


_PUNCTUATION = frozenset(["->", "...", "::", *"()[],.?!*|=:-"])
_OPENERS = frozenset("([")
_CLOSERS = frozenset(")]")
# Parsed arguments and returns by (kwarg_only or _RETURN, *tokens), schemas
# and operator names by their text.  The corpus has about 1,900 distinct
# elements and 2,500 schemas; a cache that reaches the bound starts over, so
# that hostile (or endlessly generated) input cannot grow it forever.
_RETURN = "return"
_ELEMENT_CACHE: dict[tuple[Any, ...], Any] = {}
_SCHEMA_CACHE: dict[str, FunctionSchema] = {}
_NAME_CACHE: dict[str, OperatorName] = {}
_CACHE_SIZE = 4096


# Note [Schemas by signature]
# Half the catalog's schemas repeat another's text after the name ("(Tensor
# self) -> Tensor" alone serves hundreds), and a catalog operator's first
# use parses all its overloads.  A text whose signature (from its "(" on)
# was parsed before is that schema under its own name (with_name: the
# arguments, returns and binding tables are shared, as they are immutable);
# only the name is parsed.  Anything the name parser refuses goes through
# the whole parser, so that the error says where in the text it went wrong.
_SIGNATURE_CACHE: dict[str, FunctionSchema] = {}


# torch's SchemaTypeParser's words for a name that is not a type where type
# variables are not allowed (an operator's schema, as Library.define parses it).
_UNKNOWN_TYPE = ("unknown type specifier. Common valid schema types include Tensor, SymInt, int, float, bool, Scalar; "
                 "for a full list, please see https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func ")
_C_TYPES = {
    "int64_t": "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. `SymInt` corresponds to "
               "c10::SymInt in C++ while `int` in schema corresponds to the int64_t type in C++.",
    "double": "Use `float` instead of `double` in an operator's schema string. `float` in schema corresponds to the "
              "double type in C++",
}


def _not_a_type(name: str) -> str:
    return _C_TYPES.get(name, _UNKNOWN_TYPE)


def _has_type_var(t: Type) -> bool:
    # Every define asks it of each argument: a plain type answers at once.
    while type(t) is OptionalType or type(t) is ListType:
        t = t.elem
    if type(t) is BaseType:
        return False
    if isinstance(t, TypeVar):
        return True
    inner = [getattr(t, "elem", None), *getattr(t, "elems", ()), *getattr(t, "args", ())]
    return any(_has_type_var(x) for x in inner if isinstance(x, Type))


def parse_operator_schema(text: str) -> FunctionSchema:
    """``text`` parsed as torch's Library.define parses an operator's schema:
    FunctionSchema.parse's schema, where a lowercase name that is not a type is
    an error (torch's text; ``int64_t`` and ``double`` name the schema's type
    to use) rather than a type variable (which torch._C.parse_schema allows)."""
    schema = FunctionSchema.parse(text)
    if text not in _WITHOUT_TYPE_VARS:  # a text asked before (a define in a loop) is not asked again
        types = [argument.type for argument in schema.arguments] + [ret.type for ret in schema.returns]
        for t in types:
            if _has_type_var(t):
                _Parser(text, allow_typevars=False).schema()  # raises, marking the first one
        _remember(_WITHOUT_TYPE_VARS, text, None)
    return schema


# The schema texts parse_operator_schema found without type variables.
_WITHOUT_TYPE_VARS: dict[str, None] = {}


def _parse_new_schema(text: str) -> FunctionSchema:
    """``text`` parsed (not found in _SCHEMA_CACHE); see Note [Schemas by signature]."""
    open_paren = text.find("(")
    if open_paren <= 0:
        return _Parser(text).schema()  # no name: the parser words the error
    signature = text[open_paren:]
    same_signature = _SIGNATURE_CACHE.get(signature)
    if same_signature is not None:
        try:
            name = OperatorName.parse(text[:open_paren])
        except SchemaParseError:
            pass
        else:
            return same_signature.with_name(name)
    schema = _Parser(text).schema()
    _remember(_SIGNATURE_CACHE, signature, schema)
    return schema


def schema_from_parts(text: str, arguments: tuple[Argument, ...], returns: tuple[Return, ...],
                      is_vararg: bool, is_varret: bool) -> FunctionSchema:
    """What ``FunctionSchema.parse(text)`` gives, for a ``text`` whose
    arguments and returns are known to be these (each parsed from its own
    text: see Note [Catalog parts] in dispatcher/catalog/parts.py) and whose
    name is known to be a valid one: the caches are those parse reads and
    fills, and nothing is parsed.  (The catalog's parts are checked against
    parsing by tests/test_catalog_parts.py.)"""
    schema = _SCHEMA_CACHE.get(text)
    if schema is None:
        open_paren = text.index("(")
        signature = text[open_paren:]
        # The name is known to be one too (printed by str(OperatorName)):
        # split, not matched against the grammar.
        namespace, colons, rest = text[:open_paren].partition("::")
        if not colons:
            namespace, rest = "", namespace
        bare_name, _, overload_name = rest.partition(".")
        name = OperatorName.__new__(OperatorName)
        name._set(namespace, bare_name, overload_name)
        same_signature = _SIGNATURE_CACHE.get(signature)
        if same_signature is not None:
            schema = same_signature.with_name(name)
        else:
            # The parts are checked Arguments and Returns: only what __init__
            # derives from them is made (and the argument order checked).
            schema = FunctionSchema.__new__(FunctionSchema)
            schema._set(name, arguments, returns, is_vararg, is_varret, _Signature(name, arguments, is_vararg))
            _remember(_SIGNATURE_CACHE, signature, schema)
        _remember(_SCHEMA_CACHE, text, schema)
    return schema


def parse_schema_element(kind: str, text: str) -> Union[Argument, Return]:
    """One argument (``kind`` "a", or "k" if keyword-only) or return ("r")
    of a schema, parsed from its own ``text`` ("Tensor self", "*"-less), as
    the schema parser parses it in a whole schema (and memoized with those)."""
    parser = _Parser(text)
    element: Union[Argument, Return]
    if kind == "r":
        element = parser.memoized(_RETURN, parser.return_)
    elif kind in ("a", "k"):
        kwarg_only = kind == "k"
        element = parser.memoized(kwarg_only, parser.argument, kwarg_only)
    else:
        raise ValueError(f"a schema element's kind is 'a', 'k' or 'r', not {kind!r}")
    parser.expect(_EOF, "end of the argument or return")
    return element


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = value

# One shared instance per unannotated base type: most types in a schema are
# plain "Tensor", "int", ..., and sharing them keeps parsing fast and small.
# "None" is PyTorch's spelling of NoneType in a schema.
_PLAIN = {ty.value: BaseType(ty) for ty in BaseTy if ty is not BaseTy.PyObject}
_PLAIN["None"] = _PLAIN["NoneType"]
_PLAIN_PYOBJECT = BaseType(BaseTy.PyObject)

# The names registered as opaque types (dispatcher.opaque_types): each parses
# as PyObject, as in torch (whose parser asks its registry before it reads a
# name as any other type, but for Tensor).
_OPAQUE_TYPE_NAMES: set[str] = set()


def _set_opaque_type_names(names: set[str]) -> None:
    """The opaque type names the parser knows (dispatcher.opaque_types sets them):
    parsed schemas are forgotten, as a text that named one parses differently now."""
    _OPAQUE_TYPE_NAMES.clear()
    _OPAQUE_TYPE_NAMES.update(names)
    for cache in (_ELEMENT_CACHE, _SCHEMA_CACHE, _SIGNATURE_CACHE):
        cache.clear()
