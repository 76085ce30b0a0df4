"""Regenerate argument_defaults_golden.json: torch 2.13's default_value and
has_default_value() of each argument of argument_defaults_cases.SCHEMAS.

    /work/venv-torch/bin/python tests/golden/generate_argument_defaults_golden.py
"""
import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

from argument_defaults_cases import SCHEMAS, describe  # noqa: E402


def main() -> None:
    golden = {
        text: [[arg.name, arg.has_default_value(), describe(arg.default_value), type(arg.default_value).__name__]
               for arg in torch._C.parse_schema(text).arguments]
        for text in SCHEMAS
    }
    out = HERE / "argument_defaults_golden.json"
    out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "schemas": golden}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
