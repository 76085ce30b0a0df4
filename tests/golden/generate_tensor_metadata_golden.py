#!/usr/bin/env python
"""Generate ``tensor_metadata_golden.json``: torch 2.13's tensor metadata where
tests/test_prototype_metadata.py compares the prototype's.

* ``layout``: for each (sizes, strides) of tensor_metadata_cases.LAYOUTS, what
  is_contiguous (contiguous and channels_last formats), is_strides_like_format
  and is_non_overlapping_and_dense say;
* ``views``: sizes, strides, storage_offset and values of the views of
  tensor_metadata_cases.VIEWS (as_strided, diagonal, t) of ``arange(24.)``;
* ``slow_paths``: what a subclass made with each metadata policy of
  tensor_metadata_cases.POLICIES hands its ``__torch_dispatch__`` for each
  query of tensor_metadata_cases.QUERIES (the operators, their extra
  arguments), the answer when the handler returns None, and the error when it
  returns NotImplemented;
* ``errors``: the messages of a wrong policy and of a wrong answer.

    /work/venv-torch/bin/python tests/golden/generate_tensor_metadata_golden.py
"""
from __future__ import annotations

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tensor_metadata_cases import LAYOUTS, POLICIES, QUERIES, VIEWS  # noqa: E402

def layout_facts(sizes, strides):
    t = torch.empty_strided(sizes, strides)
    return {
        "is_contiguous": t.is_contiguous(),
        "is_contiguous_channels_last": t.is_contiguous(memory_format=torch.channels_last),
        "is_contiguous_channels_last_3d": t.is_contiguous(memory_format=torch.channels_last_3d),
        "is_strides_like_channels_last": torch.ops.aten.is_strides_like_format.default(t, torch.channels_last),
        "is_strides_like_channels_last_3d": torch.ops.aten.is_strides_like_format.default(t, torch.channels_last_3d),
        "is_non_overlapping_and_dense": torch.ops.aten.is_non_overlapping_and_dense.default(t),
    }


def view_facts(expression):
    leaf = torch.arange(24.0).reshape(4, 6).requires_grad_()
    base = leaf * 1  # noqa: F841  (the expressions read it; a non-leaf, so that views of it are recorded)
    v = eval(expression)
    weights = torch.arange(1.0, v.numel() + 1).reshape(v.shape)
    (v * weights).sum().backward()
    return {"size": list(v.size()), "stride": list(v.stride()), "storage_offset": v.storage_offset(),
            "values": v.tolist(), "grad": leaf.grad.tolist()}


def subclass(policy, wrapper, answer, seen):
    class Probe(torch.Tensor):
        @staticmethod
        def __new__(cls, data):
            if wrapper:
                return torch.Tensor._make_wrapper_subclass(cls, data.size(), dtype=data.dtype, device=data.device,
                                                           **policy)
            return torch.Tensor._make_subclass(cls, data, False, **policy)

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            seen.append([str(func), [repr(a) for a in args[1:]]])
            return answer

    return Probe(torch.randn(2, 3))


def plain(value):
    if isinstance(value, (torch.Size, tuple)):
        return list(value)
    if isinstance(value, (torch.device, torch.layout)):
        return str(value)
    return value


def slow_path_facts():
    out = []
    for name, policy in POLICIES.items():
        for wrapper in (True, False):
            for query in QUERIES:
                if query == "data_ptr()":
                    continue  # an address; the test checks which operator it asks
                row = {"policy": name, "wrapper": wrapper, "query": query}
                for answer, key in ((None, "none"), (NotImplemented, "not_implemented")):
                    seen: list = []
                    e = subclass(policy, wrapper, answer, seen)
                    try:
                        row[key] = {"result": plain(eval("e." + query, {"e": e, "torch": torch}))}
                    except Exception as exc:  # noqa: BLE001
                        row[key] = {"error": [type(exc).__name__, str(exc).replace(repr(type(e)), "<SUBCLASS>")]}
                    row[key]["seen"] = seen
                out.append(row)
    # data_ptr(): only which operators it asks
    for wrapper in (True, False):
        seen = []
        subclass(POLICIES["sizes"], wrapper, None, seen).data_ptr()
        out.append({"policy": "sizes", "wrapper": wrapper, "query": "data_ptr()", "none": {"seen": seen}})
    return out


def error_facts():
    errors = {}

    class Handled(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            return None

    try:
        torch.Tensor._make_wrapper_subclass(Handled, (2,), dispatch_sizes_strides_policy="bogus")
    except Exception as exc:  # noqa: BLE001
        errors["bad_policy"] = [type(exc).__name__, str(exc)]
    for query, answer in (("dim()", "x"), ("layout", None), ("size()", "x"), ("stride()", 3)):
        e = subclass({"dispatch_sizes_strides_policy": "sizes", "dispatch_layout": True}, True, answer, [])
        try:
            eval("e." + query, {"e": e})
            errors[query] = None
        except Exception as exc:  # noqa: BLE001
            errors[query] = [type(exc).__name__, str(exc)]
    return errors


def mode_order():
    """Who is asked, in order, when a dispatch mode is active: the mode (whose
    call of the operator asks the tensor again), then the subclass."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Forward(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(["mode", str(func)])
            return func(*args, **(kwargs or {}))

    class Answering(torch.Tensor):
        @staticmethod
        def __new__(cls, data):
            return torch.Tensor._make_wrapper_subclass(cls, data.size(), dispatch_sizes_strides_policy="sizes")

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            seen.append(["subclass", str(func)])
            return 7 if func is torch.ops.aten.dim.default else None

    e = Answering(torch.randn(2, 3))
    with Forward():
        answer = e.dim()
    return {"answer": answer, "seen": seen}


golden = {
    "torch": torch.__version__,
    "layout": [{"sizes": s, "strides": st, **layout_facts(s, st)} for s, st in LAYOUTS],
    "views": {expression: view_facts(expression) for expression in VIEWS},
    "slow_paths": slow_path_facts(),
    "errors": error_facts(),
    "mode_order": mode_order(),
}
with open(os.path.join(HERE, "tensor_metadata_golden.json"), "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
    f.write("\n")
