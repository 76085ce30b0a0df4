"""torch's ``should_allow_numbers_as_tensors`` (python_arg_parser.cpp).

For these aten operators (and every prims one) a Python number goes where a
schema says Tensor: torch makes it a wrapped-number tensor.  Here the kernel
gets the number; it counts as a tensor when a packet chooses its overload
(dispatcher/packet_matching.py) and adds no keys when the engine extracts
the call's keys (dispatcher/_engine/core.py).  Ground floor: data only.
"""
from __future__ import annotations

__all__ = ["NUMBER_TYPES", "allows_numbers_as_tensors"]

NUMBERS_AS_TENSORS = frozenset(
    f"aten::{name}" for name in (
        "add", "add_", "add_out", "div", "div_", "div_out", "divide", "divide_", "divide_out",
        "mul", "mul_", "mul_out", "multiply", "multiply_", "multiply_out",
        "sub", "sub_", "sub_out", "subtract", "subtract_", "subtract_out",
        "true_divide", "true_divide_", "true_divide_out", "to", "_to_copy", "copy_", "copy",
        "floor_divide", "floor_divide_", "floor_divide_out", "_conj",
    )
)

NUMBER_TYPES = (bool, int, float, complex)


def allows_numbers_as_tensors(operator_name: str) -> bool:
    """Whether ``operator_name`` ("aten::mul" or "aten::mul.Tensor") takes numbers as tensors."""
    packet = operator_name.partition(".")[0]
    return packet in NUMBERS_AS_TENSORS or packet.startswith("prims::")
