"""Weak references to tensors, dispatcher.weak and dispatcher.pytree against torch 2.13.

tests/golden/weak_pytree_cases.py writes the cases once for either library;
tests/golden/generate_weak_pytree_golden.py recorded torch's answers.  The
weak references are the engine's (TensorBase's __weakref__ slot), so those
cases run on both engines.
"""
from __future__ import annotations

import gc
import weakref

import pytest

from dispatcher import TensorBase
from dispatcher.weak import WeakIdKeyDictionary, WeakIdRef

from ._other_engine import run_on_other_engine
from .conftest import load_golden
from .golden.weak_pytree_cases import Lib, Point, point_flatten, point_unflatten, pytree_cases, weak_cases

pytree = pytest.importorskip("dispatcher.pytree", reason="dispatcher.pytree needs optree")
GOLDEN = load_golden("weak_pytree_golden.json")

_registered = False


def prototype_lib() -> Lib:
    import dispatcher.prototype as P

    global _registered
    if not _registered:  # registration is for the process
        pytree.register_pytree_node(Point, point_flatten, point_unflatten)
        _registered = True

    class Wrapper(P.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return P.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    return Lib(tensor=P.tensor, subclass=Wrapper, WeakIdRef=WeakIdRef, WeakIdKeyDictionary=WeakIdKeyDictionary,
               pytree=pytree)


def run_weak_cases() -> dict:
    return weak_cases(prototype_lib())


def test_weak_references_as_torch():
    assert run_weak_cases() == GOLDEN["weak"]


def test_weak_references_as_torch_on_the_other_engine():
    assert run_on_other_engine("tests.test_weak_pytree", "run_weak_cases") == GOLDEN["weak"]


def test_tensor_base_subclasses_with_slots_are_weakly_referenced(engine):
    class Slotted(engine.TensorBase):
        __slots__ = ("payload",)

    t = Slotted()
    ref = weakref.ref(t)
    assert ref() is t
    table = WeakIdKeyDictionary({t: 1})
    del t
    gc.collect()
    assert ref() is None and len(table) == 0


def test_a_key_that_cannot_be_weakly_referenced():
    table = WeakIdKeyDictionary()
    assert 3 not in table
    with pytest.raises(TypeError, match="weak reference"):
        table[3] = "three"


def test_pytree_as_torch():
    ours = pytree_cases(prototype_lib())
    assert ours == GOLDEN["pytree"]


def test_pytree_mismatched_structures_name_the_problem():
    with pytest.raises(ValueError, match="arity|length|structure"):
        pytree.tree_map(lambda u, v: u, [1, 2], [1, 2, 3])


def test_pytree_registration_checks_its_arguments():
    with pytest.raises(TypeError, match="expects a class"):
        pytree.register_pytree_node("Point", point_flatten, point_unflatten)
    with pytest.raises(TypeError, match="callable"):
        pytree.register_pytree_node(type("Other", (), {}), None, point_unflatten)
    with pytest.raises(TypeError, match="treespec"):
        pytree.tree_unflatten([1], "not a spec")


def test_tensor_base_is_a_pytree_leaf():
    t = TensorBase()
    assert pytree.tree_leaves([t, (t,)]) == [t, t]
