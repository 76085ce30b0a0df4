"""In-place writes through views under autograd: torch's CopySlices, the
rebasing of a base's history, and the regeneration of its views' grad_fn.

A write ``view.mul_(2)`` records, as any in-place operator, a node for the
write (MulBackward0) whose first edge is the view's own history.  The
tensor whose history changed is the view's base, though: ``rebase_history``
gives the base a ``CopySlices`` node, which in backward takes the base's
gradient, runs the write's node on the slice the view covers and writes its
result back into that slice (the other inputs of the write get theirs
directly), as torch's CopySlices does.  The views of the base then describe
the base's new values: their ``grad_fn`` is regenerated -- torch's
``AsStridedBackward0`` (an as_strided of the base by the view's sizes,
strides and offset), or, for a view that can replay how it was made
(``_view_fn``: a custom operator's view whose setup_context set
``ctx._is_pure_view``), the node of that replay on the base.

torch regenerates a view's grad_fn when it is next read; here a
tensor's ``grad_fn`` is a plain attribute, so the views are regenerated
when the base's history changes: the written view, and the views of a base
that has history (inplace_or_view.track_view: those made while their base
had a grad_fn; weak references on the base).

The errors are torch's (``check_view_write``): a view of a leaf, a view made
in no_grad mode (a tracked view without history), one output of a function
returning several views (split), a view made inside a custom function that
is not a pure view.
"""
from __future__ import annotations

import re
import sys
from typing import Any, Callable, Optional, Sequence

from . import autograd
from .autograd import Context, TensorMeta, _edge, _GraphNode, node_class
from .operators import aten
from .strided_views import _as_strided_backward
from .tensor import Tensor

__all__ = ["CopySlices", "check_untracked_view_write", "check_view_write", "mark_custom_function_view",
           "mark_multiple_output_views", "rebase_history"]


_LEAF_VIEW = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked)."
)
_MULTIPLE_OUTPUTS = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output of a function that "
    "returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace "
    "the inplace operation by an out-of-place one."
)
_IN_CUSTOM_FUNCTION = (
    "Output {nr} of {name} is a view and is being modified inplace. This view was created inside a custom Function "
    "(or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom "
    "backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You "
    "can fix this by cloning the output of the custom Function."
)


def mark_multiple_output_views(views: Sequence[Any]) -> None:
    """``views`` are the outputs of one call returning several views (torch's
    CreationMeta::MULTI_OUTPUT_NODE): none may be written in place under autograd."""
    for view in views:
        if isinstance(view, Tensor):
            view._creation_meta = _MULTIPLE_OUTPUTS


def mark_custom_function_view(view: Tensor, replay: Optional[Callable[[Tensor], Tensor]]) -> None:
    """``view`` is an output of a custom function: writable in place only if the
    function declared itself a pure view (``replay`` makes the view again on another
    base), else torch's CreationMeta::IN_CUSTOM_FUNCTION error."""
    if replay is not None:
        view._view_fn = replay
    else:
        view._creation_meta = _IN_CUSTOM_FUNCTION


def check_view_write(view: Tensor) -> None:
    """Refuse a recorded in-place write through ``view`` where torch does (handle_view_on_rebase)."""
    base = view._base
    assert base is not None
    refused = view._creation_meta
    if refused is not None and view.grad_fn is not None:
        # torch names the function by its node, without "Backward0": "Output 0 of Split".
        function = re.sub(r"Backward\d*$", "", view.grad_fn.name())
        raise RuntimeError(refused.format(nr=view._output_nr, name=function))
    check_untracked_view_write(view)
    if view.requires_grad and base.grad_fn is None:  # (the base need not require grad: torch asks is_leaf)
        raise RuntimeError(_LEAF_VIEW)


def check_untracked_view_write(view: Tensor) -> None:
    """A view made in no_grad mode of a base with history has none itself: writing it
    with grad mode on is refused, whether or not the write is recorded."""
    base = view._base
    if view.grad_fn is None and base is not None and base.grad_fn is not None:
        views = base.__dict__.get("_views")
        if views is not None and any(ref() is view for ref in views):
            raise RuntimeError(_NO_GRAD_VIEW)


class _Geometry:
    """What AsStridedBackward0 keeps of the tensor it viewed: sizes, strides, storage offset (not its values)."""

    __slots__ = ("shape", "dtype", "device", "_stride", "_storage_offset")

    def __init__(self, t: Tensor) -> None:
        self.shape, self.dtype, self.device = t.shape, t.dtype, t.device
        self._stride, self._storage_offset = tuple(t.stride()), t.storage_offset()

    def stride(self) -> tuple[int, ...]:
        return self._stride

    def storage_offset(self) -> int:
        return self._storage_offset


class CopySlices(_GraphNode):
    """The history of a base written through its view (torch's CopySlices): the
    base's gradient, with the slice the view covers replaced by what the write's
    node ``fn`` gives for it; ``fn``'s other inputs get their gradients from it."""

    __slots__ = ("_name", "edges", "metadata", "fn", "_base", "_view", "_view_fn")

    def __init__(self, base: Tensor, view: Tensor, fn: Any) -> None:
        self._name = "torch::autograd::CopySlices"
        self.fn = fn
        self._base, self._view = _Geometry(base), _Geometry(view)
        self._view_fn = view._view_fn
        self.edges = (_edge(base),) + tuple(fn.edges[1:])
        self.metadata = (TensorMeta(base),)

    def release_saved(self) -> None:
        self.fn.release_saved()

    def apply(self, grads: Sequence[Optional[Tensor]], create_graph: bool = False) -> list[Optional[Tensor]]:
        grad = grads[0]
        base, view = self._base, self._view
        result = aten.new_empty_strided.default(grad, list(base.shape), list(base.stride()))
        aten.copy_.default(result, grad)
        if self._view_fn is not None:
            grad_slice = self._view_fn(result)
        else:
            grad_slice = aten.as_strided.default(result, list(view.shape), list(view.stride()),
                                                 view.storage_offset() - base.storage_offset())
        res = list(self.fn.apply([aten.clone.default(grad_slice)], create_graph))
        grad_inputs: list[Optional[Tensor]] = [None] * len(self.edges)
        for i, g in enumerate(res):
            if i == 0:
                # No gradient for the slice counts as zeros there (torch's formulas for
                # copy_ and fill_ give zeros; the prototype's give None).
                if g is None:
                    aten.fill_.Scalar(grad_slice, 0)
                else:
                    aten.copy_.default(grad_slice, g)
                grad_inputs[0] = result
            else:
                grad_inputs[i] = g
        return grad_inputs


def rebase_history(written: Tensor, node: Any) -> None:
    """``written`` was written in place, recorded as ``node``: give it (or, for a view,
    its base, through CopySlices) that history, and regenerate the grad_fn of the views
    it affects (torch's rebase_history)."""
    base = written._base
    if base is None:
        written.grad_fn, written._output_nr, written.requires_grad = node, 0, True
        _regenerate_views(written)
        return
    base.grad_fn, base._output_nr, base.requires_grad = CopySlices(base, written, node), 0, True
    _regenerate(written)
    _regenerate_views(base, skip=written)


def _regenerate_views(base: Tensor, skip: Optional[Tensor] = None) -> None:
    views = base.__dict__.get("_views")
    if views is not None:
        for ref in list(views):
            view = ref()
            if view is not None and view is not skip:
                _regenerate(view)


# The class of a regenerated view's node: torch's AsStridedBackward0 (saves nothing: the base's geometry is in its ctx).
_AS_STRIDED_NODE = node_class("as_strided.default", ())


def _regenerate(view: Tensor) -> None:
    """``view``'s grad_fn made again from its base's history (torch's VariableHooks::grad_fn)."""
    base = view._base
    assert base is not None
    replay = view._view_fn
    if replay is not None:
        remade = replay(base)
        view.grad_fn, view._output_nr = remade.grad_fn, remade._output_nr
    else:
        ctx = Context()
        fields = ctx.__dict__
        fields.update(self=_Geometry(base), size=list(view.shape), stride=list(view.stride()),
                      storage_offset=view.storage_offset(), needs_grad={"self": True})
        node = _AS_STRIDED_NODE.__new__(_AS_STRIDED_NODE)
        node.formula, node.ctx, node.edges, node.metadata, node._saved = (
            _as_strided_backward, ctx, (_edge(base),), (TensorMeta(view),), [])
        view.grad_fn = node
        view._output_nr = 0
    view.requires_grad = view.grad_fn is not None


autograd.install_view_writes(sys.modules[__name__])
