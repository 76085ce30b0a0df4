"""dispatcher.compat.torch_C: what the registration goldens do not cover.

Key parsing and the key predicates against the keys golden; kernels that
actually run; library lifetime; the module-level queries; defaults; and the
places where we deliberately differ from torch (all-or-nothing registration,
clean errors).

Every test that touches a registry takes ``compat`` (conftest), which points
``C`` at the world's registry, so it runs on both engines; the key tests use
no registry (the key functions answer with the default engine's keysets).
"""
from __future__ import annotations

import gc
import itertools

import pytest

from dispatcher import DispatchKey, fallthrough_kernel, keysets
from dispatcher.compat import torch_C as C

from .conftest import load_golden

KEYS = load_golden("keys_golden.json")
GOLDEN_KEYS = [d for d in KEYS["dispatch_keys"] if d["name"] in DispatchKey.__members__]
_ns = (f"compat{i}" for i in itertools.count())


@pytest.fixture
def ns():
    return next(_ns)


def cpu_tensor(world):
    return world.tensor(DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU)


# -- keys -----------------------------------------------------------------------------
def test_key_parse_is_torchs():
    assert len(GOLDEN_KEYS) == len(DispatchKey)
    for d in GOLDEN_KEYS:
        if d["parseable"]:
            assert C._dispatch_key_parse(d["name"]) is DispatchKey[d["name"]]
            assert C._parse_dispatch_key(d["name"]) is DispatchKey[d["name"]]
        else:
            with pytest.raises(RuntimeError) as info:
                C._dispatch_key_parse(d["name"])
            assert str(info.value) == KEYS["parse_errors"][d["name"]] == f"could not parse dispatch key: {d['name']}"
            assert C._parse_dispatch_key(d["name"]) is None
    # Legacy and other spellings torch 2.13 rejects (our DispatchKey.parse takes some).
    for name, error in KEYS["parse_errors"].items():
        with pytest.raises(RuntimeError) as info:
            C._dispatch_key_parse(name)
        assert str(info.value) == error
    assert DispatchKey.parse("Math") is DispatchKey.CompositeImplicitAutograd


def test_key_predicates_are_torchs():
    aliases = {name: set(a["included"]) for name, a in KEYS["alias"].items()}
    for d in GOLDEN_KEYS:
        key = DispatchKey[d["name"]]
        assert C._dispatch_key_name(key) == d["name"]
        assert C._dispatch_is_alias_key(key) == d["is_alias"]
        for alias, included in aliases.items():
            assert C._dispatch_is_included_in_alias(key, DispatchKey[alias]) == (d["value"] in included), (key, alias)
    assert C._dispatch_keyset_full().raw_repr() == KEYS["full"]
    for value, raw in KEYS["full_after"].items():
        if int(value) in DispatchKey._value2member_map_:
            assert C._dispatch_keyset_full_after(DispatchKey(int(value))).raw_repr() == raw


def test_key_arguments_take_names_through_torchs_parser(compat):
    assert C._dispatch_key_name("AutogradCPU") == "AutogradCPU"
    assert C._dispatch_is_included_in_alias("CPU", "CompositeExplicitAutograd")
    for f, args in [(C._dispatch_is_alias_key, ("Math",)), (C._dispatch_keyset_full_after, ("DefaultBackend",)),
                    (C._dispatch_has_backend_fallback, ("AutogradMTIA",))]:
        with pytest.raises(RuntimeError, match=f"^could not parse dispatch key: {args[0]}$"):
            f(*args)
    with pytest.raises(TypeError):
        C._dispatch_key_name(49)
    # A member works where the parser refuses the name.
    assert C._dispatch_has_backend_fallback(DispatchKey.AutogradMTIA)


# -- kernels that run -------------------------------------------------------------------
def test_impl_t_t_kernel_is_the_identity(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor self) -> Tensor").impl_t_t("f", "CPU")
    m.def_name_t_t("g")
    t = cpu_tensor(world)
    assert getattr(world.ops, ns).f.default(t) is t
    assert getattr(world.ops, ns).g.default(t) is t
    assert "CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]" in C._dispatch_dump(f"{ns}::f")


def test_python_kernels_and_fallbacks_are_boxed_and_called_like_torchs(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor x, int n, *, int k=3) -> int")
    seen = []

    def autograd(keyset, x, n, **kwargs):
        seen.append(("AutogradCPU", keyset.has(DispatchKey.AutogradCPU), n, kwargs))
        return getattr(world.ops, ns).f.default.redispatch(keyset & world.own(keysets.AFTER_AUTOGRAD_KEYSET), x, n, **kwargs)

    m.impl("f", "AutogradCPU", autograd, True)
    m.impl("f", DispatchKey.CPU, lambda x, n, *, k=3: n * k)
    assert getattr(world.ops, ns).f.default(cpu_tensor(world), 2) == 6
    assert getattr(world.ops, ns).f.default(cpu_tensor(world), 2, k=3) == 6
    assert getattr(world.ops, ns).f.default(cpu_tensor(world), 2, k=4) == 8
    # As torch's parseIValuesToPyArgsKwargs: an argument equal to its default is left out.
    assert seen == [("AutogradCPU", True, 2, {}), ("AutogradCPU", True, 2, {}), ("AutogradCPU", True, 2, {"k": 4})]
    assert "CPU: registered at /dev/null:0 :: (none) [ boxed ]" in C._dispatch_dump(f"{ns}::f")

    calls = []
    fb = C._dispatch_library("IMPL", "_", "")
    fb.fallback("XLA", lambda op, x, n, *, k: calls.append((op.name(), n, k)) or -1, False)
    fb.fallback("Lazy", lambda keyset, op, x, n, *, k=3: calls.append((repr(keyset), n)) or -2, True)  # torch: the keyset first
    f = getattr(world.ops, ns).f.default
    assert f(world.tensor(DispatchKey.XLA), 5, k=1) == -1
    assert f(world.tensor(DispatchKey.Lazy), 7) == -2
    assert calls == [(f"{ns}::f", 5, 1), ("DispatchKeySet(Lazy)", 7)]
    fb.reset()


def test_fallthrough_kernel_as_impl_and_fallback(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor self) -> Tensor").impl_t_t("f", "CPU", "k_cpu")
    m.impl("f", "AutogradCPU", fallthrough_kernel)
    assert C._dispatch_kernel_for_dispatch_key_is_fallthrough(f"{ns}::f", "AutogradCPU")
    assert not C._dispatch_kernel_for_dispatch_key_is_fallthrough(f"{ns}::f", "CPU")
    t = cpu_tensor(world)
    assert getattr(world.ops, ns).f.default(t) is t
    fb = C._dispatch_library("IMPL", "_", "PrivateUse3")
    fb.fallback(DispatchKey.PrivateUse3, fallthrough_kernel)
    assert "PrivateUse3: fallthrough registered at /dev/null:0 [backend fallback]" in C._dispatch_dump_table(f"{ns}::f")
    fb.reset()


# -- libraries ----------------------------------------------------------------------------
def test_dropping_the_library_deregisters(ns, compat):
    m = C._dispatch_library("FRAGMENT", ns, "", "mine.py", 7)
    m.def_("f(Tensor self) -> Tensor").impl_t_t("f", "CPU")
    fb = C._dispatch_library("IMPL", "_", "PrivateUse2")
    fb.fallback_fallthrough()
    assert C._dispatch_has_backend_fallback(DispatchKey.PrivateUse2)
    assert C._dispatch_dump(f"{ns}::f").startswith(f"name: {ns}::f\nschema: {ns}::f(Tensor self) -> Tensor\n"
                                                   "debug: registered at mine.py:7\n")
    del m, fb  # reference counting, as in PyTorch's own tests
    assert C._dispatch_dump(f"{ns}::f") == ""
    assert not C._dispatch_has_backend_fallback(DispatchKey.PrivateUse2)
    gc.collect()


def test_reset_removes_and_the_library_stays_usable(ns, compat):
    m = C._dispatch_library("DEF", ns, "")
    m.def_("f(Tensor self) -> Tensor")
    m.reset()
    assert C._dispatch_dump(f"{ns}::f") == ""
    # The namespace claim went with it: another DEF library may take it.
    other = C._dispatch_library("DEF", ns, "")
    other.def_("g(Tensor self) -> Tensor")
    m.def_name_t_t("h")  # a reset DEF library can still register, as in torch
    assert C._dispatch_has_kernel(f"{ns}::h") and C._dispatch_has_kernel(f"{ns}::g")
    other.reset()
    m.reset()


def test_default_debug_texts(ns, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    assert m.def_name_t_t("a") is m
    assert m.def_schema_t_t(f"{ns}::b(Tensor self) -> Tensor") is m
    assert m.def_("c(Tensor self) -> Tensor").impl_t_t("c") is m
    assert m.def_legacy(f"{ns}::d(Tensor self) -> Tensor") is m
    m.impl_t_t("d", "CPU", "")  # an empty debug text means the library's site
    assert "CompositeImplicitAutograd[alias]: default_def_name_t_t ::" in C._dispatch_dump(f"{ns}::a")
    assert "CompositeImplicitAutograd[alias]: default_def_schema_t_t ::" in C._dispatch_dump(f"{ns}::b")
    assert "CompositeImplicitAutograd[alias]: impl_t_t ::" in C._dispatch_dump(f"{ns}::c")
    assert C._dispatch_dump(f"{ns}::d") == (
        f"name: {ns}::d\nschema: {ns}::d(Tensor self) -> Tensor\ndebug: registered at /dev/null:0\n"
        "alias analysis kind: CONSERVATIVE (default)\n"
        "CPU: registered at /dev/null:0 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"
    )


def test_registrations_are_all_or_nothing(ns, compat):
    """Difference (a): torch keeps the def when the kernel of def_schema_t_t
    does not fit it, and the first keys of a failing alias-key fallback."""
    m = C._dispatch_library("FRAGMENT", ns, "")
    with pytest.raises(RuntimeError, match="Inferred operator schema for a C\\+\\+ kernel function doesn't match"):
        m.def_schema_t_t(f"{ns}::f(int x) -> Tensor", "CPU")
    assert C._dispatch_dump(f"{ns}::f") == ""
    m.def_("g(Tensor self) -> Tensor")
    before = C._dispatch_dump_table(f"{ns}::g")
    fb = C._dispatch_library("IMPL", "_", "")
    fb.fallback_fallthrough("Meta")
    with pytest.raises(RuntimeError, match="for the same dispatch key Meta;"):
        fb.fallback_fallthrough("CompositeExplicitAutograd")  # CPU..PrivateUse3 come before Meta
    fb.reset()
    assert C._dispatch_dump_table(f"{ns}::g") == before


def test_clean_errors_where_torch_crashes(ns, compat):
    """Difference (b)."""
    wildcard = C._dispatch_library("IMPL", "_", "", "w.py", 3)
    with pytest.raises(RuntimeError, match=r"^impl\(\"f\", \.\.\.\): a TORCH_LIBRARY_IMPL block of the wildcard "):
        wildcard.impl_t_t("f", "CPU")
    with pytest.raises(RuntimeError, match=f"^operator {ns}::nope does not exist$"):
        C._dispatch_kernel_for_dispatch_key_is_fallthrough(f"{ns}::nope", "CPU")
    with pytest.raises(RuntimeError, match="^TORCH_LIBRARY: cannot define TORCH_LIBRARY with the wildcard"):
        C._dispatch_library("DEF", "_", "")


def test_parse_errors_are_runtime_errors(ns, compat):
    """Difference (d): torch's type, our parser's text."""
    m = C._dispatch_library("FRAGMENT", ns, "")
    lookups = [(C._dispatch_dump, ("a b",)), (C._dispatch_dump_table, ("a b",)), (C._dispatch_has_kernel, ("",)),
               (C._dispatch_check_invariants, ("a b",)), (C._dispatch_has_kernel_for_dispatch_key, ("a b", "CPU")),
               (C._dispatch_has_kernel_for_any_dispatch_key, ("a b", C._dispatch_keyset_full())),
               (C._dispatch_kernel_for_dispatch_key_is_fallthrough, ("a b", "CPU")),
               (C._dispatch_has_computed_kernel_for_dispatch_key, ("a b", "CPU")),
               (C._dispatch_get_computed_kernel_for_dispatch_key, ("a b", "CPU"))]
    for f, args in [(m.def_, ("f(Tensor self -> Tensor",)), (m.impl_t_t, ("f.", "CPU")), *lookups]:
        with pytest.raises(RuntimeError, match="<--- HERE"):
            f(*args)
    with pytest.raises(RuntimeError, match="^could not parse BOGUS$"):
        m.def_("f(Tensor self) -> Tensor", "BOGUS")
    with pytest.raises(RuntimeError, match="^could not parse BOGUS$"):
        C._dispatch_library("BOGUS", ns, "")


# -- module-level queries ---------------------------------------------------------------------
def test_queries(ns, world, compat):
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f(Tensor self) -> Tensor").impl_t_t("f", "CPU").impl_t_t("f", "AutogradCPU")
    m.impl_t_t("dangling.ov", "XLA", "k_xla")
    f, dangling = f"{ns}::f", f"{ns}::dangling.ov"
    assert C._dispatch_has_kernel(f) and C._dispatch_has_kernel(dangling) and not C._dispatch_has_kernel(f"{ns}::x")
    assert C._dispatch_has_kernel_for_any_dispatch_key(f, world.keyset(DispatchKey.CUDA, DispatchKey.CPU))
    assert not C._dispatch_has_kernel_for_any_dispatch_key(f, world.keyset(DispatchKey.CUDA))
    with pytest.raises(RuntimeError, match=f"^operator {ns}::x does not exist$"):
        C._dispatch_has_kernel_for_any_dispatch_key(f"{ns}::x", world.keyset(DispatchKey.CPU))
    assert f in C._dispatch_get_registrations_for_dispatch_key("AutogradCPU")
    assert dangling not in C._dispatch_get_registrations_for_dispatch_key("AutogradCPU")
    assert {f, dangling} <= set(C._dispatch_get_registrations_for_dispatch_key())
    with pytest.raises(RuntimeError, match="^could not parse dispatch key: Math$"):
        C._dispatch_get_registrations_for_dispatch_key("Math")
    assert C._dispatch_dump(dangling) in C._dispatch_find_dangling_impls()
    assert C._dispatch_dump(f) not in C._dispatch_find_dangling_impls()
    # A functionality key answers for its first backend's slot, as in c10.
    assert C._dispatch_has_computed_kernel_for_dispatch_key(f, "Dense")
    assert repr(C._dispatch_get_computed_kernel_for_dispatch_key(f, "CPU")) == "SafeKernelFunction(debug='impl_t_t')"
    with pytest.raises(RuntimeError, match=rf"^Could not find schema for {ns}::dangling\.ov but we found an "):
        C._dispatch_get_computed_kernel_for_dispatch_key(dangling, "XLA")
    C._dispatch_check_invariants(f)
    dump = C._dispatch_dump(dangling)
    m.reset()
    assert C._dispatch_dump(dangling) == "" and dump not in C._dispatch_find_dangling_impls()
