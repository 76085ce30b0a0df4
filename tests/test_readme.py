"""The README's Python examples run as written."""
import pathlib
import re

README = pathlib.Path(__file__).parent.parent / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, str(README), "exec"), namespace)
        namespace["lib"].close()
    assert "cpu kernel" in capsys.readouterr().out
