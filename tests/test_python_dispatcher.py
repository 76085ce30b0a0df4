"""PythonDispatcher prints what torch 2.13's prints (tests/golden/python_dispatcher_golden.json).

dispatchTable() and registrations() are compared for all 2048 subsets of the
supported keys, and the shuffled and extra lists, under this package's
standard fallbacks (what users get) and under torch's framework fallbacks;
rawRegistrations() and rawDispatchTable(), which print the fallbacks'
registration sites, under torch's only.  The seed's names (Math,
DefaultBackend, QuantizedCPU), which torch 2.13 rejects, are an extension
tested on its own.  Every test runs on both engines, on the world's registry
(PythonDispatcher registers through the shim, which ``compat`` points there).
"""
from __future__ import annotations

import pytest

from dispatcher.compat import torch_C as C
from dispatcher.python_dispatcher import PythonDispatcher

from .conftest import load_golden
from .test_registration_golden import torch_framework_fallbacks_instead_of_ours

GOLDEN = load_golden("python_dispatcher_golden.json")
SUPPORTED = GOLDEN["supported_keys"]
QUALNAME = f"{GOLDEN['namespace']}::{GOLDEN['name']}"
FRIENDLY = ("dispatchTable", "registrations")
RAW = ("rawRegistrations", "rawDispatchTable")


pytestmark = pytest.mark.usefixtures("compat")


@pytest.fixture
def torch_fallbacks(world, compat):
    with torch_framework_fallbacks_instead_of_ours(world):
        yield


def run(keys: list[str], outputs: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """A fresh PythonDispatcher: register ``keys``; (error, outputs)."""
    d = PythonDispatcher()
    error = None
    try:
        d.register(keys)
    except RuntimeError as e:
        error = str(e)
    result = {name: getattr(d, name)() for name in outputs}
    del d  # its library goes with it
    assert C._dispatch_dump(QUALNAME) == ""
    return error, result


def expected(entry: dict, outputs: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    source = entry if entry["error"] is None else entry["after_error"]
    texts = {name: source[name] for name in outputs if name != "rawDispatchTable"}
    if "rawDispatchTable" in outputs:
        texts["rawDispatchTable"] = "\n".join(GOLDEN["line_table"][i] for i in source["rawDispatchTable_lines"])
    return entry["error"], texts


def assert_like_torch(entries: list[dict], outputs: tuple[str, ...]) -> None:
    for entry in entries:
        assert run(entry["keys"], outputs) == expected(entry, outputs), entry["keys"]


def test_keys():
    assert PythonDispatcher().keys() == GOLDEN["keys"] == SUPPORTED
    assert PythonDispatcher.runtime_keys == GOLDEN["runtime_keys"]
    assert PythonDispatcher.alias_keys == GOLDEN["alias_keys"]


def test_every_subset_with_standard_fallbacks():
    assert len(GOLDEN["subsets"]) == 2 ** len(SUPPORTED) == 2048
    for mask, entry in enumerate(GOLDEN["subsets"]):
        assert entry["keys"] == [k for i, k in enumerate(SUPPORTED) if mask >> i & 1]
    assert_like_torch(GOLDEN["subsets"], FRIENDLY)


def test_every_subset_with_torch_fallbacks(torch_fallbacks):
    assert_like_torch(GOLDEN["subsets"], FRIENDLY + RAW)


def test_shuffled_order(torch_fallbacks):
    assert all(entry["same_as_supported_order"] for entry in GOLDEN["shuffled"])
    assert_like_torch(GOLDEN["shuffled"], FRIENDLY + RAW)


def test_shuffled_order_with_standard_fallbacks():
    assert_like_torch(GOLDEN["shuffled"], FRIENDLY)


# -- the seed's names ------------------------------------------------------------------
def subset(keys: tuple[str, ...]) -> dict:
    return GOLDEN["subsets"][sum(1 << SUPPORTED.index(k) for k in keys)]


# Lists of the golden's extras that torch rejects and we accept: legacy names
# are their modern keys; QuantizedCPU is a runtime key like FPGA.
LEGACY = {
    ("Math",): ("CompositeImplicitAutograd",),
    ("DefaultBackend",): ("CompositeExplicitAutograd",),
    ("CPU", "Math"): ("CPU", "CompositeImplicitAutograd"),
    ("CPU", "XLA", "DefaultBackend"): ("CPU", "XLA", "CompositeExplicitAutograd"),
    ("Math", "CPU"): ("CPU", "CompositeImplicitAutograd"),
}
QUANTIZED_CPU = {
    ("QuantizedCPU",): {
        # FPGA's table, QuantizedCPU being the other AutogradOther backend.
        name: subset(("FPGA",))[name].replace("FPGA            fn_FPGA", "QuantizedCPU    fn_QuantizedCPU")
        for name in FRIENDLY
    },
    ("AutogradCPU", "CompositeExplicitAutograd", "QuantizedCPU", "XLA"): {
        "dispatchTable": "\nComputed Dispatch Table\nkey             kernel\n---------------------------\n"
        "CPU             fn_CompositeExplicitAutograd [default backend kernel]\n"
        "XLA             fn_XLA [kernel]\n"
        "Lazy            fn_CompositeExplicitAutograd [default backend kernel]\n"
        "FPGA            fn_CompositeExplicitAutograd [default backend kernel]\n"
        "QuantizedCPU    fn_QuantizedCPU [kernel]\n"
        "AutogradOther   [backend fallback]\n"
        "AutogradCPU     fn_AutogradCPU [kernel]\n"
        "AutogradXLA     [backend fallback]\n"
        "AutogradLazy    [backend fallback]\n",
        "registrations": "\nRegistered Kernels\nkey             kernel\n---------------------------\n"
        "XLA             fn_XLA\n"
        "QuantizedCPU    fn_QuantizedCPU\n"
        "AutogradCPU     fn_AutogradCPU\n"
        "CompositeExplicitAutograd[alias] fn_CompositeExplicitAutograd\n",
    },
}


def test_extra_lists(torch_fallbacks):
    torch_rejects = set(LEGACY) | set(QUANTIZED_CPU)
    for entry in GOLDEN["extra"]:
        keys = tuple(entry["keys"])
        if keys in LEGACY:
            legacy = next(k for k in keys if k in PythonDispatcher.legacy_names)
            assert entry["error"] == f"{legacy} is not supported, please select a dispatch key in {SUPPORTED}."
            assert run(list(keys), FRIENDLY + RAW) == expected(subset(LEGACY[keys]), FRIENDLY + RAW)
        elif keys in QUANTIZED_CPU:
            assert entry["error"].startswith("QuantizedCPU is not supported")
            assert run(list(keys), FRIENDLY) == (None, QUANTIZED_CPU[keys])
        else:
            assert_like_torch([entry], FRIENDLY + RAW)
    assert torch_rejects <= {tuple(e["keys"]) for e in GOLDEN["extra"]}


def test_legacy_names_are_their_keys_for_the_checks():
    # Duplicates only the legacy spelling reveals, and the forbidden pair.
    assert run(["Math", "CompositeImplicitAutograd"], ()) == (
        "Overridden is not allowed but found duplicates in ['Math', 'CompositeImplicitAutograd'].", {})
    assert run(["Math", "DefaultBackend"], ()) == (
        "Registration to both CompositeImplicitAutograd and CompositeExplicitAutograd is not allowed.", {})
    assert "Math" not in PythonDispatcher().keys()


def test_quantized_cpu_row_only_once_registered():
    _, outputs = run(["CompositeImplicitAutograd"], FRIENDLY)
    assert "QuantizedCPU" not in outputs["dispatchTable"]
    _, outputs = run(["QuantizedCPU", "CompositeImplicitAutograd"], FRIENDLY)
    assert "QuantizedCPU    fn_QuantizedCPU [kernel]\n" in outputs["dispatchTable"]


def test_dropping_the_dispatcher_removes_its_operator():
    d = PythonDispatcher()
    d.register(["CPU", "Autograd"])
    assert "CPU: fn_CPU" in C._dispatch_dump(QUALNAME)
    with pytest.raises(RuntimeError, match="Tried to register an operator"):
        PythonDispatcher()  # one at a time, as in torch: the op is defined
    del d
    assert C._dispatch_dump(QUALNAME) == ""
