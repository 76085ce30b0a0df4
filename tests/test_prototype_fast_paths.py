"""The prototype's fast paths give what its general paths give (benchmarks/training_step.py times them)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("numpy")

from dispatcher.prototype import Tensor, float32, float64, int64, no_grad, tensor  # noqa: E402
from dispatcher.prototype import dtypes, shapes  # noqa: E402
from dispatcher.prototype.operators import aten  # noqa: E402
from dispatcher.prototype.tensor import cpu_tensor  # noqa: E402


@pytest.mark.parametrize("m, n", [(784, 128), (1, 1), (3, 5), (0, 4)])
def test_an_outer_product_by_mm_is_matmuls_exactly(m, n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, m)).astype(np.float32)
    b = rng.standard_normal((1, n)).astype(np.float32)
    out = aten.mm.default(aten.t.default(tensor(a)), tensor(b))
    assert out.shape == (m, n) and out.dtype == float32
    expected = np.matmul(a.T, b)
    assert np.array_equal(out.numpy(), expected)
    assert out.stride() == tuple(step // expected.itemsize for step in expected.strides)


SHAPES = [(2, 3), (1, 6), (6, 1), (2, 1, 3), (1, 1), (3, 1, 1, 2)]


@pytest.mark.parametrize("shape, size", [(s, t) for s in SHAPES for t in SHAPES if np.prod(s) == np.prod(t)]
                         + [((2, 3), (-1,)), ((2, 3), (3, -1))])
def test_a_view_of_a_contiguous_tensor_has_computeStrides_strides(shape, size):
    t = tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    v = aten.view.default(t, list(size))
    expected_shape = shapes.view_shape(shape, size)
    assert v.shape == expected_shape
    assert v.stride() == shapes.compute_stride(t.shape, t.stride(), expected_shape)
    assert np.shares_memory(v.numpy(), t.numpy())
    assert v._base is t and v._version_counter is t._version_counter


def test_a_view_of_a_read_only_tensor_stays_read_only():
    t = tensor(np.ones((2, 3), np.float32))
    t._data.flags.writeable = False
    assert not aten.view.default(t, [6])._data.flags.writeable


def test_result_types_fast_path_answers_as_the_three_tiers_do():
    operands = [tensor([1.0, 2.0]), tensor([1, 2]), tensor(True), tensor(2.5, dtype=float64), tensor([1.0], dtype=float64),
                tensor(3)]
    wrapped = tensor(2.0)
    wrapped._wrapped_number = True
    operands.append(wrapped)
    for a, b in itertools.product(operands, repeat=2):
        # The general path, through a third operand that changes nothing: a repeat of one of the two.
        assert dtypes.result_type(a, b) == dtypes.result_type(a, b, a), (a, b)


def test_cpu_tensor_is_from_numpys_tensor():
    array = np.arange(6, dtype=np.int64).reshape(2, 3)
    made, general = cpu_tensor(array, int64), Tensor(array, array.shape, int64, "cpu")
    for slot in Tensor.__slots__:
        if slot != "_version_counter":
            assert getattr(made, slot) is getattr(general, slot) or getattr(made, slot) == getattr(general, slot), slot
    assert made.key_set == general.key_set and made._version_counter is not general._version_counter


@pytest.mark.parametrize("dim, keepdim", [([0], True), ([0], False), ([1], True), ([0, 1], False), ([], False)])
def test_sum_over_dimensions_is_numpys_sum(dim, keepdim):
    array = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    with no_grad():
        out = aten.sum.dim_IntList(tensor(array), dim, keepdim)
    assert np.array_equal(out.numpy(), np.sum(array, axis=tuple(dim) or None, keepdims=keepdim))
    assert out.dtype == float32


def test_broadcast_shapes_is_numpys_and_blames_the_last_mismatch_as_torch():
    all_shapes = [s for n in range(4) for s in itertools.product([0, 1, 2, 3], repeat=n)]
    for a, b in itertools.product(all_shapes, repeat=2):
        try:
            expected = np.broadcast_shapes(a, b)
        except ValueError:
            n = max(len(a), len(b))
            pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
            dim = max(d for d in range(n) if pa[d] != pb[d] and 1 not in (pa[d], pb[d]))
            with pytest.raises(RuntimeError, match=rf"^The size of tensor a \({pa[dim]}\) must match the size of tensor b "
                                                   rf"\({pb[dim]}\) at non-singleton dimension {dim}$"):
                shapes.broadcast_shapes(a, b)
        else:
            assert shapes.broadcast_shapes(a, b) == expected
