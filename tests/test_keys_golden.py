"""Agreement with PyTorch 2.13, from tests/golden/keys_golden.json (see its README)."""
import pytest

from dispatcher import _layout, keys, keysets
from dispatcher.keys import BackendComponent, DispatchKey

from .conftest import load_golden

G = load_golden("keys_golden.json")
SENTINELS = {s["value"] for s in G["sentinels"]}


def key_or_undefined(value):
    # c10 answers a per-backend functionality without a backend with its
    # StartOf<F>Backends sentinel; we answer Undefined (see keys.py).
    return DispatchKey.Undefined if value in SENTINELS else DispatchKey(value)


def test_constants():
    assert G["torch_version"].startswith("2.13.")
    assert keys.NUM_BACKENDS == G["num_backends"]
    assert keys.NUM_FUNCTIONALITY_KEYS == G["num_functionality_keys"]
    assert keys.NUM_RUNTIME_ENTRIES == G["num_runtime_entries"] == 137
    assert _layout.FULL_BACKEND_MASK == G["full_backend_mask"]
    assert [list(p) for p in zip(_layout.OFFSETS, _layout.MASKS)] == G["offsets_and_masks"]


def test_every_key_value_and_name():
    golden = {k["value"]: k for k in G["dispatch_keys"]}
    assert {k.value: k.name for k in DispatchKey} == {v: k["name"] for v, k in golden.items()}
    for k in DispatchKey:
        g = golden[k.value]
        assert str(k) == g["name"]
        assert keys.is_alias_key(k) == g["is_alias"]
        assert keys.is_per_backend_functionality_key(k) == g["is_per_backend_functionality_key"]
        assert keys.to_functionality_key(k) == g["to_functionality_key"]
        assert keys.to_backend_component(k) == g["to_backend_component"]
        assert keysets.get_backend_key_set_from_autograd(k).raw_repr() == g["backend_key_set_from_autograd"]
        assert keysets.is_backend_dispatch_key(k) == g["is_backend_dispatch_key"]
        if k != DispatchKey.Undefined:
            assert DispatchKey.parse(k.name) == k


def test_backend_components():
    for g in G["backend_components"]:
        b = BackendComponent(g["value"])
        assert str(b) == g["name"]
        assert keys.get_autograd_key_from_backend(b) == g["autograd_key_from_backend"]
        assert keysets.get_autograd_related_key_set_from_backend(b).raw_repr() == g["autograd_related_key_set_from_backend"]
        assert keysets.get_autocast_related_key_set_from_backend(b).raw_repr() == g["autocast_related_key_set_from_backend"]


def test_runtime_per_backend_key_round_trip():
    for k in DispatchKey:
        if keys.is_per_backend_runtime_key(k):
            assert keys.to_runtime_per_backend_functionality_key(
                keys.to_functionality_key(k), keys.to_backend_component(k)
            ) == k


def test_runtime_slots():
    assert [k.name for k in _layout.RUNTIME_SLOT_KEYS] == G["runtime_slots"]
    assert G["dump_table_order"]["computed"] == G["runtime_slots"]


def test_shared_slot_file_is_a_subsequence_of_torchs_order():
    # ../shared/data/torch-2.13/dump_table_key_order.txt lists 129 slots; real
    # torch 2.13 has 137 (the file lacks Fake, DeferredInit, four Autocast keys
    # and the two TESTING_ONLY keys).  PyTorch is the oracle: we follow it and
    # check that the file agrees with it apart from the missing keys.
    check = G["dump_table_order"]["shared_file_check"]
    assert check["n_entries"] == 129 and check["extra_vs_torch"] == [] and check["order_consistent_with_torch"]
    assert len(check["missing_vs_torch"]) == 137 - 129


def test_parse_accepts_canonical_and_legacy_names():
    for spelling, value in G["parse"].items():
        if value is not None:
            assert DispatchKey.parse(spelling) == value
    # PyTorch 2.13's parser dropped these; the issue asks us to keep them.
    assert DispatchKey.parse("Math") == DispatchKey.CompositeImplicitAutograd
    assert DispatchKey.parse("DefaultBackend") == DispatchKey.CompositeExplicitAutograd
    assert DispatchKey.parse("CatchAll") == DispatchKey.Undefined
    for bad in ("", "cpu", "Bogus"):
        with pytest.raises(ValueError, match=f"could not parse dispatch key: {bad}"):
            DispatchKey.parse(bad)
    with pytest.raises(ValueError, match="did you mean CPU"):
        DispatchKey.parse("CPu")


def test_named_constants():
    c = G["constants"]
    ours = {
        "autograd_dispatch_keyset": keysets.AUTOGRAD_DISPATCH_KEYSET,
        "autocast_dispatch_keyset": keysets.AUTOCAST_DISPATCH_KEYSET,
        "default_included_set": keysets.DEFAULT_INCLUDED_SET,
        "default_excluded_set": keysets.DEFAULT_EXCLUDED_SET,
        "autograd_dispatch_keyset_with_ADInplaceOrView": keysets.AUTOGRAD_DISPATCH_KEYSET_WITH_ADINPLACEORVIEW,
        "python_ks": keysets.PYTHON_KEYSET,
        "autogradother_backends": keysets.AUTOGRADOTHER_BACKENDS,
        "after_autograd_keyset": keysets.AFTER_AUTOGRAD_KEYSET,
        "after_ADInplaceOrView_keyset": keysets.AFTER_ADINPLACEORVIEW_KEYSET,
        "after_func_keyset": keysets.AFTER_FUNC_KEYSET,
        "backend_bitset_mask": keysets.BACKEND_BITSET_MASK,
        "backend_dispatch_keyset": keysets.BACKEND_DISPATCH_KEYSET,
        "math_dispatch_keyset": keysets.MATH_DISPATCH_KEYSET,
        "nested_dispatch_keyset": keysets.NESTED_DISPATCH_KEYSET,
        "non_functional_backend_dispatch_keyset": keysets.NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET,
        "functorch_batched_ks": keysets.FUNCTORCH_BATCHED_KEYSET,
    }
    assert {name: ks.raw_repr() for name, ks in ours.items()} == {name: c[name] for name in ours}


def test_alias_expansion():
    for name, g in G["alias"].items():
        alias = DispatchKey[name]
        assert keysets.get_runtime_dispatch_key_set(alias).raw_repr() == g["runtime_key_set"]
        included = [k.value for k in DispatchKey if keysets.is_included_in_alias(k, alias)]
        assert included == g["included"]


def test_tls_defaults(core):
    assert core.tls_local_include_set().raw_repr() == G["tls_defaults"]["included"]
    assert core.tls_local_exclude_set().raw_repr() == G["tls_defaults"]["excluded"]


def test_single_key_sets(core):
    for g in G["dispatch_keys"]:
        ks = core.DispatchKeySet(DispatchKey(g["value"]))
        assert ks.raw_repr() == g["single_set"], g["name"]
        if "repr" in g:
            assert repr(ks) == g["repr"]
            assert ks.dispatch_table_index() == g["table_index"]
            assert ks.highest_priority_key() == key_or_undefined(g["highest_priority_key"])
            assert ks.highest_functionality_key() == g["highest_functionality_key"]
            assert ks.highest_backend() == g["highest_backend"]


def test_full_and_full_after(core):
    assert core.DispatchKeySet.full().raw_repr() == G["full"]
    for value, raw in G["full_after"].items():
        assert core.DispatchKeySet.full_after(DispatchKey(int(value))).raw_repr() == raw


def test_sets(core):
    assert len(G["sets"]) >= 2000
    for g in G["sets"]:
        ks = core.DispatchKeySet.from_raw_repr(g["raw"])
        assert repr(ks) == g["repr"]
        assert [k.value for k in ks] == g["iter"]
        assert len(ks) == g["len"]
        assert ks.highest_priority_key() == key_or_undefined(g["highest_priority_key"])
        assert ks.highest_functionality_key() == g["highest_functionality_key"]
        assert ks.highest_backend() == g["highest_backend"]
        assert ks.dispatch_table_index() == g["table_index"]


def test_binary_ops(core):
    KS = core.DispatchKeySet.from_raw_repr
    for g in G["binary_ops"]:
        a, b = KS(g["a"]), KS(g["b"])
        assert [(a | b).raw_repr(), (a & b).raw_repr(), (a - b).raw_repr(), (a ^ b).raw_repr()] == [
            g["or"], g["and"], g["sub"], g["xor"]
        ]
        assert (a.has_all(b), a.has_any(b), a.is_superset_of(b)) == (g["has_all"], g["has_any"], g["is_superset_of"])


def test_key_and_backend_ops(core):
    KS = core.DispatchKeySet.from_raw_repr
    for g in G["key_ops"]:
        s, k = KS(g["set"]), DispatchKey(g["key"])
        assert (s.add(k).raw_repr(), s.remove(k).raw_repr(), s.has(k)) == (g["add"], g["remove"], g["has"])
    for g in G["backend_ops"]:
        s, b = KS(g["set"]), BackendComponent(g["backend"])
        assert s.remove_backend(b).raw_repr() == g["remove_backend"]
        assert s.has_backend(b) == g["has_backend"]
        assert s.add(b).raw_repr() == g["add_backend"]


def test_bits_above_the_layout_are_rejected(core):
    # c10 asserts or reads out of bounds on these; we refuse to build them.
    for g in G["raw_bits_62_63"].values():
        with pytest.raises(ValueError):
            core.DispatchKeySet.from_raw_repr(g["raw"])
