"""Regenerate prototype_test_file_ops_golden.json: torch 2.13's answers to prototype_test_file_ops_cases.py.

Run with a Python that has torch 2.13 (never needed by the tests):

    /work/venv-torch/bin/python tests/golden/generate_prototype_test_file_ops_golden.py
"""
import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).parent
OUT = HERE / "prototype_test_file_ops_golden.json"
sys.path.insert(0, str(HERE))

from prototype_test_file_ops_cases import run  # noqa: E402


def main() -> None:
    golden = {"meta": {"torch": torch.__version__}, "answers": run(torch)}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
