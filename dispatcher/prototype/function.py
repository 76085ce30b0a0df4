"""``Function``: torch.autograd.Function for the prototype's tensors.

A subclass writes ``forward`` and ``backward`` as static methods, with the
context either as forward's first argument (``forward(ctx, *args)``) or given
to a ``setup_context(ctx, inputs, output)`` of its own (``forward(*args)``),
and calls ``apply(*args)``: forward runs with autograd below it (its
operators record nothing), and its floating-point results get one node whose
backward is the subclass's (named ``<Class>Backward``, as torch names it).
The node and ``ctx`` are the ones custom operators record
(autograd.FunctionNode, FunctionCtx: ``save_for_backward``,
``needs_input_grad``, ``mark_non_differentiable``, ``set_materialize_grads``).
"""
from __future__ import annotations

from typing import Any

from dispatcher import DispatchKey, tls_is_dispatch_key_excluded

from .autograd import CustomOpAutograd, FunctionCtx, no_grad
from .tensor import Tensor

__all__ = ["Function"]


class Function:
    """torch.autograd.Function (see the module's docstring)."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> Any:
        # torch's marker: a subclass that does not override it takes ctx in forward.
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply takes its arguments positionally (as torch's does)")
        recorded = _Recorded(cls)
        if _records(args):
            return _RECORDER.apply(recorded, args)
        # As torch: no node when no input requires grad or grad mode is off.
        return recorded.forward(FunctionCtx(tuple(False for _ in args), recorded.name + "Backward"), *args)


def _records(args: tuple[Any, ...]) -> bool:
    """Whether a call with ``args`` gets a node: an input requires grad, outside no_grad."""
    if tls_is_dispatch_key_excluded(DispatchKey.AutogradFunctionality):
        return False
    return any(isinstance(t, Tensor) and t.requires_grad
               for arg in args for t in (arg if isinstance(arg, (list, tuple)) else (arg,)))


# The engine custom operators record with (stateless: one of its own here).
_RECORDER = CustomOpAutograd()


class _Recorded:
    """What the custom-operator node calls: a Function subclass's forward and backward."""

    def __init__(self, cls: type[Function]) -> None:
        self.cls = cls
        self.name = cls.__name__

    def forward(self, ctx: FunctionCtx, *args: Any) -> Any:
        cls = self.cls
        with no_grad():
            if cls.setup_context is Function.setup_context:
                return cls.forward(ctx, *args)
            output = cls.forward(*args)
        cls.setup_context(ctx, args, output)
        return output

    def backward(self, ctx: FunctionCtx, *grads: Any) -> tuple[Any, ...]:
        result = self.cls.backward(ctx, *grads)
        return result if isinstance(result, tuple) else (result,)
