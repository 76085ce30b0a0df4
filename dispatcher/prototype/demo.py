"""``python -m dispatcher demo``: the prototype tensor library, one dispatch key at a time."""
from __future__ import annotations

import contextlib
import io
import warnings
from typing import Callable

import numpy as np

from dispatcher import set_show_dispatch_trace

from . import nn
from .autograd import gradcheck
from .dtypes import float64
from .factories import empty, randn
from .tensor import tensor
from .backend_fallbacks import install
from .toy_device import enable_toy_device, use_cpu_fallback
from .tracing import trace
from .vmap import set_vmap_fallback_warning_enabled, vmap

__all__ = ["main", "train_mlp"]


def train_mlp(device: str = "cpu", *, batched: bool = False, steps: int = 5, lr: float = 0.1) -> list[float]:
    """Fit a 4-16-1 MLP to synthetic data with SGD; the loss of each step.

    ``batched=True`` writes the model for one example and runs it over the
    batch with vmap.  The same seed gives the same data and weights on
    every device.
    """
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = np.maximum(x @ np.array([[1.0], [-2.0], [0.5], [1.5]], np.float32), 0) + 0.1
    inputs, targets = tensor(x, device=device), tensor(y, device=device)
    model = nn.MLP((4, 16, 1), device=device, generator=rng)
    forward = vmap(model) if batched else model
    losses = []
    for _ in range(steps):
        loss = nn.mse_loss(forward(inputs), targets)
        loss.backward()
        nn.sgd_step(model.parameters(), lr)
        losses.append(loss.item())
    return losses


def _dispatch_trace(fn: Callable[[], object]) -> list[str]:
    err = io.StringIO()
    set_show_dispatch_trace(True)
    try:
        with contextlib.redirect_stderr(err):
            fn()
    finally:
        set_show_dispatch_trace(False)
    return err.getvalue().splitlines()


def main() -> int:
    # The tour uses the toy device and the backend fallbacks, which the
    # prototype takes on only when asked.
    enable_toy_device()
    install()
    print("dispatcher.prototype: a numpy-backed tensor library built on the dispatcher\n")

    print("1. A tensor's DispatchKeySet: its backend plus that backend's autograd keys")
    for device in ("cpu", "meta", "toy"):
        print(f"   {device:<5}{empty(2, device=device).key_set}")

    print("\n2. One call, x * w with w requiring grad (DISPATCHER_SHOW_DISPATCH_TRACE=1 shows every call):")
    x = tensor([[1.0, 2.0], [3.0, 4.0]], dtype=float64)
    w = tensor([[0.5, -1.0], [2.0, 0.0]], dtype=float64, requires_grad=True)
    for line in _dispatch_trace(lambda: x * w):
        print(f"   {line}")

    print("\n3. Autograd: kernels on the Autograd key record the graph, then redispatch below it")
    loss = (x @ w).relu().mean()
    loss.backward()
    print(f"   loss = (x @ w).relu().mean() = {loss.item():.3f}   w.grad = {w.grad.numpy().tolist()}")  # type: ignore[union-attr]
    checked = gradcheck(lambda w: (x @ w).exp().sum(), [w])
    print(f"   gradients agree with finite differences: {checked}")

    print("\n4. Meta: shapes and dtypes, no data")
    big = empty(100_000, 4096, device="meta") @ empty(4096, 10, device="meta")
    print(f"   [100000, 4096] @ [4096, 10] -> {list(big.shape)} {big.dtype.name}, 0 bytes")

    print('\n5. A new device: PrivateUse1 named "toy"; own kernels: empty, _copy_from; the rest via a CPU fallback')
    t = x.to("toy")
    same = np.allclose(t.exp().numpy(), x.exp().numpy())
    print(f"   x.to('toy').exp() equals the CPU result: {same}")
    use_cpu_fallback(["aten::add.Tensor"])  # selective: only add falls back
    try:
        (t + t).exp()
    except NotImplementedError as exc:
        print(f"   with only add.Tensor falling back, exp fails: {str(exc).split('. ')[0]}")
    finally:
        use_cpu_fallback()

    print("\n6. vmap: batching rules (add, mm, ...) and decompositions (matmul) beat the per-example loop fallback")
    a, b = randn(8, 3), randn(8, 3)
    set_vmap_fallback_warning_enabled(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dots = vmap(lambda u, v: (u * v).sum())(a, b)
            print(f"   per-row dot products of [8, 3] inputs -> {list(dots.shape)}, match: "
                  f"{np.allclose(dots.numpy(), (a.numpy() * b.numpy()).sum(1))}, fallback calls: {len(caught)}")
            vmap(lambda u: u.expand(2, 3))(a)
            print(f"   expand has no rule: {caught[-1].message}")
    finally:
        set_vmap_fallback_warning_enabled(False)

    print("\n7. Tracing: a dispatch mode records every call, as torch's make_fx does")
    model = nn.MLP((3, 4, 1))
    graph = trace(model, randn(5, 3))
    for line in str(graph).splitlines():
        print(f"   {line}")
    fresh = randn(5, 3)
    print(f"   replay on new input matches: {np.allclose(graph.replay(fresh).numpy(), model(fresh).numpy())}")

    print("\n8. Train a 4-16-1 MLP for 5 SGD steps (loss per step)")
    with warnings.catch_warnings():
        # Views on toy run as CPU copies; the fallback warns about each view operator once.
        warnings.simplefilter("ignore")
        runs = {"cpu": train_mlp("cpu"), "toy": train_mlp("toy"), "vmap": train_mlp("cpu", batched=True)}
    for name, losses in runs.items():
        print(f"   {name:<5}" + "  ".join(f"{v:.4f}" for v in losses))
    return 0
