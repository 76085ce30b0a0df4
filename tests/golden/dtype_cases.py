"""Element types as torch 2.13 has them: promotion between every pair, each
dtype's attributes, the unsigned types, and bfloat16's rounding and
arithmetic.  Written once and run on torch (generate_dtype_golden.py) and on
dispatcher.prototype through tests/torch_shim.py (tests/test_dtypes.py):
``run(torch)`` returns what each case gave.  Values are recorded as text
(``str(t.tolist())``), which keeps NaN comparable."""
from typing import Any, Callable

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "uint16", "uint32", "uint64"]


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  (the case records which error, as torch raised it)
        return f"{type(exc).__name__}: {exc}"


def _values(t: Any) -> str:
    return f"{t.dtype} {list(t.shape)} {t.tolist()}"


def run(torch: Any) -> dict[str, Any]:
    dtypes = {name: getattr(torch, name) for name in NAMES}
    out: dict[str, Any] = {}
    for a in NAMES:
        out[f"promote_types {a}"] = [_try(lambda: str(torch.promote_types(dtypes[a], dtypes[b]))) for b in NAMES]
    for name, dt in dtypes.items():
        out[f"attributes {name}"] = [str(dt), dt.itemsize, dt.is_floating_point, dt.is_signed,
                                     torch.zeros(2, dtype=dt).element_size()]
    for name in ["uint8", "int8", "int16", "uint16", "uint32", "uint64", "bfloat16"]:
        out[f"repr of a {name} tensor"] = repr(torch.tensor([1, 2, 3], dtype=dtypes[name]))

    big = 2 ** 63 + 1
    full = torch.full((2, 2), big, dtype=torch.uint64)
    out["uint64 beyond int64"] = [_values(full), bool((full == big).all().item()), (full == big - 2).tolist()]
    out["uint8 wraps"] = _values(torch.tensor([250, 3], dtype=torch.uint8) + torch.tensor([10, 4], dtype=torch.uint8))
    out["uint8 with int8"] = _values(torch.tensor([200], dtype=torch.uint8) + torch.tensor([-1], dtype=torch.int8))
    out["int16 times a Python int"] = _values(torch.tensor([300, -2], dtype=torch.int16) * 3)
    out["uint64 with int64 tensor"] = _try(
        lambda: _values(torch.tensor([1], dtype=torch.uint64) + torch.tensor([1, 2], dtype=torch.int64)))
    out["uint32 to float32"] = _values(torch.tensor([7, 4000000000], dtype=torch.uint32).to(torch.float32))
    out["uint16 with float32"] = _values(torch.tensor([7], dtype=torch.uint16) * torch.tensor([0.5]))
    out["eq of int64 and float32"] = _values(torch.tensor([1, 2]) == torch.tensor([1.0, 2.5]))

    values = [0.1, 1.0, 3.14159, 1e-3, 65504.0, 3.3e38, 3.4e38, -2.5e-39, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8,
              float("inf"), float("-inf"), float("nan")]
    b = torch.tensor(values, dtype=torch.bfloat16)
    out["bfloat16 rounds to nearest even"] = _values(b)
    out["float32 to bfloat16"] = _values(torch.tensor(values).to(torch.bfloat16))
    out["bfloat16 to float32 and float64"] = [_values(b.to(torch.float32)), _values(b.to(torch.float64))]
    x = torch.tensor([[1.5, -0.3, 2.7], [0.01, 100.25, -7.125]], dtype=torch.bfloat16)
    y = torch.tensor([[0.7, 0.7, 0.7], [1.9, -3.3, 0.11]], dtype=torch.bfloat16)
    out["bfloat16 add, sub, mul, div"] = [_values(x + y), _values(x - y), _values(x * y), _values(x / y)]
    out["bfloat16 with Python numbers"] = [_values(x * 0.1), _values(x + 1), _values(x / 3)]
    out["bfloat16 sum and mean"] = [_values(x.sum()), _values(x.mean()), _values(x.sum(dim=1))]
    out["bfloat16 matmul"] = _values(x @ y.t())
    out["bfloat16 neg, exp, abs"] = [_values(-x), _values(x.exp()), _values(x.abs())]
    out["bfloat16 with float16"] = _values(x + torch.ones(2, 3, dtype=torch.float16))
    out["bfloat16 with float32"] = _values(x + torch.ones(2, 3))
    out["bfloat16 with int64"] = _values(x + torch.ones(2, 3, dtype=torch.int64))
    out["bfloat16 full, zeros, ones"] = [_values(torch.full((2,), 0.1, dtype=torch.bfloat16)),
                                         _values(torch.zeros(2, dtype=torch.bfloat16)),
                                         _values(torch.ones(2, dtype=torch.bfloat16))]
    z = torch.zeros(3, dtype=torch.bfloat16)
    z.add_(torch.tensor([0.1, 0.2, 0.3]))
    out["bfloat16 add_ of float32 values rounds"] = _values(z)
    z.copy_(torch.tensor([1.001, 2.002, 3.003], dtype=torch.float64))
    out["bfloat16 copy_ from float64 rounds"] = _values(z)
    out["bfloat16 views share memory"] = [_values(x.t()), _values(x[1]), _values(x.view(3, 2))]
    out["bfloat16 repr"] = repr(torch.tensor([[1.0, 0.1], [-3.5, 1e10]], dtype=torch.bfloat16))
    out["bfloat16 item"] = torch.tensor(0.1, dtype=torch.bfloat16).item()
    out["randperm of the new dtypes"] = [
        _try(lambda: str(torch.randperm(300, dtype=torch.uint8))), _try(lambda: str(torch.randperm(129, dtype=torch.int8))),
        _try(lambda: str(torch.randperm(3, dtype=torch.uint32).dtype)),
        str(sorted(torch.randperm(5, dtype=torch.bfloat16).tolist())),
        list(torch.randperm(256, dtype=torch.uint8).shape)]
    out["bfloat16 uniform_ bounds"] = [
        _try(lambda: str(torch.ops.aten.uniform_.default(torch.zeros(2, dtype=torch.bfloat16), 0, 3.4e38).dtype)),
        _try(lambda: str(torch.ops.aten.uniform_.default(torch.zeros(2, dtype=torch.bfloat16), 0, 3.3e38).dtype)),
        _try(lambda: str(torch.rand(2, dtype=torch.bfloat16).dtype)), _try(lambda: torch.rand(2, dtype=torch.uint8))]
    return out
