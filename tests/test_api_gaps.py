"""What PyTorch's test files needed of torch.library, torch.ops and torch._C,
as torch 2.13 does it (tests/golden/api_gaps_golden.json, from
tests/golden/api_gap_cases.py run on torch and here through
tests/torch_shim.py): dtype names as ScalarType defaults (parser,
infer_schema, custom_op), opaque schema types, the warn_always flag, the error
for Meta tensors reaching no Meta kernel, the list arguments a custom
operator's kernel gets, and an ops namespace's packets as a library comes and
goes.  Each section on the default engine here, and all of them on the other
engine in a subprocess.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

import dispatcher._custom_ops

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.api_gap_cases import run
from .torch_shim import installed

# The older CustomOp API warns that it is deprecated, as torch's does.
pytestmark = pytest.mark.filterwarnings("ignore:torch._custom_op is deprecated:DeprecationWarning")

GOLDEN = load_golden("api_gaps_golden.json")
SECTIONS = sorted(set(GOLDEN) - {"torch"})


def ours() -> dict[str, Any]:
    with installed() as torch:
        return json.loads(json.dumps(run(torch, dispatcher._custom_ops)))  # (tuples as JSON gives them back)


@pytest.fixture(scope="module")
def here():
    return ours()


def same(got: Any, expected: Any, where: str = "") -> None:
    """``got`` is torch's ``expected``; an exception of torch's class or a
    subclass of it (this package's errors say what they are more closely)."""
    if isinstance(expected, dict) and "error" in expected and "is" in expected:
        assert isinstance(got, dict) and "is" in got, (where, got)
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
    else:
        assert got == expected and type(got) is type(expected), (where, got)


@pytest.mark.parametrize("section", SECTIONS)
def test_as_torch(here, section):
    same(here[section], GOLDEN[section], section)


def test_as_torch_on_the_other_engine():
    found = run_on_other_engine("tests.test_api_gaps", "ours")
    for section in SECTIONS:
        same(found[section], GOLDEN[section], section)


def test_a_parse_remembered_while_a_type_was_opaque_is_forgotten_with_it():
    from dispatcher import opaque_types
    from dispatcher.schema import FunctionSchema, SchemaParseError

    text = "api_gaps_opaque(api_gaps.Thing a, api_gaps.Thing[] b) -> api_gaps.Thing"
    opaque_types.register_opaque_type("api_gaps.Thing")
    try:
        assert str(FunctionSchema.parse(text)) == "api_gaps_opaque(PyObject a, PyObject[] b) -> PyObject"
        assert opaque_types.is_opaque_type_registered("api_gaps.Thing")
    finally:
        opaque_types.unregister_opaque_type("api_gaps.Thing")
    with pytest.raises(SchemaParseError, match="unknown type specifier"):
        FunctionSchema.parse(text)
    with pytest.raises(TypeError, match="an opaque type's name is a str"):
        opaque_types.is_opaque_type_registered(None)  # type: ignore[arg-type]


def test_a_user_namespace_reads_its_packets_without_a_getattr_hook_of_its_own():
    # Note [__getattr__ of a user namespace]: the class has none (reads stay
    # fast); type(ns).__getattr__ is its metaclass's, called as torch's.
    from dispatcher import Library, ops

    lib = Library("_api_gaps_ns_hook", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        namespace = ops._api_gaps_ns_hook
        assert "__getattr__" not in type(namespace).__dict__
        with pytest.raises(AttributeError, match="'ops._api_gaps_ns_hook' object has no attribute 'nope'"):
            type(namespace).__getattr__(namespace, "nope")
        with pytest.raises(AttributeError, match="type object 'ops._api_gaps_ns_hook' has no attribute 'nope'"):
            type(namespace).nope  # noqa: B018
        calls = []
        original = type(namespace).__getattr__

        def watching(self, name):
            calls.append(name)
            return original(self, name)

        type(namespace).__getattr__ = watching  # as torch's test watches it
        try:
            with pytest.raises(AttributeError, match="has no attribute 'nope'"):
                namespace.nope  # noqa: B018
            lib.close()  # takes the packet out without reading it
        finally:
            type(namespace).__getattr__ = original
        assert calls == ["nope"] and namespace._dir == [] and list(namespace) == []
    finally:
        lib.close()


def test_the_meta_fallback_goes_with_the_prototypes_fallbacks():
    import dispatcher.prototype as P
    from dispatcher import Library
    from dispatcher.compat import torch_C

    lib = Library("_api_gaps_meta", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        with P.installed():
            assert "Meta: registered" in torch_C._dispatch_dump_table("_api_gaps_meta::f")
            with pytest.raises(NotImplementedError, match="_api_gaps_meta::f: attempted to run this operator with Meta"):
                dispatcher_ops_f(P.empty(2, device="meta"))
        assert not P.is_installed()  # (this module does not use the prototype_fallbacks fixture)
        with pytest.raises(NotImplementedError, match="Could not run '_api_gaps_meta::f' with arguments from the 'Meta'"):
            dispatcher_ops_f(P.empty(2, device="meta"))
    finally:
        lib.close()


def dispatcher_ops_f(x):
    from dispatcher import ops

    return ops._api_gaps_meta.f.default(x)


def test_set_warn_always_is_a_flag_of_the_process():
    from dispatcher import warn_always
    from dispatcher.compat import torch_C

    assert warn_always.is_warn_always_enabled() is False
    warn_always.set_warn_always(True)
    try:
        assert torch_C._get_warnAlways() is True
    finally:
        torch_C._set_warnAlways(False)
    assert warn_always.is_warn_always_enabled() is False
