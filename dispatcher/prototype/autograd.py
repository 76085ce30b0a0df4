"""Reverse-mode autograd as kernels on the Autograd alias key.

``differentiable(name, saves=...)`` registers one kernel per operator on the
Autograd alias, which covers Autograd<backend> for every backend (CPU, Meta,
the toy device, ...).  The kernel

1. runs the operator below autograd: ``op.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, ...)``,
   under AutoDispatchBelowADInplaceOrView so that operators the backend
   kernel calls in turn are not recorded a second time (PyTorch's
   VariableType kernels do exactly this);
2. if an input requires grad, records a ``Node`` on the result: the formula,
   what it saved, and the edges to the inputs' own nodes.

``backward()`` walks the nodes from the loss in reverse topological order,
running each formula under ``no_grad()`` (unless ``create_graph=True``:
then the formulas record too, and the gradients are differentiable), and
accumulates into the leaves' ``.grad``.  ``no_grad()`` is a thread-local
guard that excludes the autograd keys, so calls under it never reach these
kernels.

As in PyTorch's engine, every gradient is checked against the tensor it is
the gradient of (its shape, dtype and device, recorded on the node it flows
to), and a node's saved tensors are freed once it has run unless
``retain_graph=True``: a second backward through it is an error.

Custom operators (``dispatcher.custom_op`` with ``register_autograd``) record
here too: ``CustomOpAutograd`` is this library's AutogradEngine
(dispatcher.tensor_protocols), registered for Tensor.  Their nodes
(``FunctionNode``) run the registered backward with a ``FunctionCtx``, as
torch.autograd.Function does, and may have several outputs: an edge is a
node and the number of its output (``Tensor._output_nr``), and backward
collects one gradient per output before running a node.
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from dispatcher import AutoDispatchBelowADInplaceOrView, AutoDispatchBelowAutograd, DispatchKeySet, Library
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET
from dispatcher.schema import TensorArgKind
from dispatcher.tensor_protocols import register_autograd_engine

from .operators import aten, overload
from .shapes import expand_shape
from .tensor import Tensor, convert, tensor
from .inplace_or_view import track_view
from .tensor_options import preserve_format, strided

__all__ = ["CustomOpAutograd", "FunctionCtx", "FunctionNode", "Node", "backward", "differentiable", "grad", "gradcheck",
           "no_grad", "not_differentiable_out"]

_library = Library("aten", "IMPL", "Autograd")


def no_grad() -> AutoDispatchBelowAutograd:
    """``with no_grad():`` -- calls skip the autograd keys, so nothing is recorded."""
    return AutoDispatchBelowAutograd()


class TensorMeta:
    """What a formula may know of an input it did not save: shape, dtype, device."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, t: Tensor) -> None:
        self.shape, self.dtype, self.device = t.shape, t.dtype, t.device

    @property
    def ndim(self) -> int:
        return len(self.shape)


class Context:
    """A formula's view of the forward call: every argument by its schema name,
    tensors it saved as tensors, the others as TensorMeta; ``result`` if saved;
    and ``needs_grad``, whether each tensor argument wants a gradient (torch's
    grad_input_mask: a formula need not compute the others)."""

    if TYPE_CHECKING:  # the attributes are set by name (see _context)
        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...


_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


# Where a gradient flows: a node, and which of its outputs the gradient is of.
Edge = tuple[Any, int]


class _GraphNode:
    """What every node of the graph has: a name, and ``edges`` to where the
    gradients of its inputs flow (see Node)."""

    __slots__ = ()
    _name: str
    edges: tuple[Optional[Edge], ...]

    def name(self) -> str:
        """The node's class name in torch (``MulBackward0``): a method, as torch's ``grad_fn.name()``."""
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name.rpartition('::')[2]}>"  # torch's repr has the class name alone

    @property
    def next_functions(self) -> tuple:
        return tuple(None if edge is None else edge[0] for edge in self.edges)


class Node(_GraphNode):
    """One recorded call: ``apply(grads)`` returns the gradients of its tensor inputs.

    ``edges`` holds, per tensor input (a Tensor[] argument counts each
    element), where its gradient flows: ``(node, output number)`` of the
    input's own ``grad_fn``, or the AccumulateGrad node of a leaf; or None.
    ``next_functions`` is the nodes alone.  ``metadata`` has, per output,
    its shape, dtype and device, which the gradient flowing into it must
    have (PyTorch's input_metadata); ``apply`` gets one gradient per output.

    Each operator's nodes are of a subclass of this one named as torch's
    node class (``MulBackward0``, node_class), whose ``_saved_<argument>``
    properties are torch's ``grad_fn._saved_self``; the autograd kernel
    makes them without an ``__init__`` call.  (Properties rather than a
    ``__getattr__``: a class with one reads every attribute on the
    interpreter's slow path, and the engine reads a node's often.)
    """

    __slots__ = ("formula", "ctx", "edges", "metadata", "_saved")

    formula: Callable
    ctx: Context
    metadata: tuple[TensorMeta, ...]
    # (argument name, tensor, its version when saved); None once released.
    _saved: Optional[list[tuple[str, Tensor, int]]]

    def _unpack_saved(self, argument: str) -> Any:
        """torch's ``grad_fn._saved_<argument>``: the tensor the node saved for that
        argument (``_saved_result``: its output); RuntimeError once backward freed them."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_BACKWARD_TWICE)
        for saved_name, t, _ in saved:
            if saved_name == argument:
                return t
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '_saved_{argument}'")

    def release_saved(self) -> None:
        """Free the saved tensors (backward without retain_graph); a node that saved none stays usable."""
        if self._saved:
            fields = self.ctx.__dict__
            for name, _, _ in self._saved:
                del fields[name]
            self._saved = None

    def apply(self, grads: Sequence[Optional[Tensor]], create_graph: bool = False) -> Sequence[Optional[Tensor]]:
        grad = grads[0]
        if self._saved is None:
            raise RuntimeError(_BACKWARD_TWICE)
        for name, t, version in self._saved:
            if t._version_counter.value != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: '{name}' of {self._name}, a tensor of shape {list(t.shape)}, is at version "
                    f"{t._version_counter.value}; expected version {version} instead."
                )
            if name == "result":
                self.ctx.result = result = aten.detach.default(t)
                if create_graph:  # torch unpacks a saved output as a tensor of this node: differentiable again
                    result.grad_fn, result.requires_grad = self, True
        # One gradient per input (a Tensor[] argument's spread out by the formula's wrapper, see differentiable).
        return self.formula(self.ctx, grad)


def node_class(name: str, saves: Iterable[str]) -> type[Node]:
    """The class of the nodes operator ``name`` ("mul.Tensor") records: torch's
    name (MulBackward0), a ``_saved_<argument>`` property per name in ``saves``."""
    full = _node_name(name)

    def saved_property(argument: str) -> property:
        return property(lambda node: node._unpack_saved(argument), doc=f"The tensor saved for ``{argument}``.")

    namespace: dict[str, Any] = {"__slots__": (), "_name": full}
    namespace.update({f"_saved_{argument}": saved_property(argument) for argument in sorted(saves)})
    return type(full.rpartition("::")[2], (Node,), namespace)


# object.__new__: nodes and their metadata made by the autograd kernel without __init__ frames.
_new_node = Node.__new__
_new_meta = TensorMeta.__new__
_new_context = Context.__new__


class AccumulateGrad:
    """The node of a leaf tensor: adds the incoming gradient to ``leaf.grad``."""

    __slots__ = ("variable", "metadata")
    edges: tuple = ()
    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.metadata = (TensorMeta(variable),)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # torch's name(), namespace included

    def release_saved(self) -> None:
        pass

    def apply(self, grads: Sequence[Any], shared: bool = False, create_graph: bool = False) -> list:
        """Accumulate ``grads[0]`` into the leaf's ``.grad`` with the operators torch's
        AccumulateGrad calls: the first gradient is kept as it is (``detach``)
        unless another edge has it too (``shared``) or its strides are not the
        leaf's, then it is copied into a tensor laid out as the leaf
        (``new_empty_strided``, ``copy_``); a later one is added in place
        (``add_``) to a gradient laid out as the leaf, else out of place.
        With ``create_graph`` the gradient keeps its history: the first is
        always copied, later ones are added out of place (torch's accumulateGrad
        with grad mode on)."""
        grad = grads[0]
        leaf = self.variable
        if leaf._grad is None:
            if not shared and not create_graph and _same_strides(grad, leaf):
                # The engine checked the gradient against the leaf (shape, dtype,
                # device): set as torch's AccumulateGrad does, without the setter's checks.
                leaf._grad = aten.detach.default(grad)
            else:
                copy = aten.new_empty_strided.default(grad, list(leaf.shape), list(leaf.stride()), dtype=leaf.dtype,
                                                      layout=strided, device=leaf.device)
                leaf.grad = aten.copy_.default(copy, grad)
        elif not create_graph and _same_strides(leaf._grad, leaf):
            aten.add_.Tensor(leaf._grad, grad)
        else:
            leaf.grad = aten.add.Tensor(leaf._grad, grad)
        return []


def _same_strides(a: Any, b: Tensor) -> bool:
    """``a.stride() == b.stride()``; for two CPU tensors of one item size, their
    numpy arrays' byte strides are compared first (no tuples of element strides made)."""
    data_a, data_b = getattr(a, "_data", None), b._data
    if (type(data_a) is np.ndarray and type(data_b) is np.ndarray and data_a.strides == data_b.strides
            and data_a.itemsize == data_b.itemsize and a._strides is None and b._strides is None):
        return True
    return bool(a.stride() == b.stride())


def _requires_grad(t: Any) -> bool:
    """Whether autograd records ``t``'s history.  The operators are aten's, which
    other tensor types may call too: their tensors have no ``requires_grad`` and
    pass through, unrecorded."""
    return getattr(t, "requires_grad", False)


def _edge(t: Tensor) -> Optional[Edge]:
    if not getattr(t, "requires_grad", False):  # _requires_grad, inline: once per input of every recorded call
        return None
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if t._grad_accumulator is None:
        t._grad_accumulator = AccumulateGrad(t)
    return t._grad_accumulator, 0


# torch numbers the formulas of one operator name in derivatives.yaml's
# order (add.Tensor's node is AddBackward0, add.Scalar's AddBackward1); the
# overloads here whose number is not 0.  copy_'s node is written by hand in
# torch, and named so.
_NODE_NUMBERS = {"add.Scalar": 1, "mul.Scalar": 1, "div.Scalar": 1, "rsub.Scalar": 1, "sum.dim_IntList": 1, "squeeze.dim": 1,
                 "squeeze_.dim": 4, "fill_.Scalar": 2}
_NODE_NAMES = {"copy_": "torch::autograd::CopyBackwards"}  # its name() in torch, namespace included


def _node_name(name: str) -> str:
    """The name of the node operator ``name`` ("add.Tensor") records: torch's (AddBackward0)."""
    if name in _NODE_NAMES:
        return _NODE_NAMES[name]
    base = name.partition(".")[0].strip("_")
    return "".join(part.capitalize() for part in base.split("_")) + f"Backward{_NODE_NUMBERS.get(name, 0)}"


def differentiable(name: str, saves: Iterable[str] = ()) -> Callable[[Callable], Callable]:
    """Register ``formula(ctx, grad)`` as operator ``name``'s derivative.

    The formula returns one gradient (or None) per tensor argument in schema
    order -- a list for a Tensor[] argument.  ``saves`` names the tensor
    arguments (and ``"result"``) whose values it reads; every other tensor
    argument reaches it as shape, dtype and device only, so that a later
    in-place write to it does not invalidate the graph.
    """
    op = overload(name)
    schema = op.schema
    saves = frozenset(saves)
    names = [a.name for a in schema.arguments]
    tensor_positions = [d.position for d in schema.dispatch_args]
    # Without Tensor[] arguments (most operators) the inputs are the tensor
    # positions' values themselves, read without flattening lists.
    has_lists = any(d.kind in (TensorArgKind.TENSOR_LIST, TensorArgKind.OPTIONAL_TENSOR_LIST)
                    for d in schema.dispatch_args)
    inplace = bool(schema.arguments) and schema.arguments[0].is_write
    plan = _context_plan(names, tensor_positions, saves, inplace)
    # Most operators' tensor arguments are consecutive (self, other): a
    # positional call passing them all has them as one slice of its arguments.
    start = tensor_positions[0] if tensor_positions else 0
    end = start + len(tensor_positions)
    consecutive = tensor_positions == list(range(start, end))
    node_type = node_class(name, saves)
    saves_result = "result" in saves
    bind = schema.bind
    redispatch = op.redispatch
    # The recording of a positional call of an operator without Tensor[]
    # arguments, not in place (most calls): one pass over its tensor arguments
    # makes the edges and the context together (see _record).
    direct = not has_lists and not inplace and consecutive
    # A call passing every argument positionally is bound as it is (bind's own
    # shortcut; with a keyword-only argument no positional call is).
    n_bound_as_is = len(names) if not any(a.kwarg_only for a in schema.arguments) else -1
    as_is = tuple((argument, i) for i, (argument, how) in enumerate(plan) if how == _AS_IS)
    tensor_plan = tuple((argument, how) for argument, how in plan if how != _AS_IS)

    def register(formula: Callable) -> Callable:
        apply_formula = _flattening(formula) if has_lists else formula

        def kernel(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
            below = keyset & AFTER_AUTOGRAD_KEYSET
            values: Optional[Sequence[Any]]
            inputs: Sequence[Any]
            if kwargs or has_lists:
                values = bind(args, kwargs)
                if has_lists:
                    inputs = [t for p in tensor_positions for t in _as_list(values[p])]
                else:
                    inputs = [values[p] for p in tensor_positions]
            else:
                # Positional arguments only: whether to record is read from them
                # (a tensor argument left out is an optional one, None); the
                # call is bound only when it is recorded.
                values = None
                n = len(args)
                inputs = args[start:end] if consecutive and n >= end else [args[p] for p in tensor_positions if p < n]
            for t in inputs:
                if getattr(t, "requires_grad", False):
                    break
            else:
                if inplace and args and getattr(args[0], "_base", None) is not None:
                    _view_writes.check_untracked_view_write(args[0])
                with AutoDispatchBelowADInplaceOrView():
                    return redispatch(below, *args, **kwargs)
            # What the formula reads of the inputs, before the call: an in-place
            # operator may change its input's shape (squeeze_).
            if values is None and direct and len(args) >= end:
                ctx, saved, edges = _record(args if len(args) == n_bound_as_is else bind(args), inputs, as_is,
                                            tensor_plan)
            else:
                if values is None:
                    values = bind(args)
                if inplace:
                    _check_inplace(values[0])
                edges = list(map(_edge, inputs))
                ctx, saved = _context(plan, values)
            with AutoDispatchBelowADInplaceOrView():
                result = redispatch(below, *args, **kwargs)
            # Only floating-point results are differentiable (PyTorch's
            # isDifferentiableType): x.to(int64) is cut from the graph.
            if result.dtype.is_floating_point:
                if saves_result:
                    # torch saves an output as a detached alias (no reference
                    # cycle through its own node) and unpacks it as another
                    # (Node.apply): a handler sees both detach calls.
                    ctx.result = kept = aten.detach.default(result)
                    saved.append(("result", kept, kept._version_counter.value))
                # Node(...) and TensorMeta(result), made without their __init__ frames.
                meta = _new_meta(TensorMeta)
                meta.shape, meta.dtype, meta.device = result.shape, result.dtype, result.device
                node = _new_node(node_type)
                node.formula, node.ctx, node.edges, node.metadata, node._saved = (
                    apply_formula, ctx, tuple(edges), (meta,), saved)
                if inplace:  # through a view, the base's history changes (view_history.py)
                    _view_writes.rebase_history(result, node)
                else:
                    result.grad_fn = node
                    result.requires_grad = True
            return result

        _library.impl(name, kernel, with_keyset=True)
        return formula

    return register


def not_differentiable_out(name: str) -> None:
    """Register the Autograd kernel of an out= operator ``name`` (``abs.out``): as
    torch's, it records nothing and refuses tensors that require grad; below it
    the call reaches ADInplaceOrView, which counts the write to ``out``."""
    op = overload(name)
    bind = op.schema.bind
    tensor_positions = [d.position for d in op.schema.dispatch_args]
    redispatch = op.redispatch
    base = name.partition(".")[0]

    def kernel(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        values = bind(args, kwargs)
        if any(getattr(values[p], "requires_grad", False) for p in tensor_positions):
            raise RuntimeError(f"{base}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        with AutoDispatchBelowAutograd():
            return redispatch(keyset & AFTER_AUTOGRAD_KEYSET, *args, **kwargs)

    _library.impl(name, kernel, with_keyset=True)


def _flattening(formula: Callable) -> Callable:
    """``formula`` for an operator with a Tensor[] argument: its gradients with each list's spread out, one per tensor."""
    def flat(ctx: Context, grad: Tensor) -> list[Optional[Tensor]]:
        grad_inputs: list[Optional[Tensor]] = []
        for g in formula(ctx, grad):
            grad_inputs.extend(g if isinstance(g, list) else [g])
        return grad_inputs

    return flat


def _as_list(value: Any) -> list:
    """A Tensor[] argument's tensors (given as a list or a tuple), or a Tensor argument as a list of one."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _check_inplace(self: Tensor) -> None:
    if self.requires_grad and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if self._base is not None:
        _view_writes.check_view_write(self)


# In-place writes through views: view_history.py, which builds on this module
# (its CopySlices is a node), installs itself here when imported.
_view_writes: Any = None


def install_view_writes(module: Any) -> None:
    """Set the module that checks and records in-place writes through views (view_history)."""
    global _view_writes
    _view_writes = module


# How _context keeps each argument of an operator: as it is (not a tensor
# argument), the tensor itself (saved: the formula reads its values), or its
# TensorMeta; a value of a tensor argument that is not a Tensor (None, a
# Tensor[] list) takes the general path whatever its plan.
_AS_IS, _SAVED, _META, _ORIGINAL = 0, 1, 2, 3


def _context_plan(names: Sequence[str], tensor_positions: Sequence[int], saves: frozenset,
                  inplace: bool = False) -> tuple[tuple[str, int], ...]:
    """How the formula gets each argument.  An in-place operator's formula that
    reads ``self`` gets a copy taken before the write (torch's ``original_self``):
    the tensor itself then holds the result."""
    return tuple((name, _AS_IS if i not in tensor_positions
                  else (_ORIGINAL if inplace and i == 0 else _SAVED) if name in saves else _META)
                 for i, name in enumerate(names))


def _context(plan: Sequence[tuple[str, int]], values: Sequence[Any]) -> tuple[Context, list[tuple[str, Tensor, int]]]:
    ctx = _new_context(Context)
    fields = ctx.__dict__  # written directly: Context has no __setattr__ of its own
    needs_grad: dict[str, bool] = {}
    fields["needs_grad"] = needs_grad
    saved: list[tuple[str, Any, int]] = []
    for (name, how), value in zip(plan, values):
        if how == _AS_IS:  # a scalar, a list of ints, ...
            fields[name] = value
        else:
            _keep_tensor_argument(fields, needs_grad, saved, name, how, value)
    return ctx, saved


def _record(values: Sequence[Any], inputs: Sequence[Any], as_is: Sequence[tuple[str, int]],
            tensor_plan: Sequence[tuple[str, int]]) -> tuple[Context, list[tuple[str, Tensor, int]], list]:
    """_context and the edges of ``inputs`` (the values of the tensor arguments,
    in order) in one pass, for an operator without Tensor[] arguments that is
    not in place; a Tensor's edge and its part of the context are made inline
    (no _edge or TensorMeta frames), anything else as _context and _edge do."""
    ctx = _new_context(Context)
    fields = ctx.__dict__
    fields["needs_grad"] = needs_grad = {}
    for name, i in as_is:
        fields[name] = values[i]
    saved: list[tuple[str, Any, int]] = []
    edges: list[Optional[Edge]] = []
    for value, (name, how) in zip(inputs, tensor_plan):
        if isinstance(value, Tensor):
            needs_grad[name] = wanted = value.requires_grad
            if not wanted:
                edges.append(None)
            elif value.grad_fn is not None:
                edges.append((value.grad_fn, value._output_nr))
            else:
                edges.append(_edge(value))  # a leaf's AccumulateGrad, made on first use
            if how == _SAVED:
                saved.append((name, value, value._version_counter.value))
                fields[name] = value
            else:  # TensorMeta(value), without its __init__ frame
                fields[name] = meta = _new_meta(TensorMeta)
                meta.shape, meta.dtype, meta.device = value.shape, value.dtype, value.device
        else:
            edges.append(_edge(value))
            _keep_tensor_argument(fields, needs_grad, saved, name, how, value)
    return ctx, saved, edges


def _keep_tensor_argument(fields: dict[str, Any], needs_grad: dict[str, bool], saved: list[tuple[str, Any, int]],
                          name: str, how: int, value: Any) -> None:
    """Put the value of tensor argument ``name`` in a context's ``fields`` as its plan
    ``how`` says, with whether it wants a gradient; a saved one also in ``saved``."""
    if isinstance(value, Tensor):  # the common case, without the list handling below
        needs_grad[name] = value.requires_grad
        if how == _SAVED:
            saved.append((name, value, value._version_counter.value))
            fields[name] = value
        elif how == _ORIGINAL:
            with AutoDispatchBelowADInplaceOrView():  # a copy of the values, recorded nowhere
                fields[name] = aten.clone.default(value)
        else:  # TensorMeta(value), without its __init__ frame
            fields[name] = meta = _new_meta(TensorMeta)
            meta.shape, meta.dtype, meta.device = value.shape, value.dtype, value.device
    elif isinstance(value, (bool, int, float, complex)):
        # A number where the schema says Tensor (Note [Numbers where an
        # operator takes a tensor]): the formula reads it as it is.
        needs_grad[name] = False
        fields[name] = value
    else:
        is_tensors = isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor)
        if is_tensors:
            needs_grad[name] = any(_requires_grad(t) for t in value)
        if how == _SAVED:
            saved.append((name, value, value._version_counter.value))
        elif is_tensors:
            value = [TensorMeta(t) for t in value]
        fields[name] = value


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Undo broadcasting: sum ``grad`` down to ``shape`` (torch's at::sum_to): one sum
    over the leading dimensions and those broadcast from 1, keeping them, then a
    view without the leading ones."""
    ndim = len(grad.shape)
    lead = ndim - len(shape)
    dims = list(range(lead)) + [i for i in range(lead, ndim) if shape[i - lead] == 1 and grad.shape[i] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    return aten.view.default(grad, list(shape)) if lead > 0 else grad


def backward(root: Tensor, gradient: Optional[Tensor] = None, retain_graph: Optional[bool] = None,
             create_graph: bool = False) -> None:
    """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

    ``gradient`` is d(loss)/d(root), of root's shape (implicitly 1 for a
    one-element root).  Unless ``retain_graph`` is true, each node frees
    what it saved once it has run, and a second backward through it raises.
    With ``create_graph`` the gradients are recorded too (``retain_graph``
    then defaults to true), so that they can be differentiated again.
    """
    _run_graph([_root(root, gradient, 0)], create_graph if retain_graph is None else retain_graph, captured=None,
               create_graph=create_graph)


def _tensor_backward(self: Tensor, gradient: Optional[Tensor] = None, retain_graph: Optional[bool] = None,
                     create_graph: bool = False) -> None:
    """Accumulate the gradients of this tensor into the leaves' ``.grad`` (see backward)."""
    backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


# Tensor's own method (Note [Methods set by the modules above] in tensor.py).
Tensor.backward = _tensor_backward  # type: ignore[method-assign]


def grad(outputs: Union[Tensor, Sequence[Tensor]], inputs: Union[Tensor, Sequence[Tensor]],
         grad_outputs: Union[Tensor, Sequence[Optional[Tensor]], None] = None, retain_graph: Optional[bool] = None,
         create_graph: bool = False, allow_unused: Optional[bool] = None) -> tuple[Optional[Tensor], ...]:
    """torch.autograd.grad: the gradients of ``outputs`` with respect to ``inputs``, returned
    instead of accumulated into ``.grad``; only the nodes between them run
    (with ``create_graph``, recorded: the gradients are differentiable)."""
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} for {len(outputs)} outputs")
    captured: dict[tuple[int, int], Optional[Tensor]] = {}
    edges = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors, but input {i} is a {type(t).__name__}")
        edge = _edge(t)
        if edge is None:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad (input {i})")
        edges.append(edge)
        captured[id(edge[0]), edge[1]] = None
    _run_graph([_root(out, g, i) for i, (out, g) in enumerate(zip(outputs, grad_outputs))],
               create_graph if retain_graph is None else retain_graph, captured, create_graph)
    results = tuple(captured[id(node), nr] for node, nr in edges)
    if not allow_unused and any(r is None for r in results):
        raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                           "Set allow_unused=True if this is the desired behavior.")
    return results


def _root(root: Tensor, gradient: Optional[Tensor], index: int) -> tuple[Edge, Tensor]:
    """Where backward starts from ``root``, and the gradient it starts with (torch.autograd._make_grads)."""
    if gradient is not None:
        if not isinstance(gradient, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(gradient).__name__}")
        if gradient.shape != root.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of {gradient.shape} and output[{index}] has a "
                f"shape of {root.shape}."
            )
    if not root.requires_grad:
        raise RuntimeError(f"element {index} of tensors does not require grad and does not have a grad_fn")
    first = _edge(root)
    assert first is not None  # root requires grad
    if gradient is None:
        if root.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        gradient = aten.ones_like.default(root, pin_memory=False, memory_format=preserve_format)
    return first, _validate_gradient(gradient, first[0].metadata[first[1]], index, None)


def _run_graph(roots: Sequence[tuple[Edge, Tensor]], retain_graph: Optional[bool],
               captured: Optional[dict[tuple[int, int], Optional[Tensor]]], create_graph: bool = False) -> None:
    """The engine: run the nodes reachable from ``roots`` in reverse topological order.

    Without ``captured`` (backward) the leaves' AccumulateGrad nodes run;
    with it (grad) the gradient arriving at each edge it names is stored
    there instead, and only the nodes that lead to one of them run.
    """
    order = _topological_order([edge[0] for edge, _ in roots])
    needed = None if captured is None else _leading_to({node for node, _ in captured}, order)
    # node -> the gradients flowing into each of its outputs so far (nodes hash by identity).
    grads: dict[Any, list[Optional[Tensor]]] = {}
    # Gradients one node gave to several edges (torch copies them: their use count is above one).
    shared: dict[int, Tensor] = {}
    add = aten.add.Tensor

    with contextlib.nullcontext() if create_graph else no_grad():
        for (node, nr), gradient in roots:
            _accumulate(grads, node, nr, gradient, add)
        for node in order:
            slots = grads.pop(node, None)
            if slots is None:
                continue
            if captured is not None:
                for nr, g in enumerate(slots):
                    if (id(node), nr) in captured and g is not None:
                        captured[id(node), nr] = g
                if id(node) not in needed:  # type: ignore[operator]  # needed is set when captured is
                    continue
            if type(node) is AccumulateGrad:
                if captured is None:
                    node.apply(slots, shared=bool(shared) and id(slots[0]) in shared, create_graph=create_graph)
                continue
            outputs = node.apply(slots, create_graph)
            if not retain_graph:
                node.release_saved()
            edges = node.edges
            if len(edges) == 2 and len(outputs) == 2:  # (most nodes with several edges: a binary operator's)
                first = outputs[0]
                if first is outputs[1] and first is not None and edges[0] is not None and edges[1] is not None:
                    shared[id(first)] = first
            elif len(edges) > 1:
                given = [g for edge, g in zip(edges, outputs) if edge is not None and g is not None]
                if len({id(g) for g in given}) < len(given):
                    seen: set[int] = set()
                    for g in given:
                        if id(g) in seen:
                            shared[id(g)] = g
                        seen.add(id(g))
            for i, (edge, g) in enumerate(zip(edges, outputs)):
                if edge is None or g is None:
                    continue
                child, nr = edge
                metadata = child.metadata
                meta = metadata[nr]
                if g.shape != meta.shape or g.dtype is not meta.dtype or g.device is not meta.device:  # one device object per type
                    g = _validate_gradient(g, meta, i, node.name())
                slots = grads.get(child)
                if slots is None and len(metadata) == 1:  # _accumulate's first gradient of a one-output node, inline
                    grads[child] = [g]
                else:
                    _accumulate(grads, child, nr, g, add)


def _accumulate(grads: dict[Any, list[Optional[Tensor]]], node: Any, output_nr: int, g: Tensor, add: Callable) -> None:
    """Add ``g`` to the gradients flowing into output ``output_nr`` of ``node`` (``add``: aten.add.Tensor)."""
    slots = grads.get(node)
    if slots is None:
        slots = grads[node] = [None] * len(node.metadata)
    previous = slots[output_nr]
    slots[output_nr] = g if previous is None else add(previous, g)


def _leading_to(targets: set[int], order: Sequence[Any]) -> set[int]:
    """The ids of the nodes of ``order`` (topologically sorted) from which a node in ``targets`` is reached."""
    needed: set[int] = set()
    for node in reversed(order):  # every node after those it feeds
        if id(node) in targets or any(child is not None and id(child) in needed for child in node.next_functions):
            needed.add(id(node))
    return needed


def _validate_gradient(grad: Tensor, meta: TensorMeta, index: int, producer: Optional[str]) -> Tensor:
    """``grad`` as the gradient of a tensor described by ``meta`` (the engine's validate_outputs).

    A gradient that broadcasts to the tensor's shape is summed down to it, one
    of another dtype is converted, a 0-d one on another device is moved; any
    other mismatch is an error, blamed on the node that produced the gradient.
    """
    def error(message: str) -> RuntimeError:
        return RuntimeError(message if producer is None else f"Function {producer} returned an {message}")

    if grad.shape != meta.shape:
        try:
            expand_shape(meta.shape, grad.shape)
        except RuntimeError:
            raise error(f"invalid gradient at index {index} - got {list(grad.shape)} but expected shape "
                        f"compatible with {list(meta.shape)}") from None

        grad = sum_to(grad, meta.shape)
    # (``is not`` first: dtypes and a type's devices are singletons, and a
    # device's ``!=`` is a Python method.)
    if grad.dtype is not meta.dtype and grad.dtype != meta.dtype:
        grad = convert(grad, dtype=meta.dtype)
    if grad.device is not meta.device and grad.device != meta.device:
        if grad.ndim != 0:
            raise error(f"invalid gradient at index {index} - expected device {meta.device} but got {grad.device}")
        grad = convert(grad, device=meta.device)
    return grad


def _topological_order(roots: Sequence[Any]) -> list:
    """Nodes reachable from ``roots``, each before every node it feeds (iterative DFS;
    nodes hash by identity).  A node without edges (a leaf's AccumulateGrad) is
    finished when reached, without a turn on the stack."""
    seen: set[Any] = set()
    post_order: list = []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.edges))]
        while stack:
            node, edges = stack[-1]
            for edge in edges:
                if edge is not None:
                    child = edge[0]
                    if child not in seen:
                        seen.add(child)
                        if child.edges:
                            stack.append((child, iter(child.edges)))
                            break
                        post_order.append(child)
            else:
                stack.pop()
                post_order.append(node)
    post_order.reverse()
    return post_order


# -- custom operators: the dispatcher's AutogradEngine protocol -----------------------------------
class FunctionCtx:
    """The ``ctx`` of a custom operator's ``setup_context`` and backward (torch's FunctionCtx).

    ``save_for_backward(*tensors)`` / ``saved_tensors`` (checked against
    in-place writes since, and freed after backward unless retain_graph),
    ``needs_input_grad`` (a bool per argument, a list of them for a list of
    tensors), ``mark_non_differentiable(*outputs)``,
    ``set_materialize_grads(False)`` (gradients of unused outputs stay None
    instead of zeros), and any attribute the formulas set.
    """

    def __init__(self, needs_input_grad: tuple[Any, ...], node_name: str) -> None:
        self.needs_input_grad = needs_input_grad
        self._node_name = node_name
        # The saved tensors and their versions when saved; None once freed.
        self._saved: Optional[tuple[tuple[Optional[Tensor], int], ...]] = ()
        self._non_differentiable: set[int] = set()
        self._materialize_grads = True
        # setup_context sets it for an operator returning a view that may be written in
        # place: the view is then made again by calling the operator (view_history.py).
        self._is_pure_view = False

    def save_for_backward(self, *tensors: Optional[Tensor]) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type {type(t).__name__}")
        self._saved = tuple((t, 0 if t is None else t._version_counter.value) for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Optional[Tensor], ...]:
        if self._saved is None:
            raise RuntimeError(_BACKWARD_TWICE)
        for i, (t, version) in enumerate(self._saved):
            if t is not None and t._version_counter.value != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: saved tensor {i} of {self._node_name}, a tensor of shape {list(t.shape)}, is at "
                    f"version {t._version_counter.value}; expected version {version} instead."
                )
        return tuple(t for t, _ in self._saved)

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize_grads = bool(value)


# How a node's inputs and outputs hold tensors, per argument or return: not
# at all (None), one tensor (_ONE), or a list of n tensors (n).
_ONE = -1


def _layout(value: Any) -> Optional[int]:
    if isinstance(value, Tensor):
        return _ONE
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, Tensor) for v in value):
        return len(value)
    return None


def _flat_tensors(values: Sequence[Any], layouts: Sequence[Optional[int]]) -> list[Optional[Tensor]]:
    flat: list[Optional[Tensor]] = []
    for value, layout in zip(values, layouts):
        if layout == _ONE:
            flat.append(value)
        elif layout is not None:
            flat.extend(value)
    return flat


class FunctionNode(_GraphNode):
    """The node of one call of a custom operator: its backward is the operator's
    registered formula (``function.backward``, see dispatcher.custom_op_autograd)."""

    __slots__ = ("_name", "function", "ctx", "edges", "metadata", "_inputs", "_outputs")

    def __init__(self, function: Any, ctx: FunctionCtx, edges: tuple[Optional[Edge], ...],
                 inputs: Sequence[Optional[int]], outputs: Sequence[Optional[int]],
                 metadata: tuple[TensorMeta, ...]) -> None:
        self._name = function.name + "Backward"
        self.function = function
        self.ctx = ctx
        self.edges = edges
        self.metadata = metadata
        self._inputs = inputs
        self._outputs = outputs

    def release_saved(self) -> None:
        if self.ctx._saved:
            self.ctx._saved = None

    def apply(self, grads: Sequence[Optional[Tensor]], create_graph: bool = False) -> list[Optional[Tensor]]:
        # create_graph asks nothing of this node: the registered backward
        # records, or not, as the engine's grad mode says.
        if self.ctx._materialize_grads:
            grads = [aten.zeros.default(list(m.shape), dtype=m.dtype, device=m.device) if g is None else g
                     for g, m in zip(grads, self.metadata)]
        # One gradient per output, a list of them for a list output, None for a non-tensor one.
        per_output: list[Any] = []
        position = 0
        for layout in self._outputs:
            if layout is None:
                per_output.append(None)
            elif layout == _ONE:
                per_output.append(grads[position])
                position += 1
            else:
                per_output.append(list(grads[position:position + layout]))
                position += layout
        flat: list[Optional[Tensor]] = []
        for i, (layout, g) in enumerate(zip(self._inputs, self.function.backward(self.ctx, *per_output))):
            if layout is None:
                if g is not None:
                    raise RuntimeError(
                        f"function {self._name} returned a gradient different than None at position {i + 1}, but the "
                        "corresponding forward input was not a Variable"
                    )
            elif layout == _ONE:
                flat.append(g)
            elif g is None:
                flat.extend([None] * layout)
            elif isinstance(g, (list, tuple)) and len(g) == layout:
                flat.extend(g)
            else:
                raise RuntimeError(
                    f"function {self._name} returned {g!r} as the gradient of argument {i}, a list of {layout} "
                    f"tensors; expected None or a list of {layout} gradients"
                )
        return flat


class CustomOpAutograd:
    """dispatcher.tensor_protocols.AutogradEngine for Tensor: custom operators
    (``dispatcher.custom_ops.custom_op`` + ``register_autograd``) record here."""

    def requires_grad(self, tensor: Tensor) -> bool:
        return tensor.requires_grad

    def increment_version(self, tensor: Tensor) -> None:
        tensor._version_counter.value += 1

    def as_view(self, base: Tensor, view: Tensor) -> None:
        """``view`` (a custom operator's result) is a view of ``base``, as the view operators'
        ADInplaceOrView kernels record it (inplace_or_view.py)."""
        if isinstance(view, Tensor):
            view._base = root = base._base if base._base is not None else base
            view._version_counter = base._version_counter
            if root.grad_fn is not None:
                track_view(root, view)

    def apply(self, function: Any, args: tuple[Any, ...]) -> Any:
        inputs = [_layout(arg) for arg in args]
        flat_inputs = _flat_tensors(args, inputs)
        edges = tuple(None if t is None else _edge(t) for t in flat_inputs)
        needs_input_grad = tuple(
            False if layout is None else arg.requires_grad if layout == _ONE
            else [t is not None and t.requires_grad for t in arg]
            for arg, layout in zip(args, inputs)
        )
        ctx = FunctionCtx(needs_input_grad, function.name + "Backward")
        result = _aliases_of_inputs(function.forward(ctx, *args), flat_inputs, ctx)
        results = result if isinstance(result, tuple) else (result,)
        outputs = [_layout(r) for r in results]
        flat_outputs = [t for t in _flat_tensors(results, outputs) if t is not None]
        node = FunctionNode(function, ctx, edges, inputs, outputs, tuple(TensorMeta(t) for t in flat_outputs))
        for i, t in enumerate(flat_outputs):
            # Only floating-point results are differentiable (see differentiable()).
            if t.dtype.is_floating_point and id(t) not in ctx._non_differentiable:
                t.grad_fn, t._output_nr, t.requires_grad = node, i, True
            if t._base is not None:  # a view operator's (custom_op_views.py made it one)
                _view_writes.mark_custom_function_view(t, _replay(function, args) if ctx._is_pure_view else None)
        return result


def _replay(function: Any, args: tuple[Any, ...]) -> Callable[[Tensor], Tensor]:
    """How a pure view custom operator's call is made again on another base: the operator,
    called with the new base for its first argument (torch's view_fn for ``ctx._is_pure_view``)."""
    op, rest, keyword_only = function.op, args[1:], function._keyword_only
    return lambda base: op(base, *rest, **keyword_only)


def _aliases_of_inputs(value: Any, inputs: Sequence[Optional[Tensor]], ctx: FunctionCtx) -> Any:
    """``value`` (forward's result) with each output that is one of the inputs
    replaced by an alias of it made without recording, on which the node's
    history is set: torch's _wrap_outputs for an input returned but not marked
    dirty (nothing here marks one: a custom operator's kernel writes its input
    below autograd), so the input itself, a leaf perhaps, keeps its own history."""
    if isinstance(value, Tensor):
        if not any(value is x for x in inputs):
            return value
        with no_grad():
            alias = aten.alias.default(value)
        if id(value) in ctx._non_differentiable:
            ctx._non_differentiable.add(id(alias))
        return alias
    if type(value) in (list, tuple):
        return type(value)(_aliases_of_inputs(v, inputs, ctx) for v in value)
    return value


register_autograd_engine(Tensor, CustomOpAutograd())



def gradcheck(fn: Callable[..., Tensor], inputs: Sequence[Tensor], *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, seed: int = 0) -> bool:
    """Compare autograd's gradients of ``fn`` with central finite differences.

    Checks the scalar ``sum(fn(*inputs) * v)`` for a fixed random ``v`` (a
    random projection of the Jacobian), for every element of every input
    that requires grad.  Use float64 inputs.  Raises AssertionError naming
    the input and element on a mismatch; returns True otherwise.
    """
    rng = np.random.default_rng(seed)
    with no_grad():
        probe = fn(*inputs)
    v = tensor(rng.standard_normal(probe.shape), dtype=probe.dtype, device=probe.device)

    def objective(*args: Tensor) -> Tensor:
        return aten.sum.default(aten.mul.Tensor(fn(*args), v))

    leaves = [t for t in inputs if t.requires_grad]
    for t in leaves:
        t.grad = None
    objective(*inputs).backward()
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            continue
        base = t.numpy().copy()
        analytic = np.zeros(base.shape) if t.grad is None else t.grad.numpy()
        for index in np.ndindex(base.shape):
            values = []
            for step in (eps, -eps):
                shifted = base.copy()
                shifted[index] += step
                args = list(inputs)
                args[i] = tensor(shifted, dtype=t.dtype, device=t.device)
                with no_grad():
                    values.append(objective(*args).item())
            numeric = (values[0] - values[1]) / (2 * eps)
            if not np.isclose(analytic[index], numeric, atol=atol, rtol=rtol):
                raise AssertionError(
                    f"gradcheck: input {i} element {index}: autograd gives {analytic[index]:.6g}, "
                    f"finite differences {numeric:.6g}"
                )
    return True
