"""The default random generator, and seeding it (torch.manual_seed).

Schemas say ``Generator?``; the dispatcher's boxing accepts numpy
generators there once registered.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import numpy as np

from dispatcher.ivalue import IValueTag, register_value_type

__all__ = ["default_generator", "manual_seed", "seeded"]

register_value_type(IValueTag.GENERATOR, np.random.Generator)

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Reseed the generator random kernels use when none is passed."""
    global _generator
    _generator = np.random.default_rng(seed)


def default_generator() -> np.random.Generator:
    return _generator


@contextlib.contextmanager
def seeded(seed: int = 42) -> Iterator[None]:
    """The block runs with the generator seeded with ``seed``; the generator
    before it is back after (torch's freeze_rng_state around manual_seed)."""
    global _generator
    saved = _generator
    _generator = np.random.default_rng(seed)
    try:
        yield
    finally:
        _generator = saved
