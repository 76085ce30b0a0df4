#!/usr/bin/env python
"""Generate ``torch_library_golden.json``: what torch 2.13's torch.library and
its dispatcher do with device strings, bad calls, factory functions,
fallbacks and torch.library.impl's device types, for ``tests/test_torch_library.py``.

Run with a Python that has ``torch==2.13.0`` installed (never the project's)::

    /tmp/torchenv/bin/python tests/golden/generate_torch_library_golden.py

Recorded:

* ``devices``: ``torch.device(*args)`` for valid and invalid arguments: its
  ``type``, ``index``, ``str`` and ``repr``, or the error's class and text;
* ``bad_calls``: calls of operators defined from Python with a Python kernel
  that torch refuses, with the error text (the operator and the call are
  described in JSON: ``"T"`` stands for a CPU tensor), and ``good_calls``:
  accepted calls with what the kernel received (the type and value of each
  argument; tensors as ``"T"``);
* ``fallback_calls``: what a Python backend fallback (``Library.fallback``)
  receives for calls of an operator with defaults: the positional and
  keyword arguments;
* ``backend_select_operators``: every operator with a BackendSelect kernel
  (``_dispatch_get_registrations_for_dispatch_key``);
* ``factory_routes``: the key ``aten::empty.memory_format`` (and
  ``aten::_to_copy`` on a CPU tensor) reaches for ``dtype``/``layout``/
  ``device`` arguments, read by Python kernels registered on the candidate
  keys, or the error;
* ``impl_types``: the keys ``torch.library.impl(qualname, types)`` registers
  for each ``types``, or the error;
* ``autograd_privateuse1``: the ``AutogradPrivateUse1`` line of an operator's
  dump table and whether the key has a fallback, after each step of
  registering two fallbacks there and removing them.

The output is deterministic: no addresses or paths.
"""
from __future__ import annotations

import json
import os
import warnings

import torch
from torch.library import Library, fallthrough_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "torch_library_golden.json")
C = torch._C
T = torch.ones(2)


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  (recording whatever torch raises)
        return {"error": type(exc).__name__, "message": str(exc)}
    return None


# -- devices -------------------------------------------------------------------------------------
DEVICE_ARGS = [
    ["cpu"], ["cuda"], ["cuda:1"], ["cuda:0"], ["meta"], ["xla:3"], ["privateuseone"], ["privateuseone:2"],
    ["cpu:0"], ["mps"], ["fpga"], ["vulkan"], ["maia:1"], ["cuda", 1], ["cuda", 0], ["cpu", None],
    [""], ["cuda:"], ["cuda:-1"], ["cuda:x"], ["nope"], ["cuda:1:2"], ["CUDA"], [" cpu"], ["cuda:01"], ["cpu:-0"],
    ["cuda:99999999999"], ["a_b"], ["cuda:1", 2], ["cuda", -1], ["cuda", 1.5],
]


def record_devices():
    out = []
    for args in DEVICE_ARGS:
        try:
            d = torch.device(*args)
        except Exception as exc:  # noqa: BLE001
            out.append({"args": args, "error": type(exc).__name__, "message": str(exc)})
            continue
        out.append({"args": args, "type": d.type, "index": d.index, "str": str(d), "repr": repr(d)})
    return out


# -- calls ---------------------------------------------------------------------------------------
SCHEMAS = {
    "foo": "foo(Tensor x, int n, *, float k=1.0, int j=3) -> Tensor",
    "bar": "bar(Tensor[] xs, int[2] size, str s, bool b, Scalar a, ScalarType? dt=None, Device? device=None) -> Tensor",
    "baz": "baz(Tensor x, float[] fs, int? m=None, (int, int)? pair=None, Tensor? y=None) -> Tensor",
}
# (operator, args, kwargs); "T" is a tensor.
BAD_CALLS = [
    ("foo", [], {}),
    ("foo", ["T"], {}),
    ("foo", ["T", 1, 2.0], {}),
    ("foo", ["T", 1, 2, 3, 4], {}),
    ("foo", ["T", 1], {"j": 1, "z": 2}),
    ("foo", ["T"], {"n": 1, "x": "T"}),
    ("foo", [1, 1], {}),
    ("foo", ["T", "a"], {}),
    ("foo", ["T", 1.5], {}),
    ("foo", ["T", None], {}),
    ("foo", ["T", 1], {"k": "x"}),
    ("bar", ["T", [1, 2], "s", True, 1], {}),
    ("bar", [[1], [1, 2], "s", True, 1], {}),
    ("bar", [["T"], "ab", "s", True, 1], {}),
    ("bar", [["T"], [1, 2], 3, True, 1], {}),
    ("bar", [["T"], [1, 2], "s", True, "x"], {}),
    ("bar", [["T"], [1, 2], "s", True, 1], {"dt": "float"}),
    ("bar", [["T"], [1, 2], "s", True, 1], {"device": 3.5}),
    ("bar", [["T"], [1, 2], "s", True, 1], {"device": "nope"}),
    ("baz", ["T", [1.0, "x"]], {}),
    ("baz", ["T", [1.0]], {"m": 2.5}),
    ("baz", ["T", [1.0]], {"pair": [1, 2, 3]}),
    ("baz", ["T", [1.0]], {"y": 3}),
]
GOOD_CALLS = [
    ("foo", ["T", True], {}),
    ("foo", ["T", 2], {"k": 2}),
    ("foo", ["T", 2], {"j": 3, "k": 1.0}),
    ("foo", ["T"], {"n": 5, "j": 4}),
    ("bar", [("T", "T"), 3, "s", False, 2.5], {"dt": 6, "device": "cuda:1"}),
    ("baz", ["T", (1, True)], {"m": None, "pair": [3, 4]}),
    ("baz", ["T", [1.5], 2, (1, 2), "T"], {}),
]


def value(x):
    if x == "T":
        return T
    if isinstance(x, list):
        return [value(v) for v in x]
    if isinstance(x, tuple):
        return tuple(value(v) for v in x)
    return x


def described(x):
    """A value as JSON: tensors as "T", devices and dtypes by str, lists and tuples element by element."""
    if isinstance(x, torch.Tensor):
        return "T"
    if isinstance(x, torch.device):
        return {"device": str(x)}
    if isinstance(x, torch.dtype):
        return {"dtype": str(x)}
    if isinstance(x, (list, tuple)):
        return {"type": type(x).__name__, "items": [described(v) for v in x]}
    return {"type": type(x).__name__, "value": x}


def record_calls(lib):
    received = []

    def kernel(*args, **kwargs):
        received.append({"args": [described(a) for a in args], "kwargs": {k: described(v) for k, v in kwargs.items()}})
        return args[0] if isinstance(args[0], torch.Tensor) else args[0][0]

    for name, schema in SCHEMAS.items():
        lib.define(schema)
        lib.impl(name, kernel, "CPU")
    ops = torch.ops.tlgolden
    bad = []
    for name, args, kwargs in BAD_CALLS:
        error = error_of(lambda: getattr(ops, name).default(*value(args), **{k: value(v) for k, v in kwargs.items()}))
        assert error is not None, (name, args, kwargs)
        bad.append({"op": name, "args": args, "kwargs": kwargs, **error})
    good = []
    for name, args, kwargs in GOOD_CALLS:
        received.clear()
        getattr(ops, name).default(*value(args), **{k: value(v) for k, v in kwargs.items()})
        good.append({"op": name, "args": args, "kwargs": kwargs, "received": received[0]})
    return bad, good


# The operator the fallback calls are made of, and its calls.
FALLBACK_SCHEMA = "fb(Tensor x, int n=2, float[] fs=[1., 2.], *, bool flag=False, str s=\"a\") -> Tensor"
FALLBACK_CALLS = [
    (["T"], {}), (["T", 2], {}), (["T", 3], {}), (["T", 2, [1.0, 2.0]], {}), (["T", 2, [1.0, 3.0]], {}),
    (["T"], {"flag": False}), (["T"], {"flag": True}), (["T"], {"s": "b"}), (["T", 2], {"s": "a", "flag": True}),
]


def record_fallback_calls(lib):
    lib.define(FALLBACK_SCHEMA)
    received = []

    def fallback(op, *args, **kwargs):
        received.append({"op": op.name(), "args": [described(a) for a in args],
                         "kwargs": {k: described(v) for k, v in kwargs.items()}})
        return args[0]

    fallbacks = Library("_", "IMPL")
    fallbacks.fallback(fallback, "PrivateUse1")
    out = []
    with C._IncludeDispatchKeyGuard(C.DispatchKey.PrivateUse1):
        for args, kwargs in FALLBACK_CALLS:
            received.clear()
            torch.ops.tlgolden.fb.default(*value(args), **kwargs)
            out.append({"args": args, "kwargs": kwargs, "received": received[0]})
    fallbacks._destroy()
    return out


# -- factories -----------------------------------------------------------------------------------
ROUTE_KEYS = [
    "CPU", "CUDA", "Meta", "XLA", "Lazy", "HPU", "MPS", "XPU", "IPU", "VE", "MTIA", "MAIA", "PrivateUse1", "FPGA",
    "Vulkan", "QuantizedCPU", "QuantizedCUDA", "QuantizedMeta", "QuantizedPrivateUse1", "SparseCPU", "SparseCUDA",
    "SparseMeta", "SparsePrivateUse1", "SparseCsrCPU", "SparseCsrCUDA", "SparseCsrMeta", "MkldnnCPU",
]
# (device, dtype number, layout number); None: not passed.
FACTORY_OPTIONS = [
    (None, None, None), ("cpu", None, None), ("cuda:1", None, None), ("meta", None, None), ("xla", None, None),
    ("privateuseone", None, None), ("fpga", None, None), ("vulkan", None, None), ("maia", None, None),
    ("lazy", None, None), ("mps", None, None), ("cpu", 12, None), ("cuda", 13, None), ("meta", 14, None),
    ("maia", 12, None), ("cpu", 6, 1), ("cuda", None, 1), ("maia", None, 1), ("cpu", None, 2), ("meta", None, 4),
    ("cuda", None, 5), ("cpu", None, 6), ("cpu", None, 3), ("cuda", None, 3), ("cpu", None, 7), ("cpu", 12, 7),
    ("mkldnn", None, None), ("fpga", None, 1), ("vulkan", None, 2),
]
TO_COPY_OPTIONS = [(None, None, None), ("meta", None, None), ("cpu", 12, None), ("xla", None, None)]


def record_factory_routes():
    reached = []
    lib = Library("aten", "IMPL")

    def recorder(key):
        def kernel(keyset, *args, **kwargs):
            reached.append(key)
            return T
        return kernel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key in ROUTE_KEYS:
            if C._parse_dispatch_key(key) is None:  # a key torch's parser does not name
                continue
            lib.impl("empty.memory_format", recorder(key), key, with_keyset=True)
            lib.impl("_to_copy", recorder(key), key, with_keyset=True)
    routes = []
    for op, options in (("empty.memory_format", FACTORY_OPTIONS), ("_to_copy", TO_COPY_OPTIONS)):
        for device, dtype, layout in options:
            kwargs = {}
            if device is not None:
                kwargs["device"] = device
            if dtype is not None:
                kwargs["dtype"] = dtype
            if layout is not None:
                kwargs["layout"] = layout
            reached.clear()
            call = (lambda: torch.ops.aten.empty.memory_format([2], **kwargs)) if op == "empty.memory_format" \
                else (lambda: torch.ops.aten._to_copy.default(T, **kwargs))
            error = error_of(call)
            entry = {"op": op, "device": device, "dtype": dtype, "layout": layout}
            if error is not None:
                first_line = error["message"].splitlines()[0] if error["message"] else ""
                entry.update(error=error["error"], message=first_line)
            else:
                entry["key"] = reached[0] if reached else None  # a kernel of torch's own ran
            routes.append(entry)
    lib._destroy()
    return routes


# -- torch.library.impl's types -------------------------------------------------------------------
IMPL_TYPES = [
    "cpu", "cuda", "default", "CPU", "AutogradCUDA", "privateuseone", ["cpu", "meta"], "xla", "mps", "maia", "fpga",
    "vulkan", "lazy", ["cuda", "CUDA"], "nope", "cuda:0", "", "mkldnn",
]


def record_impl_types():
    out = []
    for i, types in enumerate(IMPL_TYPES):
        lib = Library("tlimpl", "FRAGMENT")
        name = f"f{i}"
        lib.define(f"{name}(Tensor x) -> Tensor")
        error = error_of(lambda: torch.library.impl(f"tlimpl::{name}", types, lambda x: x, lib=lib))
        if error is not None:
            out.append({"types": types, **error})
        else:
            dump = C._dispatch_dump(f"tlimpl::{name}")
            keys = sorted(line.split(":")[0] for line in dump.splitlines()[4:] if line)
            out.append({"types": types, "keys": keys})
        lib._destroy()
    return out


# -- AutogradPrivateUse1 ------------------------------------------------------------------------
def record_autograd_privateuse1():
    lib = Library("tlag", "DEF")
    lib.define("f(Tensor x) -> Tensor")

    def state(step):
        line = [x for x in C._dispatch_dump_table("tlag::f").splitlines() if x.startswith("AutogradPrivateUse1")]
        line = line[0].split(" registered at")[0] + (" (framework)" if "VariableFallbackKernel" in line[0] else "") if line else None
        return {"step": step, "line": line,
                "has_fallback": C._dispatch_has_backend_fallback(C.DispatchKey.AutogradPrivateUse1)}

    steps = [state("start")]
    a = Library("_", "IMPL")
    a.fallback(lambda op, *args, **kwargs: None, "AutogradPrivateUse1")
    steps.append(state("first fallback"))
    b = Library("_", "IMPL")
    b.fallback(fallthrough_kernel, "AutogradPrivateUse1")
    steps.append(state("second fallback (a fallthrough)"))
    other = error_of(lambda: Library("_", "IMPL").fallback(lambda op, *a, **k: None, "AutogradCPU"))
    b._destroy()
    steps.append(state("second removed"))
    a._destroy()
    steps.append(state("first removed"))
    lib._destroy()
    return {"steps": steps, "autograd_cpu_second_fallback": other}


def main():
    lib = Library("tlgolden", "DEF")
    bad, good = record_calls(lib)
    golden = {
        "torch_version": torch.__version__,
        "devices": record_devices(),
        "schemas": SCHEMAS,
        "bad_calls": bad,
        "good_calls": good,
        "fallback_schema": FALLBACK_SCHEMA,
        "fallback_calls": record_fallback_calls(lib),
        "backend_select_operators": sorted(C._dispatch_get_registrations_for_dispatch_key("BackendSelect")),
        "factory_routes": record_factory_routes(),
        "impl_types": record_impl_types(),
        "autograd_privateuse1": record_autograd_privateuse1(),
    }
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
