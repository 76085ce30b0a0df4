"""torch.library's records of Python registrations (``_impls``, ``_defs``, a
library's ``_op_impls`` / ``_op_defs`` and the finalizer that takes them out),
against torch 2.13 running the same program (tests/golden/library_records_cases.py)."""
from __future__ import annotations

import dispatcher.library as library

from .conftest import load_golden
from .golden.library_records_cases import NS, program

GOLDEN = load_golden("library_records_golden.json")["program"]


def test_the_records_are_torchs():
    assert program(library) == GOLDEN


def test_closing_takes_a_librarys_records_out():
    lib = library.Library(NS + "_close", "FRAGMENT")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x, "CPU")
    assert f"{NS}_close/g/CPU" in library._impls and f"{NS}_close::g" in library._defs
    lib.close()
    assert f"{NS}_close/g/CPU" not in library._impls and f"{NS}_close::g" not in library._defs
    assert lib._op_impls == {f"{NS}_close/g/CPU"}  # the library's own set is left as it was, as torch's
