"""Storages and Tensor.set_ on dispatcher.prototype against torch 2.13's
(tests/golden/storage_golden.json: each expression of
generate_storage_golden.py, evaluated here with the prototype as ``torch``)."""
from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

import dispatcher.prototype as P
from dispatcher.dispatch_modes import TorchDispatchMode
from dispatcher.prototype.storage import TypedStorage, UntypedStorage

from .conftest import GOLDEN, load_golden

sys.path.insert(0, str(GOLDEN))
from storage_cases import mode_sees, set_, shares  # noqa: E402

EXPRESSIONS = load_golden("storage_golden.json")["expressions"]
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


def _arange(n):
    return P.tensor(np.arange(n, dtype=np.float32))


def _empty(*size, dtype=None):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    return P.empty(*size, dtype=dtype)


TORCH = SimpleNamespace(Storage=TypedStorage, TypedStorage=TypedStorage, UntypedStorage=UntypedStorage,
                        tensor=P.tensor, zeros=P.zeros, ones=P.ones, empty=_empty, arange=_arange, float64=P.float64)


@pytest.mark.parametrize("expression", sorted(EXPRESSIONS))
def test_storages_are_torchs(expression):
    expected = EXPRESSIONS[expression]
    scope = {"torch": TORCH, "TorchDispatchMode": TorchDispatchMode, "set_": set_, "shares": shares,
             "mode_sees": mode_sees}
    if "error" in expected:
        with pytest.raises(Exception) as info:
            eval(expression, scope)
        assert [type(info.value).__name__, str(info.value)] == expected["error"]
    else:
        assert eval(expression, scope) == expected["value"]


def test_untyped_storage_is_the_memory_the_tensor_views():
    t = P.zeros(2, 3)
    s = t.t().untyped_storage()
    assert s.data_ptr() == t.data_ptr() and s.nbytes() == 24
    view = P.empty(0).set_(s, 4, (2,), (1,))
    view.add_(P.ones(2))
    assert t.tolist() == [[0, 0, 0], [0, 1, 1]]


def test_set_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[2, 2\], strides \[2, 1\], storage offset 3, and "
                                           r"itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24"):
        P.empty(0).set_(_arange(6).storage(), 3, (2, 2), (2, 1))
    with pytest.raises(RuntimeError, match='Attempted to set the storage of a tensor on device "meta" to a storage on '
                                           'different device "cpu"'):
        P.empty(0, device="meta").set_(_arange(6).untyped_storage())
    with pytest.raises(TypeError, match="argument 'source' must be a Storage, not list"):
        P.empty(0).set_([1.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        P.zeros(2, requires_grad=True).set_(_arange(6).storage())
    meta = P.empty(0, device="meta").set_(UntypedStorage(12, device="meta"))
    assert meta.shape == (3,)
    with pytest.raises(RuntimeError, match="Attempted to access the data pointer on an invalid python storage"):
        Wrapper.make().untyped_storage().data_ptr()  # a storage without memory, as torch's
    with pytest.raises(NotImplementedError, match="Not available for 'meta' device type"):
        UntypedStorage(4, device="meta").tolist()
    with pytest.raises(NotImplementedError, match="untyped_storage\\(\\) of a tensor on toy: the prototype's storages"):
        P.zeros(2, device="toy").untyped_storage()
    assert P.zeros(2, 3, device="meta").t().untyped_storage().nbytes() == 24


class Wrapper(P.Tensor):
    @staticmethod
    def make():
        return P.Tensor._make_wrapper_subclass(Wrapper, (2,))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return None
