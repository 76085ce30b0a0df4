"""``Tag``: operator tags, as ``torch.Tag`` (PyTorch 2.13's tags.yaml).

An operator's tags say what kind of operator it is (``pointwise``,
``inplace``, ``view_copy``, ...) to code that treats operators by kind; the
dispatcher itself never reads them.  ``Library.define(..., tags=...)`` takes
them (or their names), the catalog gives aten's theirs, and an overload
handle's ``tags`` lists them.
"""
from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Union

__all__ = ["Tag", "tag_names"]


class Tag(enum.IntEnum):
    """torch.Tag, with torch 2.13's values."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19


TagArg = Union[Tag, str]


def tag_names(tags: Union[TagArg, Iterable[TagArg]]) -> tuple[str, ...]:
    """The names of ``tags``: one tag alone, as torch.library allows, or an
    iterable of them; a tag is a ``Tag`` or its name."""
    items = (tags,) if isinstance(tags, (Tag, str)) else tags
    try:
        names = tuple(items)
    except TypeError:
        raise TypeError(f"tags must be a Tag or an iterable of Tags, got {tags!r}") from None
    result = []
    for tag in names:
        if isinstance(tag, Tag):
            result.append(tag.name)
        elif isinstance(tag, str) and tag in Tag.__members__:
            result.append(tag)
        else:
            raise ValueError(f"{tag!r} is not an operator tag; the tags are dispatcher.Tag's: "
                             + ", ".join(Tag.__members__))
    return tuple(result)
