"""``import torch`` in a Python that a PyTorch test file run through
tests/torch_shim.py starts (its subprocesses): tests/torch_test_files.py puts
this directory on PYTHONPATH for the duration of such a run only, and this
module makes ``torch`` the shim's, with the prototype's backend fallbacks
installed, as the parent process has them."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))  # the repository, for tests.torch_shim

import dispatcher.prototype  # noqa: E402
from tests.torch_shim import torch_module  # noqa: E402

dispatcher.prototype.install()
sys.modules.update(torch_module())  # ``import torch`` gives sys.modules["torch"], now the shim's
