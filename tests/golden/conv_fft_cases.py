"""aten::conv2d / aten::convolution and aten::fft_fft2, written once and run on
torch 2.13 (generate_conv_fft_golden.py) and on dispatcher.prototype through
tests/torch_shim.py (tests/test_conv_fft.py): ``run(torch)`` returns, per
case, the result's dtype, shape and values (nested lists; complex values as
[real, imaginary] pairs), or the error's type and text.  Inputs are fixed
numbers (no random generator), and the values are compared within float32
tolerances: torch's kernels and numpy sum in different orders."""
from typing import Any, Callable


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  (the case records which error, as torch raised it)
        return f"{type(exc).__name__}: {exc}"


def _described(t: Any) -> Any:
    values = t.tolist()
    if t.dtype.is_complex:
        values = _pairs(values)
    return [str(t.dtype), list(t.shape), values]


def _pairs(values: Any) -> Any:
    if isinstance(values, list):
        return [_pairs(v) for v in values]
    return [values.real, values.imag]


def _numbers(torch: Any, *shape: int, scale: float = 0.1, offset: float = 0.0) -> Any:
    count = 1
    for n in shape:
        count *= n
    # Fixed values in [-1, 1): the same tensor on both libraries.
    flat = [((i * 37 + 11) % 23) / 11.5 - 1.0 for i in range(count)]
    return (torch.tensor(flat) * scale * 10 + offset).view(*shape)


def run(torch: Any) -> dict[str, Any]:
    aten = torch.ops.aten
    out: dict[str, Any] = {}
    x = _numbers(torch, 2, 3, 6, 5)
    w = _numbers(torch, 4, 3, 3, 2, offset=0.25)
    b = _numbers(torch, 4, offset=-0.5)
    out["conv2d default"] = _described(aten.conv2d.default(x, w))
    out["conv2d bias, stride, padding, dilation"] = _described(aten.conv2d.default(x, w, b, [2, 1], [1, 2], [1, 2]))
    w_grouped = _numbers(torch, 4, 1, 2, 2)
    x4 = _numbers(torch, 1, 2, 4, 4)
    out["conv2d groups=2"] = _described(aten.conv2d.default(x4, w_grouped, None, [1, 1], [0, 0], [1, 1], 2))
    out["conv2d unbatched input"] = _described(aten.conv2d.default(x[0], w))
    out["convolution"] = _described(aten.convolution.default(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))
    out["conv2d float64"] = _described(aten.conv2d.default(x.to(torch.float64), w.to(torch.float64)))
    out["conv2d channels mismatch"] = _try(lambda: aten.conv2d.default(x, _numbers(torch, 4, 2, 3, 3)))
    out["conv2d kernel too big"] = _try(lambda: aten.conv2d.default(x, _numbers(torch, 4, 3, 7, 2)))
    out["conv2d dtype mismatch"] = _try(lambda: aten.conv2d.default(x, w.to(torch.float64)))
    out["conv2d bad groups"] = _try(lambda: aten.conv2d.default(x, w, None, [1, 1], [0, 0], [1, 1], 3))

    xg = _numbers(torch, 1, 2, 5, 4).requires_grad_()
    wg = _numbers(torch, 4, 1, 3, 2, offset=0.1).requires_grad_()
    bg = _numbers(torch, 4).requires_grad_()
    y = aten.conv2d.default(xg, wg, bg, [2, 1], [1, 0], [1, 1], 2)
    out["conv2d grad_fn"] = y.grad_fn.name()
    (y * _numbers(torch, *y.shape)).sum().backward()
    out["conv2d gradients"] = [_described(xg.grad), _described(wg.grad), _described(bg.grad)]

    real = _numbers(torch, 4, 4)
    out["fft_fft2 of a real tensor"] = _described(aten.fft_fft2.default(real))
    out["fft_fft2 ortho"] = _described(aten.fft_fft2.default(real, None, [-2, -1], "ortho"))
    out["fft_fft2 forward"] = _described(aten.fft_fft2.default(real, None, [-2, -1], "forward"))
    out["fft_fft2 dims 0, 2 of a 3-d tensor"] = _described(aten.fft_fft2.default(_numbers(torch, 2, 3, 4), None,
                                                                                   [0, 2]))
    out["fft_fft2 of integers"] = _described(aten.fft_fft2.default(torch.tensor([[1, 2], [3, 4]])))
    out["fft_fft2 bad norm"] = _try(lambda: aten.fft_fft2.default(real, None, [-2, -1], "bogus"))
    out["fft_fft2 repeated dim"] = _try(lambda: aten.fft_fft2.default(real, None, [0, 0]))
    out["_fft_c2c inverse by_n"] = _described(aten._fft_c2c.default(real.to(torch.complex64), [0, 1], 2, False))
    return out
