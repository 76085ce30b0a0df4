"""Public subclass_zoo examples run as they are, but for their imports.

PORTED maps each example file of albanD/subclass_zoo (read from a copy
outside the repository: ``SUBCLASS_ZOO``, default /work/upstream/subclass_zoo)
to the import lines that port it to dispatcher.prototype.
run_example runs a file's text with those replacements (none for torch)
and returns what it printed and the exception it ended with.
docs/subclass_zoo.md says which examples are ported and why the others are not.
"""
from __future__ import annotations

import contextlib
import io
import os
import pathlib
from typing import Optional

PORTED: dict[str, dict[str, str]] = {
    "nan_detect.py": {
        "import torch\n": "import dispatcher.prototype as torch\n",
        "from torch.utils._python_dispatch import TorchDispatchMode\n":
            "from dispatcher.prototype.python_dispatch import TorchDispatchMode\n",
        "from torch.utils._pytree import tree_flatten\n": "from dispatcher.pytree import tree_flatten\n",
    },
}


def zoo_directory() -> Optional[pathlib.Path]:
    path = pathlib.Path(os.environ.get("SUBCLASS_ZOO", "/work/upstream/subclass_zoo"))
    return path if path.is_dir() else None


def run_example(path: pathlib.Path, imports: dict[str, str]) -> dict:
    """Run the file at ``path`` with each import line of ``imports`` replaced: its output and final error."""
    source = path.read_text()
    for old, new in imports.items():
        if old not in source:
            raise ValueError(f"{path.name} no longer has the line {old!r}")
        source = source.replace(old, new)
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, str(path), "exec"), {"__name__": "__zoo__"})
        except Exception as exc:  # the example's own ending, compared with torch's
            error = f"{type(exc).__name__}: {exc}"
    return {"stdout": out.getvalue(), "error": error}
