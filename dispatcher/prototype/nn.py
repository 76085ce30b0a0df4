"""Just enough of a neural-network library to train a small MLP: layers, loss, SGD."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .autograd import no_grad
from .dtypes import DType, float32
from .factories import randn, zeros
from .tensor import Tensor

__all__ = ["MLP", "mse_loss", "sgd_step"]


class MLP:
    """Linear layers with ReLU between them; ``MLP((4, 16, 1))`` maps 4 features to 1 output.

    Works on one example (shape ``[features]``) or a batch (``[n, features]``).
    """

    def __init__(self, sizes: Sequence[int], *, device: str = "cpu", dtype: DType = float32,
                 generator: Optional[np.random.Generator] = None) -> None:
        self.layers: list[tuple[Tensor, Tensor]] = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):
            with no_grad():  # the scaling is initialisation, not part of the graph
                weight = randn(fan_in, fan_out, generator=generator, dtype=dtype, device=device)
                weight = weight * (1 / math.sqrt(fan_in))
            bias = zeros(fan_out, dtype=dtype, device=device, requires_grad=True)
            self.layers.append((weight.requires_grad_(), bias))

    def parameters(self) -> list[Tensor]:
        return [p for layer in self.layers for p in layer]

    def __call__(self, x: Tensor) -> Tensor:
        for i, (weight, bias) in enumerate(self.layers):
            x = x @ weight + bias
            if i < len(self.layers) - 1:
                x = x.relu()
        return x


def mse_loss(prediction: Tensor, target: Tensor) -> Tensor:
    diff = prediction - target
    return (diff * diff).mean()


def sgd_step(parameters: Sequence[Tensor], lr: float) -> None:
    """``p -= lr * p.grad`` in place, outside the graph; then clear the gradients."""
    with no_grad():
        for p in parameters:
            p.add_(p.grad, alpha=-lr)  # type: ignore[arg-type]  # backward() gave every parameter a grad
            p.grad = None
