"""The default random generator, and seeding it (torch.manual_seed).

Schemas say ``Generator?``; the dispatcher's boxing accepts numpy
generators there once registered.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, Optional

import numpy as np

from dispatcher.ivalue import IValueTag, register_value_type

__all__ = ["default_generator", "manual_seed", "seeded"]


# Note [numpy.random on first use]
# Importing numpy.random (and the secrets module it imports) was a sixth of
# `import dispatcher.prototype`; numpy itself imports it only when
# `np.random` is first read.  So the boxing is told of numpy's Generator by
# a stand-in class whose instances are numpy's Generators (none exist before
# numpy.random is imported, by whoever makes one), and the default generator
# is made by its first user.
class _NumpyGeneratorType(type):
    def __instancecheck__(cls, value: Any) -> bool:
        random = sys.modules.get("numpy.random")
        return random is not None and isinstance(value, random.Generator)


class NumpyGenerator(metaclass=_NumpyGeneratorType):
    """``isinstance(g, NumpyGenerator)``: g is a ``numpy.random.Generator``
    (see Note [numpy.random on first use])."""


register_value_type(IValueTag.GENERATOR, NumpyGenerator)

_generator: Optional[np.random.Generator] = None


def manual_seed(seed: int) -> None:
    """Reseed the generator random kernels use when none is passed."""
    global _generator
    _generator = np.random.default_rng(seed)


def default_generator() -> np.random.Generator:
    global _generator
    if _generator is None:
        _generator = np.random.default_rng()
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
