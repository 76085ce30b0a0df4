"""``infer_schema``: an operator schema from a Python function's type annotations.

torch 2.13's ``torch.library.infer_schema``, with this package's annotation
types (dispatcher/value_types.py) where torch's name torch objects:
``Tensor`` for ``torch.Tensor``, ``Number``, ``device`` and ``dtype``.  The
schema strings are torch's, character for character
(tests/golden/custom_op_golden.json holds torch's for the same functions),
and so are the error messages, but for the names of the types they list.

Tags are ``dispatcher.Tag`` members (torch.Tag's) or their names, as
``Library.define`` takes them: ``Tag.inplace`` or ``"inplace"``.
"""
from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import operator
import types
import typing
from types import GenericAlias
from typing import Any, Callable, NoReturn, Optional, Sequence, Union

from .operator_tags import Tag
from .value_types import Number, Tensor, device, dtype

__all__ = ["SUPPORTED_PARAM_TYPES", "SUPPORTED_RETURN_TYPES", "infer_schema", "normalize_tags", "tuple_to_list"]

UNKNOWN_MUTATES = "unknown"


def normalize_tags(tags: Union[Tag, str, Sequence[Union[Tag, str]], None]) -> tuple[str, ...]:
    """A tag (a ``Tag`` or its name), several, or None, as a tuple of names
    without repeats (torch's ``_normalize_tags``, which takes a Tag or a sequence)."""
    if tags is None:
        return ()
    if isinstance(tags, (str, Tag)):
        tags = (tags,)
    try:
        items = tuple(tags)
    except TypeError:
        raise TypeError(f"tags must be a Tag, a tag's name, or a sequence of these; got {tags!r}") from None
    names = [tag.name if isinstance(tag, Tag) else tag for tag in items]
    for tag in names:
        if not isinstance(tag, str) or not tag:
            raise TypeError(f"a tag is a dispatcher.Tag or its name (such as 'inplace'), got {tag!r}")
    return tuple(dict.fromkeys(names))


def infer_schema(
    prototype_function: Callable[..., Any],
    /,
    *,
    mutates_args: Union[str, typing.Iterable[str]],
    op_name: Optional[str] = None,
    tags: Union[Tag, str, Sequence[Union[Tag, str]], None] = (),
) -> str:
    """The schema of ``prototype_function``, read from its type hints.

    As torch's, it assumes that no output aliases an input or another output,
    and that only the arguments named in ``mutates_args`` are written to
    (``"unknown"``: every tensor argument may be).  The ``"inplace"`` tag
    makes the first positional argument the mutated, returned one
    (``Tensor(a0!) x -> Tensor(a0!)``); ``"out"`` makes the mutated
    keyword-only tensors the returns.

    >>> def foo_impl(x: Tensor) -> Tensor: ...
    >>> infer_schema(foo_impl, op_name="foo", mutates_args={})
    'foo(Tensor x) -> Tensor'
    >>> infer_schema(foo_impl, mutates_args={})
    '(Tensor x) -> Tensor'
    """
    sig = inspect.signature(prototype_function)
    # A callable without globals (a partial, say) has only builtins to name types with.
    pf_globals = getattr(prototype_function, "__globals__", {})
    tag_names = normalize_tags(tags)
    is_inplace = "inplace" in tag_names
    is_out = "out" in tag_names
    if is_inplace and is_out:
        raise AssertionError('torch.Tag.inplace and torch.Tag.out are mutually exclusive')
    if type(mutates_args) is not str:
        if not isinstance(mutates_args, collections.abc.Iterable):
            raise TypeError(
                "mutates_args must be an iterable of the names of the arguments the operator mutates, "
                f"or the string 'unknown'; got {mutates_args!r}"
            )
        mutates_args = tuple(mutates_args)

    def error_fn(what: str) -> NoReturn:
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def convert_type_string(annotation_type: str) -> Any:
        try:
            return eval(annotation_type, pf_globals, None)
        except NameError as e:
            error_fn(
                f"Unsupported type annotation {annotation_type}. It is not a type. "
                f"({e}). "
                f"If you are using 'from __future__ import annotations', note that "
                f"annotations are evaluated lazily as strings; make sure all types "
                f"referenced in annotations are importable at module scope, not only "
                f"inside a local function."
            )
        except Exception as e:
            error_fn(f"Unsupported type annotation {annotation_type}. It is not a type. ({type(e).__name__}: {e})")

    def unstringify_type(ty: Any) -> Any:
        # A string annotation (from __future__ import annotations), or a
        # generic with strings inside, as the real type.
        if isinstance(ty, str):
            ty = convert_type_string(ty)
        if isinstance(ty, type) and ty is not Tensor and issubclass(ty, Tensor):
            # A tensor library's own Tensor class (dispatcher.prototype's),
            # where torch code wrote torch.Tensor: the schema's Tensor.
            return Tensor
        origin = typing.get_origin(ty)
        if origin:
            args = typing.get_args(ty)
            real = tuple(unstringify_type(arg) for arg in args)
            if any(a is not b for a, b in zip(real, args)):
                return _same_generic(ty, origin, real)
        return ty

    params: list[str] = []
    seen_args: set[str] = set()
    saw_kwarg_only_arg = False
    first_positional: Optional[tuple[str, str, str]] = None  # name, schema type, alias set
    out_arg_aliases: list[str] = []
    out_arg_names: list[str] = []
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not saw_kwarg_only_arg:
            params.append("*")
            saw_kwarg_only_arg = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")

        annotation_type = unstringify_type(param.annotation)
        schema_type = _param_schema_type(annotation_type)
        if schema_type is None:
            if typing.get_origin(annotation_type) is tuple:
                list_type = tuple_to_list(annotation_type)
                # Only suggest the list type if it is supported.
                example = f"For example, {list_type}.\n\n" if _param_schema_type(list_type) is not None else "\n\n"
                error_fn(
                    f"Parameter {name} has unsupported type {param.annotation}. "
                    f"We do not support Tuple inputs in schema. As a workaround, please try to use List instead. "
                    f"{example}"
                    f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}."
                )
            error_fn(
                f"Parameter {name} has unsupported type {param.annotation}. "
                f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}."
            )

        if param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and first_positional is None:
            first_positional = (name, schema_type, f"a{idx}")

        is_mutated = False
        if type(mutates_args) is str:
            if mutates_args != UNKNOWN_MUTATES:
                raise ValueError(
                    "mutates_args must either be a sequence of the names of "
                    "the arguments that are mutated or the string 'unknown'. "
                )
            if schema_type.startswith("Tensor"):
                is_mutated = True
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            is_mutated = True
            if not schema_type.startswith("Tensor"):
                error_fn(
                    f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated"
                )
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        if is_out and is_mutated:
            if param.kind != inspect.Parameter.KEYWORD_ONLY:
                error_fn('torch.Tag.out requires mutable arguments to be keyword-only.')
            if schema_type != f"Tensor(a{idx}!)":
                error_fn('torch.Tag.out only supports mutable keyword-only Tensor arguments.')
            out_arg_aliases.append(f"a{idx}")
            out_arg_names.append(name)
        seen_args.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            params.append(f"{schema_type} {name}={_default_repr(name, schema_type, param.default, error_fn)}")

    if mutates_args != UNKNOWN_MUTATES:
        mutates_args_not_seen = set(mutates_args) - seen_args
        if len(mutates_args_not_seen) > 0:
            error_fn(
                f"{mutates_args_not_seen} in mutates_args were not found in "
                f"the custom op's signature. "
                f"mutates_args should contain the names of all args that the "
                f"custom op mutates, or just the string 'unknown' if you don't know."
            )
    inplace_alias = ""
    if is_inplace:
        if first_positional is None:
            error_fn('torch.Tag.inplace requires a positional Tensor argument.')
        inplace_alias = first_positional[2]
        if first_positional[1] != "Tensor":
            error_fn('torch.Tag.inplace requires the first positional argument to be a Tensor.')
        if type(mutates_args) is str or set(mutates_args) != {first_positional[0]}:
            error_fn(
                'torch.Tag.inplace requires mutates_args to contain exactly '
                f"the first positional argument, got {mutates_args}."
            )
    if is_out and len(out_arg_aliases) == 0:
        error_fn('torch.Tag.out requires at least one mutable keyword-only Tensor argument.')
    return_annotation = unstringify_type(sig.return_annotation)
    if is_out:
        ret = _infer_out_return_schema(return_annotation, out_arg_aliases, out_arg_names, error_fn)
    else:
        ret = _parse_return(return_annotation, error_fn)
    if is_inplace:
        if ret != "Tensor":
            error_fn('torch.Tag.inplace requires the return annotation to be dispatcher.Tensor.')
        ret = f"Tensor({inplace_alias}!)"
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


def _default_repr(name: str, schema_type: str, default: Any, error_fn: Callable[[str], NoReturn]) -> str:
    if schema_type in ("ScalarType", "ScalarType?") and isinstance(default, enum.Enum) and isinstance(default, int):
        # A dtype (an IntEnum member such as the prototype's float32): by its
        # name, as torch writes ``str(torch.float32)`` without "torch.";
        # the schema parser reads the name back as the dtype's number.
        return default.name
    if isinstance(default, int) and not isinstance(default, bool):
        # The number for any other IntEnum, whose str() may be its member name.
        return repr(int(default))
    if default is None or isinstance(default, (float, bool)):
        return str(default)
    if isinstance(default, (str, device)):  # a str, or a Device (torch prints torch.device("cpu") as "cpu")
        return f'"{default}"'
    error_fn(
        f"Parameter {name} has an unsupported default value type {type(default)}. "
        f"Please file an issue on GitHub so we can prioritize this."
    )


def _derived_types(base_type: Any, cpp_type: str, list_base: bool, optional_base_list: bool,
                   optional_list_base: bool) -> list[tuple[Any, str]]:
    # Every spelling of the type, its Optional, and the lists torch supports
    # of it, each a key equal to what an annotation evaluates to.
    result: list[tuple[Any, str]] = [(base_type, cpp_type), (typing.Optional[base_type], f"{cpp_type}?")]

    def derived_seq_types(typ: Any) -> tuple[Any, ...]:
        return (
            typing.Sequence[typ],
            typing.List[typ],  # noqa: UP006  (the spelling users write is the key)
            GenericAlias(collections.abc.Sequence, (typ,)),
            GenericAlias(list, (typ,)),
        )

    if list_base:
        result.extend((seq_typ, f"{cpp_type}[]") for seq_typ in derived_seq_types(base_type))
    if optional_base_list:
        result.extend((seq_typ, f"{cpp_type}?[]") for seq_typ in derived_seq_types(typing.Optional[base_type]))
    if optional_list_base:
        result.extend((typing.Optional[seq_typ], f"{cpp_type}[]?") for seq_typ in derived_seq_types(base_type))
    return result


def _supported_param_types() -> dict[Any, str]:
    data: list[tuple[Any, str, bool, bool, bool]] = [
        # (python type, schema type, type[] variant, type?[] variant, type[]? variant)
        (Tensor, "Tensor", True, True, False),
        (int, "SymInt", True, False, True),
        (float, "float", True, False, True),
        (bool, "bool", True, False, True),
        (str, "str", False, False, False),
        (Number, "Scalar", True, False, False),
        (dtype, "ScalarType", False, False, False),
        (device, "Device", False, False, False),
    ]
    result: dict[Any, str] = {}
    for line in data:
        result.update(_derived_types(*line))
    return result


SUPPORTED_PARAM_TYPES = _supported_param_types()

SUPPORTED_RETURN_TYPES: dict[Any, str] = {
    Tensor: "Tensor",
    typing.List[Tensor]: "Tensor[]",  # noqa: UP006
    list[Tensor]: "Tensor[]",
    int: "SymInt",
    float: "float",
    bool: "bool",
    Number: "Scalar",
}


def _same_generic(ty: Any, origin: Any, args: tuple[Any, ...]) -> Any:
    """``ty``, a generic annotation, with ``args`` for its arguments, of the same
    kind (typing's ``Optional[...]``/``List[...]`` or the builtins' ``list[...]``),
    so that it compares equal to the keys of SUPPORTED_PARAM_TYPES."""
    if origin is typing.Union:
        return typing.Union[args]
    if origin is types.UnionType:
        return functools.reduce(operator.or_, args)
    copy_with = getattr(ty, "copy_with", None)  # typing.List[...], typing.Sequence[...]
    return copy_with(args) if copy_with is not None else GenericAlias(origin, args)


def _param_schema_type(annotation: Any) -> Optional[str]:
    try:
        return SUPPORTED_PARAM_TYPES.get(annotation)
    except TypeError:  # an unhashable annotation (a list object, say) is no supported type
        return None


def _parse_return(annotation: Any, error_fn: Callable[[str], NoReturn]) -> str:
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")

    def unsupported() -> NoReturn:
        error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")

    if typing.get_origin(annotation) is not tuple:
        try:
            return SUPPORTED_RETURN_TYPES[annotation]
        except (KeyError, TypeError):
            unsupported()
    args = typing.get_args(annotation)
    try:
        output_ty = ", ".join(SUPPORTED_RETURN_TYPES[arg] for arg in args)
    except (KeyError, TypeError):
        unsupported()
    # A tuple of one element is written ((T)): the inner parentheses make it
    # a tuple, the outer ones the list of returns.
    if len(args) == 1:
        output_ty = "(" + output_ty + ")"
    return "(" + output_ty + ")"


def _infer_out_return_schema(return_annotation: Any, out_arg_aliases: list[str], out_arg_names: list[str],
                             error_fn: Callable[[str], NoReturn]) -> str:
    if len(out_arg_aliases) == 1:
        matches = return_annotation is Tensor
    else:
        matches = (typing.get_origin(return_annotation) is tuple
                   and typing.get_args(return_annotation) == (Tensor,) * len(out_arg_aliases))
    if not matches:
        error_fn(
            'torch.Tag.out requires the return annotation to match the '
            f"mutable keyword-only Tensor arguments {tuple(out_arg_names)}."
        )
    aliased_returns = [f"Tensor({alias}!)" for alias in out_arg_aliases]
    if len(aliased_returns) == 1:
        return aliased_returns[0]
    return f"({', '.join(aliased_returns)})"


def tuple_to_list(tuple_type: Any) -> Any:
    """The list type with a tuple annotation's element types (torch's
    ``torch._library.infer_schema.tuple_to_list``; infer_schema suggests it in
    its error for a tuple parameter): ``Tuple[int, int]`` gives ``list[int]``,
    ``Tuple[int, float]`` ``list[Union[int, float]]``, bare ``Tuple`` ``list``."""
    type_args = typing.get_args(tuple_type)
    if tuple_type is typing.Tuple or tuple_type is tuple or not type_args:  # noqa: UP006
        return list
    if len(type_args) == 1 or (len(type_args) == 2 and type_args[1] is Ellipsis):
        return list[type_args[0]]  # type: ignore[valid-type]
    return list[typing.Union[tuple(type_args)]]  # type: ignore[misc]
