"""An MLP training step on dispatcher.prototype, torch eager and hand-written numpy, in one process.

Each step is ``loss = mse(mlp(x), y); loss.backward(); p -= lr * p.grad``
(SGD, gradients cleared), for the layer sizes 784-128-10 and 784-256-128-10
at batch 1 and 64, float32, from the same initial weights and data on
every side.  What is timed:

* prototype: ``dispatcher.prototype`` tensors (numpy kernels behind the
  dispatcher's CPU, Autograd, ADInplaceOrView, ... keys), ``nn.MLP``,
  ``nn.mse_loss``, ``backward()``, ``nn.sgd_step``;
* torch eager: torch's own C++ kernels and autograd engine on CPU tensors,
  written with the same operators (``x @ w + b``, ``relu``, ``(d * d).mean()``,
  ``loss.backward()``, ``p.add_(p.grad, alpha=-lr)`` under ``no_grad``, ``p.grad = None``);
  no ``torch.nn`` module, no compile, one intra-op thread (``torch.set_num_threads(1)``; numpy's
  BLAS gets one thread too, OPENBLAS_NUM_THREADS=1 unless set);
* numpy limit: the forward and backward passes written by hand in numpy with
  the prototype's kernels' numpy calls (mm's np.dot included), no dispatch
  and no graph: what the prototype would cost with nothing but its kernels.

The sides are timed in alternation, ``--rounds`` times ``--steps`` steps
each; a row reports the median step time of each side over the rounds, and
the ratios prototype / torch and prototype / numpy as the median of the
per-round ratios with their range (min-max), so that a noisy shared
machine slows all sides of a round alike.  Before timing, the losses of
the first steps are compared: the prototype's must equal torch's (to
float32 rounding: the matmuls sum in different orders).

Run: ``python benchmarks/training_step.py`` (torch optional: without it the
torch column is left out).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit
from typing import Any, Callable, Optional, Sequence

if __name__ == "__main__":
    # One BLAS thread, as torch gets one intra-op thread (set before numpy loads its BLAS).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

SHAPES: tuple[tuple[int, ...], ...] = ((784, 128, 10), (784, 256, 128, 10))
BATCHES = (1, 64)
LR = 0.01


def _initial(sizes: Sequence[int], batch: int) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    layers = [((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
              for i, o in zip(sizes, sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.standard_normal((batch, sizes[-1])).astype(np.float32)
    return layers, x, y


def prototype_step(sizes: Sequence[int], batch: int) -> Callable[[], float]:
    from dispatcher import prototype as pt
    from dispatcher.prototype import nn

    layers, x_np, y_np = _initial(sizes, batch)
    mlp = nn.MLP(sizes)
    mlp.layers = [(pt.tensor(w, requires_grad=True), pt.tensor(b, requires_grad=True)) for w, b in layers]
    params = mlp.parameters()
    x, y = pt.tensor(x_np), pt.tensor(y_np)

    def step() -> float:
        loss = nn.mse_loss(mlp(x), y)
        loss.backward()
        nn.sgd_step(params, LR)
        return loss.item()

    return step


def torch_step(sizes: Sequence[int], batch: int) -> Callable[[], float]:
    import torch

    layers, x_np, y_np = _initial(sizes, batch)
    params = [torch.tensor(a, requires_grad=True) for layer in layers for a in layer]
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    last = len(layers) - 1

    def step() -> float:
        h = x
        for i in range(len(layers)):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < last:
                h = h.relu()
        d = h - y
        loss = (d * d).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-LR)
                p.grad = None
        return loss.item()

    return step


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The prototype's mm kernel for float32: np.dot (BLAS's gemm)."""
    return np.dot(a, b)


def numpy_step(sizes: Sequence[int], batch: int) -> Callable[[], float]:
    layers, x, y = _initial(sizes, batch)
    weights = [w for w, _ in layers]
    biases = [b for _, b in layers]
    last = len(layers) - 1
    scale = np.float32(2 / y.size)

    def step() -> float:
        inputs, h = [], x
        for i in range(len(weights)):
            inputs.append(h)
            h = _mm(h, weights[i]) + biases[i]
            if i < last:
                h = np.maximum(h, 0)
        d = h - y
        loss = float((d * d).mean())
        g = d * scale
        for i in range(last, -1, -1):
            grad_w = _mm(inputs[i].T, g)
            grad_b = g.sum(0)
            if i:
                g = _mm(g, weights[i].T) * (inputs[i] > 0)
            weights[i] -= LR * grad_w
            biases[i] -= LR * grad_b
        return loss

    return step


def check_losses(sides: dict[str, Callable[[], float]], steps: int = 3) -> dict[str, float]:
    """Run ``steps`` steps on every side; the largest relative difference of each side's losses from the prototype's."""
    losses = {name: [step() for _ in range(steps)] for name, step in sides.items()}
    ours = np.array(losses["prototype"])
    return {name: float(np.max(np.abs(np.array(v) - ours) / np.abs(ours))) for name, v in losses.items()}


def measure(sides: dict[str, Callable[[], float]], rounds: int, steps: int) -> dict[str, list[float]]:
    """Seconds per step of each side, one sample per round, the sides alternating within each round."""
    timers = {name: timeit.Timer(step) for name, step in sides.items()}
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, timer in timers.items():
            samples[name].append(timer.timeit(steps) / steps)
    return samples


def _ratio(samples: dict[str, list[float]], over: str) -> str:
    ratios = [a / b for a, b in zip(samples["prototype"], samples[over])]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def run(rounds: int, steps: int, shapes: Sequence[Sequence[int]] = SHAPES,
        batches: Sequence[int] = BATCHES) -> list[dict[str, Any]]:
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
    rows = []
    for sizes in shapes:
        for batch in batches:
            sides = {"prototype": prototype_step(sizes, batch), "numpy": numpy_step(sizes, batch)}
            if torch is not None:
                sides["torch"] = torch_step(sizes, batch)
            differences = check_losses(sides)
            samples = measure(sides, rounds, steps)
            rows.append({"shape": "-".join(map(str, sizes)), "batch": batch, "samples": samples,
                         "loss_differences": differences})
    return rows


def format_rows(rows: Sequence[dict[str, Any]]) -> str:
    with_torch = "torch" in rows[0]["samples"]
    head = "| MLP | batch | prototype (µs) | numpy limit (µs) | prototype / numpy |"
    rule = "|---|---:|---:|---:|---:|"
    if with_torch:
        head += " torch eager (µs) | prototype / torch | loss vs torch (rel.) |"
        rule += "---:|---:|---:|"
    lines = [head, rule]
    for row in rows:
        s = row["samples"]
        line = (f"| {row['shape']} | {row['batch']} | {statistics.median(s['prototype']) * 1e6:.0f} | "
                f"{statistics.median(s['numpy']) * 1e6:.0f} | {_ratio(s, 'numpy')} |")
        if with_torch:
            line += (f" {statistics.median(s['torch']) * 1e6:.0f} | {_ratio(s, 'torch')} | "
                     f"{row['loss_differences']['torch']:.1e} |")
        lines.append(line)
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="alternating rounds (default 9)")
    parser.add_argument("--steps", type=int, default=200, help="steps per side per round (default 200)")
    args = parser.parse_args(argv)
    from dispatcher._core import HAS_EXTENSION

    rows = run(args.rounds, args.steps)
    print(f"engine: {'compiled' if HAS_EXTENSION else 'pure-Python'}; Python {sys.version.split()[0]}; "
          f"medians of {args.rounds} rounds of {args.steps} steps; ratios: median of per-round ratios (range)")
    print("torch column: torch eager, C++ kernels and autograd engine on CPU tensors, 1 intra-op thread; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
