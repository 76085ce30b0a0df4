#!/usr/bin/env python
"""Generate ``registration_golden.json`` from real PyTorch 2.13.

Run with a Python that has ``torch==2.13.0`` installed (never the project's own
environment; the ``dispatcher`` package must not need torch)::

    /path/to/torchenv/bin/python tests/golden/generate_registration_golden.py

The script drives torch's low-level registration bindings
(``torch._C._dispatch_library`` and the ``_DispatchModule`` methods ``def_``,
``def_legacy``, ``def_name_t_t``, ``def_schema_t_t``, ``impl_t_t``, ``impl``,
``fallback``, ``fallback_fallthrough``, ``reset``), records what
``_dispatch_dump`` / ``_dispatch_dump_table`` and the ``_dispatch_*``
predicates print, and writes everything to JSON next to this file.  See
REGISTRATION.md for the format.

Everything is deterministic (fixed seed, fixed file names/line numbers for our
own libraries) except the ``registered at /__w/pytorch/...:N`` texts of
torch's own framework registrations, which are kept verbatim.
"""

from __future__ import annotations

import json
import os
import random
import sys
import textwrap

import torch
from torch.library import Library, fallthrough_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import registration_steps  # noqa: E402  (beside this file: the test runs the same steps)

C = torch._C

SEED = 2_13_0
NS = "golden"
N_RANDOM_CASES = 505
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "registration_golden.json")

# --------------------------------------------------------------------------
# Key universe, read from torch itself
# --------------------------------------------------------------------------


def _all_parseable_keys():
    """(value, name) of every key name torch's parser accepts, by value."""
    out = []
    for v in range(256):
        try:
            k = C.DispatchKey(v)
        except Exception:  # pragma: no cover - pybind enum accepts any uint8
            continue
        name = C._dispatch_key_name(k)
        p = C._parse_dispatch_key(name)
        if p is not None and int(p) == v:
            out.append((v, name))
    return out


PARSEABLE = _all_parseable_keys()
PARSEABLE_NAMES = [n for _, n in PARSEABLE]
KEY_VALUE = dict((n, v) for v, n in PARSEABLE)
ALIAS_KEYS = [n for n in PARSEABLE_NAMES if C._dispatch_is_alias_key(C._parse_dispatch_key(n))]


def _runtime_keys_in_dump_order():
    s = C._dispatch_keyset_to_string(C._dispatch_keyset_full())
    assert s.startswith("DispatchKeySet(") and s.endswith(")")
    return ["Undefined"] + [x.strip() for x in s[len("DispatchKeySet("):-1].split(",")]


RUNTIME_DUMP_ORDER = _runtime_keys_in_dump_order()
PARSEABLE_RUNTIME = [n for n in RUNTIME_DUMP_ORDER if n in KEY_VALUE and n != "Undefined"]
FUNCTIONALITY_ONLY = [
    n for n in PARSEABLE_NAMES
    if n not in ALIAS_KEYS and n not in RUNTIME_DUMP_ORDER
]

assert set(ALIAS_KEYS) == {
    "Autograd", "CompositeImplicitAutograd", "FuncTorchBatchedDecomposition",
    "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
}, ALIAS_KEYS


def has_backend_fallback(name):
    return bool(C._dispatch_has_backend_fallback(C._parse_dispatch_key(name)))


BASE_HAS_FALLBACK = {n: has_backend_fallback(n) for n in PARSEABLE_NAMES}

# keys on which the random cases may register their own backend fallbacks
FALLBACK_POOL = [n for n in PARSEABLE_RUNTIME if not BASE_HAS_FALLBACK[n]]

HOT_KEYS = [
    "CPU", "CUDA", "XLA", "Lazy", "Meta", "FPGA", "MPS", "PrivateUse1",
    "QuantizedCPU", "SparseCPU", "SparseCsrCPU", "NestedTensorCPU", "MkldnnCPU",
    "AutogradCPU", "AutogradCUDA", "AutogradXLA", "AutogradOther", "AutogradLazy",
    "AutogradNestedTensor", "AutogradMeta", "AutogradPrivateUse1",
    "FuncTorchBatched", "BackendSelect", "ADInplaceOrView", "Python", "Functionalize",
    "AutocastCPU", "Batched", "VmapMode", "Tracer",
]
HOT_FALLBACK_KEYS = [k for k in ["CPU", "CUDA", "XLA", "Lazy", "MPS", "PrivateUse1",
                                 "FPGA", "QuantizedCPU", "SparseCPU", "NestedTensorCPU",
                                 "AutogradNestedTensor", "AutogradPrivateUse2",
                                 "Fake", "AutocastXLA"] if k in FALLBACK_POOL]
PROBE_KEYS = ["Undefined", "CPU", "CUDA", "XLA", "AutogradCPU", "AutogradOther",
              "AutogradXLA", "CompositeImplicitAutograd"]

# --------------------------------------------------------------------------
# Step execution
# --------------------------------------------------------------------------


def _err_text(e):
    return str(e)


class Runner:
    """Executes JSON steps against torch and keeps the live library objects."""

    def __init__(self):
        self.libs = {}

    def run(self, step):
        """Run one step; return None or (error type name, message)."""
        try:
            self._run(step)
        except Exception as e:  # noqa: BLE001 - we record torch's message
            return type(e).__name__, _err_text(e)
        return None

    def _run(self, s):
        registration_steps.run_step(C, fallthrough_kernel, self.libs, s)

    def drop_all(self):
        for i in sorted(self.libs):
            self.libs[i].reset()
        self.libs.clear()


def _call(f, *a):
    try:
        r = f(*a)
    except Exception as e:  # noqa: BLE001
        return {"error": _err_text(e)}
    return r


def _computed_kernel(q, k):
    try:
        r = C._dispatch_get_computed_kernel_for_dispatch_key(q, k)
    except Exception as e:  # noqa: BLE001
        return {"error": _err_text(e)}
    return repr(r)


def snapshot_op(q, keys):
    dump = C._dispatch_dump(q)
    snap = {"dump": dump, "dump_table": C._dispatch_dump_table(q)}
    if dump == "":
        snap["exists"] = False
        return snap
    snap["exists"] = True
    try:
        C._dispatch_check_invariants(q)
        snap["check_invariants"] = None
    except Exception as e:  # noqa: BLE001
        snap["check_invariants"] = _err_text(e)
    hk, hck, ft, ck = {}, {}, {}, {}
    for k in keys:
        hk[k] = _call(C._dispatch_has_kernel_for_dispatch_key, q, k)
        if k in ALIAS_KEYS:
            continue  # runtime predicates only raise "Alias keys do not have ..." (see errors)
        hck[k] = _call(C._dispatch_has_computed_kernel_for_dispatch_key, q, k)
        f = _call(C._dispatch_kernel_for_dispatch_key_is_fallthrough, q, k)
        # only recorded where it does not raise the standard "no kernel" error (see REGISTRATION.md)
        if f != {"error": f"no kernel for {k} on {q}"}:
            ft[k] = f
        ck[k] = _computed_kernel(q, k)
    snap["has_kernel_for_dispatch_key"] = hk
    snap["has_computed_kernel_for_dispatch_key"] = hck
    snap["kernel_for_dispatch_key_is_fallthrough"] = ft
    snap["computed_kernel_for_dispatch_key"] = ck
    return snap


def take_snapshot(after_step, ops, keys, fallback_keys, all_fallbacks=False):
    keys = sorted(set(keys) | set(PROBE_KEYS), key=lambda n: KEY_VALUE[n])
    snap = {"after_step": after_step, "ops": {q: snapshot_op(q, keys) for q in ops}}
    if all_fallbacks:
        snap["has_backend_fallback"] = {k: has_backend_fallback(k) for k in PARSEABLE_NAMES}
    elif fallback_keys:
        snap["has_backend_fallback"] = {
            k: has_backend_fallback(k) for k in sorted(set(fallback_keys), key=lambda n: KEY_VALUE[n])
        }
    return snap


# --------------------------------------------------------------------------
# Baselines
# --------------------------------------------------------------------------

PROBE_OP = NS + "::fresh_probe"


def fresh_probe_table():
    m = C._dispatch_library("FRAGMENT", NS, "", "fresh_probe.py", 1)
    try:
        m.def_(PROBE_OP + "(Tensor self) -> Tensor")
        return C._dispatch_dump(PROBE_OP), C._dispatch_dump_table(PROBE_OP)
    finally:
        m.reset()


BASE_DUMP, BASE_TABLE = fresh_probe_table()


def framework_fallbacks():
    out = {}
    for line in BASE_TABLE.split("\n"):
        if not line:
            continue
        key, rest = line.split(": ", 1)
        assert rest.endswith(" [backend fallback]"), line
        text = rest[: -len(" [backend fallback]")]
        ft = text.startswith("fallthrough ")
        out[key] = {
            "fallthrough": ft,
            "debug": text[len("fallthrough "):] if ft else text,
            "dump_table_line": line,
            "parseable": key in KEY_VALUE,
        }
        assert BASE_HAS_FALLBACK.get(key, True), key
    return out


FRAMEWORK_FALLBACKS = framework_fallbacks()


def assert_clean(ops):
    for q in ops:
        d = C._dispatch_dump(q)
        assert d == "", (q, d)
    d, t = fresh_probe_table()
    assert t == BASE_TABLE, t
    assert C._dispatch_dump(PROBE_OP) == ""
    now = {n: has_backend_fallback(n) for n in PARSEABLE_NAMES}
    assert now == BASE_HAS_FALLBACK, {k for k in now if now[k] != BASE_HAS_FALLBACK[k]}


# --------------------------------------------------------------------------
# Scripted scenarios (edge cases and errors)
# --------------------------------------------------------------------------

SNAP = {"op": "SNAPSHOT"}


def run_scenario(runner, steps_in, ops):
    """Run steps (with SNAPSHOT markers); return (steps, snapshots)."""
    steps, snaps = [], []
    keys, fb_keys = set(), set()
    for s in steps_in:
        if s["op"] == "SNAPSHOT":
            snaps.append(take_snapshot(len(steps) - 1, ops, keys & set(KEY_VALUE), fb_keys & set(KEY_VALUE),
                                       all_fallbacks=bool(fb_keys)))
            continue
        s = dict(s)
        for f in ("dispatch", "dispatch_key"):
            if s.get(f):
                keys.add(s[f])
        if s["op"].startswith("fallback"):
            fb_keys.add(s["dispatch"])
        r = runner.run(s)
        s["error"] = None if r is None else r[1]
        if r is not None:
            s["error_type"] = r[0]
        steps.append(s)
    return steps, snaps


def lib(i, kind, ns, key="", file=None, line=None):
    return {"op": "new_library", "lib": i, "kind": kind, "ns": ns, "dispatch_key": key,
            "file": file if file is not None else f"lib{i}.py", "line": line if line is not None else 10 + i}


def d(i, schema, alias=""):
    return {"op": "def", "lib": i, "schema": schema, "alias": alias}


def itt(i, name, key, debug):
    return {"op": "impl_t_t", "lib": i, "name": name, "dispatch": key, "debug": debug}


def ipy(i, name, key, with_keyset=False):
    return {"op": "impl_python", "lib": i, "name": name, "dispatch": key, "with_keyset": with_keyset}


def ift(i, name, key):
    return {"op": "impl_fallthrough", "lib": i, "name": name, "dispatch": key}


def fft(i, key):
    return {"op": "fallback_fallthrough", "lib": i, "dispatch": key}


def fpy(i, key, with_keyset=False):
    return {"op": "fallback_python", "lib": i, "dispatch": key, "with_keyset": with_keyset}


def fftk(i, key):
    return {"op": "fallback_fallthrough_kernel", "lib": i, "dispatch": key}


def drop(i):
    return {"op": "drop", "lib": i}


def edge_scenarios():
    """Hand-written non-error scenarios: (description, ops, steps)."""
    S = []
    q = lambda n: f"{NS}::{n}"  # noqa: E731
    T = "(Tensor self) -> Tensor"

    n = "edge_catchall"
    S.append(("impl with dispatch '' and 'Undefined' in a keyless library register to the catch-all "
              "(CompositeImplicitAutograd); the second overrides the first", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, "", "ca_empty"), SNAP,
        itt(0, n, "Undefined", "ca_undefined"), SNAP,
        lib(1, "IMPL", NS, ""), ipy(1, n, "CompositeImplicitAutograd"), SNAP,
        drop(1), SNAP, drop(0), SNAP]))

    n = "edge_impl_only"
    S.append(("impl before def; def library dropped first leaves an impl-only entry", [q(n)], [
        lib(0, "IMPL", NS, "CPU"), itt(0, n, "", "io_cpu"), SNAP,
        lib(1, "FRAGMENT", NS), ipy(1, n, "XLA"), SNAP,
        lib(2, "FRAGMENT", NS), d(2, q(n) + T), SNAP,
        drop(2), SNAP, drop(0), SNAP, drop(1), SNAP]))

    n = "edge_ambiguous_fpga"
    S.append(("CompositeImplicitAutograd + a kernel on an AutogradOther backend (FPGA) -> ambiguous "
              "AutogradOther slot", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, "CompositeImplicitAutograd", "amb_cia"),
        itt(0, n, "FPGA", "amb_fpga"), SNAP,
        lib(1, "IMPL", NS, "SparseCsrCPU"), itt(1, n, "", "amb_sparsecsr"), SNAP,
        lib(2, "IMPL", NS, "AutogradOther"), itt(2, n, "", "amb_autogradother"), SNAP,
        drop(2), drop(0), SNAP, drop(1), SNAP]))

    n = "edge_ambiguous_cea"
    S.append(("CompositeImplicitAutograd + CompositeExplicitAutograd + FPGA/MkldnnCPU kernels", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, "CompositeImplicitAutograd", "ae_cia"),
        itt(0, n, "CompositeExplicitAutograd", "ae_cea"), SNAP, itt(0, n, "MkldnnCPU", "ae_mkldnn"), SNAP,
        itt(0, n, "Autograd", "ae_autograd"), SNAP, drop(0), SNAP]))

    n = "edge_aliases_all"
    S.append(("every alias key at once, then removed one by one (newest first)", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T)] + sum([[lib(i + 1, "IMPL", NS, a), itt(i + 1, n, "", "al_" + a)]
                                                      for i, a in enumerate(ALIAS_KEYS)], [])
        + [SNAP] + sum([[drop(i + 1), SNAP] for i in reversed(range(len(ALIAS_KEYS)))], []) + [drop(0), SNAP]))

    n = "edge_nested"
    S.append(("CompositeImplicitAutogradNestedTensor vs CompositeImplicitAutograd vs NestedTensorCPU", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, "CompositeImplicitAutogradNestedTensor", "nt_cia_nt"), SNAP,
        itt(0, n, "CompositeImplicitAutograd", "nt_cia"), SNAP, itt(0, n, "NestedTensorCPU", "nt_cpu"),
        itt(0, n, "AutogradNestedTensor", "nt_autograd"), SNAP, drop(0), SNAP]))

    n = "edge_batched_decomp"
    S.append(("FuncTorchBatchedDecomposition with and without a FuncTorchBatched kernel", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, "FuncTorchBatchedDecomposition", "bd_alias"), SNAP,
        itt(0, n, "FuncTorchBatched", "bd_direct"), SNAP, itt(0, n, "CompositeImplicitAutograd", "bd_cia"),
        SNAP, drop(0), SNAP]))

    n = "edge_override_chain"
    S.append(("three kernels on CPU from three libraries; dropping the newest / middle / oldest", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", NS, "CPU"), itt(1, n, "", "ov_1"),
        lib(2, "IMPL", NS, ""), itt(2, n, "CPU", "ov_2"), lib(3, "FRAGMENT", NS), itt(3, n, "CPU", "ov_3"), SNAP,
        drop(2), SNAP, drop(3), SNAP, lib(4, "IMPL", NS, "CPU"), ipy(4, n, "CPU"), SNAP, drop(1), SNAP,
        drop(4), SNAP, drop(0), SNAP]))

    n = "edge_override_same_lib"
    S.append(("several kernels on one key from the same library, incl. a python kernel and a fallthrough",
              [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, "AutogradCPU", "sl_1"), ipy(0, n, "AutogradCPU", True),
        ift(0, n, "AutogradCPU"), itt(0, n, "AutogradCPU", "sl_4"), SNAP,
        lib(1, "IMPL", NS, "AutogradCPU"), ift(1, n, "AutogradCPU"), SNAP, drop(1), SNAP, drop(0), SNAP]))

    n = "edge_fallthrough_kernels"
    S.append(("fallthrough impls on backend, autograd and functionality keys", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), ift(0, n, "CPU"), ift(0, n, "AutogradCPU"),
        ift(0, n, "BackendSelect"), ift(0, n, "Python"), ift(0, n, "CompositeImplicitAutograd"), SNAP,
        itt(0, n, "CPU", "ftk_cpu"), SNAP, drop(0), SNAP]))

    n = "edge_fallbacks"
    S.append(("backend fallbacks of every flavour on an op without kernels", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), SNAP,
        lib(1, "IMPL", "_", "", "fallbacks.py", 1), fft(1, "CPU"), fpy(1, "XLA"), fpy(1, "Lazy", True),
        fftk(1, "PrivateUse1"), SNAP,
        lib(2, "IMPL", "_", "AutogradNestedTensor", "fallbacks.py", 2), fft(2, ""),
        lib(3, "IMPL", "_", "Fake", "fallbacks.py", 3), fpy(3, "Fake"),
        lib(4, "IMPL", "_", "QuantizedCPU", "fallbacks.py", 4), fftk(4, "QuantizedCPU"), SNAP,
        itt(0, n, "CPU", "fb_cpu_kernel"), itt(0, n, "QuantizedCPU", "fb_qcpu_kernel"), SNAP,
        itt(0, n, "CompositeExplicitAutograd", "fb_cea"), SNAP,
        drop(1), SNAP, drop(0), drop(2), drop(3), drop(4), SNAP]))

    n = "edge_fallback_vs_alias"
    S.append(("backend fallback vs CompositeImplicitAutograd / Autograd alias precedence", [q(n)], [
        lib(0, "IMPL", "_", "", "fb2.py", 1), fft(0, "XLA"), fpy(0, "AutogradPrivateUse2"),
        lib(1, "FRAGMENT", NS), d(1, q(n) + T), itt(1, n, "Autograd", "fa_autograd"), SNAP,
        itt(1, n, "CompositeImplicitAutograd", "fa_cia"), SNAP,
        itt(1, n, "CompositeExplicitAutograd", "fa_cea"), SNAP, drop(1), drop(0), SNAP]))

    n = "edge_functionality_keys"
    S.append(("kernels on per-backend functionality keys without a backend (Dense, Quantized, Sparse, "
              "SparseCsr, NestedTensor, AutogradFunctionality)", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T)] + [itt(0, n, k, "fk_" + k) for k in FUNCTIONALITY_ONLY]
        + [SNAP, drop(0), SNAP]))

    n = "edge_def_variants"
    qs = [q(n + s) for s in ("_a", "_b", "_c", "_d", "_e", "_f", "_g", "_h.ov", "_i")]
    S.append(("def_ with each alias analysis kind, def_legacy, def_name_t_t (plain / qualified / overload), "
              "def_schema_t_t", qs, [
        lib(0, "FRAGMENT", NS, "", "defs.py", 5),
        d(0, qs[0] + T), d(0, qs[1] + T, "FROM_SCHEMA"), d(0, qs[2] + T, "CONSERVATIVE"),
        d(0, qs[3] + T, "PURE_FUNCTION"),
        {"op": "def_legacy", "lib": 0, "schema": qs[4] + T},
        {"op": "def_name_t_t", "lib": 0, "name": n + "_f", "dispatch": "", "debug": "dv_f"},
        {"op": "def_name_t_t", "lib": 0, "name": qs[6], "dispatch": "CPU", "debug": "dv_g"},
        {"op": "def_name_t_t", "lib": 0, "name": n + "_h.ov", "dispatch": "AutogradCPU", "debug": "dv_h"},
        {"op": "def_schema_t_t", "lib": 0, "schema": qs[8] + "(Tensor self) -> Tensor", "dispatch": "XLA",
         "alias": "PURE_FUNCTION", "debug": "dv_i"},
        SNAP, drop(0), SNAP]))

    n = "edge_def_library"
    S.append(("a DEF library defines and implements; a FRAGMENT of the same namespace adds an overload "
              "and impls", [q(n), q(n + ".two")], [
        lib(0, "DEF", NS, "", "def_lib.py", 1), d(0, q(n) + T), itt(0, n, "CPU", "dl_cpu"),
        lib(1, "FRAGMENT", NS, "", "frag.py", 2), d(1, q(n) + ".two(Tensor self, Tensor other) -> Tensor"),
        ipy(1, n + ".two", "CPU"), itt(1, n, "XLA", "dl_xla"), SNAP, drop(0), SNAP, drop(1), SNAP]))

    n = "edge_multi_op_lib"
    S.append(("one IMPL library registers on two ops; dropping it removes both registrations", [q(n), q(n + "2")], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), d(0, q(n + "2") + T),
        lib(1, "IMPL", NS, "CUDA"), itt(1, n, "", "mo_1"), itt(1, n + "2", "", "mo_2"),
        lib(2, "IMPL", NS, "CUDA"), itt(2, n, "", "mo_3"), SNAP, drop(1), SNAP, drop(2), drop(0), SNAP]))

    n = "edge_default_file"
    S.append(("libraries created with the default file/line ('/dev/null', 0)", [q(n)], [
        lib(0, "FRAGMENT", NS, "", "/dev/null", 0), d(0, q(n) + T), ipy(0, n, "CPU"),
        lib(1, "IMPL", "_", "", "/dev/null", 0), fpy(1, "CUDA"), SNAP, drop(1), drop(0), SNAP]))

    n = "edge_fallback_other_key"
    S.append(("a '_' IMPL library with key CPU registers fallbacks with explicit other keys (CUDA, XLA) "
              "(torch accepts it; no consistency check as for impl)", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", "_", "CPU", "fb_cpu_lib.py", 1), fft(1, "CUDA"),
        fpy(1, "XLA"), fft(1, ""), SNAP, drop(1), SNAP, drop(0), SNAP]))

    n = "edge_impl_qualified"
    S.append(("impl names given with their namespace ('golden::op') in IMPL and FRAGMENT libraries", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, q(n), "CPU", "iq_frag"),
        lib(1, "IMPL", NS, "XLA"), itt(1, q(n), "", "iq_impl"), ipy(1, q(n), "XLA"), SNAP,
        drop(0), drop(1), SNAP]))
    return S


def error_scenarios():
    """Hand-written scenarios whose last (or marked) step fails."""
    E = []
    q = lambda n: f"{NS}::{n}"  # noqa: E731
    T = "(Tensor self) -> Tensor"

    n = "err_dup_def"
    E.append(("duplicate def in the same library", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), d(0, q(n) + T), SNAP]))
    n = "err_dup_def2"
    E.append(("duplicate def from a second FRAGMENT library (different signature, same name)", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "FRAGMENT", NS), d(1, q(n) + "(Tensor a, Tensor b) -> Tensor"),
        SNAP]))
    n = "err_dup_def_name_t_t"
    E.append(("def_name_t_t of an already defined op", [q(n)], [
        lib(0, "FRAGMENT", NS), {"op": "def_name_t_t", "lib": 0, "name": n, "dispatch": "CPU", "debug": "dn_1"},
        {"op": "def_name_t_t", "lib": 0, "name": n, "dispatch": "XLA", "debug": "dn_2"}, SNAP]))
    E.append(("duplicate fallback on a key with a framework fallback (BackendSelect)", [], [
        lib(0, "IMPL", "_", ""), fft(0, "BackendSelect")]))
    E.append(("duplicate fallback on a key with a framework fallback (AutogradCPU), python fallback", [], [
        lib(0, "IMPL", "_", ""), fpy(0, "AutogradCPU")]))
    E.append(("duplicate fallback from two libraries", [], [
        lib(0, "IMPL", "_", ""), fft(0, "CPU"), lib(1, "IMPL", "_", ""), fpy(1, "CPU")]))
    E.append(("duplicate fallback in one library (python after fallthrough_kernel)", [], [
        lib(0, "IMPL", "_", ""), fftk(0, "XLA"), fpy(0, "XLA", True)]))
    for a in ALIAS_KEYS:
        n = "err_alias_fallback_" + a
        E.append((f"fallback on alias key {a}: torch registers a fallback for each runtime key of the alias "
                  "in keyset order and stops at the first key that already has one; the keys registered "
                  "before the failure stay registered (owned by the library) until it is dropped", [q(n)], [
            lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", "_", "", "alias_fb.py", 1), fft(1, a), SNAP,
            fpy(1, a), SNAP, drop(1), SNAP]))
    n = "err_functionality_fallback"
    E.append(("fallbacks on per-backend functionality keys without a backend (Dense, ..., "
              "AutogradFunctionality) register nothing and raise nothing; the last step (Undefined) fails",
              [q(n)], [lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", "_", "", "func_fb.py", 1)]
             + [fft(1, k) for k in FUNCTIONALITY_ONLY] + [SNAP, fft(1, "Undefined"), SNAP, drop(1), SNAP]))
    E.append(("fallback on Undefined", [], [lib(0, "IMPL", "_", ""), fft(0, "Undefined")]))
    E.append(("fallback with no key in a keyless '_' library", [], [lib(0, "IMPL", "_", ""), fft(0, "")]))
    E.append(("fallback with no key in a keyless '_' library (python)", [], [
        lib(0, "IMPL", "_", ""), {"op": "fallback_python", "lib": 0, "dispatch": "", "with_keyset": False}]))
    E.append(("fallback in a namespaced IMPL library", [], [lib(0, "IMPL", NS, "XLA"), fft(0, "")]))
    E.append(("fallback in a FRAGMENT library", [], [lib(0, "FRAGMENT", NS), fft(0, "XLA")]))
    E.append(("fallback in a DEF library", [], [lib(0, "DEF", NS), fpy(0, "XLA")]))
    n = "err_def_in_impl"
    E.append(("def in an IMPL library", [q(n)], [lib(0, "IMPL", NS, "CPU"), d(0, q(n) + T)]))
    n = "err_def_in_impl2"
    E.append(("def_name_t_t in a keyless IMPL library", [q(n)], [
        lib(0, "IMPL", NS, ""), {"op": "def_name_t_t", "lib": 0, "name": n, "dispatch": "", "debug": "x"}]))
    E.append(("two DEF libraries for one namespace", [], [
        lib(0, "DEF", NS, "", "first.py", 1), lib(1, "DEF", NS, "", "second.py", 2)]))
    n = "err_def_frag_after_def"
    E.append(("a FRAGMENT after a DEF library of the same namespace is fine; a DEF after a FRAGMENT too; "
              "a second DEF is not", [q(n)], [
        lib(0, "FRAGMENT", NS, "", "frag.py", 3), lib(1, "DEF", NS, "", "def.py", 4), d(1, q(n) + T),
        lib(2, "FRAGMENT", NS, "", "frag2.py", 5), lib(3, "DEF", NS, "", "def2.py", 6), SNAP]))
    E.append(("DEF library with a dispatch key", [], [lib(0, "DEF", NS, "CPU")]))
    E.append(("FRAGMENT library for the wildcard namespace", [], [lib(0, "FRAGMENT", "_")]))
    E.append(("DEF library for the wildcard namespace", [], [lib(0, "DEF", "_")]))
    E.append(("bad library kind", [], [lib(0, "BOGUS", NS)]))
    for bad in ("Math", "DefaultBackend", "QuantizedHIP", "Bogus", "CatchAll", "Autocast"):
        E.append((f"unparseable dispatch key {bad!r} for a library", [], [lib(0, "IMPL", NS, bad)]))
    n = "err_bad_key_impl"
    for bad in ("Math", "DefaultBackend", "Bogus"):
        E.append((f"unparseable dispatch key {bad!r} for impl_t_t", [q(n)], [
            lib(0, "FRAGMENT", NS), d(0, q(n) + T), itt(0, n, bad, "bk"), SNAP]))
    E.append(("unparseable dispatch key for fallback_fallthrough", [], [lib(0, "IMPL", "_", ""), fft(0, "Math")]))
    n = "err_schema_mismatch"
    E.append(("impl_t_t (inferred (Tensor _0) -> Tensor _0) on an op with two arguments", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + "(Tensor self, Tensor other) -> Tensor"), itt(0, n, "CPU", "sm"), SNAP]))
    n = "err_schema_mismatch_ret"
    E.append(("impl_t_t on an op returning two tensors", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + "(Tensor self) -> (Tensor, Tensor)"), itt(0, n, "CPU", "smr"), SNAP]))
    n = "err_schema_mismatch_type"
    E.append(("impl_t_t on an op taking an int", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + "(int x) -> Tensor"), itt(0, n, "CPU", "smt"), SNAP]))
    n = "err_late_def_mismatch"
    E.append(("impl before def; the later def's schema does not match the kernel", [q(n)], [
        lib(0, "IMPL", NS, "CPU"), itt(0, n, "", "ld_cpu"), lib(1, "FRAGMENT", NS),
        d(1, q(n) + "(Tensor a, Tensor b) -> Tensor"), SNAP]))
    n = "err_key_mismatch"
    E.append(("impl with an explicit key different from the IMPL library's key", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", NS, "XLA"), itt(1, n, "CPU", "km"), SNAP]))
    n = "err_key_mismatch_py"
    E.append(("python impl with a key different from the IMPL library's key", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", NS, "XLA"), ipy(1, n, "CPU"), SNAP]))
    n = "err_ns_mismatch_impl"
    E.append(("impl with a namespace different from the library's", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", NS, "XLA"), itt(1, "other::" + n, "", "nm")]))
    n = "err_ns_mismatch_def"
    E.append(("def with a namespace different from the library's", [], [
        lib(0, "FRAGMENT", NS), d(0, "other::" + n + T)]))
    n = "err_impl_in_wildcard"
    E.append(("impl in an IMPL library of the wildcard namespace", [q(n)], [
        lib(0, "FRAGMENT", NS), d(0, q(n) + T), lib(1, "IMPL", "_", ""), itt(1, q(n), "CPU", "wc")]))
    n = "err_bad_alias"
    E.append(("def with an unknown alias analysis kind", [q(n)], [lib(0, "FRAGMENT", NS), d(0, q(n) + T, "BOGUS")]))
    n = "err_bad_schema"
    E.append(("def with an unparseable schema", [q(n)], [lib(0, "FRAGMENT", NS), d(0, q(n) + "(Tensor self -> Tensor")]))
    E.append(("impl_t_t with an empty op name", [], [lib(0, "FRAGMENT", NS), itt(0, "", "CPU", "empty")]))
    return E


# --------------------------------------------------------------------------
# Random cases
# --------------------------------------------------------------------------


class CaseBuilder:
    def __init__(self, rng, cid, forced_impl_key, forced_fallback_key):
        self.rng = rng
        self.cid = cid
        self.forced_impl_key = forced_impl_key
        self.forced_fallback_key = forced_fallback_key
        self.runner = Runner()
        self.steps = []
        self.snaps = []
        self.libs = {}  # id -> dict(kind, ns, key, alive)
        self.next_lib = 0
        self.kcount = 0
        self.used_impl_keys = []
        self.used_fb_keys = set()
        self.keys = set()
        self.unexpected = []

    # -- helpers
    def step(self, s):
        r = self.runner.run(s)
        s["error"] = None if r is None else r[1]
        if r is not None:
            s["error_type"] = r[0]
            self.unexpected.append((s, r))
        self.steps.append(s)
        for f in ("dispatch", "dispatch_key"):
            if s.get(f):
                self.keys.add(s[f])
        return r

    def snap(self):
        self.snaps.append(take_snapshot(len(self.steps) - 1, self.ops, self.keys, self.used_fb_keys))

    def new_lib(self, kind, ns, key=""):
        i = self.next_lib
        self.next_lib += 1
        line = self.rng.randint(1, 400)
        self.step({"op": "new_library", "lib": i, "kind": kind, "ns": ns, "dispatch_key": key,
                   "file": f"case{self.cid}_lib{i}.py", "line": line})
        self.libs[i] = {"kind": kind, "ns": ns, "key": key, "alive": True}
        return i

    def debug(self):
        self.kcount += 1
        return f"c{self.cid}_k{self.kcount}"

    def pick_impl_key(self):
        rng = self.rng
        if self.forced_impl_key is not None:
            k, self.forced_impl_key = self.forced_impl_key, None
            return k
        if self.used_impl_keys and rng.random() < 0.25:
            return rng.choice(self.used_impl_keys)
        r = rng.random()
        if r < 0.32:
            return rng.choice(HOT_KEYS)
        if r < 0.55:
            return rng.choice(ALIAS_KEYS)
        if r < 0.97:
            return rng.choice(PARSEABLE_RUNTIME)
        return rng.choice(FUNCTIONALITY_ONLY)

    def pick_fallback_key(self):
        if self.forced_fallback_key is not None and self.forced_fallback_key not in self.used_fb_keys:
            k, self.forced_fallback_key = self.forced_fallback_key, None
            return k
        rng = self.rng
        pool = HOT_FALLBACK_KEYS if rng.random() < 0.5 else FALLBACK_POOL
        free = [k for k in pool if k not in self.used_fb_keys] or \
               [k for k in FALLBACK_POOL if k not in self.used_fb_keys]
        return rng.choice(free)

    # -- the case
    def build(self):
        rng = self.rng
        cid = self.cid
        base = f"op{cid}"
        overload = rng.random() < 0.15
        self.name = base + (".ov" if overload else "")
        self.qual = f"{NS}::{self.name}"
        self.ops = [self.qual]
        multi = rng.random() < 0.12  # schema incompatible with the t_t kernels
        if multi:
            schema = f"{self.qual}(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
        else:
            schema = f"{self.qual}(Tensor self) -> Tensor"
        r = rng.random()
        if r < 0.07:
            def_mode = "none"
        elif r < 0.17 and not multi:
            def_mode = "def_name_t_t"
        elif r < 0.23 and not multi:
            def_mode = "def_schema_t_t"
        elif r < 0.26:
            def_mode = "def_legacy"
        else:
            def_mode = "def"
        def_kind = "DEF" if rng.random() < 0.2 else "FRAGMENT"
        n_regs = rng.randint(1, 8)
        if self.forced_fallback_key is not None:
            n_regs = max(n_regs, 2)
        def_pos = 0 if rng.random() < 0.7 else rng.randint(1, n_regs)  # def before reg #def_pos
        if def_mode == "none":
            def_pos = None
        # plan registration kinds
        kinds = []
        for _ in range(n_regs):
            x = rng.random()
            if x < 0.50:
                kinds.append("impl_t_t" if not multi else "impl_python")
            elif x < 0.66:
                kinds.append("impl_python")
            elif x < 0.76:
                kinds.append("impl_fallthrough")
            elif x < 0.86:
                kinds.append("fallback_fallthrough")
            elif x < 0.95:
                kinds.append("fallback_python")
            else:
                kinds.append("fallback_fallthrough_kernel")
        if self.forced_fallback_key is not None and not any(k.startswith("fallback") for k in kinds):
            kinds[rng.randrange(n_regs)] = rng.choice(["fallback_fallthrough", "fallback_python"])
        if self.forced_impl_key is not None and not any(k.startswith("impl") for k in kinds):
            kinds[rng.randrange(n_regs)] = "impl_t_t" if not multi else "impl_python"
        mid_snap = rng.randrange(n_regs - 1) if (n_regs > 1 and rng.random() < 0.12) else None
        mid_drop = rng.randrange(n_regs) if (n_regs > 1 and rng.random() < 0.15) else None
        self.def_lib = None

        def do_def():
            i = self.new_lib(def_kind, NS)
            self.def_lib = i
            if def_mode == "def":
                alias = rng.choice(["", "", "", "FROM_SCHEMA", "CONSERVATIVE", "PURE_FUNCTION"])
                self.step({"op": "def", "lib": i, "schema": schema, "alias": alias})
            elif def_mode == "def_legacy":
                self.step({"op": "def_legacy", "lib": i, "schema": schema})
            elif def_mode == "def_name_t_t":
                key = "" if rng.random() < 0.3 else self.pick_impl_key()
                nm = self.name if rng.random() < 0.7 else self.qual
                self.step({"op": "def_name_t_t", "lib": i, "name": nm, "dispatch": key, "debug": self.debug()})
                if key:
                    self.used_impl_keys.append(key)
            elif def_mode == "def_schema_t_t":
                key = "" if rng.random() < 0.3 else self.pick_impl_key()
                alias = rng.choice(["", "FROM_SCHEMA", "CONSERVATIVE", "PURE_FUNCTION"])
                self.step({"op": "def_schema_t_t", "lib": i, "schema": schema, "dispatch": key,
                           "alias": alias, "debug": self.debug()})
                if key:
                    self.used_impl_keys.append(key)

        for j, kind in enumerate(kinds):
            if def_pos == j:
                do_def()
            if kind.startswith("impl"):
                self.do_impl(kind)
            else:
                self.do_fallback(kind)
            if j == mid_drop:
                alive = [i for i, L in self.libs.items() if L["alive"]]
                self.do_drop(rng.choice(alive))
                if rng.random() < 0.4:
                    self.snap()
            if j == mid_snap:
                self.snap()
        if def_pos == n_regs:
            do_def()
        self.snap()
        alive = [i for i, L in self.libs.items() if L["alive"]]
        rng.shuffle(alive)
        # one snapshot between drops in about 40% of the cases (size budget), always one at the end
        drop_snap = rng.randrange(len(alive) - 1) if (len(alive) > 1 and rng.random() < 0.4) else None
        for k, i in enumerate(alive):
            self.do_drop(i)
            if k == len(alive) - 1 or k == drop_snap:
                self.snap()
        assert not self.runner.libs
        return {"id": cid, "ops": self.ops, "steps": self.steps, "snapshots": self.snaps}

    def do_drop(self, i):
        self.step({"op": "drop", "lib": i})
        self.libs[i]["alive"] = False
        if self.def_lib == i:
            self.def_lib = None

    def host_for_impl(self):
        """Pick (lib id, key or None if the library's key must be used)."""
        rng = self.rng
        cands = [i for i, L in self.libs.items() if L["alive"] and L["ns"] == NS]
        if cands and rng.random() < 0.6:
            return rng.choice(cands)
        r = rng.random()
        if r < 0.4:
            key = self.pick_impl_key()
            return self.new_lib("IMPL", NS, key)
        if r < 0.7:
            return self.new_lib("IMPL", NS, "")
        return self.new_lib("FRAGMENT", NS, "")

    def do_impl(self, kind):
        rng = self.rng
        i = self.host_for_impl()
        L = self.libs[i]
        if L["key"]:
            key = L["key"]
            dispatch = "" if (kind == "impl_t_t" and rng.random() < 0.6) else key
            if kind != "impl_t_t":
                dispatch = key  # the python binding needs an explicit key
        else:
            key = self.pick_impl_key()
            dispatch = key
        self.used_impl_keys.append(key)
        name = self.name if rng.random() < 0.85 else self.qual
        if kind == "impl_t_t":
            self.step({"op": "impl_t_t", "lib": i, "name": name, "dispatch": dispatch, "debug": self.debug()})
        elif kind == "impl_python":
            self.step({"op": "impl_python", "lib": i, "name": name, "dispatch": dispatch,
                       "with_keyset": rng.random() < 0.4})
        else:
            self.step({"op": "impl_fallthrough", "lib": i, "name": name, "dispatch": dispatch})

    def do_fallback(self, kind):
        rng = self.rng
        key = self.pick_fallback_key()
        self.used_fb_keys.add(key)
        cands = [i for i, L in self.libs.items() if L["alive"] and L["ns"] == "_" and not L["key"]]
        r = rng.random()
        if r < 0.3:
            i = self.new_lib("IMPL", "_", key)
            dispatch = "" if kind == "fallback_fallthrough" and rng.random() < 0.6 else key
        else:
            i = rng.choice(cands) if (cands and r < 0.75) else self.new_lib("IMPL", "_", "")
            dispatch = key
        if kind == "fallback_python":
            self.step({"op": "fallback_python", "lib": i, "dispatch": dispatch, "with_keyset": rng.random() < 0.4})
        else:
            self.step({"op": kind, "lib": i, "dispatch": dispatch})


# --------------------------------------------------------------------------
# torch.library.Library (Python API) cases: replayable source snippets
# --------------------------------------------------------------------------

LIBRARY_SNIPPETS = [
    ("python kernels via torch.library.Library: impl with a key, with_keyset=True, the library's own key, "
     "the default key (CompositeImplicitAutograd), fallthrough_kernel; define with alias analysis",
     "user_lib_a.py", [f"{NS}::libop_a", f"{NS}::libop_b", f"{NS}::libop_c.out"], textwrap.dedent('''\
        lib = Library("golden", "FRAGMENT")
        r1 = lib.define("libop_a(Tensor x) -> Tensor")
        r2 = lib.define("libop_b(Tensor x, Tensor y) -> Tensor", alias_analysis="CONSERVATIVE")
        r3 = lib.define("libop_c.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
        record("define_returns", [r1, r2, r3])
        def kcpu(x):
            return x
        def kks(keyset, x):
            return x
        lib.impl("libop_a", kcpu, "CPU")
        lib.impl("libop_a", kks, "AutogradCPU", with_keyset=True)
        lib.impl("libop_a", fallthrough_kernel, "XLA")
        lib.impl("libop_b", kcpu)
        lib2 = Library("golden", "IMPL", "CUDA")
        lib2.impl("libop_a", kcpu)
        lib2.impl("golden::libop_c.out", kcpu)
        snapshot("registered")
        lib2._destroy()
        snapshot("after_destroy_lib2")
        lib._destroy()
        snapshot("after_destroy_lib")
        ''')),
    ("python backend fallbacks via torch.library.Library('_', 'IMPL'): plain, with_keyset, fallthrough_kernel, "
     "the library's own key; errors of the Python layer",
     "user_lib_b.py", [f"{NS}::libop_d"], textwrap.dedent('''\
        ops = Library("golden", "DEF")
        ops.define("libop_d(Tensor x) -> Tensor")
        fb = Library("_", "IMPL")
        def boxed(op, *args, **kwargs):
            return None
        def boxed_ks(op, keyset, *args, **kwargs):
            return None
        fb.fallback(boxed, "XLA")
        fb.fallback(boxed_ks, "Lazy", with_keyset=True)
        fb.fallback(fallthrough_kernel, "PrivateUse1")
        fb2 = Library("_", "IMPL", "MPS")
        fb2.fallback(boxed)
        snapshot("fallbacks")
        expect_error("fallback_in_namespaced_library", lambda: ops.fallback(boxed, "CUDA"))
        expect_error("duplicate_fallback", lambda: fb.fallback(boxed, "XLA"))
        expect_error("impl_override_disallowed", lambda: (ops.impl("libop_d", boxed, "CPU"), ops.impl("libop_d", boxed, "CPU", allow_override=False)))
        expect_error("pure_function_rejected", lambda: ops.define("libop_e(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION"))
        expect_error("aten_def_library", lambda: Library("aten", "DEF"))
        expect_error("bad_kind", lambda: Library("golden", "BOGUS"))
        expect_error("second_def_library", lambda: Library("golden", "DEF"))
        snapshot("after_errors")
        fb._destroy()
        fb2._destroy()
        ops._destroy()
        snapshot("destroyed")
        ''')),
    ("a python kernel on every alias key via Library.impl, plus impl on an op defined by another library "
     "(impl before def)",
     "user_lib_c.py", [f"{NS}::libop_f"], textwrap.dedent('''\
        impls = Library("golden", "FRAGMENT")
        def k(*args):
            return args[0]
        impls.impl("libop_f", k, "CPU")
        snapshot("impl_only")
        defs = Library("golden", "FRAGMENT")
        defs.define("libop_f(Tensor x) -> Tensor")
        for key in ["CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
                    "CompositeImplicitAutogradNestedTensor", "Autograd", "FuncTorchBatchedDecomposition"]:
            impls.impl("libop_f", k, key)
        snapshot("all_aliases")
        defs._destroy()
        snapshot("def_destroyed")
        impls._destroy()
        snapshot("destroyed")
        ''')),
]


def run_library_snippet(desc, filename, ops, src):
    records = {}
    snaps = []
    errors = []
    keys = set(PROBE_KEYS) | {"XLA", "Lazy", "PrivateUse1", "MPS", "CUDA", "AutogradCPU"} | set(ALIAS_KEYS)

    def snapshot(label):
        snaps.append({"label": label, "ops": {q: snapshot_op(q, sorted(keys, key=lambda n: KEY_VALUE[n]))
                                              for q in ops}})

    def expect_error(label, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            errors.append({"label": label, "error_type": type(e).__name__, "error": _err_text(e)})
            return
        errors.append({"label": label, "error_type": None, "error": None})

    def record(label, value):
        records[label] = value

    g = {"Library": Library, "fallthrough_kernel": fallthrough_kernel, "snapshot": snapshot,
         "expect_error": expect_error, "record": record}
    exec(compile(src, filename, "exec"), g)
    # make sure the snippet cleaned up (libraries that failed to construct never registered anything)
    for v in list(g.values()):
        if isinstance(v, Library):
            v._destroy()
    return {"description": desc, "filename": filename, "ops": ops, "source": src,
            "records": records, "snapshots": snaps, "errors": errors}


# --------------------------------------------------------------------------


def main():
    rng = random.Random(SEED)
    out = {
        "meta": {
            "torch_version": torch.__version__,
            "generator": "tests/golden/generate_registration_golden.py",
            "seed": SEED,
            "note": "file:line texts under /__w/pytorch/pytorch/ are torch's own framework registrations "
                    "(kept verbatim); every other file:line was chosen by the generator.",
        },
        "dispatch_keys": [
            {"name": n, "value": v, "alias": n in ALIAS_KEYS, "runtime": n in RUNTIME_DUMP_ORDER,
             "has_backend_fallback": BASE_HAS_FALLBACK[n]}
            for v, n in PARSEABLE
        ],
        "runtime_keys_dump_order": RUNTIME_DUMP_ORDER,
        "framework_fallbacks": FRAMEWORK_FALLBACKS,
        "has_backend_fallback": BASE_HAS_FALLBACK,
        "fresh_op": {"steps": [lib(0, "FRAGMENT", NS, "", "fresh_probe.py", 1),
                               d(0, PROBE_OP + "(Tensor self) -> Tensor")],
                     "dump": BASE_DUMP, "dump_table": BASE_TABLE},
    }

    # random cases
    impl_cycle = PARSEABLE_RUNTIME + ALIAS_KEYS
    cases = []
    n_unexpected = 0
    for cid in range(N_RANDOM_CASES):
        fik = impl_cycle[cid] if cid < len(impl_cycle) else None
        ffk = FALLBACK_POOL[cid - len(impl_cycle)] if len(impl_cycle) <= cid < len(impl_cycle) + len(FALLBACK_POOL) \
            else None
        b = CaseBuilder(rng, cid, fik, ffk)
        case = b.build()
        assert_clean(case["ops"])
        n_unexpected += len(b.unexpected)
        for s, r in b.unexpected:
            print("unexpected error in case", cid, s, r, file=sys.stderr)
        cases.append(case)

    # hand-written scenarios
    next_id = N_RANDOM_CASES
    for desc, ops, steps in edge_scenarios():
        runner = Runner()
        st, sn = run_scenario(runner, steps, ops)
        bad = [s for s in st if s["error"]]
        assert not bad, (desc, bad)
        runner.drop_all()
        assert_clean(ops)
        cases.append({"id": next_id, "description": desc, "ops": ops, "steps": st, "snapshots": sn})
        next_id += 1
    errors = []
    for desc, ops, steps in error_scenarios():
        eid = len(errors)
        runner = Runner()
        st, sn = run_scenario(runner, steps, ops)
        errs = [s for s in st if s["error"]]
        runner.drop_all()
        assert_clean(ops)
        if not errs:  # torch accepted it: keep it as an edge case
            print("scenario without error, kept as a case:", desc, file=sys.stderr)
            cases.append({"id": next_id, "description": desc, "ops": ops, "steps": st, "snapshots": sn})
            next_id += 1
            continue
        errors.append({"id": eid, "description": desc, "ops": ops, "steps": st, "snapshots": sn,
                       "error": errs[0]["error"], "error_type": errs[0]["error_type"],
                       "error_step": st.index(errs[0]),
                       "cleanup": "drop every library still alive, in increasing id order"})
    out["cases"] = cases

    # errors raised by the query functions themselves
    m = C._dispatch_library("FRAGMENT", NS, "", "pred.py", 1)
    m.def_(f"{NS}::pred_op(Tensor self) -> Tensor")
    m.impl_t_t("pred_op", "CPU", "pred_cpu")
    qerr = []
    for fname, args in [
        ("_dispatch_kernel_for_dispatch_key_is_fallthrough", (f"{NS}::pred_op", "CUDA")),
        ("_dispatch_kernel_for_dispatch_key_is_fallthrough", (f"{NS}::pred_op", "CompositeImplicitAutograd")),
        ("_dispatch_has_computed_kernel_for_dispatch_key", (f"{NS}::pred_op", "CompositeImplicitAutograd")),
        ("_dispatch_has_computed_kernel_for_dispatch_key", (f"{NS}::pred_op", "Autograd")),
        ("_dispatch_get_computed_kernel_for_dispatch_key", (f"{NS}::pred_op", "Autograd")),
        ("_dispatch_get_computed_kernel_for_dispatch_key", (f"{NS}::pred_op", "CUDA")),
        ("_dispatch_get_computed_kernel_for_dispatch_key", (f"{NS}::pred_op", "CPU")),
        ("_dispatch_has_kernel_for_dispatch_key", (f"{NS}::no_such_op", "CPU")),
        ("_dispatch_has_computed_kernel_for_dispatch_key", (f"{NS}::no_such_op", "CPU")),
        # _dispatch_kernel_for_dispatch_key_is_fallthrough on an unknown op segfaults in torch 2.13
        ("_dispatch_get_computed_kernel_for_dispatch_key", (f"{NS}::no_such_op", "CPU")),
        ("_dispatch_dump", (f"{NS}::no_such_op",)),
        ("_dispatch_dump_table", (f"{NS}::no_such_op",)),
        ("_dispatch_check_invariants", (f"{NS}::no_such_op",)),
    ]:
        try:
            r = getattr(C, fname)(*args)
            qerr.append({"call": fname, "args": list(args), "result": r if isinstance(r, (bool, str, type(None)))
                         else repr(r), "error": None})
        except Exception as e:  # noqa: BLE001
            qerr.append({"call": fname, "args": list(args), "error": _err_text(e), "error_type": type(e).__name__})
    m.reset()
    out["query_errors"] = {"setup": [lib(0, "FRAGMENT", NS, "", "pred.py", 1),
                                     d(0, f"{NS}::pred_op(Tensor self) -> Tensor"),
                                     itt(0, "pred_op", "CPU", "pred_cpu")],
                           "calls": qerr,
                           "not_called": {"_dispatch_kernel_for_dispatch_key_is_fallthrough(unknown op, key)":
                                          "segfaults in torch 2.13 (no null check); raise a clear error instead"}}
    assert_clean([f"{NS}::pred_op"])
    out["errors"] = errors

    lib_cases = []
    for desc, fn, ops, src in LIBRARY_SNIPPETS:
        lib_cases.append(run_library_snippet(desc, fn, ops, src))
        assert_clean(ops)
    out["library_cases"] = lib_cases

    out["counts"] = {
        "cases": len(cases),
        "random_cases": N_RANDOM_CASES,
        "snapshots": sum(len(c["snapshots"]) for c in cases),
        "errors": len(errors),
        "library_cases": len(lib_cases),
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, separators=(",", ":"))
        f.write("\n")
    print(json.dumps(out["counts"]), "unexpected errors in random cases:", n_unexpected,
          "bytes:", os.path.getsize(OUT))


if __name__ == "__main__":
    main()
