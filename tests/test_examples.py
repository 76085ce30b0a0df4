"""examples/privateuse1_backend.py: PyTorch's accelerator recipe, run as a script.

The example names the PrivateUse1 backend, which a process does once, so it
runs in a fresh interpreter: on each engine, and with checked calls on.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

numpy = pytest.importorskip("numpy")

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "privateuse1_backend.py"

EXPECTED = """\
PrivateUse1 is named 'npu'
empty on npu: npu [2, 3] keys DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1)
copied to npu: Tensor([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], device='npu')
views: Tensor([[-1.0, 2.0], [-3.0, 4.0], [-5.0, 6.0]], device='npu') Tensor([4.0, -5.0, 6.0], device='npu')
item: -5.0
set_ with an offset: Tensor([2.0, 4.0], device='npu')
filled: Tensor([[7.0, 7.0], [7.0, 7.0]], device='npu')
abs through the selective fallback: Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device='npu')
add without a fallback: Could not run 'aten::add.Tensor' with arguments from the 'PrivateUse1' backend
add through the global fallback: Tensor([[-2.0, 4.0, -6.0], [8.0, -10.0, 12.0]], device='npu') on npu
mul: Tensor([[2.0, 8.0, 18.0], [32.0, 50.0, 72.0]], device='npu')
custom_abs: Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device='npu')
custom_abs on meta: Tensor(size=[5, 7], device='meta')
through the npu autograd fallback: ['aten::abs']
done
"""


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="the examples folder is not beside the tests (an installed wheel's run)")
@pytest.mark.parametrize("environment", [{}, {"DISPATCHER_NO_EXTENSIONS": "1"}, {"DISPATCHER_CHECK_CALLS": "1"}],
                         ids=["default-engine", "pure-engine", "checked-calls"])
def test_the_accelerator_example_runs(environment):
    import dispatcher

    env = {**os.environ, **environment}
    # The package the tests import, wherever it is (the source tree or an installed wheel).
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(dispatcher.__file__).parent.parent), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == EXPECTED
