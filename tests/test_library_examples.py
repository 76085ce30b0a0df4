"""torch.library's documented examples run with ``import torch`` giving this
package (tests/torch_shim.py) and print and raise what torch 2.13 does
(tests/golden/library_examples_golden.json, numbers masked).

The examples are PyTorch's code and not in this repository: they are read
from a copy of torch 2.13's ``torch/library.py`` at
``$DISPATCHER_UPSTREAM/torch_library.py`` (default: tests/upstream/), and the
test skips without one.  tests/golden/library_examples.py says which
examples run and how.
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from .conftest import load_golden
from .golden.library_examples import EXAMPLES, examples

ROOT = pathlib.Path(__file__).parent.parent
UPSTREAM = pathlib.Path(os.environ.get("DISPATCHER_UPSTREAM") or ROOT / "tests" / "upstream")
SOURCE = UPSTREAM / "torch_library.py"
GOLDEN = load_golden("library_examples_golden.json")["examples"]



def run_here(code, pure_engine):
    env = {k: v for k, v in os.environ.items() if k != "DISPATCHER_NO_EXTENSIONS"}
    if pure_engine:
        env["DISPATCHER_NO_EXTENSIONS"] = "1"
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "golden" / "library_examples.py"), "--shim", str(ROOT)],
                          input=code, text=True, capture_output=True, check=True, cwd=ROOT, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not SOURCE.is_file(), reason=f"no copy of torch 2.13's torch/library.py at {SOURCE}")
@pytest.mark.parametrize("pure_engine", [False, True], ids=["default engine", "pure engine"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_documented_example_runs_as_on_torch(name, pure_engine):
    assert run_here(examples(SOURCE.read_text())[name], pure_engine) == GOLDEN[name]


def test_every_example_has_torchs_answer():
    assert sorted(GOLDEN) == sorted(EXAMPLES)
