"""``set_warn_always`` and ``is_warn_always_enabled``: torch 2.13's process-wide
warn_always flag (``torch.set_warn_always``, ``torch._C._set_warnAlways``).

In torch it makes the warnings its C++ code gives once per process
(TORCH_WARN_ONCE) be given every time.  This package gives no warning once per
process: each of its warnings (an overridden kernel, a deprecated API, the
vmap fallback's, a fake registration an op does not need) is given every time
its cause happens, as torch gives those, and Python's warning filters decide
what is shown.  So the flag is kept and read back as torch's, for code that
sets or asks it, and changes no warning of this package.
"""
from __future__ import annotations

__all__ = ["is_warn_always_enabled", "set_warn_always"]

_enabled = [False]


def set_warn_always(b: bool, /) -> None:
    """Set the flag: a bool, as torch takes only a bool (its error's words)."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _enabled[0] = b


def is_warn_always_enabled() -> bool:
    return _enabled[0]
