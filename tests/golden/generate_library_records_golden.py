"""Regenerate library_records_golden.json: torch 2.13 running library_records_cases.program.

Run with a Python that has torch 2.13 (never needed by the tests):

    /work/venv-torch/bin/python tests/golden/generate_library_records_golden.py
"""
import json
import pathlib
import sys

import torch
import torch.library

HERE = pathlib.Path(__file__).parent
OUT = HERE / "library_records_golden.json"
sys.path.insert(0, str(HERE))

from library_records_cases import program  # noqa: E402


def main() -> None:
    golden = {"meta": {"torch": torch.__version__}, "program": program(torch.library)}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
