"""The cost of a call through the dispatcher, next to a direct call of the kernel.

``benchmarks/compare.py`` reports the same things as ratios in one process;
these are the pytest-benchmark versions, for history and regressions.
"""
import pytest

from dispatcher import DispatchKey as K
from dispatcher import DispatchKeySet, Library, TensorBase, ops
from dispatcher.ivalue import box_returns, unbox_arguments


def kernel2(x, y):
    return x


@pytest.fixture(scope="module")
def bench_ops():
    lib = Library("benchcall", "DEF")
    lib.define("add(Tensor x, Tensor y) -> Tensor")
    lib.define("add10(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e, Tensor f, Tensor g, Tensor h, Tensor i, Tensor j) -> Tensor")
    lib.define("boxed(Tensor x, Tensor y) -> Tensor")
    lib.impl("add", kernel2, "CPU")
    lib.impl("add10", lambda a, b, c, d, e, f, g, h, i, j: a, "CPU")

    def fallback(op, keyset, stack):
        x, y = unbox_arguments(op.schema, stack)
        box_returns(op.schema, x, stack)

    lib.impl("boxed", fallback, "CPU", boxed=True)
    yield ops.benchcall
    lib.close()


@pytest.fixture(scope="module")
def t():
    return TensorBase(DispatchKeySet([K.CPU, K.ADInplaceOrView, K.AutogradCPU]))


def test_direct_call(benchmark, t):
    benchmark(kernel2, t, t)


def test_dispatched_call_two_tensors(benchmark, bench_ops, t):
    op = bench_ops.add.default
    assert benchmark(op, t, t) is t


def test_dispatched_call_ten_tensors(benchmark, bench_ops, t):
    op = bench_ops.add10.default
    assert benchmark(op, t, t, t, t, t, t, t, t, t, t) is t


def test_dispatched_call_kwargs(benchmark, bench_ops, t):
    op = bench_ops.add.default
    assert benchmark(lambda: op(t, y=t)) is t


def test_boxed_kernel_call(benchmark, bench_ops, t):
    op = bench_ops.boxed.default
    assert benchmark(op, t, t) is t
