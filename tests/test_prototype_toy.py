"""dispatcher.prototype: the "toy" device on PrivateUse1 and its CPU fallback; rename_privateuse1_backend."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dispatcher
from dispatcher import BackendComponent
from dispatcher.backends import backend_component, device_type, get_privateuse1_backend_name
import dispatcher.prototype as P
from dispatcher.prototype import float64, gradcheck, use_cpu_fallback


# See the prototype_fallbacks fixture in conftest.py.
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


@pytest.fixture
def restore_fallback():
    yield
    use_cpu_fallback()


def toy(values, **kwargs):
    return P.tensor(values, device="toy", **kwargs)


def test_privateuse1_is_named_toy():
    assert get_privateuse1_backend_name() == "toy"
    assert backend_component("toy") == backend_component("toy:0") == BackendComponent.PrivateUse1Bit
    assert device_type(BackendComponent.PrivateUse1Bit) == "toy"
    dispatcher.rename_privateuse1_backend("toy")  # the same name again is allowed
    with pytest.raises(RuntimeError, match="the PrivateUse1 backend is already named 'toy'"):
        dispatcher.rename_privateuse1_backend("other")


def test_rename_privateuse1_backend_in_a_fresh_process():
    script = textwrap.dedent("""
        import dispatcher
        from dispatcher.backends import backend_component, get_privateuse1_backend_name
        assert get_privateuse1_backend_name() == "privateuseone"
        assert backend_component("privateuseone").name == "PrivateUse1Bit"
        for bad, error in (("cuda", RuntimeError), ("meta", RuntimeError), ("my device", ValueError), ("npu2", ValueError),
                           (3, TypeError)):
            try:
                dispatcher.rename_privateuse1_backend(bad)
            except error as exc:
                print(type(exc).__name__, exc)
            else:
                raise AssertionError(bad)
        dispatcher.rename_privateuse1_backend("npu")
        assert backend_component("npu").name == "PrivateUse1Bit"
        assert backend_component("privateuseone").name == "PrivateUse1Bit"  # its own name still parses, as in c10
        try:
            backend_component("nope")
        except RuntimeError as exc:  # a DispatcherValueError: a ValueError and, as torch's, a RuntimeError
            print("RuntimeError", exc)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "RuntimeError Cannot register privateuse1 backend with in-tree device name: cuda",
        "RuntimeError Cannot register privateuse1 backend with in-tree device name: meta",
        "DispatcherValueError a backend name must be ASCII letters and underscores (what a device string's type may be), "
        "got 'my device'",
        "DispatcherValueError a backend name must be ASCII letters and underscores (what a device string's type may be), "
        "got 'npu2'",
        "TypeError a backend name must be a str, got int",
        "RuntimeError Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
        "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: nope",
    ]


def test_toy_memory_is_opaque_bytes():
    t = toy([1.0, 2.0])
    assert isinstance(t._data, bytearray) and len(t._data) == 8
    assert t.numpy().tolist() == [1.0, 2.0]


@pytest.mark.filterwarnings("ignore:The operator aten.* appears to be a view operator")  # copies, on toy
@pytest.mark.parametrize("fn", [
    lambda a, b: a + b,
    lambda a, b: (a * b).exp().sum(),
    lambda a, b: a @ b.t(),
    lambda a, b: (a / b).log().mean(),
    lambda a, b: a.relu() - 1,
    lambda a, b: a.sum(0, keepdim=True),
    lambda a, b: P.stack([a, b]),
    lambda a, b: a.clone().add_(b.reciprocal()),
    lambda a, b: (a @ b.select(0, 1), a.select(0, 0) @ b.select(0, 1), b.select(1, 0) @ a),
    lambda a, b: a.gt(0.5),
])
def test_operators_on_toy_match_cpu_and_stay_on_toy(fn):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.1, 2, (2, 3)), rng.uniform(0.1, 2, (2, 3))
    on_cpu = fn(P.tensor(a), P.tensor(b))
    on_toy = fn(toy(a), toy(b))
    for t, c in zip(on_toy if isinstance(on_toy, tuple) else [on_toy], on_cpu if isinstance(on_cpu, tuple) else [on_cpu]):
        assert t.device.type == "toy" and isinstance(t._data, bytearray)
        assert t.dtype == c.dtype
        np.testing.assert_array_equal(t.numpy(), c.numpy())


def test_the_devices_own_kernels_are_registered_with_the_device():
    # Allocation and copies are PrivateUse1's kernels of aten operators, registered by
    # enable_toy_device() (test_prototype_opt_in.py checks that importing the prototype does not).
    registry = dispatcher.registry.default_registry
    own = [name for name in registry.registrations_for_dispatch_key(dispatcher.DispatchKey.PrivateUse1)
           if "toy_device.py" in registry.find_op(name).kernel_for(dispatcher.DispatchKey.PrivateUse1).debug]
    assert own == ["aten::_copy_from", "aten::empty.memory_format"]


def test_the_device_has_only_allocation_and_copy_kernels(restore_fallback):
    use_cpu_fallback([])  # no fallback at all
    t = P.tensor([1.0, 2.0]).to("toy")  # _to_copy's composite: empty + copy_, whose composite calls _copy_from
    assert t.to("cpu").tolist() == [1.0, 2.0]
    assert P.empty(3, device="toy").shape == (3,)
    assert t.clone().tolist() == [1.0, 2.0]  # composites made of those two serve toy too
    column = dispatcher.ops.aten.unsqueeze.default(t, 1)
    assert column.shape == (2, 1) and column._data is t._data  # a view of toy memory, no copy
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments from the 'PrivateUse1' backend"):
        t.exp()
    with pytest.raises(NotImplementedError, match="Could not run 'aten::fill_.Scalar'"):
        P.zeros(2, device="toy")  # zeros is empty + fill_


def test_selective_fallback(restore_fallback):
    use_cpu_fallback(["aten::add.Tensor", "fill_.Scalar"])
    t = P.zeros(2, device="toy")
    assert (t + P.ones(2, device="toy")).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="Could not run 'aten::mul.Tensor'"):
        t * t
    with pytest.raises(ValueError):
        use_cpu_fallback(["aten::add.Tensor", "aten::not an operator name"])
    with pytest.raises(NotImplementedError):  # all or nothing: no fallback is left
        t + t
    use_cpu_fallback()
    assert (t * t).tolist() == [0.0, 0.0]


def test_fallback_writes_in_place_results_back():
    t = toy([1.0, 2.0])
    same = t.add_(toy([10.0, 20.0]), alpha=2)
    assert same is t and t.tolist() == [21.0, 42.0]
    assert t._version == 1  # bumped once, by ADInplaceOrView; the fallback's own copies are below it


def test_view_operators_fall_back_as_copies_with_a_warning():
    t = toy([[1.0, 2.0], [3.0, 4.0]])
    with pytest.warns(UserWarning, match="aten::permute appears to be a view operator.*returns a copy"):
        transposed = t.t()
    assert transposed.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    transposed.add_(toy([[1.0, 1.0], [1.0, 1.0]]))
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]  # unlike a CPU view, the base did not change


def test_mixing_devices():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, toy and cpu!"):
        toy([1.0, 2.0]) + P.tensor([1.0, 2.0])
    assert (toy([1.0, 2.0]) * P.tensor(3.0)).tolist() == [3.0, 6.0]  # a 0-d CPU tensor may join
    cpu = P.zeros(2)
    cpu.copy_(toy([5.0, 6.0]))  # copies across devices are the toy kernel's job
    assert cpu.tolist() == [5.0, 6.0]
    assert P.zeros(2, device="meta").copy_(toy([1.0, 2.0])).device.type == "meta"


@pytest.mark.filterwarnings("ignore:The operator aten..expand appears to be a view operator")
def test_autograd_on_toy():
    a = toy(np.random.default_rng(0).uniform(0.5, 2, (2, 3)), dtype=float64, requires_grad=True)
    b = toy(np.random.default_rng(1).uniform(0.5, 2, (3,)), dtype=float64, requires_grad=True)
    assert gradcheck(lambda a, b: (a * b).exp() / b, [a, b])
    assert a.grad.device.type == "toy" and b.grad.device.type == "toy"


def test_cpu_fallback_follows_the_schema():
    # The fallback learns everything from the schema: a kwarg-only argument
    # (alpha), a list of tensors (stack), a mutable argument (add_).
    t = toy([1.0, 2.0])
    assert t.add(t, alpha=3).tolist() == [4.0, 8.0]
    assert P.stack([t, t], 1).tolist() == [[1.0, 1.0], [2.0, 2.0]]
