"""What PyTorch's test/test_custom_ops.py needed of this package, as torch 2.13
does it (tests/golden/torch_test_gaps_golden.json, from
tests/golden/torch_test_gap_cases.py run on torch and here through
tests/torch_shim.py): Library.define's schema errors, torch._C.parse_schema,
``_defined_in_python``, register_autograd on an operator with defaults,
opcheck's texts (a non-operator, a missing fake implementation,
functionalization's refusal of aliased outputs), ``numpy(force=True)``, basic
indexing (results, views, and the operators it calls), the operators the file
runs (sin_, pow, nonzero, view_as, slice's gradient), and where a fake
implementation was registered.  Each section on the default engine here, and
all of them on the pure engine in a subprocess.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

import dispatcher
from dispatcher.custom_ops import fake_impl_source

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.torch_test_gap_cases import run
from .torch_shim import installed

# The cases register an operator's autograd formula twice, as torch allows (and warns of too).
pytestmark = pytest.mark.filterwarnings("ignore:Overriding a previously registered kernel:UserWarning")

GOLDEN = load_golden("torch_test_gaps_golden.json")
SECTIONS = sorted(set(GOLDEN) - {"torch"})


def ours() -> dict[str, Any]:
    with installed() as torch:
        return json.loads(json.dumps(run(torch, fake_impl_source)))  # (tuples as JSON gives them back)


@pytest.fixture(scope="module")
def here():
    return ours()


def same(got: Any, expected: Any, where: str = "") -> None:
    """``got`` is torch's ``expected``: floats to a few ulps (torch's vectorized
    cos is an ulp off now and then); an exception of torch's class or a subclass
    of it (this package's errors say what they are more closely), with its
    message; opcheck's test_aot_dispatch_dynamic Skipped where torch's passes."""
    if isinstance(expected, dict) and "error" in expected and "is" in expected:
        assert expected["error"] in got["is"], (where, got["is"])
        assert got["message"] == expected["message"], where
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), (where, got)
        for key in expected:
            same(got[key], expected[key], f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), (where, got)
        for i, (g, e) in enumerate(zip(got, expected)):
            same(g, e, f"{where}[{i}]")
    elif expected == "SUCCESS" and where.endswith("/test_aot_dispatch_dynamic"):
        # What needs no tracing passed; the comparison with torch.compile's results is Skipped.
        assert got == "SKIPPED", where
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-6), where
    else:
        assert got == expected and type(got) is type(expected), (where, got)


@pytest.mark.parametrize("section", SECTIONS)
def test_as_torch(here, section):
    same(here[section], GOLDEN[section], section)


def test_as_torch_on_the_other_engine():
    found = run_on_other_engine("tests.test_torch_test_gaps", "ours")
    for section in SECTIONS:
        same(found[section], GOLDEN[section], section)


def test_define_refuses_a_type_variable_its_schema_was_parsed_with_before():
    # FunctionSchema.parse takes type variables (as torch._C.parse_schema) and
    # remembers what it parsed: define must not take that parse for its own.
    import dispatcher.library as library
    from dispatcher.schema import FunctionSchema, SchemaParseError

    text = "gap_type_var(Tensor x, elem y) -> Tensor"
    assert str(FunctionSchema.parse(text).arguments[1].type) == "elem"
    with library._scoped_library("_gap_cases_define", "FRAGMENT") as lib:
        with pytest.raises(SchemaParseError, match=r"unknown type specifier(.|\n)*\^~~~ <--- HERE"):
            lib.define(text)
        assert lib.define("gap_type_var(Tensor x, int y) -> Tensor") == "gap_type_var"


def test_indexing_says_what_it_does_not_take():
    import dispatcher.prototype as P

    x = P.zeros(2, 3)
    with pytest.raises(NotImplementedError, match="indexing a tensor with bool is not in the prototype"):
        x[True]
    with pytest.raises(NotImplementedError, match="indexing a tensor with float is not in the prototype"):
        x[0.5]
    assert x[P.tensor([0])].shape == x[[0]].shape == (1, 3)  # tensors and lists: advanced indexing (index.Tensor)
    with pytest.raises(RuntimeError, match="slice step must be positive"):  # (indexing says it as torch: golden)
        dispatcher.ops.aten.slice.Tensor(x, 0, 0, 2, -1)


def test_nonzero_has_no_meta_result():
    import dispatcher.prototype as P

    with pytest.raises(NotImplementedError, match=r"The register_meta function for torch.nonzero\(\) raises unimplemented"):
        P.empty(3, device="meta").nonzero()


def test_an_operator_is_defined_in_python_while_its_library_lives():
    import dispatcher.library as library
    from dispatcher import _library

    lib = library.Library("_gap_cases_defs", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.other(Tensor x) -> Tensor")
    assert dispatcher.ops._gap_cases_defs.f.default._defined_in_python
    assert {"_gap_cases_defs::f", "_gap_cases_defs::f.other"} <= _library._defs
    lib.close()
    assert not {"_gap_cases_defs::f", "_gap_cases_defs::f.other"} & _library._defs


def test_closing_a_library_needs_no_module_globals(monkeypatch):
    # A library still open as the interpreter exits is closed after the
    # modules' globals are gone (set to None): its undo holds what it needs.
    import dispatcher.library as library
    from dispatcher import _library

    lib = library.Library("_gap_cases_exit", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    defs = _library._defs
    monkeypatch.setattr(_library, "_defs", None)
    lib.close()
    monkeypatch.undo()
    assert "_gap_cases_exit::f" not in defs
