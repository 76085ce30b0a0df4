"""buildconfig/dispatcher_build.py, the build backend: its two settings
(pure-python, the default editable mode), with setuptools' hooks replaced
by recorders (tests/test_build_switches.py builds through pip for real)."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BACKEND = ROOT / "buildconfig" / "dispatcher_build.py"


@pytest.fixture
def backend(monkeypatch):
    if not BACKEND.exists():
        pytest.skip("no source tree")
    pytest.importorskip("setuptools.build_meta")
    spec = importlib.util.spec_from_file_location("dispatcher_build", BACKEND)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls: list[tuple[str, dict]] = []

    def recorder(name, result):
        def hook(*args):
            # The settings are the one dict argument (the wheel folder comes first).
            calls.append((name, next(a for a in args if isinstance(a, dict))))
            return result
        return hook

    for name, result in (("build_wheel", "w.whl"), ("build_editable", "e.whl"),
                         ("get_requires_for_build_wheel", ["wheel"]), ("get_requires_for_build_editable", ["wheel"])):
        monkeypatch.setattr(module._setuptools, name, recorder(name, result))
    monkeypatch.delenv("DISPATCHER_NO_EXTENSIONS", raising=False)
    module.calls = calls
    return module


def test_pure_python_setting_sets_the_build_switch_and_is_not_passed_on(backend):
    assert backend.build_wheel("out", {"pure-python": "true", "--build-option": "-q"}) == "w.whl"
    assert os.environ["DISPATCHER_NO_EXTENSIONS"] == "1"
    assert backend.calls == [("build_wheel", {"--build-option": "-q"})]
    os.environ.pop("DISPATCHER_NO_EXTENSIONS")


@pytest.mark.parametrize("value", ["false", "0", ""])
def test_pure_python_false_builds_the_extension(backend, monkeypatch, value):
    monkeypatch.setenv("DISPATCHER_NO_EXTENSIONS", "1")
    backend.build_wheel("out", {"pure-python": value})
    assert "DISPATCHER_NO_EXTENSIONS" not in os.environ


def test_cython_is_a_build_requirement_only_of_the_compiled_build(backend, monkeypatch):
    import platform

    if platform.python_implementation() != "CPython":
        pytest.skip("only CPython builds the extension")
    assert backend.get_requires_for_build_wheel({}) == ["wheel", "Cython>=3.0"]
    assert backend.get_requires_for_build_wheel({"pure-python": "true"}) == ["wheel"]
    monkeypatch.delenv("DISPATCHER_NO_EXTENSIONS")


def test_other_interpreters_need_no_cython(backend, monkeypatch):
    monkeypatch.setattr(backend.platform, "python_implementation", lambda: "PyPy")
    assert backend.get_requires_for_build_wheel(None) == ["wheel"]


def test_an_editable_install_is_a_path_entry_type_checkers_follow(backend):
    backend.build_editable("out")
    backend.build_editable("out", {"editable_mode": "strict"})
    assert backend.calls == [("build_editable", {"editable_mode": "compat"}), ("build_editable", {"editable_mode": "strict"})]


@pytest.fixture
def setup_module(monkeypatch):
    """setup.py, imported (not run: it builds only as __main__)."""
    path = ROOT / "setup.py"
    if not path.exists():
        pytest.skip("no source tree")
    pytest.importorskip("setuptools")
    for name in ("DISPATCHER_NO_EXTENSIONS", "DISPATCHER_REQUIRE_EXTENSION", "DISPATCHER_DEBUG_BUILD"):
        monkeypatch.delenv(name, raising=False)
    spec = importlib.util.spec_from_file_location("dispatcher_setup", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpython_builds_the_extension(setup_module, monkeypatch):
    monkeypatch.setattr(setup_module.platform, "python_implementation", lambda: "CPython")
    assert setup_module.pure_build_reason() is None


@pytest.mark.parametrize("implementation", ["PyPy", "GraalVM"])
def test_other_interpreters_build_the_pure_engine(setup_module, monkeypatch, implementation):
    monkeypatch.setattr(setup_module.platform, "python_implementation", lambda: implementation)
    assert setup_module.pure_build_reason() == (
        f"{implementation} is not CPython, whose C API the compiled engine is written against")


@pytest.mark.parametrize("value, pure", [("1", True), ("yes", True), ("0", False), ("off", False), ("", False)])
def test_the_build_time_switch(setup_module, monkeypatch, value, pure):
    monkeypatch.setattr(setup_module.platform, "python_implementation", lambda: "CPython")
    monkeypatch.setenv("DISPATCHER_NO_EXTENSIONS", value)
    assert (setup_module.pure_build_reason() is not None) == pure


def test_release_builds_strip_debug_information(setup_module, monkeypatch):
    if sys.platform == "win32":
        pytest.skip("MSVC writes no debug information unless asked")
    assert setup_module.compile_args()[-1] == "-g0"
    monkeypatch.setattr(setup_module, "DEBUG", True)
    assert "-g0" not in setup_module.compile_args() and setup_module.link_args() == []
