"""infer_schema: the same functions give torch 2.13's schemas and errors (tests/golden/custom_op_golden.json)."""
import inspect
import typing

import pytest

import dispatcher
from dispatcher import Number, Tensor, device, dtype, infer_schema
from dispatcher.schema import FunctionSchema
from dispatcher.schema_inference import SUPPORTED_PARAM_TYPES, SUPPORTED_RETURN_TYPES
import dispatcher.prototype as P

from .conftest import load_golden
from .golden.custom_op_cases import Types, infer_schema_cases, normalized_error

GOLDEN = load_golden("custom_op_golden.json")["infer_schema"]
TYPES = Types(Tensor, Number, dtype, device, "cpu", P.float32, lambda name: name)
CASES = {case.name: case for case in infer_schema_cases(TYPES)}


def ours(case):
    try:
        return {"schema": infer_schema(case.fn, **case.kwargs)}
    except Exception as exc:
        message = normalized_error(str(exc), case.fn, Tensor, SUPPORTED_PARAM_TYPES, SUPPORTED_RETURN_TYPES)
        return {"error": type(exc).__name__, "message": message.replace("dispatcher.Tensor", "<Tensor>")}


def test_the_cases_are_the_recorded_ones():
    assert set(CASES) == set(GOLDEN)
    assert sum("schema" in g for g in GOLDEN.values()) >= 30


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_schema_or_error_as_torch(name):
    assert ours(CASES[name]) == GOLDEN[name]  # torch's texts, Tag members named as torch names them


def test_inferred_schemas_parse():
    # What custom_op hands to Library.define (printing may normalise them:
    # 1e-05 prints as c10 prints it).
    for name, case in CASES.items():
        result = ours(case)
        if "schema" in result:
            text = result["schema"]
            FunctionSchema.parse(text if "op_name" in case.kwargs else "f" + text)


def test_a_dtype_default_is_its_name_as_torch_writes_it():
    # torch writes str(torch.float32) without "torch."; its parser (and ours)
    # reads the name back as the ScalarType number.
    assert GOLDEN["dtype_default"] == {"schema": "(Tensor x, ScalarType dt=float32) -> Tensor"}
    assert ours(CASES["dtype_default"]) == GOLDEN["dtype_default"]
    assert str(FunctionSchema.parse("f" + GOLDEN["dtype_default"]["schema"])) == "f(Tensor x, ScalarType dt=6) -> Tensor"

    import enum

    class DT(enum.IntEnum):
        float64 = 7

    def f(x: Tensor, dt: dtype = DT.float64, n: int = DT.float64) -> Tensor: ...

    # Any dtype enum by its member's name; an IntEnum default of an int argument by its number.
    assert infer_schema(f, mutates_args=()) == "(Tensor x, ScalarType dt=float64, SymInt n=7) -> Tensor"


def test_the_annotation_types():
    assert dispatcher.Tensor is dispatcher.TensorBase
    assert Number == int | float | bool == typing.Union[int, float, bool]
    assert dtype(6) == 6  # a NewType: the values are plain ints
    assert device("cuda:1") == device("cuda", 1) != "cuda:1"  # a class, as torch.device (not equal to strings)


def test_bad_mutates_args_and_tags_say_what_was_wrong():
    def f(x: Tensor) -> Tensor: ...

    with pytest.raises(TypeError, match="mutates_args must be an iterable of the names .* got 3"):
        infer_schema(f, mutates_args=3)
    with pytest.raises(TypeError, match="a tag is a dispatcher.Tag or its name .* got 1"):
        infer_schema(f, mutates_args=(), tags=[1])
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'mutates_args'"):
        infer_schema(f)  # keyword-only, as torch's


def test_signature_is_torchs():
    parameters = inspect.signature(infer_schema).parameters
    assert [(p.name, p.kind.name) for p in parameters.values()] == [
        ("prototype_function", "POSITIONAL_ONLY"), ("mutates_args", "KEYWORD_ONLY"),
        ("op_name", "KEYWORD_ONLY"), ("tags", "KEYWORD_ONLY"),
    ]


def test_a_tensor_librarys_own_tensor_class_is_a_tensor():
    """torch code's ``torch.Tensor`` annotations become the library's Tensor
    class (dispatcher.prototype's) when ported: a subclass of TensorBase, alone
    or inside Optional, a list or a union with None, is the schema's Tensor."""
    import typing

    from dispatcher.prototype import Tensor as ProtoTensor
    from dispatcher.schema_inference import infer_schema as infer

    def f(x: ProtoTensor, y: typing.Optional[ProtoTensor], z: list[ProtoTensor], w: typing.List[ProtoTensor],  # noqa: UP006
          v: typing.Sequence[ProtoTensor], u: ProtoTensor | None) -> tuple[ProtoTensor, ProtoTensor]: ...

    assert infer(f, mutates_args=()) == (
        "(Tensor x, Tensor? y, Tensor[] z, Tensor[] w, Tensor[] v, Tensor? u) -> (Tensor, Tensor)")

    def g(x: ProtoTensor) -> typing.List[ProtoTensor]: ...  # noqa: UP006

    assert infer(g, mutates_args=("x",)) == "(Tensor(a0!) x) -> Tensor[]"
