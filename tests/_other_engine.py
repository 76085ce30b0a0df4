"""Run a test module's function in a subprocess on the engine this process does not use.

The prototype is built on the default registry, so a test of it runs on the
default engine in the test process and on the other engine in a subprocess
(``DISPATCHER_NO_EXTENSIONS=1`` or not); the function returns JSON-able data.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

import dispatcher
from dispatcher import HAS_EXTENSION
from dispatcher._engine import compiled_engine

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_on_other_engine(module: str, function: str) -> Any:
    """``module.function()``'s result, computed on the other engine (the
    calling test is skipped where the compiled engine is not built: one engine only)."""
    if compiled_engine() is None:
        pytest.skip("the compiled engine is not built: one engine only")
    env = dict(os.environ)
    if HAS_EXTENSION:
        env["DISPATCHER_NO_EXTENSIONS"] = "1"
    else:
        env.pop("DISPATCHER_NO_EXTENSIONS", None)
    # The same dispatcher package as this process's, and the tests package.
    package_root = str(pathlib.Path(dispatcher.__file__).resolve().parent.parent)
    code = (f"import sys; sys.path.insert(0, {package_root!r}); sys.path.append({str(ROOT)!r}); "
            f"import json, dispatcher; from {module} import {function}; "
            f"print(json.dumps([dispatcher.HAS_EXTENSION, {function}()]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    has_extension, result = json.loads(out.stdout.splitlines()[-1])
    assert has_extension is not HAS_EXTENSION
    return result
