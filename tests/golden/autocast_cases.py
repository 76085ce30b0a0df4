"""register_autocast with float16, written once and run on torch 2.13
(generate_autocast_golden.py) and on this package through tests/torch_shim.py
(tests/test_autocast_float16.py): ``run(torch)`` returns, per case, the
dtypes the kernel saw, the result's dtype and its values, and the custom
operators it made (to be destroyed by the caller).

Every kernel here computes tensor-with-tensor: a Python number would be
rounded to float16 by numpy's rules but kept in float32 by torch's CPU
kernels (their opmath type), which is a kernel matter, not autocast's.
"""
from typing import Any

# (No ``from __future__ import annotations``: custom_op reads the kernels'
# annotations as objects.)


def run(torch: Any) -> tuple[dict[str, Any], list[Any]]:
    Tensor = torch.Tensor
    seen: list[list[str]] = []

    def record(result: Any) -> dict[str, Any]:
        return {"kernel_saw": seen.pop(), "dtype": str(result.dtype), "values": result.tolist()}

    @torch.library.custom_op("h23autocast::mul_add", mutates_args=())
    def mul_add(x: Tensor, y: Tensor, z: Tensor) -> Tensor:
        seen.append([str(t.dtype) for t in (x, y, z)])
        return x * y + z

    @torch.library.custom_op("h23autocast::twice", mutates_args=())
    def twice(xs: list[Tensor]) -> Tensor:
        seen.append([str(t.dtype) for t in xs])
        return xs[0] + xs[1]

    torch.library.register_autocast("h23autocast::mul_add", "cpu", torch.float16)
    torch.library.register_autocast("h23autocast::twice", "cpu", torch.float32)

    a = torch.tensor([1.0, 2.5, -3.0003])
    b = torch.tensor([0.1, 1e-3, 7.77])
    c = torch.tensor([3.14159, -2.0, 0.5])
    a64 = torch.tensor([1.0, 2.5, -3.0003], dtype=torch.float64)
    ints = torch.tensor([1, 2, -3])
    half = torch.tensor([0.1, 1e-3, 7.77], dtype=torch.float16)
    out = {"outside autocast": record(mul_add(a, b, c))}
    with torch.autocast("cpu", dtype=torch.float16):
        out["float32 inputs are cast to float16"] = record(mul_add(a, b, c))
        out["a float64 input is not cast"] = record(mul_add(a64, b, c))
        out["an integer input is not cast"] = record(mul_add(ints, b, c))
        out["a list's tensors are cast (to float32)"] = record(twice([half, b]))
        with torch.autocast("cpu", enabled=False):
            out["autocast disabled inside"] = record(mul_add(a, b, c))
    out["after autocast"] = record(mul_add(a, b, c))
    return out, [mul_add, twice]
