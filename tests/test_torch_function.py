"""torch's __torch_function__ layer on the prototype (dispatcher/torch_function.py,
dispatcher/prototype/torch_function_methods.py) against torch 2.13.

tests/golden/torch_function_cases.py writes the cases once for either library;
tests/golden/generate_torch_function_golden.py recorded torch's answers.  The
prototype runs on the default engine here and on the other one in a subprocess.
"""
from __future__ import annotations

import threading

import pytest

import dispatcher.library as library
import dispatcher.prototype as P
from dispatcher import ops, torch_function
from dispatcher.compat import torch_C
from dispatcher.prototype.torch_function_methods import checked_function
from dispatcher.torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass, TorchFunctionMode,
                                       disabled_torch_function_impl, handle_torch_function, has_torch_function,
                                       is_tensor_like, redispatch_function)

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.torch_function_cases import CALLS, Lib, run_all

GOLDEN = load_golden("torch_function_golden.json")


def add(input, other):
    """torch.add's part in the cases: a torch.* function of tensors."""
    return input.add(other)


TORCH_ADD = checked_function(add)


def prototype_lib() -> Lib:
    """The prototype, with torch.tensor, torch.ones and torch.add as the torch shim gives them (checking)."""
    return Lib(Tensor=P.Tensor, tensor=checked_function(P.tensor), ones=checked_function(P.ones), add=TORCH_ADD,
               TorchFunctionMode=TorchFunctionMode, DisableTorchFunction=DisableTorchFunction,
               DisableTorchFunctionSubclass=DisableTorchFunctionSubclass,
               disabled_torch_function_impl=disabled_torch_function_impl, redispatch_function=redispatch_function,
               has_torch_function=has_torch_function, handle_torch_function=handle_torch_function,
               is_tensor_like=is_tensor_like, custom_op=library.custom_op)


_runs = 0


def run_cases() -> dict:
    global _runs
    _runs += 1  # each run defines its custom operator anew
    return run_all(prototype_lib(), f"h23tf_torch_function{_runs}")


@pytest.mark.parametrize("part", ["subclass_calls", "plain_subclass", "mode_calls", "mode_types_without_arguments", "subclass_and_mode", "disabling",
                                  "queries", "redispatching", "custom_operators"])
def test_as_torch(part):
    assert run_cases()[part] == GOLDEN[part]


def test_as_torch_on_the_other_engine():
    golden = {part: answers for part, answers in GOLDEN.items() if part != "meta"}
    assert run_on_other_engine("tests.test_torch_function", "run_cases") == golden


def test_the_golden_covers_every_call():
    assert set(GOLDEN["subclass_calls"]) == set(CALLS) == set(GOLDEN["plain_subclass"])


def test_plain_tensors_keep_tensors_own_methods():
    """No check on a plain tensor's path: Tensor's methods are its own unless a mode is active."""
    own = {name: vars(P.Tensor).get(name) for name in ("add", "sum", "__add__", "neg")}
    assert not any(hasattr(method, "checking") for method in own.values())
    with _Quiet():
        assert all(hasattr(vars(P.Tensor)[name], "checking") for name in own)
    assert {name: vars(P.Tensor).get(name) for name in own} == own


class _Quiet(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_a_mode_in_another_thread_sees_nothing_here():
    seen = []

    class Logging(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    entered, done = threading.Event(), threading.Event()

    def other_thread():
        with Logging():
            entered.set()
            done.wait(10)

    thread = threading.Thread(target=other_thread)
    thread.start()
    entered.wait(10)
    try:
        P.ones(2) + 1
    finally:
        done.set()
        thread.join()
    assert seen == [] and not hasattr(P.Tensor.add, "checking")


def test_torch_ops_calls_do_not_check():
    """Note [torch.ops calls]: ops calls go straight to the engine; redispatch_function calls them as they are."""
    seen = []

    class Logged(P.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    x = P.ones(2).as_subclass(Logged)
    ops.aten.neg.default(x)
    assert seen == []
    library.custom_op("h23tf_torch_function::ident", mutates_args=(), schema="(Tensor x) -> Tensor")(
        lambda x: x.clone())
    out = redispatch_function(ops.h23tf_torch_function.ident.default, (Logged,), (x,))
    assert seen == ["clone"] and type(out) is Logged  # the kernel's x.clone() was checked


def test_torch_C_names():
    assert torch_C.DisableTorchFunction is DisableTorchFunction
    assert torch_C._disabled_torch_function_impl is disabled_torch_function_impl
    assert torch_C._skip_one_hop_torch_function is redispatch_function
    mode = _Quiet()
    torch_C._push_on_torch_function_stack(mode)
    assert torch_C._len_torch_function_stack() == 1 and torch_C._is_torch_function_mode_enabled()
    assert torch_C._pop_torch_function_stack() is mode and torch_C._len_torch_function_stack() == 0
    with pytest.raises(RuntimeError, match="empty mode stack"):
        torch_C._pop_torch_function_stack()


def test_a_subclass_defining_a_method_keeps_it():
    class Own(P.Tensor):
        def sum(self, *args, **kwargs):
            return "own"

    x = P.ones(2).as_subclass(Own)
    assert x.sum() == "own" and type(x.neg()) is Own


def test_modes_are_per_thread_and_restored():
    assert torch_function.mode_stack_len() == 0
    with _Quiet() as mode:
        assert torch_function.mode_stack_len() == 1 and torch_function.is_torch_function_mode_enabled()
        with DisableTorchFunction():
            assert not torch_function.is_torch_function_mode_enabled()
        assert mode is not None
    assert torch_function.mode_stack_len() == 0
