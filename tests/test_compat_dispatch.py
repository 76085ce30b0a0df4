"""dispatcher.compat.torch_C against torch 2.13's ``_dispatch_*`` functions and
dispatch-key guards (tests/golden/compat_dispatch_golden.json, made by
generate_compat_dispatch_golden.py next to it).

The set of names is pinned to torch's, so the count cannot drift; then each
function's results and error texts are checked against what torch returned
(tensors of torch are stood in for by tensors with the same keys), on both
engines (``compat`` points the shim at the engine's world).
"""
from __future__ import annotations

import copy
import gc
import itertools
import re

import pytest

from dispatcher import DispatchKey, fallthrough_kernel, keysets
from dispatcher._layout import SLOT_OF_KEY
from dispatcher.compat import torch_C as C

from .conftest import load_golden

GOLDEN = load_golden("compat_dispatch_golden.json")
GOLDEN_NAMES = {f["name"]: f for f in GOLDEN["dispatch_functions"]}
_ns = (f"compat_dispatch{i}" for i in itertools.count())
K = DispatchKey

# The guards that cannot apply here, and must say why.
UNAVAILABLE_GUARDS = {"_EnablePreDispatch": "pre-dispatch tracing"}


@pytest.fixture
def ns():
    return next(_ns)


def tls_raw(engine):
    return engine.tls_local_include_set().raw_repr(), engine.tls_local_exclude_set().raw_repr()


def golden_tls(state):
    return state["include"]["raw"], state["exclude"]["raw"]


# -- the names ----------------------------------------------------------------------------------
def test_the_dispatch_names_are_torchs_41():
    ours = {name for name in dir(C) if name.startswith("_dispatch")}
    assert len(GOLDEN_NAMES) == 41
    assert sorted(ours - GOLDEN_NAMES.keys()) == [] and sorted(GOLDEN_NAMES.keys() - ours) == []
    assert ours <= set(C.__all__)
    for name, f in GOLDEN_NAMES.items():
        # torch binds _dispatch_autogradother_backends as a DispatchKeySet, the rest as functions.
        assert callable(getattr(C, name)) == (f["kind"] == "function"), name


def test_every_dispatch_key_guard_of_torch_is_here():
    for guard in GOLDEN["guards"]:
        assert guard["name"] in C.__all__ and isinstance(getattr(C, guard["name"]), type), guard["name"]


# -- constants and keysets ----------------------------------------------------------------------
def test_constants():
    assert C._dispatch_num_backends() == GOLDEN["num_backends"] == 16
    ks = C._dispatch_autogradother_backends
    assert (ks.raw_repr(), repr(ks)) == (GOLDEN["autogradother_backends"]["raw"], GOLDEN["autogradother_backends"]["repr"])


def test_backend_keyset_from_autograd_of_every_key():
    assert len(GOLDEN["backend_keyset_from_autograd"]) > 100
    for name, expected in GOLDEN["backend_keyset_from_autograd"].items():
        ks = C._dispatch_get_backend_keyset_from_autograd(name)
        assert (ks.raw_repr(), repr(ks)) == (expected["raw"], expected["repr"]), name
        assert C._dispatch_keyset_to_string(ks) == expected["repr"]
    with pytest.raises(RuntimeError, match="^could not parse dispatch key: Math$"):
        C._dispatch_get_backend_keyset_from_autograd("Math")


def test_keyset_to_string_takes_either_engines_keysets_only(world):
    assert C._dispatch_keyset_to_string(world.keyset(K.CPU, K.AutogradCPU)) == "DispatchKeySet(CPU, AutogradCPU)"
    for bad in ("CPU", K.CPU, 3):
        with pytest.raises(TypeError, match=r"^_dispatch_keyset_to_string\(\): expected a DispatchKeySet, got "):
            C._dispatch_keyset_to_string(bad)


# -- thread-local sets ------------------------------------------------------------------------------
def test_tls_functions_are_the_engines(world, compat):
    assert tls_raw(world.engine) == golden_tls(GOLDEN["tls_defaults"])
    assert C._dispatch_tls_local_include_set().raw_repr() == GOLDEN["tls_defaults"]["include"]["raw"]
    assert C._dispatch_tls_local_exclude_set().raw_repr() == GOLDEN["tls_defaults"]["exclude"]["raw"]
    assert type(C._dispatch_tls_local_include_set()) is world.engine.DispatchKeySet
    assert not C._dispatch_tls_is_dispatch_key_included(K.Python)
    C._dispatch_tls_set_dispatch_key_included("Python", True)
    assert C._dispatch_tls_is_dispatch_key_included("Python") and world.engine.tls_is_dispatch_key_included(K.Python)
    C._dispatch_tls_set_dispatch_key_included(K.Python, 0)  # pybind's bool takes ints
    assert not world.engine.tls_is_dispatch_key_included(K.Python)
    assert C._dispatch_tls_is_dispatch_key_excluded(K.AutocastCPU)
    C._dispatch_tls_set_dispatch_key_excluded(K.AutocastCPU, False)
    assert not C._dispatch_tls_is_dispatch_key_excluded("AutocastCPU")
    C._dispatch_tls_set_dispatch_key_excluded(K.AutocastCPU, True)
    # Alias keys and Undefined have no bits: always "in" the set, and setting them changes nothing (as c10).
    assert C._dispatch_tls_is_dispatch_key_included(K.Autograd) and C._dispatch_tls_is_dispatch_key_excluded(K.Undefined)
    C._dispatch_tls_set_dispatch_key_included(K.Autograd, True)
    assert tls_raw(world.engine) == golden_tls(GOLDEN["tls_defaults"])


def test_tls_functions_check_their_arguments(compat):
    with pytest.raises(RuntimeError, match="^could not parse dispatch key: Nope$"):
        C._dispatch_tls_set_dispatch_key_included("Nope", True)
    with pytest.raises(TypeError, match=r"^_dispatch_tls_set_dispatch_key_excluded\(\): desired_state must be a bool, not str$"):
        C._dispatch_tls_set_dispatch_key_excluded(K.Python, "yes")
    with pytest.raises(TypeError, match="^expected a DispatchKey or its name, got int$"):
        C._dispatch_tls_is_dispatch_key_included(13)


def make_guard(world, guard):
    args = [world.keyset(*(K[n] for n in a)) if isinstance(a, list) else K[a] if isinstance(a, str) else a
            for a in guard["args"]]
    return getattr(C, guard["name"])(*args)


@pytest.mark.parametrize("guard", [g for g in GOLDEN["guards"] if g["name"] not in UNAVAILABLE_GUARDS], ids=lambda g: g["name"])
def test_guards_change_the_sets_as_torchs_do(world, compat, guard):
    engine = world.engine
    before = tls_raw(engine)
    assert before == golden_tls(GOLDEN["tls_defaults"])
    g = make_guard(world, guard)
    assert (tls_raw(engine) != before) == (guard["active_from"] == "construction")
    assert g.__enter__() is None
    assert tls_raw(engine) == golden_tls(guard["inside"])
    g.__exit__(None, None, None)
    assert tls_raw(engine) == before
    g.__exit__(None, None, None)  # a second exit does nothing, as in torch
    assert tls_raw(engine) == before
    # Ended by the object's end too (the C++ destructor).
    with make_guard(world, guard):
        assert tls_raw(engine) == golden_tls(guard["inside"])
    assert tls_raw(engine) == before
    g = make_guard(world, guard)
    g.__enter__()
    del g
    gc.collect()
    assert tls_raw(engine) == before


@pytest.mark.parametrize("name", sorted(UNAVAILABLE_GUARDS))
def test_guards_that_cannot_apply_say_why(name):
    with pytest.raises(NotImplementedError, match=f"^{name} cannot apply here: .*{UNAVAILABLE_GUARDS[name]}"):
        getattr(C, name)()


def test_entering_a_guard_again_ends_it_first_as_torch(world, compat):
    """pybind's py_context_manager keeps one guard in a std::optional: the
    inner enter replaces it, the inner exit ends it, the outer exit does nothing."""
    g = C._IncludeDispatchKeyGuard(K.Python)
    with g:
        with g:
            assert world.engine.tls_is_dispatch_key_included(K.Python)
        assert not world.engine.tls_is_dispatch_key_included(K.Python)
    assert not world.engine.tls_is_dispatch_key_included(K.Python)


def test_force_and_preserve_put_back_the_whole_sets(world, compat):
    engine = world.engine
    before = tls_raw(engine)
    with C._PreserveDispatchKeyGuard():
        C._dispatch_tls_set_dispatch_key_included(K.Python, True)
        C._dispatch_tls_set_dispatch_key_excluded(K.AutogradCPU, True)
    assert tls_raw(engine) == before
    with C._ForceDispatchKeyGuard(world.keyset(K.CPU), world.own(keysets.AFTER_AUTOGRAD_KEYSET)):
        assert tls_raw(engine) == (world.keyset(K.CPU).raw_repr(), keysets.AFTER_AUTOGRAD_KEYSET.raw_repr())
        C._dispatch_tls_set_dispatch_key_included(K.Python, True)
    assert tls_raw(engine) == before


def test_guards_route_calls(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor x) -> str")
    m.impl("f", "CPU", lambda x: "cpu")
    m.impl("f", "AutogradCPU", lambda x: "autograd")
    m.impl("f", "Python", lambda x: "python")
    f, t = getattr(world.ops, ns).f.default, world.tensor(K.CPU, K.AutogradCPU)
    assert f(t) == "autograd"
    with C._AutoDispatchBelowAutograd():
        assert f(t) == "cpu"
    below = C._AutoDispatchBelowAutograd()  # active from construction, as torch's
    assert f(t) == "cpu"
    del below
    assert f(t) == "autograd"
    with C._SetExcludeDispatchKeyGuard(K.AutogradCPU, True):
        assert f(t) == "cpu"
    # The Python key sits below autograd.
    with C._IncludeDispatchKeyGuard("Python"), C._AutoDispatchBelowADInplaceOrView():
        assert f(t) == "python"
        with C._DisableTorchDispatch():
            assert f(t) == "cpu"
        with C._ExcludeDispatchKeyGuard(world.keyset(K.Python)):
            assert f(t) == "cpu"
        with C._ForceDispatchKeyGuard(world.keyset(), world.keyset()):
            assert f(t) == "autograd"


def test_guards_check_their_arguments(compat):
    with pytest.raises(TypeError, match=r"^_ExcludeDispatchKeyGuard\(\): expected a DispatchKeySet, got DispatchKey$"):
        C._ExcludeDispatchKeyGuard(K.Python)
    with pytest.raises(TypeError, match="^expected a DispatchKey or its name, got "):
        C._IncludeDispatchKeyGuard(C.DispatchKeySet(K.Python))
    with pytest.raises(TypeError, match=r"^_ForceDispatchKeyGuard\(\): expected a DispatchKeySet, got int$"):
        C._ForceDispatchKeyGuard(1, 2)
    with pytest.raises(RuntimeError, match="^could not parse dispatch key: Bogus$"):
        C._SetExcludeDispatchKeyGuard("Bogus", True)


def test_disable_python_dispatcher_takes_the_key_out(world, compat):
    C._dispatch_tls_set_dispatch_key_included(K.PythonDispatcher, True)
    with C._DisablePythonDispatcher():
        assert not C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)
    # torch puts back its Python dispatcher state, which is "off" (the bit was set by hand): the key stays out.
    assert not C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)


def test_disable_python_dispatcher_puts_back_an_enabled_one(world, compat):
    enabled = C._EnablePythonDispatcher()
    assert C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)
    with C._DisablePythonDispatcher():
        assert not C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)
        inner = C._EnablePythonDispatcher()
        assert C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)
        del inner  # its end puts back the state it found: off
        assert not C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)
    assert C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)
    del enabled
    assert not C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)


# -- tensors and devices -----------------------------------------------------------------------------
@pytest.mark.parametrize("what", sorted(GOLDEN["tensors"]))
def test_tensor_keys_as_torchs(world, compat, what):
    """A tensor with the keys of one of torch's (cpu, meta, sparse, a vmap
    batched tensor, a __torch_dispatch__ subclass, ...) answers as it did."""
    expected = GOLDEN["tensors"][what]
    t = world.tensor()
    t.key_set = world.engine.DispatchKeySet.from_raw_repr(expected["keys"]["raw"])
    assert C._dispatch_keys(t).raw_repr() == expected["keys"]["raw"]
    assert C._dispatch_key_set(t) == expected["key_set"] == expected["keys"]["repr"]
    assert C._dispatch_isTensorSubclassLike(t) is expected["is_tensor_subclass_like"]


def test_tensor_functions_take_any_tensor_type_of_the_engine(world, compat):
    class WithKeys:
        __dispatch_keys__ = world.keyset(K.Meta)

    assert C._dispatch_key_set(WithKeys()) == "DispatchKeySet(Meta)" and C._dispatch_isTensorSubclassLike(WithKeys())
    for f in (C._dispatch_keys, C._dispatch_key_set, C._dispatch_isTensorSubclassLike):
        with pytest.raises(TypeError, match=rf"^{f.__name__}\(\): expected a tensor \(an object the dispatcher reads a "
                                            r"DispatchKeySet from\), got int$"):
            f(1)


def _without_internal_assert(error):
    # Where torch fails an internal assertion we raise its message, without the
    # assertion's preamble and its plea to file a bug.
    match = re.fullmatch(r".*INTERNAL ASSERT FAILED at .*please report a bug to PyTorch\. (.*?)  File a bug .*", error)
    return error if match is None else match.group(1)


@pytest.mark.parametrize("case", GOLDEN["key_for_device"], ids=lambda c: repr(c["device"]))
def test_key_for_device_as_torchs(case):
    if case["error"] is None:
        assert C._dispatch_key_for_device(case["device"]) == case["result"]
    else:
        with pytest.raises(RuntimeError) as info:
            C._dispatch_key_for_device(case["device"])
        assert str(info.value) == _without_internal_assert(case["error"])


def test_key_for_device_takes_a_str():
    with pytest.raises(TypeError, match=r"^_dispatch_key_for_device\(\): device_type must be a str, not int$"):
        C._dispatch_key_for_device(1)


# -- operator handles and boxed calls -----------------------------------------------------------------
def test_find_schema_or_throw_as_torchs(compat):
    ns = "compat_golden"  # the namespace the generator used
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f.ov(Tensor x) -> Tensor")
    m.impl_t_t("g", "CPU")
    for case in GOLDEN["find_schema_or_throw"]:
        if case["error"] is None:
            assert C._dispatch_find_schema_or_throw(case["name"], case["overload"]).debug() == case["result"]
        else:
            with pytest.raises(RuntimeError) as info:
                C._dispatch_find_schema_or_throw(case["name"], case["overload"])
            assert str(info.value) == case["error"]
    assert sorted(n for n in C._dispatch_get_all_op_names() if n.startswith(f"{ns}::")) == GOLDEN["all_op_names_of_namespace"]
    with pytest.raises(TypeError, match=r"^_dispatch_find_schema_or_throw\(\): name must be a str, not int$"):
        C._dispatch_find_schema_or_throw(1, "")
    m.reset()


def test_call_boxed_and_redispatch_boxed(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "", "defs.py", 3)
    m.def_("f(Tensor x, int n=2) -> int")
    m.def_("pair(Tensor x, Tensor y) -> (Tensor, Tensor)")
    m.def_("none(Tensor x) -> ()")
    m.def_("many(Tensor x) -> Tensor[]")
    m.impl("f", "CPU", lambda x, n=2: n)
    m.impl("f", "XLA", lambda x, n=2: -n)
    m.impl("pair", "CPU", lambda x, y: (y, x))
    m.impl("none", "CPU", lambda x: None)
    m.impl("many", "CPU", lambda x: [x, x])
    f = C._dispatch_find_schema_or_throw(f"{ns}::f", "")
    assert str(f.schema()) == f"{ns}::f(Tensor x, int n=2) -> int" and f.debug() == "registered at defs.py:3"
    t, u = world.tensor(K.CPU), world.tensor(K.CPU)
    assert C._dispatch_call_boxed(f, t) == 2 and C._dispatch_call_boxed(f, t, 5) == 5 and C._dispatch_call_boxed(f, t, n=7) == 7
    assert C._dispatch_call_boxed(f, world.tensor(K.XLA)) == -2
    assert C._dispatch_call_boxed(C._dispatch_find_schema_or_throw(f"{ns}::pair", ""), t, u) == (u, t)
    assert C._dispatch_call_boxed(C._dispatch_find_schema_or_throw(f"{ns}::none", ""), t) is None
    assert C._dispatch_call_boxed(C._dispatch_find_schema_or_throw(f"{ns}::many", ""), t) == [t, t]
    # redispatch: the kernel of the keyset as given, whatever the tensors' keys.
    assert f.redispatch_boxed(world.keyset(K.XLA), t, 3) == -3
    assert f.redispatch_boxed(C.DispatchKeySet(K.XLA), t) == -2  # the default engine's set, converted
    for args, kwargs in [((), {}), ((1,), {}), ((t,), {"k": 1}), ((t, 1, 2), {})]:
        with pytest.raises(RuntimeError, match=f"^{ns}::f"):
            C._dispatch_call_boxed(f, *args, **kwargs)
    with pytest.raises(TypeError, match=r"^_dispatch_call_boxed\(\): expected a _DispatchOperatorHandle"):
        C._dispatch_call_boxed(f"{ns}::f", t)
    with pytest.raises(TypeError, match=r"^redispatch_boxed\(\): expected a DispatchKeySet, got str$"):
        f.redispatch_boxed("XLA", t)
    m.reset()
    with pytest.raises(RuntimeError, match=f"^operator {ns}::f is no longer defined"):
        f.schema()
    with pytest.raises(RuntimeError, match=f"^operator {ns}::f is no longer defined"):
        C._dispatch_call_boxed(f, t)


def test_report_error_callback(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor x) -> Tensor")
    handle = C._dispatch_find_schema_or_throw(f"{ns}::f", "")
    f = getattr(world.ops, ns).f.default
    seen = []

    def callback(key):
        seen.append(key)
        raise ValueError("raised by the callback")

    C._dispatch_set_report_error_callback(handle, callback)
    with pytest.raises(ValueError, match="^raised by the callback$"):
        C._dispatch_call_boxed(handle, world.tensor(K.CPU))
    with pytest.raises(ValueError):
        f(world.tensor(K.XLA))
    golden = GOLDEN["report_error_callback"]
    assert seen == [golden["value"], "XLA"] and golden["type"] == "str"
    assert golden["call"]["error"] == "raised by the callback" and golden["call"]["error_type"] == "ValueError"
    # A callback that returns: torch fails an internal assertion.
    C._dispatch_set_report_error_callback(handle, lambda key: None)
    with pytest.raises(RuntimeError, match=f"^the report-error callback of {ns}::f returned instead of raising"):
        f(world.tensor(K.CPU))
    with pytest.raises(TypeError, match=r"^_dispatch_set_report_error_callback\(\): callback must be callable, got int$"):
        C._dispatch_set_report_error_callback(handle, 5)
    # The callback goes with the operator: a new def reports as the dispatcher does.
    m.reset()
    m.def_("f(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match=f"^Could not run '{ns}::f' with arguments from the 'CPU' backend"):
        getattr(world.ops, ns).f.default(world.tensor(K.CPU))
    m.reset()


def test_safe_kernel_function_calls_its_kernel(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor x, int n) -> str")
    m.impl("f", "CPU", lambda x, n: str(n + 1))
    m.impl("f", "AutogradCPU", lambda keyset, x, n: repr(keyset), True)
    m.impl("f", "XLA", fallthrough_kernel)
    cpu = C._dispatch_get_computed_kernel_for_dispatch_key(f"{ns}::f", "CPU")
    assert isinstance(cpu, C._SafeKernelFunction) and str(cpu.op_handle.schema()) == f"{ns}::f(Tensor x, int n) -> str"
    # The kernel itself runs, whatever the keyset says (as torch's).
    assert cpu.call_boxed(world.keyset(K.XLA), world.tensor(K.XLA), 1) == "2"
    autograd = C._dispatch_get_computed_kernel_for_dispatch_key(f"{ns}::f", "AutogradCPU")
    assert autograd.call_boxed(world.keyset(K.AutogradCPU), world.tensor(K.CPU), 1) == "DispatchKeySet(AutogradCPU)"
    xla = C._dispatch_get_computed_kernel_for_dispatch_key(f"{ns}::f", "XLA")
    with pytest.raises(RuntimeError, match=f"^{ns}::f: a fallthrough kernel cannot be called"):
        xla.call_boxed(world.keyset(K.XLA), world.tensor(K.XLA), 1)
    m.reset()


# -- the registry ---------------------------------------------------------------------------------
def test_registry_listings(ns, world, compat, capsys):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f.ov(Tensor x) -> Tensor").impl_t_t("f.ov", "CPU")
    m.impl_t_t("g", "XLA")
    names = C._dispatch_get_all_op_names()
    assert {f"{ns}::f.ov", f"{ns}::g"} <= set(names) and names == world.registry.all_op_names()
    capsys.readouterr()
    C._dispatch_print_registrations_for_dispatch_key("CPU")
    printed = capsys.readouterr().out
    assert printed == "".join(f"{name}\n" for name in C._dispatch_get_registrations_for_dispatch_key("CPU"))
    assert f"{ns}::f.ov\n" in printed and f"{ns}::g\n" not in printed
    C._dispatch_print_registrations_for_dispatch_key()
    assert f"{ns}::g\n" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="^could not parse dispatch key: invalid_key$"):
        C._dispatch_print_registrations_for_dispatch_key("invalid_key")
    C._dispatch_check_all_invariants()
    assert C._dispatch_pystub(f"{ns}::f", "ov") is None and C._dispatch_pystub(f"{ns}::nope", "") is GOLDEN["pystub_of_unknown_operator"]
    with pytest.raises(TypeError, match=r"^_dispatch_pystub\(\): name must be a str, not int$"):
        C._dispatch_pystub(1, "")
    assert C._dispatch_clear_leaked_python_filenames() is None
    m.reset()
    assert f"{ns}::g" not in C._dispatch_get_all_op_names()


def test_check_all_invariants_reports_a_broken_table(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor x) -> Tensor").impl_t_t("f", "CPU")
    op = world.registry.find_op(f"{ns}::f")
    masks = op._masks
    op._masks = (0,) * len(masks)  # a stale table, as torch's can be
    try:
        with pytest.raises(RuntimeError, match=f"^{ns}::f: fallthrough masks are out of date$"):
            C._dispatch_check_all_invariants()
    finally:
        op._masks = masks
    C._dispatch_check_all_invariants()
    m.reset()


def test_check_invariants_reports_a_stale_dump_line(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor x) -> Tensor").impl_t_t("f", "CPU").impl_t_t("f", "AutogradCPU")
    op = world.registry.find_op(f"{ns}::f")
    cpu = SLOT_OF_KEY[DispatchKey.CPU]
    filled = op._filled
    layout, kernels = filled
    lines = {line[0]: line for line in layout.lines}  # slot -> (slot, key name, origin key, rule)
    stale = [
        {**lines, cpu: (cpu, "AutogradCPU", *lines[cpu][2:])},  # another key's name
        {**lines, cpu: (cpu, "CPU", DispatchKey.AutogradCPU, lines[cpu][3])},  # another kernel
        {k: v for k, v in lines.items() if k != cpu},  # the kernel's line missing: the fallback's shown
        {**lines, SLOT_OF_KEY[DispatchKey.Meta]: (SLOT_OF_KEY[DispatchKey.Meta], "Meta", *lines[cpu][2:])},  # a line where the fallback's belongs
    ]
    try:
        for stale_lines in stale:
            stale_layout = copy.copy(layout)
            stale_layout.lines = tuple(stale_lines.values())
            op._filled = (stale_layout, kernels)
            with pytest.raises(RuntimeError, match=f"^{ns}::f: the dump line of \\w+ is out of date$"):
                C._dispatch_check_invariants(f"{ns}::f")
    finally:
        op._filled = filled
    C._dispatch_check_invariants(f"{ns}::f")
    m.reset()
