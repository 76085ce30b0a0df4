"""``__torch_dispatch__`` programs written as for torch, on dispatcher.prototype, against torch 2.13.

tests/golden/subclass_examples.py writes each program once (its docstring
lists them); tests/golden/generate_subclass_examples_golden.py ran them on
torch and recorded what they printed and the operators their handlers saw,
forward and backward.  Here the prototype must print the same and its
handlers see the same operators in the same order.  They run on the default
engine here and on the other one in a subprocess.
"""
from __future__ import annotations

import pytest


from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.subclass_examples import EXAMPLES, Lib, run_all

pytree = pytest.importorskip("dispatcher.pytree", reason="the examples use dispatcher.pytree, which needs optree")
GOLDEN = load_golden("subclass_examples_golden.json")["examples"]


def prototype_lib() -> Lib:
    import dispatcher.prototype as P
    from dispatcher.dispatch_modes import enable_reentrant_dispatch
    from dispatcher.ops import ops
    from dispatcher.prototype.python_dispatch import TorchDispatchMode, no_dispatch, return_and_correct_aliasing
    from dispatcher.prototype.subclassing import disabled_torch_function_impl
    from dispatcher.weak import WeakIdKeyDictionary

    return Lib(Tensor=P.Tensor, tensor=P.tensor, aten=ops.aten, tree_map=pytree.tree_map,
               TorchDispatchMode=TorchDispatchMode, no_dispatch=no_dispatch,
               return_and_correct_aliasing=return_and_correct_aliasing, WeakIdKeyDictionary=WeakIdKeyDictionary,
               grad=P.grad, disabled_torch_function_impl=disabled_torch_function_impl,
               enable_reentrant_dispatch=enable_reentrant_dispatch, float64=P.float64)


def run_examples() -> dict:
    return run_all(prototype_lib())


_RESULTS: dict = {}


def results() -> dict:
    if not _RESULTS:
        _RESULTS.update(run_examples())
    return _RESULTS


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_prints_what_torch_prints(example):
    assert results()[example]["output"] == GOLDEN[example]["output"]


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_handlers_see_torchs_operators(example):
    assert results()[example]["events"] == GOLDEN[example]["events"]


def test_examples_on_the_other_engine():
    assert run_on_other_engine("tests.test_subclass_examples", "run_examples") == {
        name: {"output": GOLDEN[name]["output"], "events": GOLDEN[name]["events"]} for name in EXAMPLES}
