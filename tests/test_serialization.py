"""torch.save / torch.load (dispatcher.prototype.serialization) and storage
identity (StorageWeakRef) as torch 2.13's: the same code
(tests/golden/serialization_cases.py) through tests/torch_shim.py, against what
torch gave (serialization_golden.json), on this process's engine and, in a
subprocess, on the other."""
import io
from typing import Any

import pytest

from dispatcher.prototype import Tensor, randperm, serialization

from .conftest import load_golden
from .golden_suite import golden_case_tests
from .golden.serialization_cases import run
from .torch_shim import installed
from .torch_test_modules import modules

GOLDEN = load_golden("serialization_golden.json")["cases"]


def run_cases() -> dict[str, Any]:
    found = modules()
    with installed() as torch:
        # torch.Tensor is the prototype's, as for PyTorch's test files (tests/torch_test_modules.py).
        torch.Tensor = found["torch"].Tensor
        return run(torch, found["torch.multiprocessing.reductions"], found["torch.utils._python_dispatch"])


ours, test_every_case_ran, test_as_torch, test_as_torch_on_the_other_engine = golden_case_tests(
    "tests.test_serialization", run_cases, GOLDEN, count=24)


class Kept(Tensor):
    """A subclass a test allows with add_safe_globals (pickle needs it at module level)."""


def test_add_safe_globals_allows_a_class_until_cleared():
    kept = Tensor._make_subclass(Kept, randperm(3))
    f = io.BytesIO()
    serialization.save(kept, f)
    serialization.add_safe_globals([Kept])
    try:
        assert serialization.get_safe_globals() == [Kept]
        f.seek(0)
        assert type(serialization.load(f)) is Kept
    finally:
        serialization.clear_safe_globals()
    f.seek(0)
    with pytest.raises(Exception, match="Unsupported global"):
        serialization.load(f)
    with pytest.raises(TypeError, match="list of classes"):
        serialization.add_safe_globals(Kept)
