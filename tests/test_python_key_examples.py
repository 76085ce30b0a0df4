"""Four worked examples of the Python key, on dispatcher.prototype tensors, against torch 2.13.

tests/golden/python_key_examples.py writes the programs once, for either
library (its docstring lists the four); tests/golden/generate_python_key_golden.py
runs them on torch tensors and records what each handler saw; here they must
see the same.

The prototype's operators are torch's, with torch's derivative formulas for
these, and its backward calls the operators torch's engine calls (the
root gradient by ``ones_like``, the leaf's by ``detach``).

The examples run on the default engine here, and on the other engine in a
subprocess (``DISPATCHER_NO_EXTENSIONS=1``), since the prototype is built on
the default registry.
"""
from __future__ import annotations

from typing import Any

import pytest

from dispatcher import Library, Tensor, TensorBase, TorchDispatchMode, custom_op, ops

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.python_key_examples import Lib, examples

GOLDEN = load_golden("python_key_golden.json").get("examples", {})


def prototype_lib() -> Lib:
    """dispatcher.prototype's pieces, as the examples use them."""
    import dispatcher.prototype as P

    class PrototypeWrapperBase(TensorBase):
        """A wrapper subclass made as ``cls(elem)``, holding ``elem`` as .elem."""

        def __init__(self, elem: P.Tensor) -> None:
            super().__init__(elem.key_set)
            self.elem = elem

    def forget_data(t: P.Tensor) -> None:
        t._data = None  # a kernel that reads it fails

    return Lib(
        custom_op=custom_op,
        library=Library,
        ops=ops,
        TorchDispatchMode=TorchDispatchMode,
        TensorAnnotation=Tensor,
        Tensor=P.Tensor,
        tensor=P.tensor,
        from_numpy=P.Tensor.from_numpy,
        empty_like=lambda x: P.empty(list(x.shape), dtype=x.dtype, device=x.device),
        meta_like=lambda a: P.meta_tensor(a.shape, a.dtype),
        dtype_name=lambda t: t.dtype.name,
        device_name=lambda t: t.device.type,
        forget_data=forget_data,
        WrapperBase=PrototypeWrapperBase,
    )


def run_examples() -> dict[str, Any]:
    """The four examples on prototype tensors: what each handler saw."""
    return examples(prototype_lib())


# The examples define custom operators in the package's registry: run them once.
_RESULTS: dict[str, Any] = {}


def results() -> dict[str, Any]:
    if not _RESULTS:
        _RESULTS.update(run_examples())
    return _RESULTS


def check(example: str, ours: dict[str, Any]) -> None:
    assert ours == GOLDEN[example]


@pytest.mark.parametrize("example", ["logging_mode", "fake_tensor_mode", "wrapper_subclass", "subclass_and_mode"])
def test_example_matches_torch(example):
    check(example, results()[example])


def test_examples_on_the_other_engine():
    # The default engine ran above; a subprocess runs the other one.
    for example, ours in run_on_other_engine("tests.test_python_key_examples", "run_examples").items():
        check(example, ours)
