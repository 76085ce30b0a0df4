"""torch.library's functions beyond define/impl, as torch 2.13 runs them:
register_torch_dispatch (both engines), register_vmap (the prototype's vmap),
register_autocast (the Autocast keys), get_kernel, impl_abstract, and
``tags=`` given a Tag."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatcher
import dispatcher.library as library
from dispatcher import DispatchKey as K
from dispatcher import Tag, Tensor
from dispatcher.autocast_rules import autocast
from dispatcher.dispatch_modes import TorchDispatchMode

CPU = (K.CPU, K.AutogradCPU, K.ADInplaceOrView)


@pytest.fixture
def modes(in_use, world, monkeypatch):
    yield
    assert not world.engine.dispatch_mode_stack()


@pytest.fixture
def foo(world):
    """ns::foo(Tensor x) -> str on the world's registry, returning "cpu" (its handlers and rules return strings too)."""
    with world.library("h23rules") as lib:
        lib.define("foo(Tensor x) -> str")
        lib.impl("foo", lambda x: "cpu", "CPU")
        yield lib, world.ops.h23rules.foo.default


def test_torch_dispatch_rule_for_a_mode_runs_instead_of_its_handler(world, modes, foo):
    lib, op = foo
    seen = []

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(("handler", func.name()))
            return func(*args, **(kwargs or {}))

    class SubMode(Mode):
        pass

    def rule(mode, func, types, args, kwargs):
        seen.append(("rule", type(mode).__name__, func.name(), types, kwargs))
        return "rule"

    library.register_torch_dispatch("h23rules::foo", Mode, rule, lib=lib)
    t = world.tensor(*CPU)
    assert op(t) == "cpu"
    with Mode():
        assert op(t) == "rule"
    with SubMode():  # exactly the registered type, as torch's lookup
        assert op(t) == "cpu"
    assert seen == [("rule", "Mode", "h23rules::foo", (), {}), ("handler", "h23rules::foo")]
    with pytest.raises(RuntimeError, match="already has a `__torch_dispatch__` rule registered for h23rules::foo"):
        library.register_torch_dispatch("h23rules::foo", Mode, rule, lib=lib)


def test_torch_dispatch_rule_for_a_subclass_gets_the_class(world, modes, foo):
    lib, op = foo

    class Sub(world.engine.TensorBase):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    seen = []

    @library.register_torch_dispatch("h23rules::foo", Sub, lib=lib)
    def rule(cls, func, types, args, kwargs):
        seen.append((cls, types))
        return "rule"

    t = Sub(world.keyset(*CPU))
    assert op(t) == "rule" and seen == [(Sub, (Sub,))]
    lib.close()  # the rule goes with its library
    assert not world.engine.TORCH_DISPATCH_RULES


@pytest.mark.usefixtures("prototype_fallbacks")
def test_register_vmap_runs_the_rule_under_the_prototypes_vmap():
    import dispatcher.prototype as P

    @library.custom_op("h23vmap::numpy_mul", mutates_args=())
    def numpy_mul(x: Tensor, y: Tensor) -> Tensor:
        return P.tensor(x.numpy() * y.numpy())

    calls = []

    @library.register_vmap("h23vmap::numpy_mul")
    def rule(info, in_dims, x, y):
        calls.append((info.batch_size, info.randomness, in_dims))
        unsqueeze = dispatcher.ops.aten.unsqueeze.default
        x = x.t() if in_dims[0] is not None else unsqueeze(x, -1)
        y = y.t() if in_dims[1] is not None else unsqueeze(y, -1)
        return x * y, 1  # the batch is dimension 1 of the result

    try:
        x, y = P.randn(2, 3), P.randn(3)
        result = P.vmap(numpy_mul, in_dims=(0, None))(x, y)
        np.testing.assert_allclose(result.numpy(), x.numpy() * y.numpy())
        assert calls == [(2, "error", (0, None))]
        result = P.vmap(numpy_mul)(x, x)
        np.testing.assert_allclose(result.numpy(), x.numpy() ** 2)
        assert numpy_mul(y, y).shape == (3,)  # no vmap: the rule is not called
        assert len(calls) == 2

        with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
            @numpy_mul.register_vmap
            def bad_rule(info, in_dims, x, y):
                return x
        with pytest.raises(RuntimeError, match="to have two returns, an output and out_dims"):
            P.vmap(numpy_mul)(x, x)
    finally:
        numpy_mul._destroy()


@pytest.mark.usefixtures("prototype_fallbacks")
def test_register_autocast_casts_floating_inputs_under_autocast():
    import dispatcher.prototype as P

    @library.custom_op("h23autocast::my_sin", mutates_args=())
    def my_sin(x: Tensor) -> Tensor:
        return P.tensor(np.sin(x.numpy()))

    try:
        library.register_autocast("h23autocast::my_sin", "cpu", P.float64)
        x = P.randn(3)
        assert my_sin(x).dtype == P.float32
        with autocast("cpu"):
            assert my_sin(x).dtype == P.float64  # cast on the way in
            assert my_sin(P.tensor([1, 2])).dtype == P.float64  # the kernel's own result; ints are not cast
            with autocast("cpu", enabled=False):
                assert my_sin(x).dtype == P.float32
        assert my_sin(x).dtype == P.float32
        with pytest.raises(ValueError, match="Device type 'nope' does not support autocast."):
            library.register_autocast("h23autocast::my_sin", "nope", P.float64)
    finally:
        my_sin._destroy()


def test_get_kernel_returns_the_computed_kernel(world, compat):
    lib = world.library("h23kernel")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    kernel = library.get_kernel("h23kernel::f", "CPU")
    assert repr(kernel) == f"SafeKernelFunction(debug='registered at {__file__}:{kernel_line()}')"
    t = world.tensor(*CPU)
    assert kernel.call_boxed(world.keyset(K.CPU), t) is t
    assert library.get_kernel(world.ops.h23kernel.f.default, K.CPU).debug == kernel.debug
    with pytest.raises(RuntimeError, match="operator h23rules::nope does not exist"):
        library.get_kernel("h23rules::nope", "CPU")


def kernel_line():
    import inspect

    source, start = inspect.getsourcelines(test_get_kernel_returns_the_computed_kernel)
    return start + next(i for i, line in enumerate(source) if 'lib.impl("f"' in line)


def test_impl_abstract_is_register_fake(world):
    import dispatcher.prototype as P

    @library.custom_op("h23fake::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            library.impl_abstract("h23fake::f", lambda x: P.meta_tensor(x.shape, x.dtype) if hasattr(P, "meta_tensor")
                                  else x)
        assert f._abstract_fn is not None
    finally:
        f._destroy()


def test_tags_take_a_tag_or_a_sequence():
    @library.custom_op("h23tags::f_", mutates_args=("x",), tags=Tag.inplace)
    def f_(x: Tensor) -> Tensor:
        return x

    @library.custom_op("h23tags::g", mutates_args=(), tags=[Tag.pointwise, "core"])
    def g(x: Tensor) -> Tensor:
        return x

    try:
        assert Tag.inplace in dispatcher.ops.h23tags.f_.default.tags
        assert {Tag.pointwise, Tag.core} <= set(dispatcher.ops.h23tags.g.default.tags)
        assert library.infer_schema(f_._init_fn, mutates_args={"x"}, tags=Tag.inplace) == \
            "(Tensor(a0!) x) -> Tensor(a0!)"
        with pytest.raises(TypeError, match="a tag is a dispatcher.Tag or its name"):
            library.infer_schema(f_._init_fn, mutates_args={"x"}, tags=[3])
    finally:
        f_._destroy()
        g._destroy()
