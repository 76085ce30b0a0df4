"""What every part of the ``torch._C`` shim shares: arguments converted as
torch's pybind bindings convert them, and the registry the shim is on."""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

from .._engine import loaded_engines
from ..keys import DispatchKey
from ..registry import Dispatcher, registry_in_use

KeyArg = Union[str, DispatchKey]

# c10::parseDispatchKey (torch 2.13) knows every key name except these
# per-backend keys, which it has no table entry for.  (dispatcher.keys'
# parser is more lenient: it takes them all, and legacy names like Math.)
_UNPARSEABLE = frozenset(
    [f"Quantized{b}" for b in ("HIP", "XLA", "MPS", "IPU", "HPU", "VE", "Lazy", "MTIA", "MAIA",
                                "PrivateUse2", "PrivateUse3", "Meta")]
    + [f"{f}{b}" for f in ("Sparse", "SparseCsr")
       for b in ("XLA", "IPU", "HPU", "Lazy", "MTIA", "MAIA", "PrivateUse2", "PrivateUse3")]
    + [f"NestedTensor{b}" for b in ("HIP", "XLA", "MPS", "IPU", "VE", "Lazy", "MTIA", "MAIA",
                                     "PrivateUse2", "PrivateUse3")]
    + ["AutogradHIP", "AutogradVE", "AutogradMTIA", "AutogradMAIA"]
)


# The registry the shim is on: the registry in use (Note [The registry in
# use] in dispatcher/registry.py), read at every call, so that a
# ``using_registry`` block moves every part of the shim.  (The function
# itself, not a function calling it: _dispatch_dump is timed beside torch's.)
shim_registry: Callable[[], Dispatcher] = registry_in_use


def parse_dispatch_key(name: str) -> Optional[DispatchKey]:
    """The key called ``name`` by torch's parser, or None."""
    if not isinstance(name, str):
        raise TypeError(f"a dispatch key name must be a str, not {type(name).__name__}")
    key = DispatchKey.__members__.get(name)
    return None if key is None or name in _UNPARSEABLE else key


def dispatch_key_parse(name: str) -> DispatchKey:
    key = parse_dispatch_key(name)
    if key is None:
        raise RuntimeError(f"could not parse dispatch key: {name}")
    return key


def key_arg(key: KeyArg) -> DispatchKey:
    """A DispatchKey argument: pybind converts a str with torch's parser."""
    if isinstance(key, DispatchKey):
        return key
    if isinstance(key, str):
        return dispatch_key_parse(key)
    raise TypeError(f"expected a DispatchKey or its name, got {type(key).__name__}")


def str_arg(value: object, function: str, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{function}(): {what} must be a str, not {type(value).__name__}")
    return value


def bool_arg(value: object, function: str, what: str) -> bool:
    # pybind's bool converts ints too (as `_dispatch_tls_set_dispatch_key_included(k, 1)`).
    if not isinstance(value, int):
        raise TypeError(f"{function}(): {what} must be a bool, not {type(value).__name__}")
    return bool(value)


def keyset_arg(value: object, engine: Optional[Any], function: str) -> Any:
    """A DispatchKeySet argument, of any engine; as ``engine``'s DispatchKeySet
    unless ``engine`` is None (one of the other engine is converted through
    its raw bits)."""
    for other in loaded_engines():
        if isinstance(value, other.DispatchKeySet):
            if engine is None or other is engine:
                return value
            return engine.DispatchKeySet.from_raw_repr(value.raw_repr())
    raise TypeError(f"{function}(): expected a DispatchKeySet, got {type(value).__name__}")
