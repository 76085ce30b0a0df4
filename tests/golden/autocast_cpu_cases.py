"""torch's CPU autocast of aten operators (bfloat16 by default), written once
and run on torch 2.13 (generate_autocast_cpu_golden.py) and on
dispatcher.prototype through tests/torch_shim.py (tests/test_autocast_cpu.py):
``run(torch)`` returns the dtypes (and some values) each case gave."""
from typing import Any


def _values(t: Any) -> str:
    return f"{t.dtype} {t.tolist()}"


def run(torch: Any) -> dict[str, Any]:
    aten = torch.ops.aten
    a = torch.tensor([[1.5, -0.3, 2.7], [0.01, 100.25, -7.125]])
    b = torch.tensor([[0.7, 1.9], [0.7, -3.3], [0.7, 0.11]])
    x = torch.tensor([[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, 1.0, 0.5]]]])
    w = torch.tensor([[[[0.1, 0.2], [-0.3, 0.4]]]])
    out: dict[str, Any] = {"outside": str(aten.mm.default(a, b).dtype)}
    with torch.autocast("cpu"):
        out["default dtype: mm"] = _values(aten.mm.default(a, b))
        out["default dtype: matmul"] = str(aten.matmul.default(a, b).dtype)
        out["default dtype: bmm"] = str(aten.bmm.default(a.unsqueeze(0), b.unsqueeze(0)).dtype)
        out["default dtype: conv2d"] = _values(aten.conv2d.default(x, w))
        out["float64 is not cast"] = str(aten.mm.default(a.to(torch.float64), b.to(torch.float64)).dtype)
        out["float16 is cast"] = str(aten.mm.default(a.to(torch.float16), b.to(torch.float16)).dtype)
        out["an operator off the lists"] = str(aten.add.Tensor(a, a).dtype)
        out["fp32 list: fft_fft2 of bfloat16"] = str(aten.fft_fft2.default(a.to(torch.bfloat16)).dtype)
        out["promote: stack of bfloat16 and float32"] = str(aten.stack.default([a.to(torch.bfloat16), a]).dtype)
        out["promote: stack of bfloat16"] = str(aten.stack.default([a.to(torch.bfloat16)] * 2).dtype)
        out["promote: stack of float64 and float32"] = str(aten.stack.default([a.to(torch.float64), a]).dtype)
        with torch.autocast("cpu", enabled=False):
            out["disabled inside"] = str(aten.mm.default(a, b).dtype)
        with torch.autocast("cpu", dtype=torch.float16):
            out["float16 inside"] = str(aten.mm.default(a, b).dtype)
        out["after the float16 region"] = str(aten.mm.default(a, b).dtype)
    with torch.autocast("cpu", dtype=torch.float16):
        out["float16: mm"] = _values(aten.mm.default(a, b))
    out["after"] = str(aten.mm.default(a, b).dtype)
    return out
