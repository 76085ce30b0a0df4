"""A CustomOp's Autograd kernel: torch 2.13's torch/_custom_op/autograd.py.

Every CustomOp has one Autograd kernel, registered when it is made: the
*indirection*, which at each call runs the autograd impl built once both
``impl_save_for_backward`` and ``impl_backward`` are in (the dispatcher does
not let a kernel be swapped, so the kernel looks the formula up), says which
of the two is missing if only one is, and otherwise refuses inputs that
require grad ("Autograd has not been implemented for operator").

The autograd impl records through the autograd engine of the arguments'
tensor library (dispatcher.tensor_protocols.AutogradEngine), where torch
generates a ``torch.autograd.Function``: its forward runs the operator below
autograd, calls the save-for-backward formula with the inputs as a
namedtuple and the output, saves what it returns (tensors with
``ctx.save_for_backward``), and marks the outputs that
``output_differentiability`` says are not differentiable; its backward calls
the backward formula with what was saved and one gradient per output, and
checks the dict of gradients it returns, with torch's texts.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Optional

from .. import pytree
from ..custom_op_autograd import _engine_requiring_grad
from ..custom_ops import _is_tensor_like, _is_tensorlist_like
from ..registry import registry_in_use
from ..schema import FunctionSchema
from ..tensor_protocols import autograd_engine_for

__all__ = ["autograd_kernel_indirection", "autograd_not_implemented", "construct_autograd_kernel"]


def autograd_kernel_indirection(custom_op: Any) -> Callable[..., Any]:
    """The Autograd kernel of ``custom_op`` (a weak proxy of a CustomOp)."""
    autograd_fallback = autograd_not_implemented(custom_op)

    def inner(*args: Any, **kwargs: Any) -> Any:
        if custom_op._has_impl("autograd"):
            kernel = custom_op._get_impl("autograd").func
            return kernel(*args, **kwargs)
        # Only one of the two formulas: say which is missing.
        if custom_op._has_impl("save_for_backward") or custom_op._has_impl("backward"):
            missing = "save_for_backward" if custom_op._has_impl("backward") else "backward"
            found = "save_for_backward" if missing == "backward" else "backward"
            loc = custom_op._get_impl(found).location
            raise RuntimeError(
                f"We found a '{found}' registration for {custom_op} at "
                f"{loc} but were unable to find a '{missing}' registration. "
                f"To use the CustomOp API to register a backward formula, "
                f"please provide us both a backward function and a "
                f"'save for backward' function via `impl_backward` and "
                f"`impl_save_for_backward` respectively."
            )
        return autograd_fallback(*args, **kwargs)

    return inner


def _requires_grad(value: object) -> bool:
    engine = autograd_engine_for(value)
    return engine is not None and engine.requires_grad(value)


def autograd_not_implemented(custom_op: Any) -> Callable[..., Any]:
    """A kernel refusing inputs that require grad, running the operator below autograd otherwise.

    torch also asks whether grad mode is on; here no_grad (a guard excluding
    the autograd keys) keeps calls from reaching this kernel at all."""
    below_autograd = registry_in_use().engine.AutoDispatchBelowAutograd

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if pytree.tree_any(_requires_grad, (args, kwargs)):
            raise RuntimeError("Autograd has not been implemented for operator")
        with below_autograd():
            return custom_op(*args, **kwargs)

    return kernel


def mark_non_differentiable(ctx: Any, output: Any, output_differentiability: Optional[list[bool]],
                            is_tensor: Callable[[object], bool]) -> None:
    """Mark the outputs ``output_differentiability`` says are not differentiable;
    a non-tensor output said to be differentiable is an error."""
    if output_differentiability is None:
        return
    tuple_output = output if isinstance(output, tuple) else (output,)
    if len(output_differentiability) != len(tuple_output):
        raise AssertionError(
            f"output_differentiability length {len(output_differentiability)} "
            f"!= output length {len(tuple_output)}"
        )
    non_differentiable_tensors = []
    for idx, (differentiable, out) in enumerate(zip(output_differentiability, tuple_output)):
        if is_tensor(out):
            if not differentiable:
                non_differentiable_tensors.append(out)
            continue
        if isinstance(out, list):
            if not differentiable:
                non_differentiable_tensors.extend(out)
            continue
        if differentiable:
            raise RuntimeError(
                f"With output_differentiability={output_differentiability}. "
                f"At idx {idx}, we received an object of type {type(out)} that "
                f"is not a Tensor, so it cannot have be marked as differentiable in "
                f"output_differentiability."
            )
    if non_differentiable_tensors:
        ctx.mark_non_differentiable(*non_differentiable_tensors)


class _UnrecordedCtx:
    """The ctx of a call that records nothing (no input requires grad): torch's
    Function.apply still runs forward, and so the save-for-backward formula."""

    def set_materialize_grads(self, value: bool) -> None:
        pass

    def save_for_backward(self, *tensors: Any) -> None:
        pass

    def mark_non_differentiable(self, *tensors: Any) -> None:
        pass


class _CustomOpCall:
    """One call of a CustomOp with an autograd formula, as the autograd engine
    applies it (see dispatcher.tensor_protocols.AutogradEngine.apply)."""

    def __init__(self, kernel: "_AutogradKernel", keyword_only: dict[str, Any]) -> None:
        self.name = kernel.custom_op._opname + "_customop"
        self._kernel = kernel
        self._keyword_only = keyword_only

    def forward(self, ctx: Any, *args: Any) -> Any:
        kernel = self._kernel
        ctx.set_materialize_grads(True)
        with kernel.below_autograd():
            output = kernel.op_overload(*args, **self._keyword_only)
        values = (*args, *self._keyword_only.values())
        # Where each argument was a tensor: for backward's checks and texts.
        ctx._custom_op_args_info = (kernel.args_cls(*pytree.tree_map(type, values)),
                                    kernel.args_cls(*pytree.tree_map(kernel.is_tensor, values)))
        to_save = kernel.save_for_backward_fn(kernel.args_cls(*values), output)
        save_pytree_for_backward(ctx, to_save, kernel.is_tensor)
        mark_non_differentiable(ctx, output, kernel.output_differentiability, kernel.is_tensor)
        return output

    def backward(self, ctx: Any, *grads: Any) -> tuple[Any, ...]:
        kernel = self._kernel
        saved = unpack_saved(ctx)
        args_info, tensor_info = ctx._custom_op_args_info
        # Nothing on the ctx for now: there for what may be added later.
        inner_ctx = object()
        grad_inputs_dict = kernel.backward_fn(inner_ctx, saved, *grads)
        validate_grad_inputs_dict(grad_inputs_dict, kernel.custom_op, args_info, tensor_info, kernel.is_tensor)
        # One gradient per positional argument (the engine's apply was given those).
        return tuple(grad_inputs_dict.get(name) for name in args_info._fields[:kernel.n_positional])


class _AutogradKernel:
    """The autograd impl of a CustomOp: what construct_autograd_kernel returns."""

    def __init__(self, schema: FunctionSchema, output_differentiability: Optional[list[bool]], custom_op: Any,
                 op_overload: Any, save_for_backward_fn: Callable[..., Any], backward_fn: Callable[..., Any]) -> None:
        engine = registry_in_use().engine
        self.schema = schema
        self.output_differentiability = output_differentiability
        self.custom_op = custom_op
        self.op_overload = op_overload
        self.save_for_backward_fn = save_for_backward_fn
        self.backward_fn = backward_fn
        self.below_autograd = engine.AutoDispatchBelowAutograd
        self.args_cls = namedtuple_args_cls(schema)
        self.n_positional = sum(not a.kwarg_only for a in schema.arguments)
        tensor_key_set = engine.tensor_key_set
        self.is_tensor: Callable[[object], bool] = lambda value: tensor_key_set(value) is not None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args, keyword_only = self.schema.split_call(self.schema.bind(args, kwargs))
        call = _CustomOpCall(self, keyword_only)
        engine = _engine_requiring_grad(args)
        if engine is None:
            return call.forward(_UnrecordedCtx(), *args)
        return engine.apply(call, args)


def construct_autograd_kernel(schema: FunctionSchema, output_differentiability: Optional[list[bool]],
                              custom_op: Any, op_overload: Any, save_for_backward_fn: Callable[..., Any],
                              backward_fn: Callable[..., Any]) -> Callable[..., Any]:
    """The autograd impl of ``custom_op`` (see the module's docstring)."""
    return _AutogradKernel(schema, output_differentiability, custom_op, op_overload, save_for_backward_fn,
                           backward_fn)


def namedtuple_args_cls(schema: FunctionSchema) -> type:
    """The namedtuple of the schema's arguments, named ``<name>_args``."""
    return namedtuple(f"{schema.name}_args", [arg.name for arg in schema.arguments])


def validate_grad_inputs_dict(grad_inputs_dict: Any, forward_op: Any, args_info: Any, tensor_info: Any,
                              is_tensor: Callable[[object], bool]) -> None:
    """What the backward formula returned is a dict of a gradient (None, a tensor,
    a list of them for a list of tensors) for each tensor-like argument."""

    def error(what: str) -> None:
        backward = forward_op._get_impl("backward")
        raise RuntimeError(
            f"In the backward function defined for {forward_op} at "
            f"{backward.location} using the CustomOp API, {what}"
        )

    if not isinstance(grad_inputs_dict, dict):
        error(
            f"expected the output of the backward function to be a dict but "
            f"got {type(grad_inputs_dict)}"
        )

    expected_keys = {arg.name for arg in forward_op._schema.arguments
                     if _is_tensor_like(arg.type) or _is_tensorlist_like(arg.type)}
    actual_keys = grad_inputs_dict.keys()
    if expected_keys != actual_keys:
        error(
            f"expected the returned grad_input dict to have keys "
            f"{expected_keys} but got {actual_keys}. The backward "
            f"function must return a gradient (can be None) for each arg "
            f"to the CustomOp that may be a Tensor or Sequence[Tensor]. "
            f"Args declared to be non-Tensor-like types should not appear "
            f"in the grad_input dict"
        )

    for name, grad in grad_inputs_dict.items():
        arg_info = getattr(args_info, name)
        arg_is_tensor = getattr(tensor_info, name)

        if isinstance(arg_info, list):
            if not isinstance(grad, (tuple, list)):
                error(
                    f"for input '{name}' expected the grad_input dict to "
                    f"hold a list of gradients but got object of type "
                    f"{type(grad)}."
                )
            if len(grad) != len(arg_info):
                error(
                    f"for input '{name}' expected the grad_input dict to "
                    f"hold a list of {len(arg_info)} gradients but got "
                    f"{len(grad)}"
                )
            for idx, (g, info_is_tensor) in enumerate(zip(grad, arg_is_tensor)):
                if g is None:
                    continue
                if not is_tensor(g):
                    error(
                        f"for input '{name}' expected the grad_input dict to "
                        f"hold a list of None or Tensor gradients but got "
                        f"object of {type(g)} at index {idx}"
                    )
                if not info_is_tensor:
                    error(
                        f"for input '{name}', got a Tensor as the gradient "
                        f"for the {idx}-th value but expected None because "
                        f"the {idx}-th value was not a Tensor (it was "
                        f"type {arg_info}"
                    )
            continue

        if grad is None:
            continue
        if not is_tensor(grad):
            error(
                f"got object of type {type(grad)} as the gradient for input "
                f"'{name}', "
                f"but expected the gradient to be either None or a Tensor"
            )
        if not arg_is_tensor:
            error(
                f"got a Tensor as the gradient for input '{name}' but "
                f"expected None as the gradient because input '{name}' "
                f"was not a Tensor (it was type {arg_info})."
            )


def save_pytree_for_backward(ctx: Any, stuff: Any, is_tensor: Callable[[object], bool]) -> None:
    """Save ``stuff`` (a pytree) on ``ctx``: its tensors with ``ctx.save_for_backward``
    (which guards them against in-place writes), the rest as attributes."""
    flat_stuff, spec = pytree.tree_flatten(stuff)
    ctx.spec = spec
    ctx.num_elts = len(flat_stuff)
    ctx.tensor_idxs = [idx for idx, thing in enumerate(flat_stuff) if is_tensor(thing)]
    ctx.non_tensor_idxs = [idx for idx, thing in enumerate(flat_stuff) if not is_tensor(thing)]
    ctx.save_for_backward(*(thing for thing in flat_stuff if is_tensor(thing)))
    ctx.saved_non_tensors = [thing for thing in flat_stuff if not is_tensor(thing)]


def unpack_saved(ctx: Any) -> Any:
    """What save_pytree_for_backward saved."""
    flat_stuff: list[Any] = [None] * ctx.num_elts
    for tensor, idx in zip(ctx.saved_tensors, ctx.tensor_idxs):
        flat_stuff[idx] = tensor
    for non_tensor, idx in zip(ctx.saved_non_tensors, ctx.non_tensor_idxs):
        flat_stuff[idx] = non_tensor
    return pytree.tree_unflatten(flat_stuff, ctx.spec)
