"""The 64-bit layout of a DispatchKeySet, as tables computed once at import.

Both engines (dispatcher/_engine/core.py, compiled or not) load these tables
instead of re-deriving the layout, so there is one description of it.  Nothing here is on the hot path.

Note [DispatchKeySet bit layout]
    bit 0 .. 15   backend bits: BackendComponent b (CPUBit=1 .. MetaBit=16)
                  is bit b-1
    bit 16 .. 61  functionality bits: functionality key f (Dense=1 ..
                  PythonDispatcher=46) is bit NUM_BACKENDS + f - 1
A per-backend runtime key sets two bits: CPU = Dense bit + CPUBit,
AutogradXLA = AutogradFunctionality bit + XLABit.  A set holding CPU and
SparseCUDA therefore also "holds" CPU's and CUDA's other combinations
(SparseCPU, CUDA): PyTorch accepts that, since a tensor has one backend.
Undefined and alias keys have no bits.

Note [Runtime table index]
The runtime table has NUM_RUNTIME_ENTRIES slots: one per functionality, plus
NUM_BACKENDS - 1 extra for each per-backend functionality.  For each
functionality f, OFFSETS[f] is the slot of f's first (or only) entry and
MASKS[f] selects the backend bits when f is per-backend (else 0).  The index
of a set is then
    f   = index_of_highest_bit(repr >> NUM_BACKENDS)     # 1-based; 0 if none
    b   = index_of_highest_bit((repr & MASKS[f]) >> 1)   # 0 for CPUBit
    idx = OFFSETS[f] + b
The ">> 1" makes CPUBit (bit 0) and "no backend" both give b == 0, so a
per-backend functionality without a backend bit lands on its CPU slot, as in
c10's getDispatchTableIndexForDispatchKeySet.
"""
from __future__ import annotations

from .keys import (
    NUM_BACKENDS,
    NUM_FUNCTIONALITY_KEYS,
    NUM_RUNTIME_ENTRIES,
    BackendComponent,
    DispatchKey,
    is_per_backend_functionality_key,
    is_runtime_key,
    to_backend_component,
    to_functionality_key,
)

FULL_BACKEND_MASK = (1 << NUM_BACKENDS) - 1
# DispatchKeySet(FULL): every backend bit and every functionality bit.
FULL_REPR = (1 << (NUM_BACKENDS + NUM_FUNCTIONALITY_KEYS - 1)) - 1


def _functionality_bit(f: int) -> int:
    return 1 << (NUM_BACKENDS + f - 1)


def backend_repr(b: int) -> int:
    """Bits of DispatchKeySet(BackendComponent b)."""
    return 0 if b == BackendComponent.InvalidBit else 1 << (b - 1)


def key_repr(k: int) -> int:
    """Bits of DispatchKeySet(DispatchKey k); 0 for Undefined and alias keys."""
    if k == DispatchKey.Undefined or k > DispatchKey.AutogradMeta:
        return 0
    return _functionality_bit(to_functionality_key(k)) | backend_repr(to_backend_component(k))


def full_after_repr(k: int) -> int:
    """DispatchKeySet(FULL_AFTER, k): every key of lower priority than k's
    functionality, plus PythonDispatcher (which c10 always keeps, so that the
    Python dispatcher still sees a call redispatched below any key)."""
    below = (1 << (NUM_BACKENDS + to_functionality_key(k) - 1)) - 1
    return below | key_repr(DispatchKey.PythonDispatcher)


def _offsets_and_masks() -> tuple[tuple[int, ...], tuple[int, ...]]:
    offsets, masks = [0], [0]
    for f in range(1, NUM_FUNCTIONALITY_KEYS):
        # A per-backend predecessor used NUM_BACKENDS slots, any other one.
        offsets.append(offsets[-1] + (NUM_BACKENDS if masks[-1] else 1))
        masks.append(FULL_BACKEND_MASK if is_per_backend_functionality_key(f) else 0)
    assert offsets[-1] == NUM_RUNTIME_ENTRIES - 1, (offsets[-1], NUM_RUNTIME_ENTRIES)
    return tuple(offsets), tuple(masks)


OFFSETS, MASKS = _offsets_and_masks()


def index_of_highest_bit(x: int) -> int:
    """64 - clz(x): the 1-based position of the highest set bit, 0 for 0."""
    return x.bit_length()


def table_index(repr_: int) -> int:
    """See Note [Runtime table index]."""
    f = index_of_highest_bit(repr_ >> NUM_BACKENDS)
    return OFFSETS[f] + index_of_highest_bit((repr_ & MASKS[f]) >> 1)


def _runtime_slot_keys() -> tuple[DispatchKey, ...]:
    slots: list[DispatchKey | None] = [None] * NUM_RUNTIME_ENTRIES
    for k in DispatchKey:
        if is_runtime_key(k):
            i = table_index(key_repr(k))
            assert slots[i] is None, (k, slots[i])
            slots[i] = k
    assert all(k is not None for k in slots)
    return tuple(slots)  # type: ignore[arg-type]


# RUNTIME_SLOT_KEYS[i] is the runtime key whose table index is i.
RUNTIME_SLOT_KEYS = _runtime_slot_keys()
SLOT_OF_KEY = {k: i for i, k in enumerate(RUNTIME_SLOT_KEYS)}

# The key each value names, or None for the gaps (block sentinels) and
# values past the aliases; indexed by value for the cores' iteration.
KEYS_BY_VALUE: tuple[DispatchKey | None, ...] = tuple(
    DispatchKey(v) if v in DispatchKey._value2member_map_ else None for v in range(max(DispatchKey) + 1)
)
KEY_REPRS = tuple(0 if k is None else key_repr(k) for k in KEYS_BY_VALUE)
