"""Tensor metadata on dispatcher.prototype against torch 2.13's
(tests/golden/tensor_metadata_golden.json, cases in tensor_metadata_cases.py):

* the contiguity predicates (dispatcher/prototype/contiguity.py), on wrapper
  subclasses of the golden's sizes and strides, directly and as operators;
* storage_offset, strides and values of as_strided / diagonal views, and their gradients;
* the metadata "slow paths" (python_metadata.py): which operator a subclass
  made with each policy hands its ``__torch_dispatch__`` for each query, what
  it answers when the handler returns None, and torch's error when it returns
  NotImplemented; a dispatch mode is asked first.
"""
from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

import dispatcher
import dispatcher.prototype as P
from dispatcher import DispatchKey, DispatchKeySet, ops
from dispatcher.dispatch_modes import TorchDispatchMode
from dispatcher.prototype import Tensor, contiguity
from dispatcher.prototype.tensor_options import (
    channels_last, channels_last_3d, contiguous_format, preserve_format, sparse_csr, strided,
)

from .conftest import GOLDEN, load_golden

sys.path.insert(0, str(GOLDEN))
from tensor_metadata_cases import POLICIES  # noqa: E402

METADATA = load_golden("tensor_metadata_golden.json")
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")
aten = ops.aten
TORCH = SimpleNamespace(channels_last=channels_last, channels_last_3d=channels_last_3d,
                        contiguous_format=contiguous_format, preserve_format=preserve_format,
                        as_strided=lambda t, size, stride, offset=None: t.as_strided(size, stride, offset))


class Answering(Tensor):
    """A wrapper whose handler answers every call with ``answer`` (records what it was asked)."""

    answer = None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen.append([str(func), [repr(a) for a in args[1:]]])
        return cls.answer


def _answering(policy, wrapper, answer):
    cls = type("Probe", (Answering,), {"answer": answer, "seen": []})
    data = P.randn(2, 3)
    if wrapper:
        return Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype, device=data.device, **policy)
    return Tensor._make_subclass(cls, data, False, **policy)


def _plain(value):
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, (dispatcher.device, P.tensor_options.Layout)):
        return str(value)
    return value


# -- contiguity ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", METADATA["layout"], ids=lambda c: f"{c['sizes']}@{c['strides']}")
def test_contiguity_is_torchs(case):
    sizes, strides = case["sizes"], case["strides"]
    assert contiguity.is_contiguous(sizes, strides) == case["is_contiguous"]
    assert contiguity.is_channels_last_contiguous(sizes, strides, 4) == case["is_contiguous_channels_last"]
    assert contiguity.is_channels_last_contiguous(sizes, strides, 5) == case["is_contiguous_channels_last_3d"]
    assert contiguity.is_strides_like_channels_last(sizes, strides, 4) == case["is_strides_like_channels_last"]
    assert contiguity.is_strides_like_channels_last(sizes, strides, 5) == case["is_strides_like_channels_last_3d"]
    assert contiguity.is_non_overlapping_and_dense(sizes, strides) == case["is_non_overlapping_and_dense"]
    # The same, asked of a wrapper of these sizes and strides, as methods and operators.
    w = Tensor._make_wrapper_subclass(Answering, sizes, strides=strides)
    assert w.is_contiguous() == case["is_contiguous"] == aten.is_contiguous.default(w)
    assert w.is_contiguous(memory_format=channels_last) == case["is_contiguous_channels_last"]
    assert aten.is_contiguous.memory_format(w, channels_last_3d) == case["is_contiguous_channels_last_3d"]
    assert aten.is_strides_like_format.default(w, channels_last) == case["is_strides_like_channels_last"]
    assert aten.is_strides_like_format.default(w, channels_last_3d) == case["is_strides_like_channels_last_3d"]
    assert aten.is_strides_like_format.default(w, contiguous_format) is False
    assert aten.is_non_overlapping_and_dense.default(w) == case["is_non_overlapping_and_dense"]


def test_a_numpy_backed_tensor_answers_from_its_memory():
    t = P.randn(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # channels-last memory
    assert t.stride() == (60, 1, 15, 3)
    assert not t.is_contiguous() and t.is_contiguous(memory_format=channels_last)
    assert t.contiguous() is not t and t.contiguous().is_contiguous()
    plain = P.randn(2, 3)
    assert plain.contiguous() is plain


# -- views: storage_offset, as_strided, diagonal -------------------------------------------------
@pytest.mark.parametrize("expression", sorted(METADATA["views"]))
def test_views_are_torchs(expression):
    expected = METADATA["views"][expression]
    leaf = P.tensor(np.arange(24.0, dtype=np.float32).reshape(4, 6), requires_grad=True)
    base = leaf * 1
    v = eval(expression, {"base": base, "torch": TORCH})
    assert [list(v.size()), list(v.stride()), v.storage_offset(), v.tolist()] == [
        expected["size"], expected["stride"], expected["storage_offset"], expected["values"]]
    assert v._base is base or expression == "base"
    weights = P.tensor(np.arange(1.0, v.numel() + 1, dtype=np.float32).reshape(v.shape))
    (v * weights).sum().backward()
    assert leaf.grad.tolist() == expected["grad"]


def test_a_view_shares_memory_and_version():
    base = P.zeros(3, 3)
    d = base.diagonal()
    before = base._version
    d.add_(P.ones(3))
    assert base.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert base._version == d._version == before + 1
    assert base.data_ptr() == d.data_ptr()


def test_as_strided_and_diagonal_refuse_what_torch_refuses():
    t = P.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[3, 3\], strides \[3, 1\], storage offset 0, and "
                                           r"itemsize 4 requiring a storage size of 36 are out of bounds for storage of size 24"):
        t.as_strided((3, 3), (3, 1))
    with pytest.raises(RuntimeError, match="Negative strides are not supported"):
        t.as_strided((2,), (-1,))
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        t.as_strided((2,), (1, 1))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, -1"):
        t.diagonal(0, 1, -1)
    assert t.diagonal(offset=5).shape == (0,)
    meta = P.zeros(2, 3, device="meta").as_strided((3,), (2,), 1)
    assert meta.shape == (3,) and meta.device.type == "meta"


def test_data_ptr_is_the_first_elements_address():
    t = P.zeros(4, 6)
    assert t.data_ptr() == t.numpy().__array_interface__["data"][0]
    assert t.t().diagonal(offset=2).data_ptr() == t.data_ptr() + 12 * 4
    assert P.zeros(2, device="meta").data_ptr() == 0
    toy = P.zeros(2, device="toy")
    assert toy.data_ptr() != 0 and toy.storage_offset() == 0
    assert Tensor._make_wrapper_subclass(Answering, (2,)).data_ptr() == 0


def test_a_wrapper_keeps_the_metadata_it_was_given():
    x = P.randn(4, 6).t().diagonal(offset=2)
    w = Tensor._make_wrapper_subclass(Answering, x.size(), x.stride(), x.storage_offset(), None, x.dtype,
                                      x.layout, x.device, False, False, None, False, False,
                                      DispatchKeySet(DispatchKey.NestedTensor))
    assert (w.size(), w.stride(), w.storage_offset()) == ((2,), (7,), 12)
    assert w.key_set.has(DispatchKey.NestedTensor) and not w.key_set.has(DispatchKey.AutogradNestedTensor)
    # _make_subclass of a wrapper keeps them too.
    assert Tensor._make_subclass(Answering, w).storage_offset() == 12


# -- slow paths ---------------------------------------------------------------------------------
def _slow_path_id(row):
    return f"{row['policy']}-{'wrapper' if row['wrapper'] else 'subclass'}-{row['query']}"


@pytest.mark.parametrize("row", METADATA["slow_paths"], ids=_slow_path_id)
def test_slow_paths_ask_what_torch_asks(row):
    policy = POLICIES[row["policy"]]
    for answer, key in ((None, "none"), (NotImplemented, "not_implemented")):
        if key not in row:
            continue
        expected = row[key]
        e = _answering(policy, row["wrapper"], answer)
        type(e).seen.clear()
        try:
            got = {"result": _plain(eval("e." + row["query"], {"e": e, "torch": TORCH}))}
        except (RuntimeError, TypeError) as exc:
            message = str(exc).replace(repr(type(e)), "<SUBCLASS>")
            got = {"error": [type(exc).__name__, message]}
        got["seen"] = type(e).seen
        if row["query"] == "data_ptr()":
            assert got["seen"] == expected["seen"]
            continue
        if row["query"] == "device" and row["policy"] == "device" and key == "none":
            # torch fails to read None as a device string ("unpackString: expected
            # bytes or unicode object"); here the error says what was wrong.
            assert got["error"] == ["RuntimeError", "device returned invalid type NoneType, expected Device"]
            expected = {**expected, "error": got["error"]}
        assert got == expected


def test_wrong_policies_and_answers_are_torchs_errors():
    errors = METADATA["errors"]
    with pytest.raises(ValueError) as info:
        Tensor._make_wrapper_subclass(Answering, (2,), dispatch_sizes_strides_policy="bogus")
    assert [type(info.value).__name__, str(info.value)] == errors["bad_policy"]
    for query, answer in (("dim()", "x"), ("layout", None), ("size()", "x"), ("stride()", 3)):
        e = _answering({"dispatch_sizes_strides_policy": "sizes", "dispatch_layout": True}, True, answer)
        with pytest.raises(RuntimeError) as info:
            eval("e." + query, {"e": e})
        assert [type(info.value).__name__, str(info.value)] == errors[query]


def test_handlers_answers_are_the_tensors_metadata():
    class Answers(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return {"aten.dim.default": 3, "aten.sym_size.default": (5, 3, 1), "aten.sym_stride.default": [4, 2, 2],
                    "aten.sym_numel.default": 15, "aten.sym_storage_offset.default": 9,
                    "prim.device.default": "meta", "prim.layout.default": sparse_csr}.get(str(func))

    e = Tensor._make_wrapper_subclass(Answers, (2, 3), dispatch_sizes_strides_policy="sizes", dispatch_device=True,
                                      dispatch_layout=True)
    assert (e.dim(), e.ndim, e.size(), e.shape, e.size(-1), e.stride(), e.stride(1)) == (3, 3, (5, 3, 1), (5, 3, 1), 1,
                                                                                         (4, 2, 2), 2)
    assert (e.numel(), e.storage_offset(), e.device.type, e.layout) == (15, 9, "meta", sparse_csr)
    # The operators ask the tensor (torch's are TensorImpl's methods).
    assert (aten.dim.default(e), aten.sym_size.int(e, 0), aten.stride.default(e), aten.numel.default(e)) == (
        3, 5, [4, 2, 2], 15)
    assert ops.prim.device.default(e).type == "meta" and ops.prim.layout.default(e) == sparse_csr
    # Its own fields are what kernels read, and what instances made without a policy answer.
    assert e.__class__.__dict__["shape"].fget is not None and Tensor.__dict__["shape"].__get__(e) == (2, 3)
    plain = Tensor._make_wrapper_subclass(Answers, (2, 3))
    assert (plain.dim(), plain.size(), plain.device.type, plain.layout) == (2, (2, 3), "cpu", strided)


def test_a_mode_is_asked_first():
    seen = []

    class Forward(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(["mode", str(func)])
            return func(*args, **(kwargs or {}))

    class Answers(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append(["subclass", str(func)])
            return 7 if func is aten.dim.default else None

    e = Tensor._make_wrapper_subclass(Answers, (2, 3), dispatch_sizes_strides_policy="sizes")
    with Forward():
        answer = e.dim()
    assert {"answer": answer, "seen": seen} == METADATA["mode_order"]


def test_a_class_defining_a_query_keeps_it():
    class OwnDim(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return 99

        def dim(self):
            return -1

    e = Tensor._make_wrapper_subclass(OwnDim, (2, 3), dispatch_sizes_strides_policy="sizes")
    assert e.dim() == -1
    with pytest.raises(RuntimeError, match="sym_size must be a list or a tuple"):
        e.size()


def test_a_class_without_a_handler_says_it_cannot_answer():
    class NoHandler(Tensor):
        pass

    e = Tensor._make_subclass(NoHandler, P.randn(2, 3), dispatch_sizes_strides_policy="sizes")
    with pytest.raises(RuntimeError, match="NoHandler was made to answer for its metadata, but defines no "
                                           "__torch_dispatch__ to answer aten.dim.default"):
        e.dim()
