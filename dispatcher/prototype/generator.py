"""The default random generator, and seeding it (torch.manual_seed).

Schemas say ``Generator?``; the dispatcher's boxing accepts numpy
generators there once registered.
"""
from __future__ import annotations

import numpy as np

from dispatcher.ivalue import IValueTag, register_value_type

__all__ = ["default_generator", "manual_seed"]

register_value_type(IValueTag.GENERATOR, np.random.Generator)

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Reseed the generator random kernels use when none is passed."""
    global _generator
    _generator = np.random.default_rng(seed)


def default_generator() -> np.random.Generator:
    return _generator
