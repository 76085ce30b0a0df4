"""The prototype's tensors print as torch 2.13's (tests/golden/repr_cases.py,
repr_golden.json): widths, decimals, scientific notation, wrapping at 80
columns, summaries of large tensors, and the dtype / grad suffixes."""
import numpy as np
import pytest

import dispatcher.prototype as P

from .conftest import load_golden
from .golden.repr_cases import CASES

GOLDEN = load_golden("repr_golden.json")["repr"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_as_torch(name):
    values, dtype, requires_grad = CASES[name]
    array = np.array(values, dtype=P.dtypes.to_numpy_dtype(getattr(P.dtypes.DType, dtype)))
    tensor = P.Tensor.from_numpy(array)
    if requires_grad:
        tensor.requires_grad_()
    assert repr(tensor) == GOLDEN[name]


def test_every_case_has_torchs_text():
    assert sorted(GOLDEN) == sorted(CASES)
