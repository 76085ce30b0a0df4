"""Regenerate zoo_ports_golden.json: what public subclass_zoo examples print under torch 2.13.

The examples are albanD/subclass_zoo's (GitHub), read from a copy outside
this repository (``SUBCLASS_ZOO``, default /work/upstream/subclass_zoo);
tests/test_zoo_ports.py runs the same files on dispatcher.prototype with
only their imports changed (tests/zoo_ports.py) and compares.  Run with a
Python that has torch 2.13:

    /work/venv-torch/bin/python tests/golden/generate_zoo_ports_golden.py
"""
import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).parent
OUT = HERE / "zoo_ports_golden.json"
sys.path.insert(0, str(HERE.parent))

from zoo_ports import PORTED, run_example, zoo_directory  # noqa: E402


def main() -> None:
    zoo = zoo_directory()
    if zoo is None:
        sys.exit("no copy of albanD/subclass_zoo: set SUBCLASS_ZOO")
    golden = {"meta": {"torch": torch.__version__},
              "examples": {name: run_example(zoo / name, {}) for name in PORTED}}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
