"""The custom operators whose wrong results tests/golden/custom_op_results_golden.json records.

Written once, for either library: each case is a schema (after the
operator's name) and what its kernel returns, made by ``result(x)`` from the
call's input tensor ``x`` and ``x.clone()`` (``new``) -- so the golden script
runs them on torch tensors and tests/test_custom_op_results.py on the
dispatcher's.  No imports of either library here.
"""
from typing import Any, Callable, NamedTuple


class ResultCase(NamedTuple):
    name: str
    schema: str  # "(Tensor x) -> ..."
    result: Callable[[Callable[[], Any]], Any]  # new() -> a fresh tensor; returns the kernel's result


def _case(name: str, returns: str, result: Callable[[Callable[[], Any]], Any]) -> ResultCase:
    return ResultCase(name, f"(Tensor x) -> {returns}", result)


# Cases torch refuses (and the good ones next to them, which it converts).
RESULT_CASES = [
    _case("int_for_tensor", "Tensor", lambda new: 5),
    _case("none_for_tensor", "Tensor", lambda new: None),
    _case("str_for_tensor", "Tensor", lambda new: "a"),
    _case("int_for_optional_tensor", "Tensor?", lambda new: 5),
    _case("none_for_optional_tensor", "Tensor?", lambda new: None),
    _case("one_tuple_for_two", "(Tensor, Tensor)", lambda new: (new(),)),
    _case("tensor_for_two", "(Tensor, Tensor)", lambda new: new()),
    _case("int_for_two", "(Tensor, Tensor)", lambda new: 5),
    _case("list_for_two", "(Tensor, Tensor)", lambda new: [new(), new()]),
    _case("str_in_second_of_two", "(Tensor, int)", lambda new: (new(), "s")),
    _case("tensor_for_none", "()", lambda new: new()),
    _case("int_for_none", "()", lambda new: 0),
    _case("str_for_int", "int", lambda new: "a"),
    _case("float_for_int", "int", lambda new: 2.5),
    _case("bool_for_int", "int", lambda new: True),
    _case("none_for_int", "int", lambda new: None),
    _case("tensor_for_int", "int", lambda new: new()),
    _case("int_for_float", "float", lambda new: 3),
    _case("str_for_float", "float", lambda new: "a"),
    _case("int_for_bool", "bool", lambda new: 1),
    _case("str_for_scalar", "Scalar", lambda new: "a"),
    _case("str_for_int_list", "int[]", lambda new: [1, "a"]),
    _case("int_in_tensor_list", "Tensor[]", lambda new: [new(), 3]),
    _case("tuple_for_tensor_list", "Tensor[]", lambda new: (new(), new())),
    _case("none_for_tensor_list", "Tensor[]", lambda new: None),
    _case("none_for_int_list", "int[]", lambda new: None),
    _case("int_for_sized_int_list", "int[2]", lambda new: 3),
    _case("none_in_optional_tensor_list", "Tensor?[]", lambda new: [None, new()]),
    _case("int_in_optional_tensor_list", "Tensor?[]", lambda new: [None, 3]),
    _case("three_tensors", "(Tensor, Tensor, Tensor)", lambda new: (new(), None, new())),
    _case("int_in_three_tensors", "(Tensor, Tensor, Tensor)", lambda new: (new(), 5, new())),
    _case("str_for_two", "(Tensor, Tensor)", lambda new: "ab"),
    _case("int_for_str", "str", lambda new: 5),
]

# Cases where torch's C++ reads past what the kernel pushed (more values than
# the schema's returns): torch 2.13 crashes or errors by accident, so the
# golden file records only that torch does not accept them.
OVERLONG_CASES = [
    _case("three_tuple_for_two", "(Tensor, Tensor)", lambda new: (new(), new(), new())),
]

class BackwardCase(NamedTuple):
    """What a backward (register_autograd) returns, made by ``grad(new)``, for an operator
    taking ``n_tensors`` tensors (and an int ``n`` if ``with_int``) and returning a tensor."""

    name: str
    n_tensors: int
    grad: Callable[[Callable[[], Any]], Any]
    with_int: bool = False

    @property
    def schema(self) -> str:
        arguments = ["Tensor x", "Tensor y"][:self.n_tensors] + (["int n"] if self.with_int else [])
        return f"({', '.join(arguments)}) -> Tensor"


BACKWARD_CASES = [
    BackwardCase("int", 1, lambda new: 5),
    BackwardCase("str", 1, lambda new: "a"),
    BackwardCase("int_in_tuple", 2, lambda new: (new(), 5)),
    BackwardCase("two_for_one", 1, lambda new: (new(), new())),
    BackwardCase("one_for_two", 2, lambda new: new()),
    BackwardCase("empty_tuple", 1, lambda new: ()),
    BackwardCase("list", 1, lambda new: [new()]),
    BackwardCase("none", 1, lambda new: None),
    BackwardCase("none_and_tensor", 2, lambda new: (None, new())),
    BackwardCase("extra_nones", 1, lambda new: (new(), None, None)),
    BackwardCase("three_for_one", 1, lambda new: (new(), None, new())),
    BackwardCase("gradient_for_int", 1, lambda new: (new(), new()), with_int=True),
    BackwardCase("none_for_int", 1, lambda new: (new(), None), with_int=True),
]

# What a backward returns for "(Tensor[] xs) -> Tensor", called with a list of two
# tensors that require grad; made by ``grad(new)``.
TENSOR_LIST_BACKWARD_CASES = {
    "list_of_tensor_and_none": lambda new: ([new(), None],),
    "list_with_int": lambda new: ([new(), 5],),
    "short_list": lambda new: ([new()],),
    "tensor_for_list": lambda new: new(),
    "int_for_list": lambda new: 5,
    "none_for_list": lambda new: None,
}
