"""The prototype's fast paths give what its general paths give (benchmarks/training_step.py times them)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import dispatcher

pytest.importorskip("numpy")

from dispatcher.prototype import Tensor, float32, float64, int64, no_grad, tensor  # noqa: E402
from dispatcher.prototype import dtypes, shapes  # noqa: E402
from dispatcher.prototype.operators import aten  # noqa: E402
from dispatcher.prototype.tensor import cpu_tensor  # noqa: E402


@pytest.mark.parametrize("m, k, n", [(784, 1, 128), (1, 1, 1), (3, 1, 5), (0, 1, 4), (5, 0, 3), (6, 7, 2)])
@pytest.mark.parametrize("dt", [float32, float64, int64])
def test_mm_through_a_transposed_operand_is_matmuls_exactly(m, k, n, dt):
    # (k == 1: an outer product, a weight's gradient at batch 1; np.dot's BLAS path for floats)
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((k, m)) * 100).astype(dtypes.to_numpy_dtype(dt))
    b = (rng.standard_normal((k, n)) * 100).astype(dtypes.to_numpy_dtype(dt))
    out = aten.mm.default(aten.t.default(tensor(a)), tensor(b))
    assert out.shape == (m, n) and out.dtype == dt
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
    for name in (*Tensor.__slots__, *DEFAULTED):
        if name != "_version_counter":
            assert getattr(made, name) is getattr(general, name) or getattr(made, name) == getattr(general, name), name
    assert made.key_set == general.key_set and made._version_counter is not general._version_counter
    assert made._version_counter.value == 0


# What a tensor leaves at its default is a class attribute (Tensor's comment on __slots__).
DEFAULTED = {"_grad": None, "_output_nr": 0, "_base": None, "_grad_accumulator": None, "_wrapped_number": False,
             "_strides": None}


def test_a_tensor_reads_the_class_defaults_and_its_own_writes():
    a, b = cpu_tensor(np.zeros(2, np.float32), float32), tensor([1.0, 2.0])
    assert {name: getattr(a, name) for name in DEFAULTED} == DEFAULTED
    a._base, a._output_nr, a._version_counter.value = b, 1, 3
    assert (a._base, a._output_nr, a._version_counter.value) == (b, 1, 3)
    # Another tensor, and the class, keep the defaults.
    assert {name: getattr(b, name) for name in DEFAULTED} == DEFAULTED
    assert Tensor._base is None and b._version_counter.value == 0


@pytest.mark.parametrize("dtype", list(dtypes.DType))
def test_is_floating_point_is_each_dtypes_own(dtype):
    # numpy's answer for the array type behind it (float16 included)
    assert dtype.is_floating_point is bool(np.issubdtype(dtypes.NUMPY_DTYPES[dtype], np.floating))


def test_t_and_detach_of_a_cpu_tensor_are_views_of_its_memory():
    x = tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for t in (aten.t.default(x), x.t()):
        assert t.shape == (3, 2) and t.stride() == (1, 3) and np.shares_memory(t.numpy(), x.numpy())
        assert t._base is x and t._version_counter is x._version_counter
        assert np.array_equal(t.numpy(), x.numpy().T)
    d = aten.detach.default(x)
    assert d.shape == x.shape and np.shares_memory(d.numpy(), x.numpy()) and d._base is None
    assert d._version_counter is x._version_counter and not d.requires_grad
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        aten.t.default(tensor(np.zeros((1, 2, 3), np.float32)))


@pytest.mark.parametrize("divisor", [2.0, -0.5, 0.0, float("inf"), float("nan")])
def test_division_by_a_scalar_warns_of_nothing_and_gives_numpys_values(divisor):
    x = tensor(np.array([1.0, 0.0, -2.0, np.inf, np.nan], np.float32))
    with np.errstate(all="raise"):  # a floating-point error not silenced would raise here
        out = x / divisor
    with np.errstate(all="ignore"):
        expected = np.true_divide(x.numpy(), np.float32(divisor))
    assert np.array_equal(out.numpy(), expected, equal_nan=True) and out.dtype == float32


def test_a_method_call_leaves_default_arguments_out():
    calls = []

    class Log(dispatcher.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append((str(func), kwargs or {}))
            return func(*args, **(kwargs or {}))

    x, y = tensor([1.0, 2.0]), tensor([3.0, 4.0])
    with Log():
        x + y, x.add(y, alpha=2), x - y, x.sub(y, alpha=3), x.mean(), x.mean(dtype=float64)
        aten.add.Tensor(x, y, alpha=1)  # what the method passed before: a handler saw the same call
    assert calls == [("aten.add.Tensor", {}), ("aten.add.Tensor", {"alpha": 2}), ("aten.sub.Tensor", {}),
                     ("aten.sub.Tensor", {"alpha": 3}), ("aten.mean.default", {}),
                     ("aten.mean.default", {"dtype": float64}), ("aten.add.Tensor", {})]


def test_a_gradient_given_to_two_leaves_is_copied_for_each():
    # add's formula gives its incoming gradient to both inputs: torch's
    # AccumulateGrad copies a gradient something else holds.
    # (A contiguous gradient: an expanded one, of sum's, would be copied for its strides anyway.)
    a, b = tensor([1.0, 2.0], requires_grad=True), tensor([3.0, 4.0], requires_grad=True)
    (a + b).backward(tensor([1.0, 1.0]))
    assert np.array_equal(a.grad.numpy(), [1.0, 1.0]) and np.array_equal(b.grad.numpy(), [1.0, 1.0])
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    # One leaf's gradient alone is kept as it is (a detached alias of the engine's).
    c = tensor([1.0, 2.0], requires_grad=True)
    (c * 2).sum().backward()
    assert np.array_equal(c.grad.numpy(), [2.0, 2.0])


def test_a_transposed_gradient_is_copied_to_the_leafs_strides():
    w = tensor(np.ones((3, 2), np.float32), requires_grad=True)
    g = tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    w.backward(aten.t.default(g))  # a gradient with strides (1, 3), for a leaf with (2, 1)
    assert w.grad.stride() == (2, 1) and np.array_equal(w.grad.numpy(), g.numpy().T)


def test_recorded_and_unrecorded_calls_of_an_operator_agree():
    # The autograd kernel binds a call only when it records it.
    x, w = tensor([[1.0, 2.0]]), tensor([[3.0], [4.0]], requires_grad=True)
    plain = aten.mm.default(x, aten.detach.default(w))
    recorded = aten.mm.default(x, w)
    assert np.array_equal(plain.numpy(), recorded.numpy()) and plain.grad_fn is None
    assert recorded.grad_fn.name() == "MmBackward0" and recorded.requires_grad
    recorded.sum().backward()
    assert np.array_equal(w.grad.numpy(), [[1.0], [2.0]])


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


@pytest.mark.parametrize("shape", [(2, 3), (1, 4, 1), (5,), (2, 0, 3)])
def test_reduce_shape_keeping_one_dimension_is_numpys(shape):
    for dim in range(-len(shape), len(shape)):
        expected = np.sum(np.zeros(shape), axis=dim, keepdims=True).shape
        assert shapes.reduce_shape(shape, [dim], True) == expected, dim
    with pytest.raises(IndexError, match="Dimension out of range"):
        shapes.reduce_shape(shape, [len(shape)], True)


@pytest.mark.parametrize("size, message", [([4], None), ([2, 2], None), ([-1], None), ([5], "invalid"), ([-2, -2], "invalid"),
                                           ([-1, -1], "only one dimension")])
def test_view_shape_checks_what_it_does_not_infer(size, message):
    if message is None:
        assert shapes.view_shape((2, 2), size) == tuple(np.zeros((2, 2)).reshape(size).shape)
    else:
        with pytest.raises(RuntimeError, match=message):
            shapes.view_shape((2, 2), size)


NUMBERS = [2, -3, 0, 2**40, 0.1, -2.5, 1e300, float("inf"), float("nan")]


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", list(dtypes.DType))
@pytest.mark.parametrize("shape", [(3,), ()])
def test_a_number_operand_computes_as_its_wrapped_number(name, dtype, shape):
    # The binary kernels take a floating tensor and a Python number without
    # making the number's wrapped-number tensor; the result is the one that
    # tensor gives: the same dtype, the same values (a number's cast included).
    from dispatcher.prototype.tensor import wrapped_scalar_tensor

    op = getattr(aten, name).Tensor
    x = tensor(np.array([1.5, -2.0, 0.0][:shape[0]] if shape else 0.75, np.float64), dtype=dtype)
    for number in NUMBERS:
        outcomes = []
        for operand in (number, wrapped_scalar_tensor(number)):
            try:
                with np.errstate(all="ignore"):
                    out = op(x, operand)
            except RuntimeError as error:
                outcomes.append(str(error))
            else:
                outcomes.append((out.dtype, out.shape, out.numpy().tobytes()))
        assert outcomes[0] == outcomes[1], (number, outcomes)


@pytest.mark.parametrize("numpy_dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "broadcast"])
def test_threshold_backward_is_c10s_select_bit_for_bit(numpy_dtype, layout):
    # c10: self <= threshold ? 0 : grad.  A zeroed inf or NaN gradient gives +0.0,
    # a kept -0.0, inf or NaN stays as it is, a NaN self keeps its gradient.
    special = [np.inf, -np.inf, np.nan, -0.0, 0.0, -1.5, 2.5, 1e-30]
    grad = np.array([special * 2, special[::-1] * 2], numpy_dtype)
    values = np.array([[-1.0, 0.0, 1.0, np.nan] * 4, [2.0, -0.0, np.nan, -3.0] * 4], numpy_dtype)
    if layout == "transposed":
        grad, values = grad.T, np.ascontiguousarray(values.T)
    if layout == "broadcast":  # self broadcast along the rows (np.where's path)
        values = values[:1]
    out = aten.threshold_backward.default(tensor(grad), tensor(values), 0.5)
    expected = np.where(values <= 0.5, numpy_dtype(0), grad)
    assert out.numpy().dtype == expected.dtype
    integer = {2: np.int16, 4: np.int32, 8: np.int64}[expected.itemsize]
    assert np.array_equal(out.numpy().view(integer), expected.view(integer))
