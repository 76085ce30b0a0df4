"""benchmarks/training_step.py: its sides compute the same training step, and it prints its rows."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import pytest

pytest.importorskip("numpy")

_PATH = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "training_step.py"


@pytest.fixture(scope="module")
def training_step():
    spec = importlib.util.spec_from_file_location("training_step", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("sizes", [(784, 128, 10), (784, 256, 128, 10)])
@pytest.mark.parametrize("batch", [1, 64])
def test_the_prototype_and_the_numpy_limit_take_the_same_steps(training_step, sizes, batch):
    sides = {"prototype": training_step.prototype_step(sizes, batch), "numpy": training_step.numpy_step(sizes, batch)}
    differences = training_step.check_losses(sides, steps=4)
    assert differences["prototype"] == 0
    assert differences["numpy"] < 1e-5  # float32 rounding: the same operations, summed in other orders


def test_the_rows_have_every_side_and_the_ratios(training_step, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "torch", None)  # the rows without torch, wherever it is installed
    rows = training_step.run(rounds=2, steps=1, shapes=[(784, 128, 10)], batches=[1])
    assert len(rows[0]["samples"]["prototype"]) == 2 and set(rows[0]["samples"]) == {"prototype", "numpy"}
    table = training_step.format_rows(rows)
    assert table.splitlines()[0].startswith("| MLP | batch | prototype (µs) | numpy limit (µs) | prototype / numpy |")
    assert "| 784-128-10 | 1 |" in table


@pytest.mark.parametrize("side", ["prototype", "numpy"])
def test_the_instruction_counts_set_up_runs_a_step(side, monkeypatch):
    # benchmarks/instruction_counts.py --training-step runs this set-up under callgrind; here without it
    # (the set-up's changes to sys.path and the environment are undone after).
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    spec = importlib.util.spec_from_file_location("instruction_counts", _PATH.parent / "instruction_counts.py")
    assert spec is not None and spec.loader is not None
    counts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(counts)
    namespace: dict = {}
    exec(counts.training_step_setup(side, (784, 128, 10), 1), namespace)
    loss = namespace["step"]()
    assert isinstance(loss, float) and loss > 0
