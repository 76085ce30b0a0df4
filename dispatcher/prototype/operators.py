"""The ``proto`` operators: schemas only, defined in one DEF library.

Kernels live elsewhere, one module per dispatch key (kernels_cpu, meta,
composite, factories, inplace_or_view, autograd, toy_device, vmap).
``OP["add.Tensor"]`` is the operator's OperatorHandle, the same object as
``dispatcher.ops.proto.add.Tensor``.
"""
from __future__ import annotations

from dispatcher import Library, OperatorHandle, ops

__all__ = ["OP", "SCHEMAS"]

SCHEMAS = (
    # pointwise
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "mul.Scalar(Tensor self, Scalar other) -> Tensor",
    "div.Tensor(Tensor self, Tensor other) -> Tensor",
    "div.Scalar(Tensor self, Scalar other) -> Tensor",
    "neg(Tensor self) -> Tensor",
    "exp(Tensor self) -> Tensor",
    "log(Tensor self) -> Tensor",
    "gt.Scalar(Tensor self, Scalar other) -> Tensor",
    "relu(Tensor self) -> Tensor",
    # reductions and products
    "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "matmul(Tensor self, Tensor other) -> Tensor",
    # views (the result shares the input's memory: "Tensor(a) -> Tensor(a)")
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "t(Tensor(a) self) -> Tensor(a)",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "expand(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    "stack(Tensor[] tensors, int dim=0) -> Tensor",
    # in-place ("Tensor(a!)": written to and returned), copies, conversion
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)",
    "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)",
    "clone(Tensor self) -> Tensor",
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "to(Tensor(a) self, *, ScalarType? dtype=None, Device? device=None, bool copy=False) -> Tensor(a)",
    # factories: no tensor arguments, so BackendSelect picks the backend
    "empty(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "zeros(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "ones(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "randn(SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor",
)

_library = Library("proto", "DEF")
for _schema in SCHEMAS:
    _library.define(_schema)


def _handle(name: str) -> OperatorHandle:
    base, _, overload = name.partition(".")
    return getattr(getattr(ops.proto, base), overload or "default")


OP: dict[str, OperatorHandle] = {
    name: _handle(name) for name in (schema.partition("(")[0] for schema in SCHEMAS)
}
