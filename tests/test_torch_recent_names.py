"""Names of torch 2.13 that PyTorch's recent test files use, on both engines:
``torch.utils._python_dispatch``'s mode queries (``is_in_torch_dispatch_mode``,
``TorchDispatchMode.is_infra_mode``, ``supports_higher_order_operators``) and
traceable-wrapper tests, ``torch._C.Tag`` and ``torch._C._any_requires_grad``,
``torch._library.infer_schema.tuple_to_list``, and the dispatch-key guards
putting the thread's sets back exactly (pytorch/pytorch#178536, in 2.13).

The expected values are torch 2.13's, checked against it when written.
"""
from __future__ import annotations

import typing

import numpy as np
from typing import Optional, Tuple, Union

import pytest

from dispatcher import DispatchKey as K
from dispatcher import Tag, Tensor, custom_op
from dispatcher.compat import torch_C
from dispatcher.custom_ops import register_autograd
from dispatcher.dispatch_modes import (
    TorchDispatchMode, is_in_torch_dispatch_mode, is_traceable_wrapper_subclass, is_traceable_wrapper_subclass_type,
)
from dispatcher.schema_inference import tuple_to_list


class Watching(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class Infra(Watching):
    @classmethod
    def is_infra_mode(cls):
        return True


def test_is_in_torch_dispatch_mode_follows_with_blocks_and_infra_modes(in_use):
    assert not is_in_torch_dispatch_mode() and not is_in_torch_dispatch_mode(include_infra_modes=False)
    with Infra():
        assert is_in_torch_dispatch_mode()
        assert not is_in_torch_dispatch_mode(include_infra_modes=False)
        with Watching():
            assert is_in_torch_dispatch_mode(include_infra_modes=False)
            with Infra():
                assert is_in_torch_dispatch_mode(include_infra_modes=False)
            assert is_in_torch_dispatch_mode(include_infra_modes=False)
        assert is_in_torch_dispatch_mode() and not is_in_torch_dispatch_mode(include_infra_modes=False)
    assert not is_in_torch_dispatch_mode() and not is_in_torch_dispatch_mode(include_infra_modes=False)


def test_the_flags_are_put_back_when_a_block_raises_and_when_a_mode_is_entered_twice(in_use):
    mode = Watching()
    with pytest.raises(ValueError):
        with mode:
            raise ValueError
    assert not is_in_torch_dispatch_mode()
    with mode:
        with mode:
            assert is_in_torch_dispatch_mode()
        assert is_in_torch_dispatch_mode()
    assert not is_in_torch_dispatch_mode()
    assert TorchDispatchMode.is_infra_mode() is False
    assert TorchDispatchMode.supports_higher_order_operators is False


def test_is_traceable_wrapper_subclass(in_use, world):
    base = world.engine.TensorBase

    class Wrapper(base):
        def __tensor_flatten__(self):
            return [], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, size, stride):
            return Wrapper(world.keyset(K.CPU))

    class Plain(base):
        pass

    assert is_traceable_wrapper_subclass(Wrapper(world.keyset(K.CPU)))
    assert not is_traceable_wrapper_subclass(Plain(world.keyset(K.CPU)))
    assert not is_traceable_wrapper_subclass(base(world.keyset(K.CPU)))
    assert not is_traceable_wrapper_subclass(Wrapper)  # a type is not a tensor
    assert is_traceable_wrapper_subclass_type(Wrapper)
    assert not is_traceable_wrapper_subclass_type(Plain) and not is_traceable_wrapper_subclass_type(base)


def test_tuple_to_list_as_torch():
    assert tuple_to_list(Tuple) is list and tuple_to_list(tuple) is list
    assert tuple_to_list(Tuple[int, int, int]) == list[int] == tuple_to_list(Tuple[int])
    assert tuple_to_list(Tuple[int, ...]) == list[int]
    assert tuple_to_list(Tuple[int, Optional[int]]) == list[Optional[int]]
    assert tuple_to_list(Tuple[int, float]) == list[Union[int, float]]
    assert typing.get_args(tuple_to_list(Tuple[int, float, str])) == (Union[int, float, str],)


def test_torch_c_tag_is_the_tag_enum():
    assert torch_C.Tag is Tag and torch_C.Tag.needs_exact_strides is Tag.needs_exact_strides


def test_any_requires_grad_as_torch(compat, world):
    class Leaf(world.engine.TensorBase):
        def __init__(self, requires_grad):
            super().__init__(world.keyset(K.CPU))
            self.requires_grad = requires_grad

    grad, plain = Leaf(True), Leaf(False)
    f = compat._any_requires_grad
    # torch 2.13's answers for the same calls:
    assert f(grad) and f(plain, grad) and f([grad]) and f(plain, a=grad) and f(plain, a=[plain, grad])
    assert not f() and not f(plain) and not f(1, "x", None)
    assert not f((grad,)) and not f(plain, a=(grad,))  # tuples are not looked into
    assert not f([[grad]]) and not f([1, grad])  # nor nested lists, nor lists of anything but tensors


@pytest.mark.parametrize("key", [K.Meta, K.CUDA, K.CPU, K.AutogradCPU])
def test_guards_put_the_sets_back_exactly(compat, key):
    """pytorch/pytorch's test_exclude_dispatch_key_guard_restores_tls_exactly:
    excluding CPU sets a backend bit; leaving the guard clears it again."""
    before = compat._dispatch_tls_local_exclude_set().raw_repr()
    with compat._ExcludeDispatchKeyGuard(compat.DispatchKeySet(key)):
        compat._dispatch_tls_set_dispatch_key_excluded(K.Python, True)
    assert compat._dispatch_tls_local_exclude_set().raw_repr() == before
    included = compat._dispatch_tls_local_include_set().raw_repr()
    with compat._IncludeDispatchKeyGuard(key):
        pass
    assert compat._dispatch_tls_local_include_set().raw_repr() == included


def test_the_inplace_and_out_tag_texts_are_torchs(in_use, world):
    """torch 2.13's texts (PyTorch's recent test_custom_ops.py matches on them)."""
    with pytest.raises(ValueError, match=r"^Schema tagged with torch.Tag.inplace must return the first mutable "
                                         r"argument \(return must alias the first argument\)\. Got: "):
        custom_op("recent::bad_", mutates_args={"x"}, schema="(Tensor(a!) x) -> Tensor", tags=Tag.inplace)(lambda x: x)

    def no_positional(*, x: Tensor) -> Tensor:
        return x

    with pytest.raises(ValueError, match=r"^infer_schema\(func\): torch.Tag.inplace requires a positional Tensor argument"):
        custom_op("recent::nopos", no_positional, mutates_args={"x"}, tags=Tag.inplace)

    @custom_op("recent::warns_", mutates_args={"x"}, tags=Tag.inplace)
    def warns_(x: Tensor) -> Tensor:
        return x

    with pytest.warns(UserWarning, match=r"is unnecessary\. Custom ops tagged with torch.Tag.inplace already get an "
                                         "autogenerated fake kernel"):
        warns_.register_fake(lambda x: x)
    with world.library("recent_out") as lib:
        lib.define("o(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", tags=Tag.out)
        with pytest.raises(RuntimeError, match=r"^Cannot register autograd formula for operator tagged with "
                                               r"torch.Tag.out: recent_out.o.default\. Out variants do not support"):
            register_autograd("recent_out::o", lambda ctx, grad: grad, lib=lib)


def test_any_output_is_alias_to_input_or_output_as_torch(prototype_fallbacks):
    """torch 2.13's answers for the same calls, on prototype tensors (which live
    on the default engine; sharing is overlapping memory)."""
    import dispatcher.prototype as P

    f = torch_C._any_output_is_alias_to_input_or_output
    x = P.randn(2, 2)
    assert f((x,), {}, (x,)) and f((x,), {}, (x.t(),)) and f((), {"a": x.view(-1)}, (x.t(),))
    assert not f((x,), None, (x * 2,)) and not f((x,), {"a": x}, ()) and not f((1,), None, (2,))
    assert f(([[[x]]],), {}, (x.t(),)) and f((), {"a": [[x]]}, (x.t(),))  # lists at any depth
    assert not f((((x,),),), {}, (x.t(),)) and not f((), {"a": (x,)}, (x.t(),))  # not tuples
    assert f((x,), {}, ([[x.t()]],)) and not f((x,), {}, ((x.t(),),))
    assert f((), {}, (x, x.t())) and f((), {}, ([x, x.t()],))  # an output aliasing another
    assert not f((x.clone(),), {}, (x.clone(), x.clone()))


def test_a_kernel_got_from_the_table_is_invalidated_with_its_registration(compat, world):
    """torch 2.13: a SafeKernelFunction runs its kernel while the registration
    lasts; once the library that made it is closed, call_boxed raises."""
    cpu = compat.DispatchKeySet(K.CPU)
    t = world.tensor(K.CPU)
    with world.library("recent_kernel", "DEF") as lib:
        lib.define("f(Tensor x) -> int")
        lib.impl("f", lambda x: 7, "CompositeExplicitAutograd")
        with world.library("recent_kernel", "IMPL") as override:
            override.impl("f", lambda x: 1, "CPU")
            kernel = compat._dispatch_get_computed_kernel_for_dispatch_key("recent_kernel::f", "CPU")
            assert kernel.call_boxed(cpu, t) == 1
        with pytest.raises(RuntimeError, match=r"^SafeKernelFunction has been invalidated registered at .*"):
            kernel.call_boxed(cpu, t)
        original = compat._dispatch_get_computed_kernel_for_dispatch_key("recent_kernel::f", "CPU")
        with world.library("recent_kernel", "IMPL") as override:
            override.impl("f", lambda x: 2, "CPU")
            assert original.call_boxed(cpu, t) == 7  # overridden, still registered: still runs


def test_a_custom_ops_autograd_inputs_are_the_arguments_passed(prototype_fallbacks):
    """torch 2.13: the generated Function's inputs (and ``ctx.needs_input_grad``)
    are the arguments as passed, trailing defaults left out, while
    ``setup_context`` gets every argument; backward may return a gradient per
    argument passed, or per argument with Nones for the rest, but for an operator
    with tensor lists torch's structure check allows no extra gradient."""
    import dispatcher.prototype as P

    seen = []

    @custom_op("recent_grad::f", mutates_args=())
    def f(x: Tensor, y: Optional[Tensor] = None, scale: float = 2.0) -> Tensor:
        return x * scale

    def setup_context(ctx, inputs, output):
        seen.append(len(inputs))
        ctx.scale = inputs[2]

    def backward(ctx, grad):
        seen.append(ctx.needs_input_grad)
        return (grad * ctx.scale,) if len(seen) == 2 else (grad * ctx.scale, None, None)

    f.register_autograd(backward, setup_context=setup_context)
    for _ in range(2):
        x = P.randn(3, requires_grad=True)
        f(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))
    assert seen == [3, (True,), 3, (True,)]

    @custom_op("recent_grad::g", mutates_args=())
    def g(xs: list[Tensor], scale: float = 2.0) -> Tensor:
        return xs[0] * scale

    g.register_autograd(lambda ctx, grad: ([grad], None), setup_context=lambda ctx, inputs, output: None)
    with pytest.raises(RuntimeError, match="Expected the return from backward to be of the same structure as the inputs"):
        g([P.randn(3, requires_grad=True)]).sum().backward()


def test_the_mode_flags_are_per_thread(in_use):
    """A mode open in another thread does not count in this one, and threads
    leaving their modes in any order leave no flag set (torch keeps the flags
    as module globals, which two threads can leave set)."""
    import threading

    inside, leave_first, left_first = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with Watching():
            inside.set()
            leave_first.wait(timeout=10)
        left_first.set()

    thread = threading.Thread(target=first)
    thread.start()
    assert inside.wait(timeout=10)
    seen["other thread's mode"] = is_in_torch_dispatch_mode()
    with Watching():
        leave_first.set()
        assert left_first.wait(timeout=10)
        seen["own mode"] = is_in_torch_dispatch_mode()
    thread.join(timeout=10)
    assert seen == {"other thread's mode": False, "own mode": True}
    assert not is_in_torch_dispatch_mode()
