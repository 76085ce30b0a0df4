"""The ADInplaceOrView kernel of a custom operator that is a view
(torch's autogradNotImplementedInplaceOrViewFallback, which torch.library's
custom_op registers for an operator whose schema aliases an input it does not
write: ``(Tensor(a) x, ...) -> Tensor(a)``).

On each call it checks the schema as torch's does (one aliased input, one
aliased output, the first of each), runs the operator below
ADInplaceOrView, bumps the version of each result the schema marks as
written, and makes the aliased result a view of the aliased input through
the tensors' autograd engine (``AutogradEngine.as_view``, when it has one:
a view shares its base's version counter and names it as ``_base``).
A single tensor result also gets what torch records to replay the view on
another base, which refuses an operator with a SymInt argument -- with
torch's texts, after the operator ran, as torch's does.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .keysets import AFTER_ADINPLACEORVIEW_KEYSET
from .schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type
from .tensor_protocols import autograd_engine_for

__all__ = ["aliases_without_write", "make_view_kernel"]

_ONE_OUTPUT = (
    "Fallback ADInplaceOrView kernel expects only a single output in the operator schema to have a non-write alias "
    "annotation (i.e., 'Tensor(a)'). Non-composite functions where multiple outputs are aliased with inputs aren't "
    "supported.Please rewrite your function as a composite function."
)
_ONE_INPUT = (
    "Fallback ADInplaceOrView kernel expects only a single input in the operator schema to have a non-write alias "
    "annotation (i.e., 'Tensor(a)'). Non-composite functions where multiple inputs are aliased with outputs aren't "
    "supported. Please rewrite your function as a composite function."
)
_FIRST_TO_FIRST = (
    "Fallback ADInplaceOrView kernel can only create view relationships between the first input and the first output "
    "(the output can be a vector of tensors). Please change the order of your operator's parameters so that this is "
    "the case."
)
_NO_SYMINT = "Custom ops that are views do not support SymInt. Please file an issue if you need it."


def aliases_without_write(type_: Type) -> bool:
    """Whether a value of ``type_`` aliases an input and is not written: ``Tensor(a)``,
    ``Tensor(a)?``, or a list of such tensors (``Tensor(a)[]``, whose list c10
    annotates too, with its elements' annotation inside)."""
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    alias = type_.alias
    if alias is None and isinstance(type_, ListType):
        element = type_.elem.elem if isinstance(type_.elem, OptionalType) else type_.elem
        alias = element.alias
    return alias is not None and not alias.is_write


def _schema_problem(schema: FunctionSchema) -> Optional[str]:
    """What torch's fallback refuses of the schema, in the order it checks, or None."""
    outputs = [i for i, r in enumerate(schema.returns) if aliases_without_write(r.type)]
    if len(outputs) > 1:
        return _ONE_OUTPUT
    inputs = [i for i, a in enumerate(schema.arguments) if aliases_without_write(a.type)]
    if len(inputs) > 1:
        return _ONE_INPUT
    if (inputs or outputs) and (inputs != [0] or outputs != [0]):
        return _FIRST_TO_FIRST
    return None


def _is_symint(type_: Type) -> bool:
    return type_ == BaseType(BaseTy.SymInt)


def _has_symint(schema: FunctionSchema) -> bool:
    """An argument that is a SymInt or directly holds them (SymInt[], SymInt?): torch
    looks at each argument's type and the types it contains, one level down."""
    for argument in schema.arguments:
        type_ = argument.type.strip_annotations()
        contained: Sequence[Type] = (type_.elem,) if isinstance(type_, (ListType, OptionalType)) else ()
        if _is_symint(type_) or any(_is_symint(t) for t in contained):
            return True
    return False


def _as_view(base: Any, view: Any) -> None:
    engine = autograd_engine_for(base)
    as_view = getattr(engine, "as_view", None)
    if as_view is not None:
        as_view(base, view)


def _increment_versions(values: Sequence[Any]) -> None:
    for value in values:
        for item in value if isinstance(value, (list, tuple)) else (value,):
            engine = autograd_engine_for(item)
            if engine is not None:
                engine.increment_version(item)


def make_view_kernel(op: Any, engine: Any, *, written: Sequence[int] = ()) -> Callable[..., Any]:
    """The ADInplaceOrView kernel (``with_keyset=True``) of ``op``, a view operator
    (an OperatorHandle of the dispatcher ``engine``).  ``written``: positions of
    arguments whose versions are bumped before the call (those a mutable view
    writes, as torch's custom_op bumps them before its fallback runs)."""
    schema: FunctionSchema = op.schema
    problem = _schema_problem(schema)
    below = engine.DispatchKeySet.from_raw_repr(AFTER_ADINPLACEORVIEW_KEYSET.raw_repr())
    below_guard = engine.AutoDispatchBelowADInplaceOrView
    tensor_key_set = engine.tensor_key_set
    written_results = [i for i, r in enumerate(schema.returns) if r.is_write]
    replayable_error = _NO_SYMINT if _has_symint(schema) else None
    single_return = len(schema.returns) == 1

    def view_kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        if problem is not None:
            raise RuntimeError(problem)
        values = schema.bind(args, kwargs)
        if written:
            _increment_versions([values[i] for i in written])
        with below_guard():
            result = op.redispatch(keyset & below, *args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        _increment_versions([results[i] for i in written_results])
        base, aliased = values[0], results[0]
        if isinstance(aliased, (list, tuple)):  # a list of views: no replay recorded, so no SymInt check
            for view in aliased:
                _as_view(base, view)
            return result
        if not single_return:
            raise RuntimeError("ADInplaceOrView fallback only support single output view functions")
        if any(i and tensor_key_set(value) is not None for i, value in enumerate(values)):
            raise RuntimeError("Internal error in ADInplaceOrView fallback, unknown Tensor in the stack")
        if replayable_error is not None:
            raise RuntimeError(replayable_error)
        _as_view(base, aliased)
        return result

    return view_kernel
