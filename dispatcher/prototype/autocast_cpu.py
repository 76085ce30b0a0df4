"""torch's CPU autocast of aten operators: kernels at AutocastCPU, by torch 2.13's lists.

Inside ``autocast("cpu")`` (dispatcher.autocast_rules.autocast) every call
reaches AutocastCPU.  As torch's autocast_mode.cpp, an operator of

* ``LOWER_PRECISION_FP`` (matrix products, convolutions, ...) has its
  eligible tensor arguments cast to the autocast dtype (the region's
  ``dtype``, by default bfloat16);
* ``FP32`` (losses, reductions, linear algebra, FFTs, ...) has them cast to
  float32;
* ``PROMOTE`` (cat, stack, index_copy) has them cast to the widest floating
  dtype among them, the autocast dtype at least;

then runs with AutocastCPU excluded.  Eligible, as torch's ``is_eligible``: a
CPU tensor of a floating dtype other than float64 (lists of tensors element
by element).  Other operators pass through (the standard fallthrough).

What differs from torch: torch warns and turns autocast off for a dtype
other than bfloat16 or float16; here such a dtype is cast to as asked.
"""
from __future__ import annotations

from typing import Any, Callable

from dispatcher import DispatchKey, DispatchKeySet, ExcludeDispatchKeyGuard, Library
from dispatcher.autocast_rules import autocast_dtype

from .dtypes import DType, promote_types
from .operators import overload
from .tensor import Tensor

__all__ = ["FP32", "LOWER_PRECISION_FP", "PROMOTE"]

LOWER_PRECISION_FP = (
    "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding", "bmm", "mm", "linalg_vecdot",
    "baddbmm", "addmm", "addbmm", "linear", "_convolution.deprecated", "matmul", "conv_tbc", "mkldnn_rnn_layer",
    "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention", "_addmm_activation",
)
PROMOTE = ("stack", "cat", "index_copy")
FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "prod.dim_int", "quantile",
    "quantile.scalar", "nanquantile", "nanquantile.scalar", "stft", "stft.center", "cdist", "grid_sampler_2d",
    "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d", "max_unpool2d",
    "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss.IntList",
    "ctc_loss.Tensor", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
    "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn",
    "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_cond.p_str", "linalg_matrix_rank",
    "linalg_matrix_rank.tol_tensor", "linalg_matrix_rank.atol_rtol_tensor", "linalg_matrix_rank.atol_rtol_float",
    "linalg_solve", "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine",
    "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d",
    "adaptive_max_pool3d", "multilabel_margin_loss_forward", "linalg_qr", "linalg_cholesky_ex", "linalg_svd",
    "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex",
)

_AUTOCAST_CPU = DispatchKeySet(DispatchKey.AutocastCPU)
_library = Library("aten", "IMPL", "AutocastCPU")


def lower_precision() -> DType:
    """The dtype of this thread's CPU autocast region (torch.get_autocast_dtype("cpu"))."""
    dtype = autocast_dtype("cpu")
    return DType.bfloat16 if dtype is None else dtype


def _eligible(value: Any) -> bool:
    return (isinstance(value, Tensor) and value.device.type == "cpu" and value.dtype.is_floating_point
            and value.dtype is not DType.float64)


def _cast(value: Any, dtype: DType) -> Any:
    """``value`` with each eligible tensor (in lists and tuples too) cast to ``dtype``."""
    if isinstance(value, Tensor):
        return value.to(dtype) if _eligible(value) and value.dtype is not dtype else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _widest(values: Any, dtype: DType) -> DType:
    """torch's autocast promote_type: the widest floating dtype among the tensors, from ``dtype`` up."""
    for value in values:
        if isinstance(value, (list, tuple)):
            dtype = _widest(value, dtype)
        elif isinstance(value, Tensor) and value.dtype.is_floating_point:
            dtype = promote_types(dtype, value.dtype)
    return dtype


def _kernel(name: str, target: Callable[[tuple, dict], DType]) -> Callable[..., Any]:
    # The operator is looked up at the first call: defining 127 catalog
    # operators at import would cost the prototype's import most of its time.
    found: list[Any] = []

    def autocast_kernel(*args: Any, **kwargs: Any) -> Any:
        if not found:
            found.append(overload(name))
        dtype = target(args, kwargs)
        args = tuple(_cast(a, dtype) for a in args)
        kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        with ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            return found[0](*args, **kwargs)

    return autocast_kernel


def _to_lower(args: tuple, kwargs: dict) -> DType:
    return lower_precision()


def _to_float32(args: tuple, kwargs: dict) -> DType:
    return DType.float32


def _to_widest(args: tuple, kwargs: dict) -> DType:
    return _widest((*args, *kwargs.values()), lower_precision())


for _names, _target in ((LOWER_PRECISION_FP, _to_lower), (FP32, _to_float32), (PROMOTE, _to_widest)):
    for _name in _names:
        _library.impl(_name, _kernel(_name, _target))
