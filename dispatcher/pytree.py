"""torch.utils._pytree's functions, on optree, with torch 2.13's semantics.

Code written for torch's pytree ports by changing its import
(``from torch.utils._pytree import tree_map`` becomes ``from dispatcher.pytree
import tree_map``).  What torch's pure-Python pytree does, these do:

* tuples, lists, dicts, namedtuples, OrderedDicts, defaultdicts and deques
  are nodes; everything else is a leaf unless registered
  (``register_pytree_node``);
* ``None`` is a leaf (``tree_leaves(None) == [None]``);
* a dict's leaves come in its insertion order, not sorted by key.

The traversal is optree's (a C++ library, the backend torch's own
``torch.utils._cxx_pytree`` uses, with these same settings there): a
well-kept implementation, and several times faster than a Python one on
the small trees a ``__torch_dispatch__`` handler flattens per call.  optree
is an optional dependency (``pip install "c10-dispatcher[pytree]"``): the
rest of the package does not need it.  Registrations live in optree's
"dispatcher" namespace, apart from torch's and other users'.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Iterable, Optional, Union

try:
    import optree
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('dispatcher.pytree needs optree: pip install "c10-dispatcher[pytree]"') from exc

__all__ = [
    "PyTree", "TreeSpec", "arg_tree_leaves", "map_only", "register_pytree_node", "tree_all", "tree_all_only", "tree_any",
    "tree_any_only", "tree_flatten", "tree_leaves", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_structure", "tree_unflatten",
]

PyTree = Any
TreeSpec = optree.PyTreeSpec
Context = Any
FlattenFn = Callable[[Any], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], Any]
TypeOrPredicate = Union[type, tuple[type, ...], types.UnionType, Callable[[Any], bool]]

_NAMESPACE = "dispatcher"
# Dicts flatten in insertion order in this namespace, for good (torch's
# _cxx_pytree does the same for its own): optree's default sorts their keys.
# The session is kept: it is a generator that ends the setting when freed.
_DICT_SESSION = optree.dict_insertion_ordered(True, namespace=_NAMESPACE)
_DICT_SESSION.__enter__()


def register_pytree_node(cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: Optional[str] = None) -> None:
    """Make ``cls`` a node: ``flatten_fn(obj) -> (children, context)``,
    ``unflatten_fn(children, context) -> obj`` (torch's argument orders).

    ``serialized_type_name`` is accepted for torch's signature and unused:
    nothing here serializes tree specs.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_node expects a class, got {type(cls).__name__}")
    if not callable(flatten_fn) or not callable(unflatten_fn):
        raise TypeError("register_pytree_node expects callable flatten_fn and unflatten_fn")

    def optree_unflatten(context: Context, children: Iterable[Any]) -> Any:  # optree's order: context first
        return unflatten_fn(children, context)

    optree.register_pytree_node(cls, flatten_fn, optree_unflatten, namespace=_NAMESPACE)


def tree_flatten(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree``, left to right, and its structure."""
    return optree.tree_flatten(tree, is_leaf=is_leaf, none_is_leaf=True, namespace=_NAMESPACE)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The tree of structure ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of PyTreeSpec but got item of "
            f"type {type(treespec)}."
        )
    return optree.tree_unflatten(treespec, leaves)


def tree_leaves(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> list[Any]:
    return optree.tree_leaves(tree, is_leaf=is_leaf, none_is_leaf=True, namespace=_NAMESPACE)


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list[Any]:
    """The leaves of a call's arguments: ``tree_leaves((args, kwargs))``, positional
    arguments first, then the keyword arguments' values in their order (torch's)."""
    return tree_leaves((args, list(kwargs.values())))


def tree_structure(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> TreeSpec:
    return optree.tree_structure(tree, is_leaf=is_leaf, none_is_leaf=True, namespace=_NAMESPACE)


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    """A tree of ``tree``'s structure with ``func(leaf, *leaves of rests at the same place)`` at each leaf."""
    return optree.tree_map(func, tree, *rests, is_leaf=is_leaf, none_is_leaf=True, namespace=_NAMESPACE)


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    """Call ``func`` on each leaf for its effect; returns ``tree``."""
    return optree.tree_map_(func, tree, *rests, is_leaf=is_leaf, none_is_leaf=True, namespace=_NAMESPACE)


def map_only(type_or_types_or_pred: TypeOrPredicate) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """A decorator: the function applies to values of the given type(s), or
    for which the predicate holds; other values pass through unchanged."""
    pred: Callable[[Any], bool]
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        classinfo = type_or_types_or_pred

        def pred(x: Any) -> bool:
            return isinstance(x, classinfo)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(func)
        def wrapped(x: Any) -> Any:
            return func(x) if pred(x) else x

        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred: TypeOrPredicate, func: Callable[[Any], Any], tree: PyTree,
                  is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    """tree_map of ``func`` over the leaves of the given type(s) (or predicate); other leaves stay."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: TypeOrPredicate, func: Callable[[Any], Any], tree: PyTree,
                   is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> bool:
    return all(map(pred, tree_leaves(tree, is_leaf=is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> bool:
    return any(map(pred, tree_leaves(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types: Union[type, tuple[type, ...]], pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Optional[Callable[[PyTree], bool]] = None) -> bool:
    return all(pred(x) for x in tree_leaves(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types: Union[type, tuple[type, ...]], pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Optional[Callable[[PyTree], bool]] = None) -> bool:
    return any(pred(x) for x in tree_leaves(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))
