"""2-d convolution: aten::conv2d and aten::convolution, computed with numpy.

As in torch 2.13: ``conv2d`` is CompositeImplicitAutograd (it calls
``convolution`` with ``transposed=False``, and adds and takes away the batch
dimension of an unbatched 3-d input); ``convolution`` has kernels for every
backend (here CPU and Meta) and a derivative.  The arithmetic is a
cross-correlation over windows of the zero-padded input (numpy's
``as_strided`` gives them without copying), per group, with stride and
dilation; it runs in float64 and is rounded once to the result's dtype, as
the prototype's other products are.

What differs from torch: only the 2-d, non-transposed convolution exists
(a 3-d or 5-d input, or ``transposed=True``, is a NotImplementedError that
says so); the derivative is computed with numpy (for CPU tensors), so a
second derivative through it (``create_graph=True``) is not recorded.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from dispatcher import Library

from .autograd import Context, differentiable
from .meta import meta_tensor
from .operators import aten
from .tensor import Tensor, cpu_tensor

__all__: list[str] = []

_implicit = Library("aten", "IMPL", "CompositeImplicitAutograd")
_cpu = Library("aten", "IMPL", "CPU")
_meta = Library("aten", "IMPL", "Meta")


def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Sequence[int] = (1, 1),
           padding: Sequence[int] = (0, 0), dilation: Sequence[int] = (1, 1), groups: int = 1) -> Tensor:
    """torch's conv2d: convolution of a batched (4-d) or unbatched (3-d) input."""
    unbatched = input.dim() == 3
    if unbatched:
        input = aten.unsqueeze.default(input, 0)
    out = aten.convolution.default(input, weight, bias, list(stride), list(padding), list(dilation), False, [0, 0],
                                   groups)
    return aten.squeeze.dim(out, 0) if unbatched else out


class _Geometry:
    """A 2-d convolution's sizes, checked as torch checks them."""

    def __init__(self, input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Sequence[int],
                 padding: Sequence[int], dilation: Sequence[int], transposed: bool, groups: int) -> None:
        if transposed:
            raise NotImplementedError("convolution(transposed=True): the prototype's convolution is not transposed")
        if input.dim() != 4 or weight.dim() != 4:
            raise NotImplementedError(
                f"convolution of a {input.dim()}-d input with a {weight.dim()}-d weight: the prototype's "
                "convolution is 2-d (a 4-d input and weight)")
        if input.dtype != weight.dtype:
            raise RuntimeError(f"Input type ({_type_name(input)}) and weight type ({_type_name(weight)}) should be the "
                               "same or input should be a MKLDNN tensor and weight is a dense tensor")
        if bias is not None and bias.dtype != input.dtype:
            raise RuntimeError(f"Input type ({_type_name(input)}) and bias type ({_type_name(bias)}) should be the "
                               "same or input should be a MKLDNN tensor and bias is a dense tensor")
        self.stride, self.padding, self.dilation = _pair(stride, "stride"), _pair(padding, "padding"), _pair(
            dilation, "dilation")
        if groups <= 0:
            raise RuntimeError("non-positive groups is not supported")
        if any(s <= 0 for s in self.stride):
            raise RuntimeError("non-positive stride is not supported")
        if any(p < 0 for p in self.padding):
            raise RuntimeError("negative padding is not supported")
        if any(d <= 0 for d in self.dilation):
            raise RuntimeError("dilation should be greater than zero")
        n, channels, height, width = input.shape
        out_channels, group_channels, kh, kw = weight.shape
        if out_channels % groups:
            # (torch's message prints the size in two brackets)
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{list(weight.shape)}] instead")
        if channels != group_channels * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                               f"input{list(input.shape)} to have {group_channels * groups} channels, but got "
                               f"{channels} channels instead")
        if bias is not None and list(bias.shape) != [out_channels]:
            raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                               f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
        padded = (height + 2 * self.padding[0], width + 2 * self.padding[1])
        dilated = ((kh - 1) * self.dilation[0] + 1, (kw - 1) * self.dilation[1] + 1)
        if padded[0] < dilated[0] or padded[1] < dilated[1]:
            raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). Kernel size: "
                               f"({dilated[0]} x {dilated[1]}). Kernel size can't be greater than actual input size")
        self.groups = groups
        self.kernel = (kh, kw)
        self.out = ((padded[0] - dilated[0]) // self.stride[0] + 1, (padded[1] - dilated[1]) // self.stride[1] + 1)
        self.shape = (n, out_channels, *self.out)

    def windows(self, padded: np.ndarray) -> np.ndarray:
        """The padded input's windows: (N, C, OH, OW, KH, KW), a view."""
        sn, sc, sh, sw = padded.strides
        n, c = padded.shape[:2]
        return np.lib.stride_tricks.as_strided(
            padded, (n, c, *self.out, *self.kernel),
            (sn, sc, sh * self.stride[0], sw * self.stride[1], sh * self.dilation[0], sw * self.dilation[1]),
            writeable=False)

    def pad(self, x: np.ndarray) -> np.ndarray:
        (ph, pw) = self.padding
        return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))


def _type_name(t: Tensor) -> str:
    """torch's legacy tensor type name of a CPU tensor: torch.FloatTensor, torch.DoubleTensor, ..."""
    return f"torch.{t.dtype.scalar_type_name}Tensor"


def _pair(values: Sequence[int], name: str) -> tuple[int, int]:
    values = list(values)
    if len(values) == 1:
        values = values * 2
    if len(values) != 2:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values to match the "
                           f"convolution dimensions, but got {name}={values}")
    return int(values[0]), int(values[1])


def _grouped(geometry: _Geometry, x: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The windows of ``x`` as (N, G, C/G, OH, OW, KH, KW) and the weight as (G, O/G, C/G, KH, KW)."""
    g = geometry.groups
    cols = geometry.windows(geometry.pad(x))
    n, c = cols.shape[:2]
    return cols.reshape(n, g, c // g, *cols.shape[2:]), weight.reshape(g, weight.shape[0] // g, *weight.shape[1:])


def convolution(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool, output_padding: Sequence[int],
                groups: int) -> Tensor:
    geometry = _Geometry(input, weight, bias, stride, padding, dilation, transposed, groups)
    exact = np.float64 if not input.dtype.is_complex else np.complex128
    cols, w = _grouped(geometry, input._data.astype(exact), weight._data.astype(exact))
    out = np.einsum("ngcijkl,gockl->ngoij", cols, w, optimize=True)
    out = out.reshape(geometry.shape)
    if bias is not None:
        out = out + bias._data.astype(exact)[None, :, None, None]
    return cpu_tensor(np.ascontiguousarray(out, dtype=input._data.dtype), input.dtype)


def convolution_meta(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Sequence[int],
                     padding: Sequence[int], dilation: Sequence[int], transposed: bool, output_padding: Sequence[int],
                     groups: int) -> Tensor:
    return meta_tensor(_Geometry(input, weight, bias, stride, padding, dilation, transposed, groups).shape, input.dtype)


@differentiable("convolution", saves=("input", "weight"))
def _convolution_derivative(ctx: Context, grad: Tensor) -> tuple[Any, Any, Any]:
    """The gradients of input, weight and bias (torch's convolution_backward), in numpy."""
    input, weight = ctx.input, ctx.weight
    geometry = _Geometry(input, weight, None, ctx.stride, ctx.padding, ctx.dilation, ctx.transposed, ctx.groups)
    x, w, gy = input._data.astype(np.float64), weight._data.astype(np.float64), grad._data.astype(np.float64)
    g = geometry.groups
    n, out_channels = gy.shape[:2]
    gy = gy.reshape(n, g, out_channels // g, *gy.shape[2:])
    cols, wg = _grouped(geometry, x, w)
    wanted = ctx.needs_grad
    dtype = input._data.dtype

    def as_tensor(values: np.ndarray) -> Tensor:
        return cpu_tensor(np.ascontiguousarray(values, dtype=dtype), input.dtype)

    grad_input = grad_weight = grad_bias = None
    if wanted["input"]:
        grad_cols = np.einsum("ngoij,gockl->ngcijkl", gy, wg, optimize=True)
        grad_cols = grad_cols.reshape(n, -1, *grad_cols.shape[3:])
        padded = np.zeros(geometry.pad(x).shape)
        (sh, sw), (dh, dw), (oh, ow) = geometry.stride, geometry.dilation, geometry.out
        for kh in range(geometry.kernel[0]):
            for kw in range(geometry.kernel[1]):
                padded[:, :, kh * dh:kh * dh + sh * (oh - 1) + 1:sh, kw * dw:kw * dw + sw * (ow - 1) + 1:sw] += \
                    grad_cols[..., kh, kw]
        (ph, pw) = geometry.padding
        grad_input = as_tensor(padded[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]])
    if wanted["weight"]:
        grad_weight = as_tensor(np.einsum("ngoij,ngcijkl->gockl", gy, cols, optimize=True).reshape(w.shape))
    if wanted.get("bias"):
        grad_bias = as_tensor(gy.sum(axis=(0, 3, 4)).reshape(out_channels))
    return grad_input, grad_weight, grad_bias


_implicit.impl("conv2d", conv2d)
_cpu.impl("convolution", convolution)
_meta.impl("convolution", convolution_meta)
