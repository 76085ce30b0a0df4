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
running each formula under ``no_grad()``, and accumulates into the leaves'
``.grad``.  ``no_grad()`` is a thread-local guard that excludes the autograd
keys, so calls under it never reach these kernels.

As in PyTorch's engine, every gradient is checked against the tensor it is
the gradient of (its shape, dtype and device, recorded on the node it flows
to), and a node's saved tensors are freed once it has run unless
``retain_graph=True``: a second backward through it is an error.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from dispatcher import AutoDispatchBelowADInplaceOrView, AutoDispatchBelowAutograd, DispatchKeySet, Library
from dispatcher.keysets import AFTER_AUTOGRAD_KEYSET

from .operators import OP
from .shapes import expand_shape
from .tensor import Tensor, tensor

__all__ = ["Node", "backward", "differentiable", "gradcheck", "no_grad"]

_library = Library("proto", "IMPL", "Autograd")


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
    tensors it saved as tensors, the others as TensorMeta; ``result`` if saved."""

    if TYPE_CHECKING:  # the attributes are set by name (see _context)
        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...


_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class Node:
    """One recorded call: ``apply(grad)`` returns the gradients of its tensor inputs.

    ``next_functions`` holds, per tensor input (a Tensor[] argument counts
    each element), the node its gradient flows to: the input's own
    ``grad_fn``, the AccumulateGrad node of a leaf, or None.  ``metadata``
    is the shape, dtype and device of the result, which the gradient
    flowing into this node must have (PyTorch's input_metadata).
    """

    __slots__ = ("name", "formula", "ctx", "next_functions", "metadata", "_saved")

    def __init__(self, name: str, formula: Callable, ctx: Context, next_functions: tuple,
                 saved: Sequence[tuple[str, Tensor, int]], metadata: TensorMeta) -> None:
        self.name = name
        self.formula = formula
        self.ctx = ctx
        self.next_functions = next_functions
        self.metadata = metadata
        # (argument name, tensor, its version when saved); None once released.
        self._saved: Optional[Sequence[tuple[str, Tensor, int]]] = saved

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def release_saved(self) -> None:
        """Free the saved tensors (backward without retain_graph); a node that saved none stays usable."""
        if self._saved:
            for name, _, _ in self._saved:
                delattr(self.ctx, name)
            self._saved = None

    def apply(self, grad: Tensor) -> list[Optional[Tensor]]:
        if self._saved is None:
            raise RuntimeError(_BACKWARD_TWICE)
        for name, t, version in self._saved:
            if t._version.value != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: '{name}' of {self.name}, a tensor of shape {list(t.shape)}, is at version "
                    f"{t._version.value}; expected version {version} instead."
                )
        grads: list[Optional[Tensor]] = []
        for g in self.formula(self.ctx, grad):
            grads.extend(g if isinstance(g, list) else [g])
        return grads


class AccumulateGrad:
    """The node of a leaf tensor: adds the incoming gradient to ``leaf.grad``."""

    __slots__ = ("variable", "metadata")
    name = "AccumulateGrad"
    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.metadata = TensorMeta(variable)

    def release_saved(self) -> None:
        pass

    def apply(self, grad: Tensor) -> list:
        leaf = self.variable
        # A copy: the same gradient tensor may also flow elsewhere.
        leaf.grad = OP["clone"](grad) if leaf.grad is None else OP["add.Tensor"](leaf.grad, grad)
        return []


def _edge(t: Tensor) -> Union[Node, AccumulateGrad, None]:
    if not t.requires_grad:
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    if t._grad_accumulator is None:
        t._grad_accumulator = AccumulateGrad(t)
    return t._grad_accumulator


def _node_name(op_name: str) -> str:
    base = op_name.partition("::")[2].partition(".")[0].strip("_")
    return "".join(part.capitalize() for part in base.split("_")) + "Backward"


def differentiable(name: str, saves: Iterable[str] = ()) -> Callable[[Callable], Callable]:
    """Register ``formula(ctx, grad)`` as operator ``name``'s derivative.

    The formula returns one gradient (or None) per tensor argument in schema
    order -- a list for a Tensor[] argument.  ``saves`` names the tensor
    arguments (and ``"result"``) whose values it reads; every other tensor
    argument reaches it as shape, dtype and device only, so that a later
    in-place write to it does not invalidate the graph.
    """
    op = OP[name]
    schema = op.schema
    saves = frozenset(saves)
    names = [a.name for a in schema.arguments]
    tensor_positions = [d.position for d in schema.dispatch_args]
    inplace = bool(schema.arguments) and schema.arguments[0].is_write
    node_name = _node_name(op.name())

    def register(formula: Callable) -> Callable:
        def kernel(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
            values = schema.bind(args, kwargs)
            inputs = [t for p in tensor_positions for t in _as_list(values[p])]
            needs_grad = any(t.requires_grad for t in inputs)
            if needs_grad and inplace:
                _check_inplace(values[0])
            edges = tuple(_edge(t) for t in inputs) if needs_grad else ()
            with AutoDispatchBelowADInplaceOrView():
                result = op.redispatch(keyset & AFTER_AUTOGRAD_KEYSET, *args, **kwargs)
            # Only floating-point results are differentiable (PyTorch's
            # isDifferentiableType): x.to(int64) is cut from the graph.
            if needs_grad and result.dtype.is_floating_point:
                ctx, saved = _context(names, values, result, saves)
                result.grad_fn = Node(node_name, formula, ctx, edges, saved, TensorMeta(result))
                result.requires_grad = True
            return result

        _library.impl(name, kernel, with_keyset=True)
        return formula

    return register


def _as_list(value: Any) -> list:
    """A Tensor[] argument's tensors, or a Tensor argument as a list of one."""
    return value if isinstance(value, list) else [value]


def _check_inplace(self: Tensor) -> None:
    if self.requires_grad and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if self._base is not None and (self.requires_grad or self._base.requires_grad):
        # PyTorch rewrites the base's history here (CopySlices); this prototype does not.
        raise NotImplementedError("in-place operations on views of tensors that require grad are not supported")


def _context(names: Sequence[str], values: Sequence[Any], result: Tensor,
             saves: frozenset) -> tuple[Context, list[tuple[str, Tensor, int]]]:
    ctx = Context()
    saved = []
    for name, value in zip(names, values):
        if name in saves:
            saved.append((name, value, value._version.value))
        elif isinstance(value, Tensor):
            value = TensorMeta(value)
        elif isinstance(value, list) and value and isinstance(value[0], Tensor):
            value = [TensorMeta(t) for t in value]
        setattr(ctx, name, value)
    if "result" in saves:
        ctx.result = result
        saved.append(("result", result, result._version.value))
    return ctx, saved


def backward(root: Tensor, gradient: Optional[Tensor] = None, retain_graph: Optional[bool] = None) -> None:
    """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

    ``gradient`` is d(loss)/d(root), of root's shape (implicitly 1 for a
    one-element root).  Unless ``retain_graph`` is true, each node frees
    what it saved once it has run, and a second backward through it raises.
    """
    # torch.autograd._make_grads, then the engine.
    if gradient is not None:
        if not isinstance(gradient, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(gradient).__name__}")
        if gradient.shape != root.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape} and output[0] has a shape "
                f"of {root.shape}."
            )
    if not root.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    first = _edge(root)
    if gradient is None:
        if root.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        gradient = OP["full"](list(root.shape), 1.0, dtype=root.dtype, device=root.device)
    order = _topological_order(first)
    with no_grad():
        grads = {id(first): _validate_gradient(gradient, first.metadata, 0, None)}  # type: ignore[union-attr]  # root requires grad
        for node in order:
            grad = grads.pop(id(node), None)
            if grad is None:
                continue
            outputs = node.apply(grad)
            if not retain_graph:
                node.release_saved()
            for i, (next_node, g) in enumerate(zip(node.next_functions, outputs)):
                if next_node is None or g is None:
                    continue
                g = _validate_gradient(g, next_node.metadata, i, node.name)
                key = id(next_node)
                grads[key] = g if key not in grads else OP["add.Tensor"](grads[key], g)


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
        from .derivatives import sum_to  # derivatives builds on this module

        grad = sum_to(grad, meta.shape)
    if grad.dtype != meta.dtype:
        grad = OP["to"](grad, dtype=meta.dtype)
    if grad.device != meta.device:
        if grad.ndim != 0:
            raise error(f"invalid gradient at index {index} - expected device {meta.device} but got {grad.device}")
        grad = OP["to"](grad, device=meta.device)
    return grad


def _topological_order(root: Any) -> list:
    """Nodes reachable from ``root``, each before every node it feeds (iterative DFS)."""
    seen, post_order = {id(root)}, []
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            post_order.append(node)
    return post_order[::-1]


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
        return OP["sum"](OP["mul.Tensor"](fn(*args), v))

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
