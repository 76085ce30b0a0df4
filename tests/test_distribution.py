"""What a user downloads: the licences in every wheel and the sdist, the
sdist's tests, docs and examples, the pure wheel's tag, the compiled
modules stripped of debug information.

The distributions are those in $DISPATCHER_TEST_DIST (.ci/run builds the
sdist, the compiled wheel and the pure wheel there); without it, from a
checkout with ``build`` installed, the sdist and the pure wheel are built
here (``python -m build -C pure-python=true``: seconds); otherwise the
tests skip.
"""
from __future__ import annotations

import email
import os
import pathlib
import subprocess
import sys
import tarfile
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYTORCH_COPYRIGHT = "Copyright (c) 2016-     Facebook, Inc            (Adam Paszke)"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> pathlib.Path:
    given = os.environ.get("DISPATCHER_TEST_DIST")
    if given:
        return pathlib.Path(given)
    if not (ROOT / "pyproject.toml").exists():
        pytest.skip("no source tree to build from")
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCHER_")}
    # From the output folder: in the checkout, setuptools' build/ folder would
    # pass for the build package.
    if subprocess.run([sys.executable, "-c", "import build.__main__"], cwd=out, capture_output=True).returncode:
        pytest.skip("python -m build is not installed")
    done = subprocess.run([sys.executable, "-m", "build", "-C", "pure-python=true", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, env=env, cwd=out)
    if done.returncode != 0:
        pytest.fail(f"python -m build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return out


def wheels(dist: pathlib.Path) -> list[pathlib.Path]:
    found = sorted(dist.glob("*.whl"))
    assert found, f"no wheel in {dist}"
    return found


def sdist(dist: pathlib.Path) -> pathlib.Path:
    found = sorted(dist.glob("*.tar.gz"))
    assert len(found) == 1, f"not one sdist in {dist}: {found}"
    return found[0]


def wheel_text(wheel: pathlib.Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(suffix) and ".dist-info/" in n]
        return archive.read(name).decode()


def test_every_wheel_carries_the_licence_and_pytorchs_notice(dist):
    for wheel in wheels(dist):
        assert wheel_text(wheel, "/licenses/LICENSE").startswith("BSD 3-Clause License"), wheel.name
        notice = wheel_text(wheel, "/licenses/NOTICE")
        assert "dispatcher/catalog/torch-2.13.txt" in notice
        assert PYTORCH_COPYRIGHT in notice and "Redistribution and use in source and binary forms" in notice


def test_wheel_metadata_names_the_licence_and_the_project(dist):
    for wheel in wheels(dist):
        metadata = email.message_from_string(wheel_text(wheel, "/METADATA"))
        assert metadata["License-Expression"] == "BSD-3-Clause"
        assert sorted(metadata.get_all("License-File")) == ["LICENSE", "NOTICE"]
        urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
        assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls)
        classifiers = metadata.get_all("Classifier")
        assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.10" in classifiers


def test_the_sdist_holds_licences_tests_docs_and_examples(dist):
    with tarfile.open(sdist(dist)) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for required in ("LICENSE", "NOTICE", "CHANGELOG.md", "buildconfig/dispatcher_build.py", "tests/conftest.py",
                     "tests/golden/keys_golden.json", "docs/conf.py", "docs/index.md", "examples/privateuse1_backend.py",
                     "benchmarks/bench_call.py"):
        assert required in names, required
    assert not any(name.startswith("docs/_build/") for name in names)


def test_a_pure_wheel_is_py3_none_any_without_compiled_modules(dist):
    pure = [wheel for wheel in wheels(dist) if wheel.name.endswith("-py3-none-any.whl")]
    assert pure, "no pure wheel built"
    with zipfile.ZipFile(pure[0]) as archive:
        assert not [n for n in archive.namelist() if n.endswith((".so", ".pyd", ".c"))]
        assert "dispatcher/_engine/core.py" in archive.namelist()


def test_compiled_modules_carry_no_debug_information(dist):
    compiled = [wheel for wheel in wheels(dist) if "linux" in wheel.name]
    if not compiled:
        pytest.skip("no Linux wheel of the compiled engine here")
    for wheel in compiled:
        with zipfile.ZipFile(wheel) as archive:
            modules = [n for n in archive.namelist() if n.endswith(".so")]
            assert len(modules) == 2, modules  # the engine's core and _fastcall
            for name in modules:
                data = archive.read(name)
                assert data[:4] == b"\x7fELF"
                # Section names live in the ELF's string table: stripped, these are gone.
                assert b".debug_info\x00" not in data and b".symtab\x00" not in data, f"{name} is not stripped"


def test_the_installed_distribution_carries_both_licences():
    """Whatever installed this package (the wheel in .ci/run, an editable
    install here): its metadata folder holds LICENSE and NOTICE."""
    import importlib.metadata

    # The installed .dist-info, not an .egg-info that a build left in a checkout on sys.path.
    found = [d for d in importlib.metadata.distributions(name="c10-dispatcher")
             if getattr(d, "_path", pathlib.Path()).name.endswith(".dist-info")]
    if not found:
        pytest.skip("dispatcher is not installed (run from a source tree)")
    installed = found[0]
    assert (installed.read_text("licenses/LICENSE") or "").startswith("BSD 3-Clause License")
    assert PYTORCH_COPYRIGHT in (installed.read_text("licenses/NOTICE") or "")
