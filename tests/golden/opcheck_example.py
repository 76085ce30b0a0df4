"""torch.library.opcheck's documented example (its docstring in torch 2.13's
torch/library.py), written once for both sides: ``run(api)`` defines the
operator with ``api``'s names and returns opcheck's report for each CPU
sample (the docstring's CUDA samples left out).  Its ``setup_context``
unpacks its inputs wrongly, as the docstring's does, so the sample that
requires grad fails where the autograd kernel runs.

``generate_opcheck_example_golden.py`` runs it on torch; tests/test_optests.py
on dispatcher.prototype.  (No ``from __future__ import annotations``: the
operator's annotations must be the API's own Tensor, not strings.)
"""
from typing import Any, Callable, NamedTuple


class Api(NamedTuple):
    custom_op: Callable[..., Any]
    opcheck: Callable[..., Any]
    Tensor: type
    numpy_mul_impl: Callable[[Any, float], Any]  # x * y through numpy, on x's device
    empty_like: Callable[[Any], Any]
    samples: Callable[[], list[tuple[Any, float]]]  # randn(3), 3.14 and randn(1, 10, requires_grad=True), 1.234


def report(result: dict[str, Any]) -> dict[str, str]:
    """opcheck's dict as text: SUCCESS, the exception's class and message, or a skip."""
    return {name: outcome if isinstance(outcome, str) and outcome == "SUCCESS"
            else f"{type(outcome).__name__}: {outcome}" for name, outcome in result.items()}


def run(api: Api, namespace: str) -> list[dict[str, Any]]:
    Tensor = api.Tensor

    def numpy_mul(x: Tensor, y: float) -> Tensor:  # type: ignore[valid-type]  # noqa: F821
        return api.numpy_mul_impl(x, y)

    op = api.custom_op(f"{namespace}::numpy_mul", mutates_args=())(numpy_mul)

    @op.register_fake
    def _(x: Any, y: Any) -> Any:
        return api.empty_like(x)

    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        y, = inputs
        ctx.y = y

    def backward(ctx: Any, grad: Any) -> Any:
        return grad * ctx.y, None

    op.register_autograd(backward, setup_context=setup_context)
    outcomes = []
    for args in api.samples():
        checked = report(api.opcheck(op, args, raise_exception=False))
        try:
            api.opcheck(op, args)
            raised = None
        except Exception as exc:  # noqa: BLE001  (recording what opcheck raises)
            raised = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        outcomes.append({"results": checked, "raised": raised})
    return outcomes
