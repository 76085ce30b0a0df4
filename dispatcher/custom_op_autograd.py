"""The Autograd kernel of a custom operator (torch/_library/autograd.py without torch).

torch turns ``register_autograd(backward, setup_context=...)`` into a
generated ``torch.autograd.Function`` and registers, on the Autograd alias
key, a kernel that calls its ``apply`` when an argument requires grad and
otherwise just runs the operator below autograd.  Here the Function is a
``CustomOpFunction`` made per call, and ``apply`` is the autograd engine of
the arguments' tensor library (tensor_protocols.AutogradEngine): the kernel

1. binds the call to the schema, positional arguments and keyword-only ones
   apart, those equal to their defaults left out as torch's dispatcher leaves
   them out of a Python kernel's call (so the Function's inputs, and the
   gradients its backward returns, are the arguments given), and filled in
   again for ``setup_context`` (torch's ``fill_defaults``);
2. if no positional argument requires grad (asked of each tensor's engine),
   redispatches below autograd and returns -- nothing is recorded;
3. otherwise hands the call to that engine, whose ``apply`` makes a context,
   calls ``function.forward(ctx, *args)`` -- the redispatch below autograd,
   then the user's ``setup_context(ctx=..., inputs=..., output=...)`` -- and
   records a node whose backward calls ``function.backward(ctx, *grads)``.

With no ``register_autograd``, calls still record (as torch's do) and
backward raises, naming the operator.  Grad mode is the dispatcher's:
under a guard that excludes the autograd keys (``AutoDispatchBelowAutograd``,
a tensor library's ``no_grad``) the kernel is never reached.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

from .kernel_results import result_check
from .keysets import AFTER_AUTOGRAD_KEYSET
from .schema import FunctionSchema, ListType
from .tensor_protocols import AutogradEngine, autograd_engine_for

__all__ = ["AutogradInfo", "CustomOpFunction", "Info", "make_autograd_impl"]


class AutogradInfo(Protocol):
    """Where the kernel finds the formulas (a CustomOpDef, or an Info), read at each call."""

    _backward_fn: Optional[Callable[..., Any]]
    _setup_context_fn: Optional[Callable[..., Any]]


class Info:
    """The formulas ``register_autograd`` gives an operator that is not a CustomOpDef."""

    __slots__ = ("_backward_fn", "_setup_context_fn")

    def __init__(self, backward_fn: Optional[Callable[..., Any]], setup_context_fn: Optional[Callable[..., Any]]) -> None:
        self._backward_fn = backward_fn
        self._setup_context_fn = setup_context_fn


class CustomOpFunction:
    """One differentiable call of a custom operator: what ``AutogradEngine.apply`` is given.

    ``name`` is torch's generated Function's (``GeneratedBackwardFor_ns_op_overload``);
    an engine names the node ``name + "Backward"``, as torch does.
    """

    __slots__ = ("name", "op", "_info", "_keyset", "_keyword_only", "_pass_keyword_only", "_below_autograd",
                 "_input_kinds", "_is_tensor", "_filled")

    def __init__(self, name: str, op: Any, info: AutogradInfo, keyset: Any, keyword_only: dict[str, Any],
                 pass_keyword_only: bool, below_autograd: Callable[[], Any], input_kinds: tuple[int, ...],
                 is_tensor: Callable[[object], bool], filled: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        self.name = name
        self.op = op
        self._info = info
        self._keyset = keyset  # the call's keyset below autograd
        self._keyword_only = keyword_only  # as the call passed them (torch leaves out those at their defaults)
        self._filled = filled  # the call's arguments with every default filled in, for setup_context
        self._pass_keyword_only = pass_keyword_only
        self._below_autograd = below_autograd
        self._input_kinds = input_kinds  # what each positional argument is, for checking the gradients
        self._is_tensor = is_tensor
        self._filled = filled  # the call's arguments, defaults filled in, for setup_context

    def __repr__(self) -> str:
        return f"<CustomOpFunction {self.name}>"

    def forward(self, ctx: Any, *args: Any) -> Any:
        """Run the operator below autograd, then the user's ``setup_context``."""
        with self._below_autograd():
            result = self.op.redispatch(self._keyset, *args, **self._keyword_only)
            setup_context = self._info._setup_context_fn
            if setup_context is not None:
                inputs, keyword_only = self._filled
                inputs = args + inputs[len(args):]  # (the engine's own arguments, as it handed them)
                if self._pass_keyword_only:
                    setup_context(ctx=ctx, inputs=inputs, keyword_only_inputs=keyword_only, output=result)
                else:
                    setup_context(ctx=ctx, inputs=inputs, output=result)
        return result

    def backward(self, ctx: Any, *grads: Any) -> tuple[Any, ...]:
        """The user's backward: one gradient per positional argument, as a tuple."""
        backward = self._info._backward_fn
        if backward is None:
            raise RuntimeError(
                f"Trying to backward through {self.op.name()} but no autograd formula was registered. "
                "Please use register_autograd to add one."
            )
        result = backward(ctx, *grads)
        # torch's wrapper for tensor lists (in the arguments or the returns) compares the
        # gradients' structure with the inputs': no extra gradients, not even Nones.
        strict = any(kind >= 0 for kind in self._input_kinds) or any(
            isinstance(ret.type.strip_annotations(), ListType) for ret in self.op.schema.returns)
        return _checked_gradients(f"{self.name}Backward", result if isinstance(result, tuple) else (result,),
                                  self._input_kinds, self._is_tensor, strict)


# What a positional argument of a differentiable call is (``_input_kinds``), and so what its
# gradient may be: the length of a list of tensors (a list as long, of tensors and Nones),
# or one of these.
NOT_A_TENSOR = -2  # its gradient must be None
TENSOR = -1  # a tensor, or None


def _input_kinds(args: tuple[Any, ...], is_tensor: Callable[[object], bool]) -> tuple[int, ...]:
    return tuple(TENSOR if is_tensor(a)
                 else len(a) if type(a) in (list, tuple) and any(is_tensor(t) for t in a)
                 else NOT_A_TENSOR
                 for a in args)


def _checked_gradients(node: str, grads: tuple[Any, ...], kinds: tuple[int, ...],
                       is_tensor: Callable[[object], bool], strict: bool = False) -> tuple[Any, ...]:
    """A backward's gradients, one per positional argument, checked as torch's autograd
    checks what a Python Function's backward returns (PyNode::apply), with its texts.

    torch's generated Function has one more input than the operator's arguments (its
    call's metadata), and its backward returns one more gradient (None): the counts
    and positions in the texts include it, so that they read as torch's.  The
    gradient of a list of tensors must be a list as long, of tensors and Nones: torch
    checks that first, for an operator with such arguments (comparing pytree specs,
    which its text prints), and its counts; here the counts come first.
    """
    grads = (*grads, None)
    expected = len(kinds) + 1
    if len(grads) > expected and strict:
        raise RuntimeError(
            "Expected the return from backward to be of the same structure as the inputs. Got: "
            f"{len(grads) - 1} gradients for {len(kinds)} arguments"
        )
    # More gradients than inputs are fine if the extra ones are all None.
    if len(grads) > expected and all(g is None for g in grads[expected:]):
        grads = grads[:expected]
    if len(grads) != expected:
        raise RuntimeError(
            f"function {node} returned an incorrect number of gradients (expected {expected}, got {len(grads)})"
        )
    for i, grad in enumerate(grads):
        kind = kinds[i] if i < len(kinds) else NOT_A_TENSOR
        if kind >= 0:
            if type(grad) is not list or len(grad) != kind or not all(g is None or is_tensor(g) for g in grad):
                # torch compares the structures of the gradients and of the inputs (pytree specs).
                raise RuntimeError(
                    "Expected the return from backward to be of the same structure as the inputs. Got: "
                    f"{_described(grad)} as the gradient of argument {i}, a list of {kind} tensors"
                )
        elif grad is None:
            continue
        elif kind == NOT_A_TENSOR:
            raise RuntimeError(
                f"function {node} returned a gradient different than None at position {i + 1}, but the "
                "corresponding forward input was not a Variable"
            )
        elif not is_tensor(grad):
            raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
    return grads[:-1]


def _described(value: Any) -> str:
    if type(value) in (list, tuple):
        return f"a {type(value).__name__} of {', '.join(type(v).__name__ for v in value) or 'nothing'}"
    return "None" if value is None else f"a {type(value).__name__}"


def _engine_requiring_grad(values: tuple[Any, ...]) -> Optional[AutogradEngine]:
    """The autograd engine of the tensors among ``values`` (one level of lists) that require grad."""
    found: Optional[AutogradEngine] = None
    for value in values:
        for item in value if isinstance(value, (list, tuple)) else (value,):
            engine = autograd_engine_for(item)
            if engine is None or not engine.requires_grad(item):
                continue
            if found is not None and found is not engine:
                raise RuntimeError(
                    "a custom operator was called with tensors of two tensor libraries that both require grad; "
                    "one call can be recorded by one autograd engine only"
                )
            found = engine
    return found


def make_autograd_impl(op: Any, info: AutogradInfo, engine: Any, *, is_out: bool = False,
                       check_below: bool = True) -> Callable[..., Any]:
    """The Autograd kernel (``with_keyset=True``) of operator ``op`` (an OperatorHandle of
    ``engine``, the dispatcher engine whose keysets and guards the kernel uses).

    Its result is checked against the schema's returns (see dispatcher.kernel_results),
    as torch checks every Python kernel's; ``check_below=False`` skips that check when
    the call just went below autograd, for an operator whose kernels there check
    their own results (a CustomOpDef's: checking twice would cost a call ~3% more)."""
    schema: FunctionSchema = op.schema
    name = schema.name
    function_name = f"GeneratedBackwardFor_{name.namespace}_{name.name}_{name.overload_name or 'default'}"
    pass_keyword_only = any(a.kwarg_only for a in schema.arguments)
    below = engine.DispatchKeySet.from_raw_repr(AFTER_AUTOGRAD_KEYSET.raw_repr())
    below_autograd = engine.AutoDispatchBelowAutograd
    check_result = result_check(schema, engine)  # torch checks this Python kernel's result too
    tensor_key_set = engine.tensor_key_set

    def is_tensor(value: object) -> bool:
        return tensor_key_set(value) is not None

    def autograd_impl(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        # Keyword-only arguments as keywords, the rest positionally, whichever
        # way the caller passed them, those equal to their defaults left out
        # (as c10 hands them to torch's kernel).
        values = schema.bind(args, kwargs)
        args, keyword_only = schema.split_call_without_defaults(values)
        if is_out:
            if _engine_requiring_grad(args + tuple(keyword_only.values())) is not None:
                raise RuntimeError(
                    f"{name.name}(): functions with out=... arguments don't support automatic differentiation, "
                    "but one of the arguments requires grad."
                )
            engine_for_call = None
        else:
            engine_for_call = _engine_requiring_grad(args)
        if engine_for_call is None:
            with below_autograd():
                result = op.redispatch(keyset & below, *args, **keyword_only)
            return check_result(result) if check_below else result
        function = CustomOpFunction(function_name, op, info, keyset & below, keyword_only, pass_keyword_only,
                                    below_autograd, _input_kinds(args, is_tensor), is_tensor, schema.split_call(values))
        return check_result(engine_for_call.apply(function, args))

    return autograd_impl
