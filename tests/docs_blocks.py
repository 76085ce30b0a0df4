"""The code blocks of a documentation page (docs/**/*.md, README.md) and
what each must print; ``python tests/docs_blocks.py PAGE`` runs a page's
Python blocks in order, in one namespace, as a reader would paste them,
and prints what each printed as JSON (tests/test_docs.py compares it).

The conventions the pages follow:

- a ``python`` block runs; if it prints, the next block is a ``text``
  block with exactly what it prints (and a ``text`` block follows only a
  block that prints);
- a ``console`` block holds ``$ python -m dispatcher ...`` commands, each
  followed by its exact output; they run too;
- a ``bash`` block holds only commands that install, build or test
  (``pip install``, ``python -m build``, ...): shown, not run.

Each Python block is compiled as the file ``example.py``, so a line number
it prints (``registered at example.py:13``) is the line in the block.
"""
from __future__ import annotations

import contextlib
import io
import json
import pathlib
import re
import sys
from dataclasses import dataclass
from typing import Optional

FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


@dataclass
class Block:
    language: str
    code: str
    line: int  # of the opening fence, 1-based
    expected: Optional[str] = None  # what a python block prints (its text block), if anything


def blocks(text: str) -> list[Block]:
    """The page's fenced blocks, each python block given the text block after it."""
    found = [Block(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]
    result: list[Block] = []
    for block in found:
        if block.language == "text" and result and result[-1].language == "python" and result[-1].expected is None:
            result[-1].expected = block.code
        else:
            result.append(block)
    return result


def run_python_blocks(page: pathlib.Path) -> list[str]:
    """What each python block of ``page`` prints, in order."""
    namespace: dict = {"__name__": "__main__"}
    printed = []
    for block in blocks(page.read_text()):
        if block.language != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block.code, "example.py", "exec"), namespace)
        printed.append(out.getvalue())
    return printed


if __name__ == "__main__":
    print(json.dumps(run_python_blocks(pathlib.Path(sys.argv[1]))))
