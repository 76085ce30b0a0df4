""""Did you mean" hints: the known names closest to a mistyped one.

Only error paths import this (difflib costs about a millisecond to import).
"""
import difflib

__all__ = ["closest_names", "closest_operator_names"]


def closest_names(name: str, names: list[str], n: int = 3) -> list[str]:
    """The (up to ``n``) ``names`` closest to ``name``, compared without
    case; only those equal to it but for case if there are any (``Cpu`` is
    CPU: difflib alone does not find it, as most of its letters differ)."""
    by_lower: dict[str, list[str]] = {}
    for candidate in names:
        by_lower.setdefault(candidate.lower(), []).append(candidate)
    lowered = name.lower()
    if lowered in by_lower:
        return by_lower[lowered][:n]
    found = []
    for match in difflib.get_close_matches(lowered, list(by_lower), n=n):
        found.extend(by_lower[match])
    return found[:n]


def closest_operator_names(name: str, operator_names: list[str], n: int = 3) -> list[str]:
    """The operators (``ns::name[.overload]``) closest to ``name``, from its
    own namespace when that has any: a name is compared with names, not
    with whole qualified names (where the shared ``aten::`` made
    ``aten::nonexistent_op`` closest to ``aten::extend.t``)."""
    namespace, sep, rest = name.rpartition("::")
    if not sep:
        return closest_names(name, operator_names, n)
    same_namespace = [op for op in operator_names if op.startswith(namespace + "::")]
    if not same_namespace:
        # A mistyped namespace: compare whole names.
        return closest_names(name, operator_names, n)
    # Compare operator names without their overloads: aten::ad is nearest
    # aten::add whichever of add's overloads it would otherwise meet.
    prefix_len = len(namespace) + 2
    overloads: dict[str, list[str]] = {}
    for op in same_namespace:
        overloads.setdefault(op[prefix_len:].split(".", 1)[0], []).append(op)
    base, dot, overload = rest.partition(".")
    found = []
    for match in closest_names(base, list(overloads), n):
        # Its overload nearest the one given; else its shortest name (the
        # overload without a name, when it has one).
        candidates = sorted(overloads[match], key=len)
        nearest = closest_names(f"{namespace}::{match}{dot}{overload}", candidates, 1) if dot else []
        found.append(nearest[0] if nearest else candidates[0])
    return found
