"""The documentation site (docs/) and the README: every code block runs and
prints what the page says it prints, on both engines; the API reference
covers the public API; the site builds with warnings as errors.

The pages' conventions are tests/docs_blocks.py's.  Each page runs in a
fresh interpreter (its registrations, a renamed PrivateUse1 backend, the
prototype's fallbacks stay there), once per engine.
"""
from __future__ import annotations

import importlib
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

import dispatcher
from dispatcher import _engine

from .docs_blocks import blocks

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"] if DOCS.exists() else []
RUNNER = pathlib.Path(__file__).with_name("docs_blocks.py")
# What a bash block may hold: commands that install, build, test or fetch, which are shown, not run.
SHOWN_ONLY = ("pip install", "git clone", "python -m build", "python -m sphinx", "pytest", ".ci/run", "DISPATCHER_NO_EXTENSIONS=1 pip",
              "DISPATCHER_DEBUG_BUILD=1 pip",
              "python -m dispatcher bench", "python -m dispatcher demo", "python -m dispatcher table", "python examples/",
              "python -m dispatcher docs", "CC=false pip")

ENGINES = [pytest.param("1", id="py"),
           pytest.param("0", id="c", marks=pytest.mark.skipif(_engine.compiled_engine() is None, reason="compiled engine not built"))]


def page_id(page: pathlib.Path) -> str:
    return str(page.relative_to(ROOT))


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCHER_")}
    env.update(extra)
    return env


def test_there_are_pages():
    if not DOCS.exists():
        pytest.skip("no docs folder (an installed package without its source tree)")
    assert len(PAGES) >= 10


@pytest.mark.parametrize("no_extensions", ENGINES)
@pytest.mark.parametrize("page", [p for p in PAGES if any(b.language == "python" for b in blocks(p.read_text()))], ids=page_id)
def test_python_blocks_print_what_the_page_says(page, no_extensions):
    done = subprocess.run([sys.executable, str(RUNNER), str(page)], capture_output=True, text=True, cwd=page.parent,
                          env=clean_env(DISPATCHER_NO_EXTENSIONS=no_extensions))
    assert done.returncode == 0, f"{page_id(page)}: a block failed:\n{done.stderr[-4000:]}"
    import json

    printed = json.loads(done.stdout)
    python_blocks = [b for b in blocks(page.read_text()) if b.language == "python"]
    assert len(printed) == len(python_blocks)
    for block, out in zip(python_blocks, printed):
        where = f"{page_id(page)}:{block.line}"
        if block.expected is None:
            assert out == "", f"{where} prints, but no text block after it says what:\n{out}"
        else:
            assert out == block.expected, f"{where} printed\n{out}\ninstead of\n{block.expected}"


def console_commands(text: str) -> list[tuple[int, str, str]]:
    """(line, command, expected output) of each ``$ `` command of the console blocks."""
    found = []
    for block in blocks(text):
        if block.language != "console":
            continue
        parts = re.split(r"^\$ (.*)\n", block.code, flags=re.M)
        assert parts[0] == "", f"console block at line {block.line} must start with a $ command"
        for command, output in zip(parts[1::2], parts[2::2]):
            found.append((block.line, command, output))
    return found


CONSOLE = [(page, *command) for page in PAGES for command in console_commands(page.read_text())]


@pytest.mark.parametrize("page, line, command, expected", CONSOLE,
                         ids=[f"{page_id(c[0])}:{c[1]}:{c[2][:40]}" for c in CONSOLE])
def test_console_commands_print_what_the_page_says(page, line, command, expected):
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "dispatcher"], f"{page_id(page)}:{line}: only python -m dispatcher commands run"
    done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, cwd=ROOT, env=clean_env())
    # What a terminal shows: a command the page shows failing prints its error on stderr.
    assert done.stdout + done.stderr == expected, f"{page_id(page)}:{line}: {command} printed\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_other_blocks_are_output_or_commands_shown(page):
    for block in blocks(page.read_text()):
        where = f"{page_id(page)}:{block.line}"
        assert block.language in ("python", "console", "bash", "text", "{eval-rst}", "{toctree}", "{include}"), where
        if block.language == "bash":
            for command in block.code.strip().splitlines():
                assert command.startswith(SHOWN_ONLY), f"{where}: {command!r} is not run by the tests: make it a console block"


def test_the_api_reference_covers_the_public_api():
    if not DOCS.exists():
        pytest.skip("no docs folder")
    api = (DOCS / "api.md").read_text()
    documented = set(re.findall(r"^\.\. [\w:]+:: dispatcher\.(\w+)", api, re.M))
    assert documented == set(dispatcher.__all__)


def test_the_porting_table_names_what_exists():
    """Each row of the porting guide's table: a torch name and ours, which must exist."""
    if not DOCS.exists():
        pytest.skip("no docs folder")
    rows = re.findall(r"^\| `(torch[\w.]*)` \| `(dispatcher[\w.]*)` \|", (DOCS / "guides" / "porting-from-torch.md").read_text(), re.M)
    assert len(rows) >= 20
    for _torch_name, ours in rows:
        parts = ours.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                target = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attribute in parts[cut:]:
                target = getattr(target, attribute)
            break
        else:
            pytest.fail(f"{ours} does not exist")


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    if not DOCS.exists():
        pytest.skip("no docs folder")
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html", str(DOCS), str(tmp_path)],
                          capture_output=True, text=True, env=clean_env())
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "index.html").exists() and (tmp_path / "api.html").exists()
