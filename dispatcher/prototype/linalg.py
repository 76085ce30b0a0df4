"""``torch.linalg.lstsq`` (``aten::linalg_lstsq``), numpy's least squares, as torch 2.13 has it.

CompositeExplicitAutograd, as torch's; batched over leading dimensions; the
drivers and what each computes are torch's (CPU): ``gelsy`` (the default)
gives the solution and the rank, ``gelsd`` and ``gelss`` the singular
values too, and every driver but ``gelsy`` the residuals when the matrices
are tall and of full rank; what a driver does not compute is an empty
tensor.  Its derivative is not written here: a call on tensors that
require grad raises NotImplementedError saying so.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from dispatcher import Library

from .dtypes import DType
from .index_put import no_derivative_autograd_kernel
from .operators import aten
from .tensor import Tensor

__all__ = ["linalg_lstsq", "lstsq"]

_explicit = Library("aten", "IMPL", "CompositeExplicitAutograd")
_autograd = Library("aten", "IMPL", "Autograd")

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


class linalg_lstsq(NamedTuple):  # noqa: N801  (torch.return_types.linalg_lstsq: its name is what code sees)
    """torch.return_types.linalg_lstsq."""

    solution: Any
    residuals: Any
    rank: Any
    singular_values: Any


def _check(self: Tensor, b: Tensor, driver: Optional[str]) -> None:
    if self.dtype != b.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
            f"{self.dtype.scalar_type_name} and other's dtype {b.dtype.scalar_type_name}"
        )
    if self.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = b.dim() == self.dim() - 1
    if b.shape[-1 if vector else -2] != self.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not self.dtype.is_floating_point or self.dtype == DType.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")


def _linalg_lstsq(self: Tensor, b: Tensor, rcond: Optional[float] = None, *,
                  driver: Optional[str] = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    _check(self, b, driver)
    driver = driver or "gelsy"
    a, rhs = self.numpy(), b.numpy()
    vector = b.dim() == self.dim() - 1
    if vector:
        rhs = rhs[..., None]
    m, n = a.shape[-2:]
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a, rhs = np.broadcast_to(a, batch + (m, n)), np.broadcast_to(rhs, batch + rhs.shape[-2:])
    dtype = a.dtype
    solutions, residuals, ranks, singular = [], [], [], []
    for index in np.ndindex(*batch):
        x, res, rank, sv = np.linalg.lstsq(a[index].astype(np.float64), rhs[index].astype(np.float64),
                                           rcond=rcond)
        solutions.append(x)
        residuals.append(res)
        ranks.append(rank)
        singular.append(sv)
    solution = np.stack(solutions).reshape(batch + (n, rhs.shape[-1]))
    if vector:
        solution = solution[..., 0]
    full_rank = all(r == min(m, n) for r in ranks)
    empty = np.empty((0,), dtype=dtype)
    out_residuals = (np.stack(residuals).reshape(batch + (rhs.shape[-1],)) if driver != "gelsy" and m > n and full_rank
                     else empty)
    out_rank = np.asarray(ranks, dtype=np.int64).reshape(batch) if driver != "gels" else np.empty((0,), np.int64)
    out_singular = (np.stack(singular).reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") else empty)
    # (np.array, not np.ascontiguousarray: that makes a 0-d rank 1-d.)
    return (Tensor.from_numpy(np.array(solution, dtype=dtype, order="C")),
            Tensor.from_numpy(np.array(out_residuals, dtype=dtype, order="C")),
            Tensor.from_numpy(np.array(out_rank, order="C")),
            Tensor.from_numpy(np.array(out_singular, dtype=dtype, order="C")))


_explicit.impl("linalg_lstsq", _linalg_lstsq)
_autograd.impl("linalg_lstsq", no_derivative_autograd_kernel("linalg_lstsq"), with_keyset=True)


def lstsq(A: Any, B: Any, rcond: Optional[float] = None, *, driver: Optional[str] = None) -> linalg_lstsq:
    """torch.linalg.lstsq: the least-squares solution of ``A X = B`` and what the driver computes."""
    return linalg_lstsq(*aten.linalg_lstsq.default(A, B, rcond, driver=driver))
