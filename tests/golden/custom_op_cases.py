"""The functions whose inferred schemas tests/golden/custom_op_golden.json records.

Written once, for either library: ``infer_schema_cases(types)`` builds them
with ``types``' tensor annotation, Number, dtype and device, so the golden
script builds them with torch's (torch.Tensor, torch.types.Number, ...) and
tests/test_schema_inference.py with dispatcher's, and the two compare the
schemas (or errors) that the same functions give.  No imports of either
library here.
"""
import collections.abc
import typing
from typing import Any, Callable, NamedTuple, Optional, Sequence, Union


class Types(NamedTuple):
    """One library's annotation types and the values that go with them."""

    Tensor: Any
    Number: Any
    dtype: Any
    device: Any
    cpu: Any  # a device default: torch.device("cpu") or "cpu"
    float32: Any  # a dtype default
    tag: Callable[[str], Any]  # a tag by name: torch.Tag.inplace or "inplace"


class Case(NamedTuple):
    name: str
    fn: Callable[..., Any]
    kwargs: dict  # infer_schema's keyword arguments


def infer_schema_cases(t: Types) -> list[Case]:
    T, Number, dtype, device = t.Tensor, t.Number, t.dtype, t.device
    cases: list[Case] = []

    def case(name: str, **kwargs: Any) -> Callable[[Callable[..., Any]], None]:
        kwargs.setdefault("mutates_args", ())

        def add(fn: Callable[..., Any]) -> None:
            cases.append(Case(name, fn, kwargs))

        return add

    # -- one parameter of each supported type ------------------------------------------
    @case("tensor")
    def _(x: T) -> T: ...

    @case("two_tensors")
    def _(x: T, y: T) -> T: ...

    @case("int")
    def _(x: T, n: int) -> T: ...

    @case("float_default")
    def _(x: T, f: float = 1.5) -> T: ...

    @case("bool_default")
    def _(x: T, b: bool = True) -> T: ...

    @case("str_default")
    def _(x: T, s: str = "hi") -> T: ...

    @case("number_default")
    def _(x: T, n: Number = 2.5) -> T: ...

    @case("number_spelled_as_union")
    def _(x: T, n: Union[int, float, bool]) -> T: ...

    @case("dtype")
    def _(x: T, dt: dtype) -> T: ...

    @case("device_default")
    def _(x: T, d: device = t.cpu) -> T: ...

    @case("dtype_default")
    def _(x: T, dt: dtype = t.float32) -> T: ...

    # -- optionals and lists -----------------------------------------------------------
    @case("optional_tensor")
    def _(x: Optional[T]) -> T: ...

    @case("pep604_optional")
    def _(x: T | None, n: int | None = None) -> T: ...

    @case("optional_scalars")
    def _(a: Optional[int], b: Optional[float] = None, c: Optional[bool] = None, d: Optional[str] = None,
          e: Optional[Number] = None, f: Optional[dtype] = None, g: Optional[device] = None) -> T: ...

    @case("tensor_list")
    def _(xs: list[T]) -> T: ...

    @case("tensor_sequence")
    def _(xs: Sequence[T]) -> list[T]: ...

    @case("optional_tensor_list")
    def _(xs: list[Optional[T]]) -> T: ...

    @case("typing_list")
    def _(xs: typing.List[T], ns: typing.List[int]) -> typing.List[T]: ...  # noqa: UP006

    @case("abc_sequence")
    def _(ns: collections.abc.Sequence[int], fs: Sequence[float], bs: list[bool]) -> None: ...

    @case("optional_int_list")
    def _(x: T, ns: Optional[list[int]] = None, fs: Optional[Sequence[float]] = None) -> T: ...

    @case("pep604_optional_list")
    def _(x: T, ns: list[int] | None = None) -> T: ...

    @case("number_list")
    def _(x: T, ns: list[Number]) -> T: ...

    # -- defaults ------------------------------------------------------------------------
    @case("numeric_defaults")
    def _(x: T, a: int = -3, b: float = 1e-5, c: float = -0.0, d: int = 2**40, e: bool = False) -> T: ...

    @case("none_default_on_tensor")
    def _(x: T, y: T = None) -> T: ...  # type: ignore[assignment]

    # -- keyword-only ----------------------------------------------------------------------
    @case("keyword_only")
    def _(x: T, *, alpha: float = 1.0, beta: int = 2) -> T: ...

    @case("keyword_only_without_defaults")
    def _(x: T, *, y: T, n: int) -> T: ...

    # -- returns ---------------------------------------------------------------------------
    @case("returns_none")
    def _(x: T) -> None: ...

    @case("returns_scalars")
    def _(x: T) -> tuple[int, float, bool, Number]: ...

    @case("returns_tuple")
    def _(x: T) -> tuple[T, T]: ...

    @case("returns_one_tuple")
    def _(x: T) -> tuple[T]: ...

    @case("returns_typing_tuple")
    def _(x: T) -> typing.Tuple[T, int]: ...  # noqa: UP006

    @case("returns_empty_tuple")
    def _(x: T) -> tuple[()]: ...

    @case("returns_int")
    def _(x: T) -> int: ...

    @case("returns_number")
    def _(x: T) -> Number: ...

    @case("no_parameters")
    def _() -> T: ...

    # -- mutation --------------------------------------------------------------------------
    @case("mutates_one", mutates_args=("out",))
    def _(x: T, out: T) -> None: ...

    @case("mutates_set", mutates_args={"x", "y"})
    def _(x: T, y: T, z: T) -> T: ...

    @case("mutates_list", mutates_args=["xs"])
    def _(xs: list[T], ys: list[Optional[T]]) -> None: ...

    @case("mutates_optional", mutates_args=("x",))
    def _(x: Optional[T], n: int) -> None: ...

    @case("mutates_unknown", mutates_args="unknown")
    def _(x: T, xs: list[T], y: Optional[T], n: int) -> None: ...

    @case("mutates_keyword_only", mutates_args=("out",))
    def _(x: T, *, out: T) -> None: ...

    @case("op_name", op_name="my_op")
    def _(x: T, n: int = 1) -> T: ...

    @case("op_name_with_overload", op_name="my_op.overload", mutates_args=("x",))
    def _(x: T) -> None: ...

    # -- tags ------------------------------------------------------------------------------
    @case("inplace_tag", mutates_args=("x",), tags=t.tag("inplace"))
    def _(x: T, y: T) -> T: ...

    @case("out_tag", mutates_args=("out",), tags=t.tag("out"))
    def _(x: T, *, out: T) -> T: ...

    @case("out_tag_two", mutates_args=("o1", "o2"), tags=[t.tag("out")])
    def _(x: T, *, o1: T, o2: T) -> tuple[T, T]: ...

    # -- string annotations (from __future__ import annotations) ---------------------------
    names = {"Tensor": T, "Optional": Optional, "Number": Number}
    exec("def f(x: 'Tensor', y: 'Optional[Tensor]', n: 'Number' = 1) -> 'Tensor': ...", names)
    cases.append(Case("string_annotations", names["f"], {"mutates_args": ()}))
    exec("def g(x: 'Tensor') -> 'NotAType': ...", names)
    cases.append(Case("error_string_annotation_not_a_name", names["g"], {"mutates_args": ()}))
    exec("def h(x: 'list[') -> 'Tensor': ...", names)
    cases.append(Case("error_string_annotation_syntax", names["h"], {"mutates_args": ()}))

    # -- errors ------------------------------------------------------------------------------
    @case("error_no_annotation")
    def _(x) -> T: ...

    @case("error_varargs")
    def _(*xs: T) -> T: ...

    @case("error_varkwargs")
    def _(x: T, **kw: T) -> T: ...

    @case("error_positional_only")
    def _(x: T, /) -> T: ...

    @case("error_unsupported_type")
    def _(x: T, d: dict[str, int]) -> T: ...

    @case("error_tuple_param_suggests_list")
    def _(xs: tuple[T, ...]) -> T: ...

    @case("error_tuple_param_without_suggestion")
    def _(xs: tuple[int, str]) -> T: ...

    @case("error_bare_tuple_param")
    def _(xs: tuple) -> T: ...

    @case("error_complex")
    def _(x: int, y: complex) -> T: ...

    @case("error_mutates_non_tensor", mutates_args=("n",))
    def _(x: T, n: int) -> None: ...

    @case("error_mutates_unknown_name", mutates_args=("nope",))
    def _(x: T) -> None: ...

    @case("error_mutates_bad_string", mutates_args="all")
    def _(x: T) -> None: ...

    @case("error_unsupported_default")
    def _(x: T, ns: list[int] = [1, 2]) -> T: ...  # noqa: B006

    @case("error_unsupported_return")
    def _(x: T) -> dict[str, T]: ...

    @case("error_unsupported_tuple_return")
    def _(x: T) -> tuple[T, str]: ...

    @case("error_optional_return")
    def _(x: T) -> Optional[T]: ...

    @case("error_no_return_annotation")
    def _(x: T): ...

    @case("error_inplace_not_first_tensor", mutates_args=("x",), tags=t.tag("inplace"))
    def _(n: int, x: T) -> T: ...

    @case("error_inplace_mutates_other", mutates_args=("y",), tags=t.tag("inplace"))
    def _(x: T, y: T) -> T: ...

    @case("error_inplace_returns_none", mutates_args=("x",), tags=t.tag("inplace"))
    def _(x: T) -> None: ...

    @case("error_inplace_keyword_only", mutates_args=("x",), tags=t.tag("inplace"))
    def _(*, x: T) -> T: ...

    @case("error_out_positional", mutates_args=("out",), tags=t.tag("out"))
    def _(x: T, out: T) -> T: ...

    @case("error_out_return_mismatch", mutates_args=("out",), tags=t.tag("out"))
    def _(x: T, *, out: T) -> None: ...

    @case("error_out_without_mutation", tags=t.tag("out"))
    def _(x: T, *, out: T) -> T: ...

    @case("error_out_list", mutates_args=("outs",), tags=t.tag("out"))
    def _(x: T, *, outs: list[T]) -> list[T]: ...

    @case("error_inplace_and_out", mutates_args=("x",), tags=[t.tag("inplace"), t.tag("out")])
    def _(x: T) -> T: ...

    return cases


def type_name(tensor_type: Any) -> str:
    """How inspect and typing print the tensor annotation: ``torch.Tensor``."""
    return f"{tensor_type.__module__}.{tensor_type.__qualname__}"


def normalized_error(message: str, fn: Callable[..., Any], tensor_type: Any, param_types: Any,
                     return_types: Any) -> str:
    """An infer_schema error without what names each library's own types:
    the function's printed signature, the lists of valid types, the tensor
    type's name."""
    import inspect

    message = message.replace(str(inspect.signature(fn)), "<signature>")
    message = message.replace(str(param_types.keys()), "<param types>")
    message = message.replace(str(return_types), "<return types>")
    return message.replace(type_name(tensor_type), "<Tensor>")
