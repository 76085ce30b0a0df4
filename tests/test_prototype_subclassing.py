"""Tensor subclasses on dispatcher.prototype: _make_wrapper_subclass, _make_subclass, super() and no_dispatch.

The behaviour of whole programs is compared with torch's in
test_subclass_examples.py; here each piece, its errors, and the thread's
excluded keys inside the default handler and no_dispatch() against torch's
(tests/golden/subclass_examples_golden.json, "excluded").
"""
from __future__ import annotations

import pytest

import dispatcher
import dispatcher.prototype as P
from dispatcher import DispatchKey, disabled_torch_dispatch_impl, ops
from dispatcher.prototype import Tensor
from dispatcher.prototype.python_dispatch import is_traceable_wrapper_subclass, no_dispatch, return_and_correct_aliasing
from dispatcher.prototype.subclassing import disabled_torch_function_impl

from .conftest import load_golden

EXCLUDED = load_golden("subclass_examples_golden.json")["excluded"]
aten = ops.aten


class Wrapper(Tensor):
    @staticmethod
    def __new__(cls, elem, **options):
        r = Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device, **options)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrapped = [a.elem if isinstance(a, Wrapper) else a for a in args]
        out = func(*unwrapped, **(kwargs or {}))
        return Wrapper(out) if isinstance(out, Tensor) else out


def test_a_wrapper_has_the_metadata_it_was_given_and_no_data():
    w = Tensor._make_wrapper_subclass(Wrapper, (2, 3), strides=(1, 2), dtype="float64", device="meta",
                                      requires_grad=True)
    assert type(w) is Wrapper and w.shape == (2, 3) and w.stride() == (1, 2) and not w.is_contiguous()
    assert (w.dtype, w.device.type, w.requires_grad, w.is_leaf, w.grad_fn) == (P.float64, "meta", True, True, None)
    assert w.key_set.has(DispatchKey.Python) and w.key_set.has(DispatchKey.AutogradMeta)
    plain = Tensor._make_wrapper_subclass(Wrapper, [4])
    assert (plain.dtype, plain.device.type, plain.stride(), plain.is_contiguous()) == (P.float32, "cpu", (1,), True)
    with pytest.raises(RuntimeError, match="a wrapper subclass has no data"):
        repr(plain)
    # As torch: the values of a tensor whose handler answers its operators are not numpy's or a list's.
    with pytest.raises(RuntimeError, match=r"^\.numpy\(\) is not supported for tensor subclasses\.$"):
        plain.numpy()
    with pytest.raises(RuntimeError, match=r"^\.tolist\(\) is not supported for tensor subclasses, got Wrapper$"):
        plain.tolist()


def test_plain_tensors_carry_no_python_key_and_subclasses_with_a_handler_do():
    assert not P.ones(1).key_set.has(DispatchKey.Python)
    assert Tensor.__torch_dispatch__ is disabled_torch_dispatch_impl
    assert Wrapper(P.ones(1)).key_set.has(DispatchKey.Python)


def test_make_wrapper_subclass_refuses_what_it_cannot_make():
    class NoHandler(Tensor):
        pass

    with pytest.raises(TypeError, match="NoHandler must define __torch_dispatch__"):
        Tensor._make_wrapper_subclass(NoHandler, (1,))
    with pytest.raises(TypeError, match="cls must be a subclass of dispatcher.prototype.Tensor"):
        Tensor._make_wrapper_subclass(int, (1,))
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        Tensor._make_wrapper_subclass(Wrapper, 3)
    with pytest.raises(TypeError, match=r"size must be a sequence of ints, got \[2.0\]"):
        Tensor._make_wrapper_subclass(Wrapper, [2.0])
    with pytest.raises(RuntimeError, match="1 sizes but 2 strides"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), strides=(1, 1))
    with pytest.raises(ValueError, match="Unknown sizes_strides_policy: bogus; expected 'strides' or 'sizes'"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), dispatch_sizes_strides_policy="bogus")
    with pytest.raises(NotImplementedError, match="storage_size is not supported"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), storage_size=4)
    with pytest.raises(RuntimeError, match="storage_offset must be a non-negative int, got -1"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), storage_offset=-1)
    with pytest.raises(TypeError, match="_extra_dispatch_keys must be a DispatchKeySet, not str"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), _extra_dispatch_keys="NestedTensor")
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), colour=1)
    with pytest.raises(ValueError, match="unknown dtype 'bfloat8'"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), dtype="bfloat8")


def test_autograd_records_the_wrapper_not_its_inner_tensor():
    inner = P.tensor([1.0, 2.0], requires_grad=True)
    w = Wrapper(inner, requires_grad=True)
    loss = (w * w).sum()
    assert type(loss) is Wrapper and loss.grad_fn.name() == "SumBackward0"
    assert loss.elem.grad_fn is None  # the handler ran below autograd
    loss.backward()
    assert type(w.grad) is Wrapper and w.grad.elem.tolist() == [2.0, 4.0] and inner.grad is None


def test_make_subclass_shares_memory_and_version_without_history():
    base = P.tensor([1.0, 2.0], requires_grad=True) * 1
    sub = Tensor._make_subclass(Wrapper, base, True)
    assert type(sub) is Wrapper and sub.is_leaf and sub.requires_grad and sub._data is base._data
    base._version_counter.value += 1
    assert sub._version == 1
    with pytest.raises(TypeError, match="data must be a Tensor"):
        Tensor._make_subclass(Wrapper, [1.0])


def test_super_reaches_the_default_handler_which_runs_below_python(exclude_set_restored):
    seen = {}

    class Sub(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return super().__torch_dispatch__(func, types, args, kwargs)

    def kernel(x):
        seen["excluded"] = dispatcher.tls_local_exclude_set().raw_repr()
        return x

    with dispatcher.Library("subtest", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", kernel, "CPU")
        x = Tensor._make_subclass(Sub, P.ones(1))
        assert ops.subtest.f.default(x) is x
    assert seen["excluded"] == EXCLUDED["default_torch_dispatch"]


@pytest.fixture
def exclude_set_restored():
    # As c10's guards, no_dispatch() leaves backend bits behind in the
    # excluded set (Note [Removing keys keeps the backend bits]): put the set back.
    saved = dispatcher.tls_local_exclude_set()
    yield saved
    dispatcher.tls_set_local_exclude_set(saved)


def test_default_handler_and_no_dispatch_exclude_torchs_keys(exclude_set_restored):
    outside = exclude_set_restored
    assert outside.raw_repr() == EXCLUDED["outside"]
    inside = disabled_torch_dispatch_impl(lambda: dispatcher.tls_local_exclude_set().raw_repr(), (), (), {})
    assert inside == EXCLUDED["default_torch_dispatch"]
    assert dispatcher.tls_local_exclude_set() == outside
    with no_dispatch():
        assert dispatcher.tls_local_exclude_set().raw_repr() == EXCLUDED["no_dispatch"]
    assert repr(dispatcher.tls_local_exclude_set() - outside) == "DispatchKeySet()"
    with pytest.raises(TypeError, match="expected a tuple or list of arguments"):
        disabled_torch_dispatch_impl(print, (), 3, {})


def test_default_torch_function_keeps_the_subclass():
    class Keeps(Tensor):
        pass

    x = Tensor._make_subclass(Keeps, P.tensor([1.0, -2.0]))
    out = Keeps.__torch_function__(aten.neg.default, (Keeps,), (x,))
    assert type(out) is Keeps and out._values().tolist() == [-1.0, 2.0]
    assert Keeps.__torch_function__(aten.neg.default, (int,), (x,)) is NotImplemented
    assert disabled_torch_function_impl(aten.neg.default, (), (x,))._values().tolist() == [-1.0, 2.0]


def test_a_torch_dispatch_subclass_has_its_torch_function_disabled():
    """torch's metaclass: __torch_dispatch__ with Tensor's default __torch_function__ disables the latter."""
    class Answers(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return super().__torch_dispatch__(func, types, args, kwargs)

    assert Answers.__torch_function__ is disabled_torch_function_impl
    x = Tensor._make_subclass(Answers, P.tensor([1.0, -2.0]))
    assert type(x + 1) is Tensor and type(Answers.__torch_function__(aten.neg.default, (Answers,), (x,))) is Tensor


def test_return_and_correct_aliasing_and_traceable_subclasses():
    x = Tensor._make_subclass(Wrapper, P.tensor([[1.0, 2.0], [3.0, 4.0]]))
    view = Wrapper(P.tensor([1.0, 2.0, 3.0, 4.0]))
    out = return_and_correct_aliasing(aten.view.default, (x, [4]), {}, view)
    assert out is view and view._base is x and view._version_counter is x._version_counter
    written = return_and_correct_aliasing(aten.add_.Tensor, (x, P.ones(1)), {}, Wrapper(P.ones(1)))
    assert written is x
    fresh = Wrapper(P.ones(1))
    assert return_and_correct_aliasing(aten.add.Tensor, (x, x), {}, fresh) is fresh

    class Flattenable(Wrapper):
        def __tensor_flatten__(self):
            return ["elem"], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
            return Flattenable(inner["elem"])

    assert is_traceable_wrapper_subclass(Flattenable(P.ones(1)))
    assert not is_traceable_wrapper_subclass(Wrapper(P.ones(1))) and not is_traceable_wrapper_subclass(P.ones(1))


def test_autograd_grad_returns_gradients_without_accumulating():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    y = P.tensor([3.0, 4.0], requires_grad=True)
    z = (x * y).sum()
    gx, gy = P.grad(z, [x, y], retain_graph=True)
    assert gx.tolist() == [3.0, 4.0] and gy.tolist() == [1.0, 2.0] and x.grad is None
    (only,) = P.grad(z, x, grad_outputs=P.tensor(2.0))
    assert only.tolist() == [6.0, 8.0]
    unused = P.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        P.grad((x * 2).sum(), [unused])
    assert P.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None
    (plain,) = P.grad((x * 2).sum(), [x])
    assert plain.grad_fn is None and not plain.requires_grad  # without create_graph: not differentiable
    with pytest.raises(RuntimeError, match="does not require grad"):
        P.grad((x * 2).sum(), [P.ones(1)])


def test_relu_backward_is_torchs_threshold_backward_and_differentiable():
    # torch 2.13: threshold_backward(ones, [-1, 0, 2], 0) is [0, 0, 1], node
    # ThresholdBackwardBackward0; its gradients are itself (grad_output) and zeros (self).
    g = P.ones(3, requires_grad=True)
    s = P.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    r = aten.threshold_backward.default(g, s, 0)
    assert r.tolist() == [0.0, 0.0, 1.0] and r.grad_fn.name() == "ThresholdBackwardBackward0"
    r.sum().backward()
    assert g.grad.tolist() == [0.0, 0.0, 1.0] and s.grad.tolist() == [0.0, 0.0, 0.0]


def test_a_subclass_of_a_subclass_inherits_its_init():
    # torch: Python calls the nearest __init__ (TwoTensor's for a subclass of
    # TwoTensor); only a direct subclass without one gets torch.Tensor's.
    class Pair(Tensor):
        @staticmethod
        def __new__(cls, a, b):
            return Tensor._make_wrapper_subclass(cls, a.shape, dtype=a.dtype)

        def __init__(self, a, b):
            self.a, self.b = a, b

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class MyPair(Pair):
        pass

    a, b = P.ones(2), P.zeros(2)
    pair = MyPair(a, b)
    assert pair.a is a and pair.b is b
    assert type(pair).__init__ is Pair.__init__
    assert not P.ones(1)._is_view() and P.ones(3)[1:]._is_view()


def test_a_reentrant_call_snapshots_the_keys_its_block_set():
    """Inside ``enable_reentrant_dispatch()`` the snapshot is cleared, so a
    call made in the block takes its own (finding 17): that call's handler,
    entering the same block, gets the keys the outer block included, not those
    of the outermost call.  torch 2.13's answer to the same program (each
    handler records, inside ``enable_reentrant_dispatch()``, whether
    FuncTorchVmapMode is included; neg's calls abs under
    ``torch._C._IncludeDispatchKeyGuard(DispatchKey.FuncTorchVmapMode)``):
    {'neg.default': False, 'abs.default': True}."""
    from dispatcher.compat import torch_C
    from dispatcher.dispatch_modes import enable_reentrant_dispatch

    included = {}

    class Reentrant(Tensor):
        @staticmethod
        def __new__(cls, elem):
            return Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            with enable_reentrant_dispatch():
                included[func.__name__] = torch_C._dispatch_tls_is_dispatch_key_included(DispatchKey.FuncTorchVmapMode)
                if func is aten.neg.default:
                    with torch_C._IncludeDispatchKeyGuard(DispatchKey.FuncTorchVmapMode):
                        aten.abs.default(args[0])
            return Reentrant(P.zeros(2))

    aten.neg.default(Reentrant(P.ones(2)))
    assert included == {"neg.default": False, "abs.default": True}
