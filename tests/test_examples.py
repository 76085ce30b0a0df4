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
through the npu autograd fallback: ['aten::floor']
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


# The prototype registers kernels of aten operators too, in the same registry.
PROTOTYPE_WORKS = """
x = P.tensor([1.0, 2.0], requires_grad=True)
(x * x + 1).sum().backward()
assert x.grad.tolist() == [2.0, 4.0]
assert (P.ones(2, 3) @ P.ones(3)).tolist() == [3.0, 3.0]
assert P.zeros(2, 3, device="meta").shape == (2, 3)
with P.installed():
    assert P.vmap(lambda r: r @ P.ones(3))(P.ones(4, 3)).tolist() == [3.0] * 4
try:
    P.enable_toy_device()
except RuntimeError as exc:  # the example named PrivateUse1 "npu", once per process
    assert "already named 'npu'" in str(exc), exc
"""

RUN_EXAMPLE = """
output = io.StringIO()
with contextlib.redirect_stdout(output):
    runpy.run_path({example!r})["main"]()
sys.stdout.write(output.getvalue())
"""


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="the examples folder is not beside the tests (an installed wheel's run)")
@pytest.mark.parametrize("prototype_first", [True, False], ids=["prototype-imported-first", "example-run-first"])
def test_the_example_and_the_prototype_share_a_process(prototype_first):
    # Its kernels override the prototype's while they are registered (the
    # prototype's autograd and ADInplaceOrView kernels let its tensors through),
    # and the prototype's are back once its libraries are closed.
    import dispatcher

    example = RUN_EXAMPLE.format(example=str(EXAMPLE))
    steps = ["import dispatcher.prototype as P", example] if prototype_first else [example, "import dispatcher.prototype as P"]
    script = "\n".join(["import contextlib, io, runpy, sys", *steps, PROTOTYPE_WORKS])
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(dispatcher.__file__).parent.parent)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == EXPECTED
