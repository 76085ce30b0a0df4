"""The build's switches, end to end through pip (each build is seconds: none
compiles): the pure engine asked for at build time gives a py3-none-any
wheel, and a missing C compiler is named as the cause of the pure fallback
(an error with DISPATCHER_REQUIRE_EXTENSION=1).  The builds run side by
side; they need a source tree and pip able to fetch setuptools for the
isolated build environment (else the tests skip)."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NO_CC = "dispatcher-test-no-such-cc"
BUILD_INPUTS = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "NOTICE", "buildconfig", "csrc", "dispatcher"]
BUILDS = {
    "env": {"DISPATCHER_NO_EXTENSIONS": "1"},
    "config": {},  # -C pure-python=true
    "no-compiler": {"CC": NO_CC},
    "no-compiler-required": {"CC": NO_CC, "DISPATCHER_REQUIRE_EXTENSION": "1"},
}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    if not (ROOT / "setup.py").exists():
        pytest.skip("no source tree to build from")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCHER_") and k != "CC"}
    running = {}
    for name, env in BUILDS.items():
        out = tmp_path_factory.mktemp(name)
        # Each build in a copy of what it reads: builds in one tree would share build/ and the egg-info.
        source = out / "source"
        for part in BUILD_INPUTS:
            if (ROOT / part).is_dir():
                shutil.copytree(ROOT / part, source / part, ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
            else:
                source.mkdir(exist_ok=True)
                shutil.copy(ROOT / part, source / part)
        command = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", str(out), str(source)]
        if name == "config":
            command[4:4] = ["--config-settings", "pure-python=true"]
        running[name] = (out, subprocess.Popen(command, env={**base_env, **env}, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True))
    results = {}
    for name, (out, process) in running.items():
        log, _ = process.communicate(timeout=600)
        results[name] = (process.returncode, log, sorted(p.name for p in out.glob("*.whl")))
    code, log, _ = results["env"]
    if code != 0 and "No matching distribution found for setuptools" in log:
        pytest.skip("pip could not install the build's dependencies (no package index?)")
    return results


@pytest.mark.parametrize("name", ["env", "config"])
def test_the_pure_engine_at_build_time_is_a_py3_none_any_wheel(builds, name):
    code, log, made = builds[name]
    assert code == 0, log[-3000:]
    assert len(made) == 1 and made[0].endswith("-py3-none-any.whl"), made
    assert "building the pure-Python engine only: DISPATCHER_NO_EXTENSIONS is set" in log
    assert "Cython>=" not in log and "Cythonizing" not in log  # not even installed for the build


def test_a_missing_compiler_is_named(builds):
    code, log, made = builds["no-compiler"]
    assert code == 0, log[-3000:]
    assert f"WARNING: the compiled engine could not be built: no C compiler: '{NO_CC}' is not installed or not on PATH" in log
    assert "dispatcher is installed with its pure-Python engine" in log
    assert len(made) == 1 and made[0].endswith("-py3-none-any.whl"), made
    assert "Cythonizing" not in log  # found out before Cython's minute of work


def test_a_missing_compiler_with_the_extension_required_fails(builds):
    code, log, made = builds["no-compiler-required"]
    assert code != 0 and made == []
    assert (f"no C compiler: '{NO_CC}' is not installed or not on PATH (install gcc or clang, or set CC to one); "
            "and DISPATCHER_REQUIRE_EXTENSION is set") in log
