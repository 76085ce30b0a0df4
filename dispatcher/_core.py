"""Selects the core: the compiled ``dispatcher._C`` or its twin ``_core_py``.

Environment (read once, at import):
  DISPATCHER_NO_EXTENSIONS=1     use the pure-Python twin even if _C is built
  DISPATCHER_REQUIRE_EXTENSION=1 raise ImportError if _C is not built (CI sets
                                 it, so a broken build cannot pass as the twin)
Everything else in the package imports core names from here.
"""
import os

from . import _core_py


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


_compiled = None
try:
    from . import _C as _compiled  # type: ignore[no-redef]
except ImportError as exc:
    if _flag("DISPATCHER_REQUIRE_EXTENSION"):
        raise ImportError(
            "DISPATCHER_REQUIRE_EXTENSION is set but the compiled core dispatcher._C "
            f"could not be imported ({exc}); build it with `pip install .`"
        ) from exc

HAS_EXTENSION = _compiled is not None and not _flag("DISPATCHER_NO_EXTENSIONS")
impl = _compiled if HAS_EXTENSION else _core_py

__all__ = ["HAS_EXTENSION", "impl", *_core_py.__all__]
globals().update({name: getattr(impl, name) for name in _core_py.__all__})
