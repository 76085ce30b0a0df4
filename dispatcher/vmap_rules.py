"""``register_vmap``: an operator's own batching rule, for a tensor library's vmap.

torch.library.register_vmap registers, at FuncTorchBatched, a kernel that
unwraps the arguments batched at the current vmap level, calls
``func(info, in_dims, *args, **kwargs)`` one vmap level lower (tensors
of outer vmaps still batched), and wraps what it returns, ``(output, out_dims)``, back into batched
tensors (torch's custom_function_call_vmap_helper).  The dispatcher has no
batched tensors of its own: a tensor library with a vmap tells it how to
unwrap and wrap them by registering a ``Batching`` (``register_batching``;
dispatcher.prototype's vmap does).  ``info`` is a ``VmapInfo``: the batch
size and the randomness setting.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Protocol, Union

from .keys import DispatchKey

if TYPE_CHECKING:
    from ._library import Library

__all__ = ["Batching", "VmapInfo", "add_vmap_rule", "register_batching"]


class VmapInfo(NamedTuple):
    """What a vmap rule is told about the vmap it runs under (torch's VmapInfo)."""

    batch_size: int
    randomness: str


class Batching(Protocol):
    """A tensor library's batched tensors, as vmap rules see them."""

    def current_level(self, values: tuple[Any, ...]) -> Optional[tuple[int, int, str]]:
        """``(level, batch size, randomness)`` of the innermost vmap whose
        batched tensors are among ``values`` (lists of tensors included), or
        None if none is batched."""
        ...

    def unwrap(self, value: Any, level: int) -> tuple[Any, Optional[int]]:
        """A tensor batched at ``level`` as ``(the batch, its batch dimension)``;
        anything else as ``(value, None)``."""
        ...

    def wrap(self, value: Any, out_dim: int, level: int) -> Any:
        """``value``, whose dimension ``out_dim`` is the batch, as a tensor batched at ``level``."""
        ...


_batching: list[Batching] = []


def register_batching(batching: Batching) -> None:
    """Make ``batching`` the batched tensors that vmap rules unwrap and wrap."""
    _batching[:] = [batching]


InDims = Union[Optional[int], list[Optional[int]]]


def _unwrap(batching: Batching, value: Any, level: int) -> tuple[Any, InDims]:
    if isinstance(value, (list, tuple)):
        pairs = [batching.unwrap(v, level) for v in value]
        return type(value)(p[0] for p in pairs), [p[1] for p in pairs]
    return batching.unwrap(value, level)


def _wrap_outputs(batching: Batching, output: Any, out_dims: Any, level: int, name: str) -> Any:
    if isinstance(output, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(output)
        if len(dims) != len(output):
            raise ValueError(
                f"vmap rule of {name}: returned {len(output)} outputs but out_dims has {len(dims)} entries; "
                "out_dims must be an int, None, or a tuple with one entry per output"
            )
        return tuple(_wrap_outputs(batching, o, d, level, name) for o, d in zip(output, dims))
    if isinstance(output, list):
        return [_wrap_outputs(batching, o, out_dims, level, name) for o in output]
    if out_dims is None:
        return output
    if not isinstance(out_dims, int):
        raise ValueError(f"vmap rule of {name}: out_dims of a single output must be an int or None, got {out_dims!r}")
    return batching.wrap(output, out_dims, level)


def add_vmap_rule(lib: "Library", op_name: str, func: Callable[..., Any]) -> None:
    """``func`` as the batching rule of ``op_name`` (of ``lib``'s namespace), a
    FuncTorchBatched kernel of ``lib``."""
    if not callable(func):
        raise TypeError(f"register_vmap: the rule must be callable, got {type(func).__name__}")
    registry = lib._registry
    engine = registry.engine
    op = registry.op_or_throw(str(lib._name_for_impl(op_name))).handle
    below = engine.DispatchKeySet(DispatchKey.FuncTorchBatched)
    name = op.name()

    def batched_kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        if not _batching:
            raise RuntimeError(f"vmap rule of {name}: no tensor library has registered its batched tensors "
                               "(dispatcher.vmap_rules.register_batching)")
        batching = _batching[0]
        current = batching.current_level((*args, *kwargs.values()))
        if current is None:  # nothing batched here: on to the keys below
            with engine.ExcludeDispatchKeyGuard(below):
                return op(*args, **kwargs)
        level, batch_size, randomness = current
        pairs = [_unwrap(batching, a, level) for a in args]
        unwrapped, in_dims = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        if all(d is None or (isinstance(d, list) and all(x is None for x in d)) for d in in_dims):
            with engine.ExcludeDispatchKeyGuard(below):
                return op(*args, **kwargs)
        # The rule runs with FuncTorchBatched in force, as torch's runs one level
        # lower (interpreter.lower()): what it unwrapped carries the key only if it
        # is batched by an outer vmap, whose batching rules its calls must reach.
        result = func(VmapInfo(batch_size, randomness), in_dims, *unwrapped, **kwargs)
        if not isinstance(result, tuple) or len(result) != 2:
            raise RuntimeError(
                f"Expected the vmap rule of {name} to have two returns, an output and out_dims with pytree "
                f"structure compatible with the output. Got a {type(result)}"
            )
        output, out_dims = result
        return _wrap_outputs(batching, output, out_dims, level, name)

    lib.impl(op_name, batched_kernel, "FuncTorchBatched", with_keyset=True)
