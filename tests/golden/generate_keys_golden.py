#!/usr/bin/env python
"""Generate tests/golden/keys_golden.json: DispatchKey / DispatchKeySet golden data
read from real PyTorch 2.13 (c10 C++ via a small extension, cross-checked against
torch's Python-visible API).

Run ONLY in a separate virtualenv that has torch 2.13.0 (+ ninja):

    /tmp/torchenv/bin/python tests/golden/generate_keys_golden.py

The C++ oracle (tests/golden/oracle_keys.cpp) is compiled with
torch.utils.cpp_extension.load into $ORACLE_BUILD_DIR
(default /tmp/dispatcher_oracle_keys_build), never into the repository.
Output is deterministic (fixed RNG seed, no paths or timestamps in the JSON).
"""

import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "keys_golden.json")
CPP = os.path.join(HERE, "oracle_keys.cpp")
BUILD_DIR = os.environ.get("ORACLE_BUILD_DIR", "/tmp/dispatcher_oracle_keys_build")
SHARED_DUMP_ORDER = os.environ.get(
    "SHARED_DUMP_ORDER", "/work/shared/data/torch-2.13/dump_table_key_order.txt"
)
SEED = 2013

N_UNION_SETS = 2000
N_RAW_DENSE = 300
N_RAW_SPARSE = 300
N_BINARY = 300
N_KEY_OPS = 300
N_BACKEND_OPS = 150

# "Extra" spellings checked by the parser besides the Python enum's member names.
EXTRA_SPELLINGS = [
    "Math", "DefaultBackend", "CatchAll", "Autocast", "CPUTensorId",
    "CUDATensorId", "PrivateUse1_PreAutograd", "", "cpu", "Bogus", "CPUBit",
]


def tls_defaults_in_fresh_process():
    code = (
        "import json, torch\n"
        "C = torch._C\n"
        "i = C._dispatch_tls_local_include_set(); e = C._dispatch_tls_local_exclude_set()\n"
        "print(json.dumps({'included': i.raw_repr(), 'excluded': e.raw_repr(),"
        " 'included_repr': repr(i), 'excluded_repr': repr(e)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def load_oracle():
    from torch.utils.cpp_extension import load

    # ninja lives next to the interpreter of the venv
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    os.makedirs(BUILD_DIR, exist_ok=True)
    return load(
        name="oracle_keys",
        sources=[CPP],
        extra_cflags=["-O2", "-DNDEBUG"],
        build_directory=BUILD_DIR,
        verbose=False,
    )


def main():
    tls = tls_defaults_in_fresh_process()

    import torch

    C = torch._C
    O = load_oracle()
    rng = random.Random(SEED)

    def pyks(raw):
        return C.DispatchKeySet.from_raw_repr(raw)

    def pykey(v):
        return C.DispatchKey(v)

    # ------------------------------------------------------------------ meta
    nums = O.numeric_constants()
    enum = O.enum_constants()
    NB = nums["num_backends"]
    NF = nums["num_functionality_keys"]
    NR = nums["num_runtime_entries"]
    assert NB == C._dispatch_num_backends() == 16
    assert nums["full_backend_mask"] == (1 << NB) - 1
    end_alias = enum["EndOfAliasKeys"]
    start_alias = enum["StartOfAliasKeys"]
    py_members = {name: int(v) for name, v in C.DispatchKey.__members__.items()}

    # Sentinels: EndOfFunctionalityKeys and every StartOf*Backends. (The
    # EndOf*Backends / EndOfRuntimeBackendKeys / *OfAliasKeys names alias real
    # keys, e.g. EndOfDenseBackends == Meta, so they are not extra values.)
    sentinel_names = ["EndOfFunctionalityKeys"] + [
        n for n in enum if n.startswith("StartOf") and n.endswith("Backends")
    ]
    sentinels = {enum[n]: n for n in sentinel_names}
    for n in sentinel_names:
        if n in py_members:
            assert py_members[n] == enum[n], n
    assert enum["EndOfFunctionalityKeys"] == NF
    real_keys = [v for v in range(end_alias + 1) if v not in sentinels]
    alias_keys = list(range(start_alias, end_alias + 1))
    non_alias_keys = [v for v in real_keys if v < start_alias]

    # ---------------------------------------------------------- parse
    py_name_of = {}
    for name, v in py_members.items():
        # prefer the canonical spelling (pybind lists sentinels too)
        py_name_of.setdefault(v, name)
    cpp_names = [O.key_name(v) for v in real_keys]
    spellings = []
    for s in list(py_members) + EXTRA_SPELLINGS + cpp_names:
        if s not in spellings:
            spellings.append(s)
    parse = {}
    parse_errors = {}
    for s in spellings:
        try:
            v = int(C._dispatch_key_parse(s))
            err = None
        except RuntimeError as e:
            v = None
            err = str(e)
        silent = C._parse_dispatch_key(s)
        assert (silent is None) == (v is None), s
        if silent is not None:
            assert int(silent) == v, s
        cpp = O.parse_cpp(s)
        if v is None:
            assert cpp == err, (s, cpp, err)
            parse_errors[s] = err
        else:
            assert cpp == v, (s, cpp, v)
        parse[s] = v
    parse_api = {
        "_dispatch_key_parse": "raises RuntimeError with the message in parse_errors "
                               "(same text as c10::parseDispatchKey's c10::Error)",
        "_parse_dispatch_key": "returns None silently for every spelling in parse_errors",
    }

    # ---------------------------------------------------------- dispatch keys
    dispatch_keys = []
    key_by_value = {}
    for v in real_keys:
        info = O.key_info(v)
        name = info["name"]
        parseable = parse.get(name) == v
        entry = {
            "value": v,
            "name": name,
            "python_enum_name": name if py_members.get(name) == v else py_name_of.get(v),
            "is_alias": info["is_alias"],
            "parseable": parseable,
            "is_per_backend_functionality_key": info["is_per_backend_functionality_key"],
            "to_functionality_key": info["to_functionality_key"],
            "to_backend_component": info["to_backend_component"],
            "single_set": info["single_set"],
            "backend_key_set_from_autograd": info["backend_key_set_from_autograd"],
            "is_backend_dispatch_key": info["is_backend_dispatch_key"],
        }
        # Python-visible cross-checks
        k = pykey(v)
        assert C._dispatch_key_name(k) == name, (v, name)
        assert C._dispatch_is_alias_key(k) == info["is_alias"], v
        assert C.DispatchKeySet(k).raw_repr() == info["single_set"], v
        assert (C._dispatch_get_backend_keyset_from_autograd(k).raw_repr()
                == info["backend_key_set_from_autograd"]), v
        if not info["is_alias"]:
            si = O.set_info(info["single_set"])
            entry["repr"] = si["repr"]
            entry["table_index"] = info["table_index"]
            entry["highest_priority_key"] = si["highest_priority_key"]
            entry["highest_functionality_key"] = si["highest_functionality_key"]
            entry["highest_backend"] = si["highest_backend"]
            assert repr(C.DispatchKeySet(k)) == si["repr"], v
        else:
            assert info["single_set"] == 0
        dispatch_keys.append(entry)
        key_by_value[v] = entry
    names = {v: key_by_value[v]["name"] for v in real_keys}
    assert len(set(names.values())) == len(names), "key names are not unique"

    sentinel_info = []
    for v in sorted(sentinels):
        sentinel_info.append({
            "value": v, "enum_name": sentinels[v], "to_string": O.key_name(v),
            "single_set": O.key_info(v)["single_set"],
        })

    # ------------------------------------------------------ backend components
    backend_components = []
    for b in range(NB + 1):
        info = O.backend_info(b)
        backend_components.append(info)

    # ------------------------------------------------------ runtime slots
    full = O.full()
    assert full == C._dispatch_keyset_full().raw_repr()
    assert full == (1 << (NB + NF - 1)) - 1
    full_iter = O.iter_keys(full)
    runtime_keys = [0] + full_iter
    assert len(runtime_keys) == NR
    rk_def = [v for v in non_alias_keys if not key_by_value[v]["is_per_backend_functionality_key"]]
    assert sorted(rk_def) == sorted(runtime_keys), "runtime key definitions disagree"
    slots = [None] * NR
    for v in runtime_keys:
        i = key_by_value[v]["table_index"]
        assert 0 <= i < NR and slots[i] is None, (v, i)
        slots[i] = names[v]
    assert all(s is not None for s in slots)
    runtime_slots = slots

    # ------------------------------------------------------ dump table order
    computed_order = [names[v] for v in runtime_keys]
    assert computed_order == runtime_slots  # dump order == table-index order

    def printed_keys(opname):
        out = C._dispatch_dump_table(opname)
        rows = []
        for line in out.splitlines():
            if not line.strip():
                continue
            key, rest = line.split(": ", 1)
            tag = rest[rest.rfind("[") + 1:-1] if rest.endswith("]") else None
            rows.append((key, tag, rest))
        return rows

    # (a) pure Python: impl_t_t on every parseable runtime key (not Undefined)
    lib_py = C._dispatch_library("DEF", "golden_keys_py", "")
    lib_py.def_("foo(Tensor x) -> Tensor")
    py_registered = [names[v] for v in runtime_keys if v != 0 and key_by_value[v]["parseable"]]
    for n in py_registered:
        lib_py.impl_t_t("foo", n, "dbg_" + n)
    rows_py = printed_keys("golden_keys_py::foo")
    printed_py = [r[0] for r in rows_py]
    for key, tag, rest in rows_py:
        if key in py_registered:
            assert tag == "kernel" and rest.startswith("dbg_" + key + " "), (key, rest)
    assert set(py_registered) <= set(printed_py)
    pos = {n: i for i, n in enumerate(computed_order)}
    assert [pos[n] for n in printed_py] == sorted(pos[n] for n in printed_py)
    not_parseable_runtime = [names[v] for v in runtime_keys if v != 0 and not key_by_value[v]["parseable"]]

    # (b) C++: a kernel on EVERY runtime key (by enum value) + a
    #     CompositeImplicitAutograd kernel, which fills the Undefined slot.
    lib_cpp = C._dispatch_library("DEF", "golden_keys_cpp", "")
    lib_cpp.def_("foo(Tensor x) -> Tensor")
    lib_cpp.impl_t_t("foo", "CompositeImplicitAutograd", "dbg_math")
    O.register_all_runtime_keys("golden_keys_cpp", "foo", [v for v in runtime_keys if v != 0])
    rows_cpp = printed_keys("golden_keys_cpp::foo")
    printed_cpp = [r[0] for r in rows_cpp]
    assert printed_cpp == computed_order, "printed order (all keys) != computed order"
    assert len(printed_cpp) == NR
    for key, tag, rest in rows_cpp:
        if key == "Undefined":
            assert rest.startswith("dbg_math") and tag == "math kernel", rest
        else:
            assert rest.startswith("dbg_" + key + " ") and tag == "kernel", (key, rest)
    O.clear_libraries()
    del lib_cpp, lib_py

    shared_check = None
    if os.path.exists(SHARED_DUMP_ORDER):
        with open(SHARED_DUMP_ORDER) as f:
            shared = [l.strip() for l in f if l.strip()]
        shared_check = {
            "file": "../shared/data/torch-2.13/dump_table_key_order.txt",
            "n_entries": len(shared),
            "missing_vs_torch": [n for n in computed_order if n not in shared],
            "extra_vs_torch": [n for n in shared if n not in computed_order],
            "order_consistent_with_torch": [n for n in computed_order if n in shared] == shared,
            "slot_i_is_table_index_i": shared == computed_order,
        }

    dump_table_order = {
        "computed": computed_order,
        "printed_cpp_all_runtime_keys": printed_cpp,
        "printed_python_impl_t_t": printed_py,
        "python_impl_t_t_registered": py_registered,
        "runtime_keys_not_parseable": not_parseable_runtime,
        "shared_file_check": shared_check,
        "note": "computed = [Undefined] + iteration of DispatchKeySet(FULL); dump_table prints "
                "only slots holding a valid kernel, in this order. printed_cpp_all_runtime_keys: "
                "kernels registered from C++ on every runtime key + a CompositeImplicitAutograd "
                "kernel (fills Undefined). printed_python_impl_t_t: impl_t_t on every parseable "
                "runtime key; other printed rows are torch's global backend fallbacks.",
    }

    # ------------------------------------------------------ sets
    set_fields = ["raw", "repr", "iter", "len", "highest_priority_key",
                  "highest_functionality_key", "highest_backend", "table_index"]
    py_checked = [0]

    def make_set(raw, case=None):
        info = O.set_info(raw)
        s = pyks(raw)
        assert s.raw_repr() == raw
        assert repr(s) == info["repr"] == str(s) == C._dispatch_keyset_to_string(s), raw
        assert int(s.highestPriorityTypeId()) == info["highest_priority_key"], raw
        assert info["len"] == len(info["iter"])
        py_checked[0] += 1
        entry = {f: info[f] for f in set_fields}
        if case is not None:
            entry = {"case": case, **entry}
        return entry

    building_blocks = [v for v in non_alias_keys if key_by_value[v]["is_per_backend_functionality_key"]]
    runtime_nonundef = [v for v in runtime_keys if v != 0]
    functionality_keys = list(range(1, NF))  # Dense .. PythonDispatcher
    single = {v: key_by_value[v]["single_set"] for v in non_alias_keys}
    backend_bits = [1 << (b - 1) for b in range(1, NB + 1)]
    func_mask = ((1 << (NB + NF - 1)) - 1) & ~((1 << NB) - 1)
    pb_bits = 0
    for v in building_blocks:
        pb_bits |= single[v]

    sets = []
    seen = set()

    def add_set(raw, case=None):
        if case is None and raw in seen:
            return False
        seen.add(raw)
        sets.append(make_set(raw, case))
        return True

    # edge cases
    add_set(0, "empty")
    for i, bb in enumerate(backend_bits):
        add_set(bb, "only backend bit %s" % backend_components[i + 1]["name"])
    add_set((1 << NB) - 1, "all backend bits")
    for _ in range(8):
        add_set(rng.getrandbits(NB) | 1, "only backend bits (random)")
    for _ in range(8):
        add_set(rng.getrandbits(62) & func_mask & ~pb_bits, "only non-per-backend functionality bits")
    for _ in range(8):
        add_set(rng.getrandbits(62) & func_mask, "only functionality bits (random)")
    for v in building_blocks:
        add_set(single[v], "per-backend functionality bit %s without backend bit" % names[v])
    add_set(pb_bits, "all per-backend functionality bits without backend bit")
    for v in building_blocks:
        add_set(single[v] | backend_bits[0] | backend_bits[1] | backend_bits[15],
                "%s with CPU, CUDA and Meta bits" % names[v])
    add_set(pb_bits | ((1 << NB) - 1), "all per-backend functionality bits with all backend bits")
    add_set(full, "full")
    for v in functionality_keys:
        add_set(O.full_after(v), "full_after %s" % names[v])
    add_set((1 << 62) - 1, "all 62 bits")

    # random unions of 2..6 keys / backend components
    n_union = 0
    while n_union < N_UNION_SETS:
        raw = 0
        for _ in range(rng.randint(2, 6)):
            r = rng.random()
            if r < 0.70:
                raw |= single[rng.choice(runtime_nonundef)]
            elif r < 0.90:
                raw |= rng.choice(backend_bits)
            else:
                raw |= single[rng.choice(building_blocks)]
        if add_set(raw):
            n_union += 1
    # random raw 62-bit patterns: dense (uniform bits) and sparse (p=0.08 per bit)
    n = 0
    while n < N_RAW_DENSE:
        if add_set(rng.getrandbits(62)):
            n += 1
    n = 0
    while n < N_RAW_SPARSE:
        raw = 0
        for bit in range(62):
            if rng.random() < 0.08:
                raw |= 1 << bit
        if add_set(raw):
            n += 1
    pool = [s["raw"] for s in sets]

    # ------------------------------------------------------ binary ops
    def rand_subset(raw):
        out = 0
        for bit in range(62):
            if raw >> bit & 1 and rng.random() < 0.5:
                out |= 1 << bit
        return out

    binary_ops = []
    for i in range(N_BINARY):
        a = rng.choice(pool)
        r = rng.random()
        if r < 0.25:
            b = rand_subset(a)
        elif r < 0.45:
            b = single[rng.choice(non_alias_keys)]
        elif r < 0.5:
            b = a
        else:
            b = rng.choice(pool)
        res = O.binop(a, b)
        x, y = pyks(a), pyks(b)
        assert (x | y).raw_repr() == res[0]
        assert (x & y).raw_repr() == res[1]
        assert (x - y).raw_repr() == res[2]
        assert (x == y) == res[7]
        binary_ops.append({
            "a": a, "b": b, "or": res[0], "and": res[1], "sub": res[2], "xor": res[3],
            "has_all": res[4], "has_any": res[5], "is_superset_of": res[6],
        })

    # ------------------------------------------------------ key ops
    key_ops = []
    for i in range(N_KEY_OPS):
        a = rng.choice(pool)
        r = rng.random()
        if r < 0.05:
            k = 0
        elif r < 0.12:
            k = rng.choice(alias_keys)
        elif r < 0.45:
            # a key that the set has (if any)
            it = O.iter_keys(a)
            k = rng.choice(it) if it else rng.choice(runtime_nonundef)
        else:
            k = rng.choice(non_alias_keys[1:])
        add_r, rem_r, has_r = O.key_op(a, k)
        s = pyks(a)
        assert s.add(pykey(k)).raw_repr() == add_r
        assert s.remove(pykey(k)).raw_repr() == rem_r
        assert s.has(pykey(k)) == has_r
        key_ops.append({"set": a, "key": k, "add": add_r, "remove": rem_r, "has": has_r})
    backend_ops = []
    for i in range(N_BACKEND_OPS):
        a = rng.choice(pool)
        b = rng.randint(0, NB)
        rem_b, has_b, add_b = O.backend_op(a, b)
        backend_ops.append({"set": a, "backend": b, "remove_backend": rem_b,
                            "has_backend": has_b, "add_backend": add_b})

    # ------------------------------------------------------ full / full_after
    full_after = {}
    for v in non_alias_keys:
        raw = O.full_after(v)
        assert C._dispatch_keyset_full_after(pykey(v)).raw_repr() == raw, v
        full_after[str(v)] = raw

    # ------------------------------------------------------ constants
    constants = O.named_keysets()
    assert constants["autogradother_backends"] == C._dispatch_autogradother_backends.raw_repr()
    assert constants["default_included_set"] == tls["included"]
    assert constants["default_excluded_set"] == tls["excluded"]
    assert constants["full"] == full

    # ------------------------------------------------------ alias
    alias = {}
    for a in alias_keys:
        rks = O.runtime_key_set(a)
        included = [k for k in real_keys if O.is_included_in_alias(k, a)]
        for k in real_keys:
            assert C._dispatch_is_included_in_alias(pykey(k), pykey(a)) == (k in included), (k, a)
        alias[names[a]] = {
            "value": a,
            "runtime_key_set": rks,
            "runtime_key_set_repr": O.set_repr(rks),
            "included": included,
        }

    # ------------------------------------------------------ curiosities
    raw_bits = {}
    s62 = 1 << 62
    raw_bits["bit62"] = {
        "raw": s62, "repr": repr(pyks(s62)), "iter": O.iter_keys(s62),
        "highest_functionality_key": O.highest_functionality_key(s62),
        "highest_priority_key": O.highest_priority_key(s62),
        "note": "bit 62 is EndOfFunctionalityKeys's bit; iteration stops there; "
                "table_index would read past offsetsAndMasks (UB), not recorded",
    }
    try:
        r63 = repr(pyks(1 << 63))
    except RuntimeError as e:
        r63 = "RuntimeError: " + str(e).splitlines()[0].split(' at "')[0]
    raw_bits["bit63"] = {"raw": 1 << 63, "repr": r63}

    golden = {
        "torch_version": torch.__version__,
        "generator": "tests/golden/generate_keys_golden.py (seed %d)" % SEED,
        "num_backends": NB,
        "num_functionality_keys": NF,
        "num_runtime_entries": NR,
        "full_backend_mask": nums["full_backend_mask"],
        "enum_constants": enum,
        "offsets_and_masks": [list(x) for x in O.offsets_and_masks()],
        "sentinels": sentinel_info,
        "dispatch_keys": dispatch_keys,
        "backend_components": backend_components,
        "parse": parse,
        "parse_errors": parse_errors,
        "parse_api": parse_api,
        "runtime_slots": runtime_slots,
        "dump_table_order": dump_table_order,
        "full": full,
        "full_after": full_after,
        "constants": constants,
        "alias": alias,
        "tls_defaults": tls,
        "raw_bits_62_63": raw_bits,
        "sets": sets,
        "binary_ops": binary_ops,
        "key_ops": key_ops,
        "backend_ops": backend_ops,
    }
    write_json(golden, OUT)
    print("wrote %s: %d keys, %d backends, %d sets (%d checked against torch Python API), "
          "%d binary ops, %d key ops, %d backend ops, %d parse spellings"
          % (OUT, len(dispatch_keys), len(backend_components), len(sets), py_checked[0],
             len(binary_ops), len(key_ops), len(backend_ops), len(parse)))
    if shared_check is not None:
        print("shared dump_table_key_order.txt: %d entries, missing %s"
              % (shared_check["n_entries"], shared_check["missing_vs_torch"]))


def write_json(obj, path):
    """Top-level object, one line per top-level entry; big lists/dicts one element per line."""
    def c(x):
        return json.dumps(x, separators=(",", ":"), sort_keys=False)

    parts = []
    for k, v in obj.items():
        if isinstance(v, list) and len(v) > 8 and not all(isinstance(x, (str, int)) for x in v):
            body = "[\n" + ",\n".join(c(x) for x in v) + "\n]"
        elif isinstance(v, dict) and len(v) > 8:
            body = "{\n" + ",\n".join(c(kk) + ":" + c(vv) for kk, vv in v.items()) + "\n}"
        elif isinstance(v, dict) and any(isinstance(vv, (dict, list)) for vv in v.values()):
            body = "{\n" + ",\n".join(c(kk) + ":" + c(vv) for kk, vv in v.items()) + "\n}"
        else:
            body = c(v)
        parts.append(c(k) + ":" + body)
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    json.loads(text)
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
