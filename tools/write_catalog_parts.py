"""Write dispatcher/catalog/torch-2.13.parts.txt, the catalog's schemas split into parts.

Run after tools/record_catalog.py (no torch needed):

    python tools/write_catalog_parts.py

See Note [Catalog parts] in dispatcher/catalog/parts.py;
tests/test_catalog_parts.py checks that the file is this script's output
for the catalog as it is, and that every schema made from it is the one
parsing its line gives.
"""
from __future__ import annotations

import os

from dispatcher.catalog import TORCH_2_13
from dispatcher.catalog.parts import format_parts
from dispatcher.schema import FunctionSchema

OUT = os.path.join(os.path.dirname(TORCH_2_13.path), "torch-2.13.parts.txt")


def main() -> None:
    schemas = [FunctionSchema.parse(text) for text in TORCH_2_13.schemas()]
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(format_parts(os.path.basename(TORCH_2_13.path), schemas))
    print(f"{len(schemas)} schemas -> {OUT}")


if __name__ == "__main__":
    main()
