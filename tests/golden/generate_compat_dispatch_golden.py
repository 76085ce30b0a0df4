#!/usr/bin/env python
"""Generate ``compat_dispatch_golden.json``: torch 2.13's ``torch._C._dispatch_*``
functions and dispatch-key TLS guards, and what they return, for
``dispatcher.compat.torch_C`` to be checked against.

Run with a Python that has ``torch==2.13.0`` installed (never the project's)::

    /tmp/torchenv/bin/python tests/golden/generate_compat_dispatch_golden.py

Recorded:

* ``dispatch_functions``: every name of ``dir(torch._C)`` starting with
  ``_dispatch``, with its kind (function or attribute) and pybind signature;
* ``guards``: the TLS guard classes that change the dispatch key sets, their
  signature, whether the guard starts when the object is made (pybind's
  ``py_context_manager_DEPRECATED``) or on ``__enter__``, and the thread's
  include/exclude sets inside one made from the default state;
* constants, ``_dispatch_get_backend_keyset_from_autograd`` for every key
  torch's parser accepts, ``_dispatch_key_for_device`` on valid and invalid
  device strings, ``_dispatch_keys`` / ``_dispatch_key_set`` /
  ``_dispatch_isTensorSubclassLike`` of real tensors of many kinds, the
  error texts of ``_dispatch_find_schema_or_throw``, and the argument a
  report-error callback receives.

Keysets are recorded as ``raw_repr()`` and ``repr``.  The output is
deterministic: no addresses, paths or timestamps.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import torch
import torch._C as C

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "compat_dispatch_golden.json")
KEYS_GOLDEN = os.path.join(HERE, "keys_golden.json")
D = C.DispatchKey

# The guards that change the thread's dispatch key sets (the others in
# torch._C switch autograd, autocast, functorch or inference-mode state).
GUARDS = {
    "_AutoDispatchBelowAutograd": lambda: C._AutoDispatchBelowAutograd(),
    "_AutoDispatchBelowADInplaceOrView": lambda: C._AutoDispatchBelowADInplaceOrView(),
    "_ExcludeDispatchKeyGuard": lambda: C._ExcludeDispatchKeyGuard(C.DispatchKeySet(D.Python)),
    "ExcludeDispatchKeyGuard": lambda: C.ExcludeDispatchKeyGuard(C.DispatchKeySet(D.Python)),
    "_IncludeDispatchKeyGuard": lambda: C._IncludeDispatchKeyGuard(D.Python),
    "_ForceDispatchKeyGuard": lambda: C._ForceDispatchKeyGuard(C.DispatchKeySet(D.Python), C.DispatchKeySet(D.PreDispatch)),
    "_PreserveDispatchKeyGuard": lambda: C._PreserveDispatchKeyGuard(),
    "_SetExcludeDispatchKeyGuard": lambda: C._SetExcludeDispatchKeyGuard(D.AutocastCPU, False),
    "_DisableTorchDispatch": lambda: C._DisableTorchDispatch(),
    "_EnablePythonDispatcher": lambda: C._EnablePythonDispatcher(),
    "_DisablePythonDispatcher": lambda: C._DisablePythonDispatcher(),
    "_EnablePreDispatch": lambda: C._EnablePreDispatch(),
}
# What each guard above was made with, for the test to make ours alike.
GUARD_ARGS = {
    "_ExcludeDispatchKeyGuard": [["Python"]],
    "ExcludeDispatchKeyGuard": [["Python"]],
    "_IncludeDispatchKeyGuard": ["Python"],
    "_ForceDispatchKeyGuard": [["Python"], ["PreDispatch"]],
    "_SetExcludeDispatchKeyGuard": ["AutocastCPU", False],
}

DEVICES = [
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
    "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
    "", "CPU", "Cuda", "foo", "_", "a_b", "PrivateUse1", "sparse", "ort", " cpu", "cpu ", "é",
    "cpu:0", "cpu:5", "cuda:0", "cuda:1", "xla:1", "mkldnn:0", "privateuseone:0", "foo:0",
    "cuda:", ":0", "cpu::0", "cuda:0:1", "cuda:00", "cuda:01", "foo:00", "cuda:-1", "cuda:-0", "cuda:x",
    "cuda: 1", "cuda:1 ",
    # c10::DeviceIndex is an int8_t: the index is wrapped, and one that wraps to -1 reads as none.
    "cuda:127", "cuda:128", "cuda:255", "cuda:256", "cuda:32767", "cuda:65535", "cuda:2147483647",
    "cuda:2147483648", "cuda:99999999999",
]


def keyset(ks):
    return {"raw": ks.raw_repr(), "repr": repr(ks)}


def tls():
    return {"include": keyset(C._dispatch_tls_local_include_set()), "exclude": keyset(C._dispatch_tls_local_exclude_set())}


def outcome(f):
    try:
        return {"result": f(), "error": None}
    except Exception as e:  # noqa: BLE001 - every error is recorded
        return {"result": None, "error": str(e), "error_type": type(e).__name__}


def signature(obj):
    doc = (obj.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def dispatch_functions():
    out = []
    for name in sorted(n for n in dir(C) if n.startswith("_dispatch")):
        obj = getattr(C, name)
        kind = "function" if callable(obj) and not isinstance(obj, C.DispatchKeySet) else "attribute"
        out.append({"name": name, "kind": kind, "signature": signature(obj) if kind == "function" else type(obj).__name__})
    return out


def guards():
    base = tls()
    out = []
    for name, make in GUARDS.items():
        cls = getattr(C, name)
        g = make()
        active_from = "construction" if tls() != base else "enter"
        g.__enter__()
        inside = tls()
        g.__exit__(None, None, None)
        restored = tls() == base
        del g
        assert tls() == base, name
        out.append({
            "name": name,
            "signature": signature(cls.__init__),
            "args": GUARD_ARGS.get(name, []),
            "active_from": active_from,
            "inside": inside,
            "exit_restores": restored,
        })
    return out


def backend_keysets():
    with open(KEYS_GOLDEN) as f:
        names = [d["name"] for d in json.load(f)["dispatch_keys"] if d["parseable"]]
    # A name, not an enum member: torch's parser takes names its Python enum lacks.
    return {name: keyset(C._dispatch_get_backend_keyset_from_autograd(name)) for name in names}


class _Wrapper(torch.Tensor):
    """A __torch_dispatch__ subclass: its tensors have the Python key."""

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def tensor_cases():
    x = torch.ones(2, 2)
    cases = {
        "cpu": x,
        "requires_grad": torch.ones(2, requires_grad=True),
        "meta": torch.ones(2, device="meta"),
        "sparse_coo": x.to_sparse(),
        "sparse_csr": x.to_sparse_csr(),
        "quantized": torch.quantize_per_tensor(x, 1.0, 0, torch.qint8),
        "nested": torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]),
        "mkldnn": x.to_mkldnn(),
        "conj": torch.ones(2, dtype=torch.complex64).conj(),
        "neg_view": torch._neg_view(torch.ones(2, dtype=torch.complex64).conj().imag),
        "zero_tensor": torch._efficientzerotensor(2),
        "functional": torch._to_functional_tensor(x),
        "wrapper_subclass": torch.Tensor._make_wrapper_subclass(_Wrapper, (2,)),
    }
    with torch.inference_mode():
        cases["inference"] = torch.ones(2)
    seen = {}
    torch.vmap(lambda t: seen.setdefault("vmap_batched", t) * 1)(x)
    torch.func.grad(lambda t: (seen.setdefault("grad_wrapper", t) * 1).sum())(torch.ones(2))
    out = {}
    for what, t in {**cases, **seen}.items():
        ks = C._dispatch_keys(t)
        out[what] = {"keys": keyset(ks), "key_set": C._dispatch_key_set(t),
                     "is_tensor_subclass_like": C._dispatch_isTensorSubclassLike(t)}
    return out


def find_schema_errors():
    ns = "compat_golden"
    m = C._dispatch_library("FRAGMENT", ns, "")
    m.def_("f.ov(Tensor x) -> Tensor")
    m.impl_t_t("g", "CPU")
    cases = [("nope", ""), (f"{ns}::nope", ""), (f"{ns}::g", ""), (f"{ns}::f", ""), (f"{ns}::f", "other"),
             (f"{ns}::f", "ov"), (f"{ns}::f.ov", ""), ("a b", "")]
    out = [{"name": n, "overload": o, **outcome(lambda: C._dispatch_find_schema_or_throw(n, o).debug())} for n, o in cases]
    names = [n for n in C._dispatch_get_all_op_names() if n.startswith(f"{ns}::")]
    m.reset()
    return out, sorted(names)


def report_error_callback_argument():
    m = C._dispatch_library("FRAGMENT", "compat_golden_cb", "")
    m.def_("f(Tensor x) -> Tensor")
    handle = C._dispatch_find_schema_or_throw("compat_golden_cb::f", "")
    seen = []

    def callback(key):
        seen.append(key)
        raise ValueError("raised by the callback")

    C._dispatch_set_report_error_callback(handle, callback)
    result = outcome(lambda: C._dispatch_call_boxed(handle, torch.ones(1)))
    m.reset()
    return {"type": type(seen[0]).__name__, "value": seen[0], "call": result}


def in_fresh_process(code):
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    assert torch.__version__.startswith("2.13.0"), torch.__version__
    schema_errors, op_names = find_schema_errors()
    golden = {
        "meta": {"torch_version": torch.__version__, "generator": "tests/golden/generate_compat_dispatch_golden.py"},
        "dispatch_functions": dispatch_functions(),
        "guards": guards(),
        "num_backends": C._dispatch_num_backends(),
        "autogradother_backends": keyset(C._dispatch_autogradother_backends),
        "tls_defaults": in_fresh_process(
            "import json, torch; C = torch._C; k = lambda s: {'raw': s.raw_repr(), 'repr': repr(s)}; "
            "print(json.dumps({'include': k(C._dispatch_tls_local_include_set()), "
            "'exclude': k(C._dispatch_tls_local_exclude_set())}))"
        ),
        "backend_keyset_from_autograd": backend_keysets(),
        "key_for_device": [{"device": d, **outcome(lambda: C._dispatch_key_for_device(d))} for d in DEVICES],
        "tensors": tensor_cases(),
        "find_schema_or_throw": schema_errors,
        "all_op_names_of_namespace": op_names,
        "report_error_callback": report_error_callback_argument(),
        "pystub_of_unknown_operator": C._dispatch_pystub("compat_golden::nope", ""),
    }
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {OUT}: {len(golden['dispatch_functions'])} _dispatch_* names, {len(golden['guards'])} guards")


if __name__ == "__main__":
    main()
