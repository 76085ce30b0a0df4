"""Registration agrees with PyTorch 2.13 (tests/golden/registration_golden.json).

Every random and hand-written case, error scenario, query error and library
case the generator recorded with torch 2.13 is replayed through
``dispatcher.compat.torch_C`` (library cases through ``dispatcher.Library``),
with this package's standard fallbacks swapped for torch's framework fallback
set, on each engine's own registry (conftest's ``world``; the ``compat``
fixture points the shim at it).  Dumps, computed tables, invariant checks, the
predicate maps and error texts are compared byte for byte.

Known, intentional differences from torch; each one is asserted, none is
skipped:

(a) Atomic registrations.  torch registers an alias-key fallback key by key
    and keeps the keys before the first duplicate; ours registers nothing.
(b) Clean errors.  Where torch fails an internal assertion or crashes, we
    raise a RuntimeError that says what is wrong.
(c) A fresh table.  torch refreshes fewer table slots than a registration can
    change, so its stored table can go stale and ``_dispatch_check_invariants``
    fail; ours refreshes every dependent slot (see operator_entry.py) and passes.
(d) Parse errors.  Schema and operator-name errors are RuntimeErrors with our
    parser's text, not torch's lexer's.

Library cases (``dispatcher.Library`` vs ``torch.library.Library``):

(e) a registration's debug text is ``registered at FILE:LINE`` of the call
    that made it; torch uses the line that created the library for all;
(f) Python kernels are unboxed: dumps print ``[ boxed unboxed ]`` where
    torch's boxed Python kernels print ``[ boxed ]``;
(h) the aten DEF library that makes a second one fail is our operator
    catalog (dispatcher/catalog), where torch names its RegisterSchema.cpp.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import json
import re
import warnings
from typing import Any, Callable, Iterator, Optional

import pytest

from dispatcher import DispatchKey, Library, fallthrough_kernel
from dispatcher.catalog import TORCH_2_13
from dispatcher.standard_fallbacks import standard_fallbacks_library
from dispatcher.compat import torch_C as C
from dispatcher.registry import registry_in_use
from dispatcher.keysets import get_runtime_dispatch_key_set
from dispatcher.schema import FunctionSchema, OperatorName, SchemaParseError

from .conftest import load_golden
from .golden import registration_steps

GOLDEN = load_golden("registration_golden.json")


# -- torch's framework fallbacks ---------------------------------------------------------
def _framework_boxed_fallback(op: Any, *args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(f"{op.name()}: stand-in for one of torch's framework fallbacks")


def install_torch_framework_fallbacks() -> list[C._DispatchModule]:
    """Register torch 2.13's framework backend fallbacks as torch does (on the
    shim's registry): one ``_`` IMPL library per fallback, created at the
    file:line its debug text names.  Keys by DispatchKey member: torch's
    parser rejects AutogradMTIA and AutogradMAIA."""
    libraries = []
    for name, fallback in GOLDEN["framework_fallbacks"].items():
        file, line = fallback["debug"].removeprefix("registered at ").rsplit(":", 1)
        m = C._dispatch_library("IMPL", "_", "", file, int(line))
        if fallback["fallthrough"]:
            m.fallback_fallthrough(DispatchKey[name])
        else:
            m.fallback(DispatchKey[name], _framework_boxed_fallback)
        libraries.append(m)
    return libraries


@contextlib.contextmanager
def torch_framework_fallbacks_instead_of_ours(world: Any) -> Iterator[None]:
    """Swap the world's standard fallbacks for torch's framework set while the
    block runs (the shim must be on the world's registry: ``compat``)."""
    assert registry_in_use() is world.registry
    world.fallbacks.close()
    libraries = install_torch_framework_fallbacks()
    try:
        yield
    finally:
        for m in libraries:
            m.reset()
        world.fallbacks = standard_fallbacks_library(world.registry)


@pytest.fixture(autouse=True)
def torch_framework_fallbacks(world, compat):
    with torch_framework_fallbacks_instead_of_ours(world):
        yield


# -- replaying steps --------------------------------------------------------------------
def run_step(libs: dict[int, C._DispatchModule], s: dict) -> None:
    """One golden step, through the compat module (the generator runs the same on torch)."""
    registration_steps.run_step(C, fallthrough_kernel, libs, s)


def run_step_capturing(libs: dict[int, C._DispatchModule], s: dict) -> tuple[Optional[str], Optional[str]]:
    """(error type, error text) of a step, or (None, None)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overriding kernels warns, as in torch
            run_step(libs, s)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, str(e)
    return None, None


def _call(f: Callable, *args: Any) -> Any:
    try:
        return f(*args)
    except RuntimeError as e:
        return {"error": str(e)}


def snapshot_op(q: str, expected: dict) -> dict:
    """What the generator's snapshot_op records, for the keys ``expected`` has."""
    dump = C._dispatch_dump(q)
    snap: dict[str, Any] = {"dump": dump, "dump_table": C._dispatch_dump_table(q)}
    if dump == "":
        snap["exists"] = False
        return snap
    snap["exists"] = True
    snap["check_invariants"] = None
    try:
        C._dispatch_check_invariants(q)
    except RuntimeError as e:
        snap["check_invariants"] = str(e)
    keys = {k: DispatchKey[k] for k in expected["has_kernel_for_dispatch_key"]}
    runtime = [k for k in keys if k in expected["has_computed_kernel_for_dispatch_key"]]
    snap["has_kernel_for_dispatch_key"] = {
        k: _call(C._dispatch_has_kernel_for_dispatch_key, q, key) for k, key in keys.items()
    }
    snap["has_computed_kernel_for_dispatch_key"] = {
        k: _call(C._dispatch_has_computed_kernel_for_dispatch_key, q, keys[k]) for k in runtime
    }
    fallthrough = {}
    for k in runtime:
        r = _call(C._dispatch_kernel_for_dispatch_key_is_fallthrough, q, keys[k])
        if r != {"error": f"no kernel for {k} on {q}"}:
            fallthrough[k] = r
    snap["kernel_for_dispatch_key_is_fallthrough"] = fallthrough
    computed = {}
    for k in runtime:
        r = _call(C._dispatch_get_computed_kernel_for_dispatch_key, q, keys[k])
        computed[k] = r if isinstance(r, dict) else repr(r)
    snap["computed_kernel_for_dispatch_key"] = computed
    return snap


def fallback_state(keys: dict) -> dict:
    return {k: C._dispatch_has_backend_fallback(DispatchKey[k]) for k in keys}


# -- (c) a fresh table -------------------------------------------------------------------
_STALE = (
    'expected_k._equalsBoxedAndUnboxed(dispatchTable_[idx]) INTERNAL ASSERT FAILED at '
    '"/__w/pytorch/pytorch/aten/src/ATen/core/dispatch/OperatorEntry.cpp":565, please report a bug to PyTorch. '
)


def expect_fresh_table(expected: dict) -> dict:
    """(c): where torch's stored table went stale, its check_invariants error
    is made of the dump and the computed table (which we must match); ours
    passes."""
    if expected.get("check_invariants") is None:
        return expected
    assert expected["check_invariants"] == (
        f"{_STALE}Canonical state\n~~~~~~~~~~~\n{expected['dump']}\n\n"
        f"Computed table:\n~~~~~~~~~~~\n{expected['dump_table']}"
    )
    return {**expected, "check_invariants": None}


def assert_snapshot(snapshot: dict, where: str) -> None:
    """Compare every op of a golden snapshot, and its fallback flags."""
    for q, expected in snapshot["ops"].items():
        assert snapshot_op(q, expected) == expect_fresh_table(expected), f"{where}: {q}"
    if "has_backend_fallback" in snapshot:
        assert fallback_state(snapshot["has_backend_fallback"]) == snapshot["has_backend_fallback"], where


def replay(scenario: dict, expected_steps: list[dict], expected_snapshots: dict[int, dict]) -> None:
    libs: dict[int, C._DispatchModule] = {}
    where = f"{scenario.get('description', 'case')} (id {scenario['id']})"
    try:
        if -1 in expected_snapshots:
            assert_snapshot(expected_snapshots[-1], f"{where}, before any step")
        for i, (step, expected) in enumerate(zip(scenario["steps"], expected_steps)):
            error_type, error = run_step_capturing(libs, step)
            assert (error_type, error) == (expected.get("error_type"), expected["error"]), f"{where}, step {i}"
            if i in expected_snapshots:
                assert_snapshot(expected_snapshots[i], f"{where}, after step {i}")
    finally:
        for lib in sorted(libs):
            libs[lib].reset()


def test_framework_fallbacks_are_torchs():
    keys = GOLDEN["has_backend_fallback"]
    assert fallback_state(keys) == keys
    libs: dict[int, C._DispatchModule] = {}
    for step in GOLDEN["fresh_op"]["steps"]:
        run_step(libs, step)
    q = "golden::fresh_probe"
    assert (C._dispatch_dump(q), C._dispatch_dump_table(q)) == (
        GOLDEN["fresh_op"]["dump"],
        GOLDEN["fresh_op"]["dump_table"],
    )
    libs[0].reset()
    assert C._dispatch_dump(q) == ""


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: f"case{c['id']}")
def test_case(case):
    replay(case, case["steps"], {s["after_step"]: s for s in case["snapshots"]})


# -- error scenarios ----------------------------------------------------------------------
_BLOCKS = {"DEF": "TORCH_LIBRARY", "IMPL": "TORCH_LIBRARY_IMPL", "FRAGMENT": "TORCH_LIBRARY_FRAGMENT"}


_ASSERT = ' INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/core/library.cpp":{line}, please report a bug to PyTorch. '


def clean_error(step: dict, library_step: dict, torch_error: str) -> Optional[str]:
    """(b): our text where torch asserts or crashes, None elsewhere."""
    if library_step["kind"] not in _BLOCKS:
        return None
    context = (f"(Error occurred while processing {_BLOCKS[library_step['kind']]} block at "
               f"{library_step['file']}:{library_step['line']})")
    if torch_error == "dispatch_key.has_value()" + _ASSERT.format(line=293) + context:
        return ("fallback(...): no dispatch key: a fallback needs one, given to fallback() or to the "
                f"TORCH_LIBRARY_IMPL block.  {context}")
    if torch_error == "!dispatch_key_.has_value()" + _ASSERT.format(line=108) + context:
        return (f"TORCH_LIBRARY: a TORCH_LIBRARY block takes no dispatch key (got {step['dispatch_key']}); "
                f"only TORCH_LIBRARY_IMPL blocks do.  {context}")
    if torch_error == "bad optional access" and step["op"] == "new_library" and step["ns"] == "_":
        # A DEF library of the wildcard namespace: c10 dereferences the
        # missing namespace; we give the FRAGMENT text.
        return ("TORCH_LIBRARY: cannot define TORCH_LIBRARY with the wildcard namespace _ (every TORCH_LIBRARY "
                f"defines operators for a distinct namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  "
                f"{context}")
    return None


def parse_error(step: dict) -> Optional[str]:
    """(d): our parser's text for a step whose schema or name does not parse."""
    try:
        if step["op"] == "def":
            FunctionSchema.parse(step["schema"])
        elif step["op"] == "impl_t_t":
            OperatorName.parse(step["name"])
    except SchemaParseError as e:
        return str(e)
    return None


_DUPLICATE_FALLBACK = re.compile(r"Tried to register multiple backend fallbacks for the same dispatch key (\w+);")


def partial_alias_fallback(scenario: dict) -> Optional[int]:
    """(a): the step at which torch registered part of an alias-key fallback
    (the alias's runtime keys before the duplicate), or None."""
    for i, step in enumerate(scenario["steps"]):
        m = _DUPLICATE_FALLBACK.match(step["error"] or "")
        if m and step["op"].startswith("fallback") and C._dispatch_is_alias_key(DispatchKey[step["dispatch"]]):
            first = next(iter(get_runtime_dispatch_key_set(DispatchKey[step["dispatch"]])))
            if first.name != m.group(1):
                return i
    return None


def error_expectations(scenario: dict) -> tuple[list[dict], dict[int, dict], set[str]]:
    """Golden steps and snapshots with differences (a), (b), (d) applied,
    and which of them applied."""
    steps = [dict(s) for s in scenario["steps"]]
    snapshots = {s["after_step"]: s for s in scenario["snapshots"]}
    applied = set()
    library_steps = {s["lib"]: s for s in steps if s["op"] == "new_library"}
    for step in steps:
        if step["error"] is None:
            continue
        clean = clean_error(step, library_steps[step["lib"]], step["error"])
        parsed = parse_error(step)
        if clean is not None:
            step["error"] = clean
            applied.add("b")
        elif parsed is not None:
            assert " here:\n" in step["error"]  # torch's lexer's wording
            step["error"] = parsed
            applied.add("d")
    partial = partial_alias_fallback(scenario)
    if partial is not None:
        applied.add("a")
        lib = steps[partial]["lib"]
        drop = next(i for i, s in enumerate(steps) if s == {"op": "drop", "lib": lib, "error": None})
        # Nothing was registered: until the library is dropped the state is
        # the one torch has once it is dropped, and the same fallback on the
        # same key fails again the same way.
        for i in range(partial, drop):
            if i in snapshots:
                snapshots[i] = snapshots[drop]
            if steps[i]["op"].startswith("fallback") and steps[i]["dispatch"] == steps[partial]["dispatch"]:
                steps[i]["error"] = steps[partial]["error"]
    return steps, snapshots, applied


# Which scenarios differ from torch, and how (asserted, so that the list
# stays exact): the alias fallbacks of CompositeImplicitAutograd,
# CompositeExplicitAutograd(NonFunctional) register Dense keys before they
# reach Meta's framework fallback (a); fallbacks without a key and DEF
# libraries with a key or the wildcard namespace (b); bad schema/name (d).
EXPECTED_DIFFERENCES = {8: {"a"}, 11: {"a"}, 12: {"a"}, 13: {"b"}, 14: {"b"}, 15: {"b"}, 24: {"b"}, 26: {"b"},
                        48: {"d"}, 49: {"d"}}


@pytest.mark.parametrize("scenario", GOLDEN["errors"], ids=lambda e: f"error{e['id']}")
def test_error_scenario(scenario):
    steps, snapshots, applied = error_expectations(scenario)
    assert applied == EXPECTED_DIFFERENCES.get(scenario["id"], set())
    assert steps[scenario["error_step"]]["error_type"] == scenario["error_type"] == "RuntimeError"
    replay(scenario, steps, snapshots)


def test_query_errors():
    libs: dict[int, C._DispatchModule] = {}
    for step in GOLDEN["query_errors"]["setup"]:
        run_step(libs, step)
    try:
        for call in GOLDEN["query_errors"]["calls"]:
            f = getattr(C, call["call"])
            if call["error"] is None:
                result = f(*call["args"])
                assert (result if result is None or isinstance(result, (bool, str)) else repr(result)) == call["result"]
            else:
                with pytest.raises(RuntimeError) as info:
                    f(*call["args"])
                assert str(info.value) == call["error"], call
        # (b) torch 2.13 crashes here.
        assert "_dispatch_kernel_for_dispatch_key_is_fallthrough(unknown op, key)" in GOLDEN["query_errors"]["not_called"]
        with pytest.raises(RuntimeError, match="^operator golden::no_such_op does not exist$"):
            C._dispatch_kernel_for_dispatch_key_is_fallthrough("golden::no_such_op", "CPU")
    finally:
        libs[0].reset()


# -- library cases ------------------------------------------------------------------------
def _registration_lines(source: str) -> dict[int, int]:
    """Line of each registration call -> line that created its library."""
    created: dict[str, int] = {}
    lines = {}
    for number, text in enumerate(source.split("\n"), start=1):
        m = re.match(r"\s*(\w+) = Library\(", text)
        if m:
            created[m.group(1)] = number
        for library in re.findall(r"(\w+)\.(?:impl|fallback|define)\(", text):
            lines[number] = created[library]
    return lines


# (h), as the library cases meet it.
_TORCH_ATEN_DEF = "registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterSchema.cpp:6"


@pytest.mark.parametrize("case", GOLDEN["library_cases"], ids=lambda c: c["filename"])
def test_library_case(case, world):
    filename = case["filename"]
    call_to_library = _registration_lines(case["source"])

    def normalise(text: str) -> str:
        # (e) the call's line -> the library's line; (f) unboxed -> boxed.
        text = re.sub(re.escape(filename) + r":(\d+)",
                      lambda m: f"{filename}:{call_to_library.get(int(m.group(1)), int(m.group(1)))}", text)
        return text.replace("[ boxed unboxed ]", "[ boxed ]")

    expected_snapshots = {s["label"]: s for s in case["snapshots"]}
    seen, errors, records = [], [], {}

    def snapshot(label: str) -> None:
        seen.append(label)
        for q, expected in expected_snapshots[label]["ops"].items():
            ours = json.loads(normalise(json.dumps(snapshot_op(q, expected))))
            assert ours == expected, f"{filename} {label}: {q}"

    def expect_error(label: str, fn: Callable) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
        except Exception as e:  # noqa: BLE001 - compared with torch's
            errors.append({"label": label, "error_type": type(e).__name__, "error": normalise(str(e))})
            return
        errors.append({"label": label, "error_type": None, "error": None})

    def record(label: str, value: Any) -> None:
        records[label] = value

    scope = {"Library": functools.partial(Library, registry=world.registry), "fallthrough_kernel": fallthrough_kernel, "snapshot": snapshot,
             "expect_error": expect_error, "record": record}
    try:
        exec(compile(case["source"], filename, "exec"), scope)
    finally:
        for value in list(scope.values()):
            if isinstance(value, Library):
                value.close()
    assert seen == list(expected_snapshots)

    expected_errors = [dict(e) for e in case["errors"]]
    for e in expected_errors:
        if e["label"] == "aten_def_library":
            assert _TORCH_ATEN_DEF in e["error"]
            e["error"] = e["error"].replace(_TORCH_ATEN_DEF, TORCH_2_13.origin)
    assert errors == expected_errors

    expected_records = dict(case["records"])
    assert records == expected_records


# -- order independence (PyTorch's test_dispatch.py method) ---------------------------------
OP = "golden::commute"


def _library(kind: str, ns: str, key: str, register: Callable[[C._DispatchModule], Any]) -> C._DispatchModule:
    m = C._dispatch_library(kind, ns, key, f"{key or kind}.py", 1)
    register(m)
    return m


# Each registration is its own library.  No two of a set register the same
# key: overriding depends on the order by design (the newest kernel wins).
REGISTRATIONS: dict[str, Callable[[], C._DispatchModule]] = {
    "def": lambda: _library("FRAGMENT", "golden", "", lambda m: m.def_(f"{OP}(Tensor self) -> Tensor")),
    "CPU": lambda: _library("IMPL", "golden", "CPU", lambda m: m.impl_t_t("commute", debug="k_cpu")),
    "AutogradCPU": lambda: _library("IMPL", "golden", "AutogradCPU", lambda m: m.impl_t_t("commute", debug="k_ag")),
    "CompositeImplicitAutograd": lambda: _library(
        "IMPL", "golden", "CompositeImplicitAutograd", lambda m: m.impl_t_t("commute", debug="k_cia")),
    "CompositeExplicitAutograd": lambda: _library(
        "IMPL", "golden", "CompositeExplicitAutograd", lambda m: m.impl_t_t("commute", debug="k_cea")),
    "Autograd": lambda: _library("IMPL", "golden", "Autograd", lambda m: m.impl_t_t("commute", debug="k_autograd")),
    "XLA fallthrough kernel": lambda: _library(
        "FRAGMENT", "golden", "", lambda m: m.impl("commute", "XLA", fallthrough_kernel)),
    "XLA fallback": lambda: _library("IMPL", "_", "XLA", lambda m: m.fallback_fallthrough()),
}
COMMUTING_SETS = [
    ("def", "CPU", "CompositeImplicitAutograd"),
    ("CPU", "AutogradCPU", "CompositeImplicitAutograd"),
    ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "Autograd"),
    ("def", "AutogradCPU", "CompositeExplicitAutograd"),
    ("CompositeImplicitAutograd", "AutogradCPU", "XLA fallthrough kernel"),
    ("def", "Autograd", "XLA fallback"),
    ("CPU", "CompositeExplicitAutograd", "XLA fallback"),
]


def _state() -> tuple[str, str]:
    # The stored table (what calls use) must equal the recomputation that
    # dump_table prints, whatever the order that led here.
    C._dispatch_check_invariants(OP)
    return C._dispatch_dump(OP), C._dispatch_dump_table(OP)


@pytest.mark.parametrize("names", COMMUTING_SETS, ids="+".join)
def test_registration_order_does_not_matter(names):
    """Every order of registering and every order of deregistering gives the
    same dump and computed table for every set of live registrations."""
    states: dict[frozenset, tuple[str, str]] = {}
    orders = list(itertools.permutations(names))
    for ctor in orders:
        for i, dtor in enumerate(orders):
            live: dict[str, C._DispatchModule] = {}
            assert _state() == ("", "")
            for name in ctor:
                live[name] = REGISTRATIONS[name]()
                # The same registrations in the same order: checked once per ctor.
                if i == 0:
                    assert states.setdefault(frozenset(live), _state()) == _state(), (ctor, name)
            for name in dtor:
                live.pop(name).reset()
                assert states.setdefault(frozenset(live), _state()) == _state(), (ctor, dtor, name)
    assert len(states) == 2 ** len(names)
