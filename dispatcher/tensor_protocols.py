"""What a tensor library tells the dispatcher about its tensors, for custom operators.

The dispatcher has no tensors of its own, so the parts of ``torch.library``
that look inside tensors ask the tensor library, through two small
protocols registered per tensor type (a subclass's instances use their
nearest registered base's):

``AutogradEngine`` (``register_autograd_engine``)
    Makes custom operators differentiable on the library's tensors.  Every
    custom operator has an Autograd kernel (custom_op_autograd.py); when an
    argument requires grad (``requires_grad``), the kernel hands the call to
    the engine's ``apply``, which runs it and records a graph node, as
    ``torch.autograd.Function.apply`` does.  ``increment_version`` is called
    on every tensor a mutable custom operator writes (its ADInplaceOrView
    kernel), so that the engine can refuse saved tensors written since.

``TensorChecks`` (``register_tensor_checks``)
    What ``opcheck`` needs: copies of the sample inputs, a snapshot of a
    tensor's values to tell whether a call wrote to it, the data-less
    (meta) tensor that stands for a FakeTensor, a tensor's shape and dtype,
    and whether two tensors share memory.

dispatcher.prototype implements both for its Tensor (prototype/autograd.py).
"""
from __future__ import annotations

from typing import Any, Optional, Protocol

from ._by_type import ByType

__all__ = [
    "AutogradEngine",
    "TensorChecks",
    "autograd_engine_for",
    "register_autograd_engine",
    "register_tensor_checks",
    "tensor_checks_for",
    "unregister_autograd_engine",
    "unregister_tensor_checks",
]


class AutogradEngine(Protocol):
    """A tensor library's autograd, as custom operators use it.

    Optionally, also ``as_view(base, view)``: record ``view``, a custom view
    operator's result, as a view of ``base`` (torch's as_view: it shares the
    base's version counter, and its ``_base`` is the base's own base or the
    base); custom_op_views.py calls it.
    """

    def requires_grad(self, tensor: Any) -> bool:
        """Whether ``tensor`` requires grad (a call with one records a node)."""
        ...

    def apply(self, function: Any, args: tuple[Any, ...]) -> Any:
        """Run ``function`` and record it, as ``torch.autograd.Function.apply(*args)`` does.

        ``function`` is a ``CustomOpFunction`` (custom_op_autograd.py).  Make
        a context ``ctx`` (with ``save_for_backward(*tensors)``,
        ``saved_tensors``, ``needs_input_grad``: one bool per argument, a
        list of bools for a list of tensors; and free attributes), return
        ``function.forward(ctx, *args)``, and record a node whose backward
        calls ``function.backward(ctx, *grads)`` -- one gradient per output
        (a list for a Tensor[] output) -- which returns one gradient per
        argument (a list for a list of tensors, None for the rest).
        """
        ...

    def increment_version(self, tensor: Any) -> None:
        """``tensor`` was written to in place (torch.autograd.graph.increment_version)."""
        ...


class TensorChecks(Protocol):
    """A tensor library's answers to what ``opcheck`` asks about its tensors.

    Optionally, also ``seeded()``: a context manager whose block runs with the
    library's random generators seeded the same way each time, their state put
    back after (torch's ``freeze_rng_state`` and ``manual_seed``).  With it,
    opcheck's test_aot_dispatch_* call the operator twice on the same inputs
    and compare the results, as torch's compare an eager call with a traced
    one: an operator whose results depend on state its calls change fails.
    And ``gradients(outputs, inputs)``: the gradients of the sum of the
    elements of ``outputs`` (tensors that require grad) with respect to
    ``inputs`` (None for one they do not depend on); with it, those calls'
    gradients are compared too.  And ``mismatch(actual, expected, rtol, atol)``:
    why two tensors are not close, in torch.testing.assert_close's words
    (dispatcher.mismatch_texts), or None (``rtol``/``atol`` None: the dtype's
    defaults); with it, those comparisons say what differs, as torch's do,
    and take opcheck's tolerances.  And ``layout(tensor)``: ``(strides,
    storage offset)``, with ``meta_views_made()``: how many views of meta
    tensors the thread has made (a library whose meta tensors all count as
    contiguous knows their layout only while it has made none); with them,
    test_faketensor compares a fake result's layout with the real one's, as
    torch's does, where the fake one is certain (optests._stride_mismatch).
    """

    def copy(self, tensor: Any) -> Any:
        """A leaf tensor with its own memory and ``tensor``'s values, shape, dtype,
        device and ``requires_grad`` (each of opcheck's tests gets fresh inputs)."""
        ...

    def snapshot(self, tensor: Any) -> Any:
        """``tensor``'s values now, for ``changed``."""
        ...

    def changed(self, tensor: Any, snapshot: Any) -> bool:
        """Whether ``tensor``'s shape or values differ from ``snapshot``'s (NaN equals NaN)."""
        ...

    def to_meta(self, tensor: Any) -> Any:
        """A tensor without data with ``tensor``'s shape, dtype and ``requires_grad``:
        what a fake implementation is run on."""
        ...

    def is_meta(self, tensor: Any) -> bool:
        """Whether ``tensor`` has no data (opcheck checks nothing on such inputs, as torch's)."""
        ...

    def metadata(self, tensor: Any) -> tuple[tuple[int, ...], Any]:
        """``(shape, dtype)``: what a fake implementation's result must match."""
        ...

    def shares_memory(self, a: Any, b: Any) -> bool:
        """Whether ``a`` and ``b`` may overlap in memory (one is a view of the other, say)."""
        ...


_engines: ByType[AutogradEngine] = ByType("an autograd engine")
_checks: ByType[TensorChecks] = ByType("tensor checks")


def _check_protocol(obj: object, protocol: type, what: str) -> None:
    missing = [name for name in dir(protocol) if not name.startswith("_") and not callable(getattr(obj, name, None))]
    if missing:
        raise TypeError(f"{obj!r} is not {what}: it has no method {', '.join(missing)}")


def register_autograd_engine(tensor_type: type, engine: AutogradEngine) -> None:
    """Make custom operators differentiable on instances of ``tensor_type``
    (and its subclasses) with ``engine``; see AutogradEngine."""
    _check_protocol(engine, AutogradEngine, "an AutogradEngine")
    _engines.register(tensor_type, engine)


def unregister_autograd_engine(tensor_type: type) -> None:
    _engines.unregister(tensor_type)


def autograd_engine_for(value: object) -> Optional[AutogradEngine]:
    """The autograd engine of ``value``'s tensor type, or None (not a tensor of a library that has one)."""
    return _engines.lookup(value)


def register_tensor_checks(tensor_type: type, checks: TensorChecks) -> None:
    """Let ``opcheck`` inspect instances of ``tensor_type`` (and its subclasses)
    with ``checks``; see TensorChecks."""
    _check_protocol(checks, TensorChecks, "TensorChecks")
    _checks.register(tensor_type, checks)


def unregister_tensor_checks(tensor_type: type) -> None:
    _checks.unregister(tensor_type)


def tensor_checks_for(value: object) -> Optional[TensorChecks]:
    """The TensorChecks of ``value``'s tensor type, or None."""
    return _checks.lookup(value)
