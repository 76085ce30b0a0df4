"""aten::conv2d / convolution and aten::fft_fft2 / _fft_c2c on dispatcher.prototype
as torch 2.13 computes them: the same code (tests/golden/conv_fft_cases.py)
through tests/torch_shim.py, against what torch gave (conv_fft_golden.json),
values within float32 tolerances, on this process's engine and, in a
subprocess, on the other; and the keys their kernels are at."""
from typing import Any

import numpy as np
import pytest

import dispatcher.prototype as P
from dispatcher import ops

from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.conv_fft_cases import run
from .torch_shim import installed

GOLDEN = load_golden("conv_fft_golden.json")["cases"]


def run_cases() -> dict[str, Any]:
    with installed() as torch:
        return run(torch)


def _is_described(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and value[0].startswith("torch.")


def assert_matches(answer: Any, expected: Any) -> None:
    """Equal, but a described tensor's values within float32 tolerances."""
    if _is_described(expected):
        assert _is_described(answer) and answer[:2] == expected[:2]
        np.testing.assert_allclose(np.array(answer[2]), np.array(expected[2]), rtol=1e-5, atol=1e-5)
    elif isinstance(expected, list) and expected and all(_is_described(e) for e in expected):
        assert isinstance(answer, list) and len(answer) == len(expected)
        for a, e in zip(answer, expected):
            assert_matches(a, e)
    else:
        assert answer == expected


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_conv_fft", run_cases, GOLDEN, count=20, check=assert_matches)


def test_what_the_prototype_does_not_have_says_so():
    x, w = P.ones(1, 1, 3), P.ones(1, 1, 2)
    with pytest.raises(NotImplementedError, match="the prototype's convolution is 2-d"):
        ops.aten.convolution.default(x, w, None, [1], [0], [1], False, [0], 1)
    x, w = P.ones(1, 1, 3, 3), P.ones(1, 1, 2, 2)
    with pytest.raises(NotImplementedError, match="is not transposed"):
        ops.aten.convolution.default(x, w, None, [1, 1], [0, 0], [1, 1], True, [0, 0], 1)
    with pytest.raises(NotImplementedError, match="pass s=None"):
        ops.aten.fft_fft2.default(P.ones(2, 2), [4, 4])


def test_meta_kernels_give_the_shapes():
    x, w = P.meta_tensor((2, 3, 6, 5), P.float32), P.meta_tensor((4, 3, 3, 2), P.float32)
    y = ops.aten.convolution.default(x, w, None, [2, 1], [1, 2], [1, 2], False, [0, 0], 1)
    assert (y.device.type, y.shape, y.dtype) == ("meta", (2, 4, 3, 7), P.float32)
    f = ops.aten._fft_c2c.default(P.meta_tensor((4, 4), P.complex64), [0, 1], 0, True)
    assert (f.device.type, f.shape, f.dtype) == ("meta", (4, 4), P.complex64)
