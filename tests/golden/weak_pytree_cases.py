"""Weak references to tensors and pytree, written once for either library.

``weak_cases(lib)`` and ``pytree_cases(lib)`` take a ``Lib`` (torch's, built
by generate_weak_pytree_golden.py, or dispatcher's, built by
tests/test_weak_pytree.py) and return what they observed as JSON-able data;
weak_pytree_golden.json holds torch 2.13's answers.
"""
import collections
import gc
import weakref
from typing import Any, Callable, NamedTuple


class Lib(NamedTuple):
    tensor: Callable[..., Any]  # tensor(data)
    subclass: type  # a tensor subclass whose instances are made as subclass(elem)
    WeakIdRef: type
    WeakIdKeyDictionary: type
    pytree: Any  # a module with tree_flatten, tree_unflatten, tree_leaves, tree_map, tree_map_only, ...


def weak_cases(lib: Lib) -> dict:
    out: dict = {}
    t = lib.tensor([1.0, 2.0])
    ref = weakref.ref(t)
    out["ref_alive"] = ref() is t
    del t
    gc.collect()
    out["ref_dead"] = ref() is None

    s = lib.subclass(lib.tensor([3.0]))
    sref = weakref.ref(s)
    out["subclass_ref_alive"] = sref() is s
    del s
    gc.collect()
    out["subclass_ref_dead"] = sref() is None

    a, b = lib.tensor([1.0]), lib.tensor([1.0])  # equal values, two tensors
    ra, ra2, rb = lib.WeakIdRef(a), lib.WeakIdRef(a), lib.WeakIdRef(b)
    out["idref_same_equal"] = ra == ra2
    out["idref_same_hash"] = hash(ra) == hash(ra2) == id(a)
    out["idref_other_equal"] = ra == rb
    hash_a = hash(ra)
    del a
    gc.collect()
    out["idref_dead_referent"] = ra() is None
    out["idref_dead_equal_other_ref"] = ra == ra2
    out["idref_dead_equal_itself"] = ra == ra
    out["idref_dead_hash_kept"] = hash(ra) == hash_a

    d = lib.WeakIdKeyDictionary()
    x, y, z = lib.tensor([1.0]), lib.tensor([1.0]), lib.tensor([2.0])
    d[x] = "x"
    d[y] = "y"
    out["dict_len_two_equal_keys"] = len(d)
    out["dict_contains"] = [x in d, y in d, z in d]
    out["dict_get"] = [d.get(x), d.get(z), d.get(z, "default")]
    out["dict_setdefault"] = [d.setdefault(x, "other"), d.setdefault(z, "z")]
    out["dict_values"] = sorted(d.values())
    out["dict_keys_are_tensors"] = sorted(id(k) for k in d.keys()) == sorted(map(id, (x, y, z)))
    del y
    gc.collect()
    out["dict_after_key_died"] = [len(d), sorted(d.values())]
    out["dict_pop"] = [d.pop(z), len(d), d.pop(z, "gone")]
    try:
        d[z]
    except KeyError:
        out["dict_missing_key"] = "KeyError"
    copied = d.copy()
    out["dict_copy"] = [type(copied).__name__, len(copied), copied[x]]
    del d[x]
    out["dict_after_del"] = len(d)
    d2 = lib.WeakIdKeyDictionary({x: 1, z: 2})
    out["dict_from_mapping"] = sorted(d2.values())
    del x, z
    gc.collect()
    out["dict_all_keys_died"] = [len(d2), len(copied)]
    return out


class Pair(NamedTuple):
    left: Any
    right: Any


class Point:
    """A class each library registers as a pytree node (children x and y, the label as context)."""

    def __init__(self, x: Any, y: Any, label: str) -> None:
        self.x, self.y, self.label = x, y, label

    def __repr__(self) -> str:
        return f"Point({self.x!r}, {self.y!r}, {self.label!r})"


def point_flatten(p: Point) -> tuple:
    return [p.x, p.y], p.label


def point_unflatten(children: Any, label: str) -> Point:
    x, y = children
    return Point(x, y, label)


def trees() -> dict:
    return {
        "leaf": 3,
        "none": None,
        "empty": [[], (), {}],
        "nested": [1, (2.5, [3, "s"]), {"b": 4, "a": None}],
        "dict_order": {"z": 1, "a": 2, "m": [3, 4]},
        "namedtuple": Pair(1, Pair([2, 3], None)),
        "ordereddict": collections.OrderedDict([("b", 1), ("a", (2, 3))]),
        "defaultdict": collections.defaultdict(list, {"k": [1, 2], "j": 3}),
        "deque": collections.deque([1, [2, 3]]),
        "registered": [Point(1, (2, 3), "p"), Point(None, 4.0, "q")],
        "set_is_leaf": [{1, 2}, frozenset()],
    }


def pytree_cases(lib: Lib) -> dict:
    pt = lib.pytree
    out: dict = {}
    for name, tree in trees().items():
        leaves, spec = pt.tree_flatten(tree)
        case = {
            "leaves": repr(leaves),
            "tree_leaves": repr(pt.tree_leaves(tree)),
            "num_leaves": spec.num_leaves,
            "unflatten_reversed": repr(pt.tree_unflatten(list(reversed(leaves)), spec)),
            "unflatten_same_type": type(pt.tree_unflatten(leaves, spec)).__name__,
            "map_repr": repr(pt.tree_map(lambda v: f"<{v!r}>", tree)),
            "map_two_trees": repr(pt.tree_map(lambda u, v: (u, v), tree, tree)),
            "map_only_int": repr(pt.tree_map_only(int, lambda v: v * 10, tree)),
            "map_only_types": repr(pt.tree_map_only((int, float), lambda v: -v, tree)),
            "map_only_predicate": repr(pt.tree_map_only(lambda v: v is None, lambda v: "was None", tree)),
            "lists_as_leaves": repr(pt.tree_leaves(tree, is_leaf=lambda v: isinstance(v, list))),
            "any_only_int": pt.tree_any_only(int, lambda v: v > 2, tree),
            "all_only_int": pt.tree_all_only(int, lambda v: v > 0, tree),
            "any": pt.tree_any(lambda v: v is None, tree),
            "all": pt.tree_all(lambda v: v is not None, tree),
        }
        seen: list = []
        pt.tree_map_(lambda v: seen.append(repr(v)), tree)
        case["map_inplace_order"] = seen
        out[name] = case
    leaves, spec = pt.tree_flatten([1, (2, 3)])
    out["structure_equal"] = [spec == pt.tree_structure([4, (5, 6)]), spec == pt.tree_structure([4, [5, 6]])]
    out["map_only_tensor"] = repr([type(v).__name__ for v in pt.tree_leaves(
        pt.tree_map_only(type(lib.tensor([1.0])), lambda t: "tensor", [lib.tensor([1.0]), 2, (lib.tensor([2.0]),)]))])
    try:
        pt.tree_map_only(3, lambda v: v, [1])
    except TypeError as exc:
        out["map_only_bad_argument"] = str(exc)
    try:
        pt.tree_map(lambda u, v: u, [1, 2], [1, 2, 3])
    except ValueError:  # both libraries raise ValueError; the texts differ (see the test)
        out["map_mismatched_structures"] = "ValueError"
    return out
