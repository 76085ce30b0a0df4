"""The README's claims: it starts with the two commands for a fresh machine,
its example runs (tests/test_docs.py runs every block and checks what it
prints), it is a valid PyPI long description (every link and image
absolute, into the repository of pyproject.toml's URLs, at a file that
exists), and it does not tell anyone to install a release that does not
exist."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).parent.parent
README = ROOT / "README.md"
PYPROJECT = ROOT / "pyproject.toml"

pytestmark = pytest.mark.skipif(not PYPROJECT.exists(), reason="no source tree")


def repository() -> str:
    # tomllib is Python 3.11's; the package supports 3.10.
    found = re.search(r'^Repository = "([^"]+)"', PYPROJECT.read_text(), re.M)
    assert found, "pyproject.toml has no Repository URL"
    return found.group(1)


def test_it_starts_with_the_two_commands():
    text = README.read_text()
    first_block = re.search(r"```(\w+)\n(.*?)```", text, re.S)
    assert first_block is not None and text.index("```") < text.index("\n## ")
    language, body = first_block.groups()
    commands = [line.split("#")[0].strip() for line in body.strip().splitlines()]
    assert language == "bash"
    assert commands == ['pip install -e ".[demo]" && python -m dispatcher demo', 'pip install -e ".[test]" && pytest']


def test_the_tour_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, str(README), "exec"), namespace)
        namespace["lib"].close()
    assert "cpu kernel" in capsys.readouterr().out


def test_links_and_images_are_absolute_and_point_at_files_that_exist():
    text = README.read_text()
    targets = re.findall(r"\]\(([^)]+)\)", text)
    assert len(targets) >= 10
    base = repository()
    raw = base.replace("https://github.com/", "https://raw.githubusercontent.com/")
    for target in targets:
        assert target.startswith("https://"), f"{target}: relative (PyPI shows the README without the repository)"
        for prefix in (f"{base}/blob/main/", f"{base}/tree/main/", f"{raw}/main/"):
            if target.startswith(prefix):
                assert (ROOT / target[len(prefix):]).exists(), target
                break
        else:
            pytest.fail(f"{target}: not into the repository {base}")


def test_it_is_honest_about_where_to_install_from():
    text = README.read_text()
    assert "pip install c10-dispatcher" not in text  # no release is published yet
    assert "no release is published on PyPI" in text


def test_the_licences_it_names_exist():
    text = README.read_text()
    assert "BSD-3-Clause" in text and (ROOT / "LICENSE").exists() and (ROOT / "NOTICE").exists()
