"""What c10's TensorImpl computes from a tensor's sizes and strides: whether
it is contiguous (row-major, or channels-last), laid out like a memory
format, or non-overlapping and dense.

Pure functions of the two sequences, so that a tensor with numpy memory, a
wrapper subclass (which has strides but no memory) and a subclass whose
``__torch_dispatch__`` answers for its strides (python_metadata.py) all get
torch's answers.  They follow c10/core/Contiguity.h and MemoryFormat.h.
"""
from __future__ import annotations

import math
from typing import Sequence

__all__ = ["is_channels_last_contiguous", "is_contiguous", "is_non_overlapping_and_dense",
           "is_strides_like_channels_last"]

# The dimensions from innermost to outermost of the channels-last formats (NHWC, NDHWC).
_CHANNELS_LAST_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def is_contiguous(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major: each dimension of size other than 1 steps over all the inner ones
    (an empty tensor is contiguous)."""
    if math.prod(sizes) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_channels_last_contiguous(sizes: Sequence[int], strides: Sequence[int], ndim: int = 4) -> bool:
    """Contiguous in channels-last order: ``ndim`` 4 for channels_last, 5 for
    channels_last_3d (a tensor of another rank never is)."""
    if len(sizes) != ndim:
        return False
    expected = 1
    for d in _CHANNELS_LAST_ORDER[ndim]:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def is_strides_like_channels_last(sizes: Sequence[int], strides: Sequence[int], ndim: int = 4) -> bool:
    """Strides ordered as channels-last's, dense or not (c10's
    is_channels_last_strides_2d_s4 / _3d_s5).  Ambiguous layouts (a channel
    dimension of stride 0, N111 tensors) count as row-major, as in c10."""
    if len(sizes) != ndim:
        return False
    smallest = 0
    if strides[1] == 0:
        return False
    for d in _CHANNELS_LAST_ORDER[ndim]:
        if sizes[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d]
        if sizes[d] > 1:
            smallest *= sizes[d]
    return True


def is_non_overlapping_and_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """The elements fill a block of memory exactly once, in some order of the dimensions
    (c10 counts every contiguous tensor so, an empty one too)."""
    if is_contiguous(sizes, strides) or any(is_channels_last_contiguous(sizes, strides, n) for n in (4, 5)):
        return True
    if len(sizes) == 1:
        return sizes[0] < 2 or strides[0] == 1
    # Dimensions of size < 2 go last; the rest by stride (c10's comparator, a stable sort here).
    order = sorted(range(len(sizes)), key=lambda d: (sizes[d] < 2, strides[d] if sizes[d] >= 2 else 0))
    expected = 1
    for d in order:
        if sizes[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= sizes[d]
    return True
