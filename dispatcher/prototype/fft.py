"""The 2-d discrete Fourier transform: aten::fft_fft2 and aten::_fft_c2c, computed with numpy.

As in torch 2.13: ``fft_fft2`` is CompositeImplicitAutograd: a real input is
converted to the complex dtype (``_to_copy``), then transformed by
``_fft_c2c`` over ``dim``, which has CPU and Meta kernels and a derivative
(the transform the other way, with the same normalization).  The
normalization code is torch's: 0 none, 1 by 1/sqrt(n), 2 by 1/n; ``norm``
"backward" (the default) scales nothing forward, "ortho" both ways by
1/sqrt(n), "forward" the forward transform by 1/n.

What differs from torch: numpy's FFT computes in complex128 and the result
is rounded once to complex64 (torch's pocketfft computes in complex64: its
last bits may differ); ``s`` (a size to pad or trim to) is not supported
(a NotImplementedError says so); complex64 is the only complex dtype, so a
float64 input has no transform here (torch's is complex128).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from dispatcher import Library

from . import shapes
from .autograd import Context, differentiable
from .dtypes import DType, _to_complex
from .meta import meta_tensor
from .operators import aten
from .tensor import Tensor, cpu_tensor

__all__: list[str] = []

_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")
_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")

# torch's fft_norm_mode for a forward transform: the norm argument's code.
_FORWARD_NORM = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def fft_fft2(self: Tensor, s: Optional[Sequence[int]] = None, dim: Sequence[int] = (-2, -1),
             norm: Optional[str] = None) -> Tensor:
    if s is not None:
        raise NotImplementedError("fft_fft2(s=...): the prototype's FFT transforms a tensor at its own size "
                                  "(pass s=None)")
    if norm not in _FORWARD_NORM:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    dims = [shapes.wrap_dim(d, self.dim()) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if not self.dtype.is_complex:
        # An integer input is transformed as the default float's complex type.
        complex_dtype = _to_complex(self.dtype if self.dtype.is_floating_point else DType.float32)
        self = aten._to_copy.default(self, dtype=complex_dtype)
    return aten._fft_c2c.default(self, dims, _FORWARD_NORM[norm], True)


def _scale(normalization: int, sizes: Sequence[int]) -> float:
    n = float(np.prod(sizes)) if sizes else 1.0
    if normalization == 0:
        return 1.0
    if normalization == 1:
        return 1.0 / np.sqrt(n)
    if normalization == 2:
        return 1.0 / n
    raise RuntimeError(f"_fft_c2c: normalization {normalization} is not one of 0 (none), 1 (by_root_n), 2 (by_n)")


def _check(self: Tensor, dim: Sequence[int]) -> list[int]:
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2c expects a complex input tensor, but got {self.dtype.scalar_type_name}")
    return [shapes.wrap_dim(d, self.dim()) for d in dim]


def fft_c2c(self: Tensor, dim: Sequence[int], normalization: int, forward: bool) -> Tensor:
    axes = _check(self, dim)
    data = self._data.astype(np.complex128)
    # Neither direction scaled by numpy ("backward" forward, "forward" inverse): _scale does it.
    out = np.fft.fftn(data, axes=axes, norm="backward") if forward else np.fft.ifftn(data, axes=axes, norm="forward")
    out = out * _scale(normalization, [self.shape[a] for a in axes])
    return cpu_tensor(np.ascontiguousarray(out, dtype=self._data.dtype), self.dtype)


def fft_c2c_meta(self: Tensor, dim: Sequence[int], normalization: int, forward: bool) -> Tensor:
    _check(self, dim)
    return meta_tensor(self.shape, self.dtype)


@differentiable("_fft_c2c")
def _fft_c2c_derivative(ctx: Context, grad: Tensor) -> tuple[Tensor]:
    # torch's derivatives.yaml: _fft_c2c_symint(grad, dim, normalization, !forward)
    return (aten._fft_c2c.default(grad, list(ctx.dim), ctx.normalization, not ctx.forward),)


_implicit.impl("fft_fft2", fft_fft2)
_cpu.impl("_fft_c2c", fft_c2c)
_meta.impl("_fft_c2c", fft_c2c_meta)
