"""The programs whose traces tests/golden/prototype_golden.json records, and the aten operators the prototype implements.

Written once, for either library: each program takes ``lib``, the module
with the factories, dtypes and vmap (``torch``, or ``dispatcher.prototype``),
and the two library's tensors have the same methods, so
generate_prototype_golden.py traces the programs with torch's ``make_fx`` and
tests/test_prototype_tracing.py with the prototype's ``trace``, and the two
compare the operators recorded.  No imports of either library here.
"""
from typing import Any, Callable, NamedTuple

# The aten operators dispatcher.prototype registers kernels for: the golden
# script records, for each, the keys torch 2.13 has kernels at, and
# tests/test_prototype_tensor.py checks the prototype's against them.
OPERATORS = (
    # pointwise
    "add.Tensor", "sub.Tensor", "rsub.Scalar", "mul.Tensor", "mul.Scalar", "div.Tensor", "div.Scalar", "neg", "exp", "log", "reciprocal",
    "relu", "threshold_backward", "gt.Scalar", "sin", "cos", "ne.Scalar", "ne.Tensor", "any", "pow.Tensor_Scalar",
    "eq.Scalar", "eq.Tensor", "all", "conv2d", "convolution", "fft_fft2", "_fft_c2c",
    "abs", "abs.out", "sgn", "_foobar", "_local_scalar_dense",
    # reductions and products
    "sum", "sum.dim_IntList", "mean", "matmul", "mm", "bmm", "mv", "addmv", "dot",
    # views, and shape functions that are not
    "permute", "t", "transpose.int", "view", "reshape", "_unsafe_view", "expand", "select.int", "diagonal", "unsqueeze",
    "squeeze.dim", "squeeze_.dim", "select_backward", "stack", "movedim.int", "movedim.intlist",
    # in-place, copies, conversions
    "add_.Tensor", "fill_.Scalar", "normal_", "copy_", "set_.source_Tensor", "clone", "_to_copy", "to.dtype", "to.device",
    "to.dtype_layout",
    # factories
    "empty.memory_format", "zeros", "ones", "full", "randn", "randn.generator",
    "empty_like", "zeros_like", "ones_like", "full_like", "new_empty", "new_empty_strided", "new_zeros", "new_ones",
    "new_full", "detach", "lift_fresh",
    # strided views, and the metadata queries (python_metadata.py); torch's JIT-only
    # ones (sym_size, stride, ..., no c10 operator in torch) are recorded as None
    "as_strided", "diagonal", "contiguous", "type_as", "dim", "numel", "sym_numel", "sym_size", "sym_size.int",
    "size", "size.int", "sym_stride", "sym_stride.int", "stride", "stride.int", "sym_storage_offset",
    "storage_offset", "is_contiguous", "is_contiguous.memory_format", "is_strides_like_format",
    "is_non_overlapping_and_dense", "set_.source_Storage", "set_.source_Storage_storage_offset",
    # indexing, and what PyTorch's test_custom_ops.py runs
    "slice.Tensor", "slice_backward", "sin_", "pow.Tensor_Scalar", "view_as",
    # random factories (random_factories.py)
    "rand", "rand.generator", "uniform_", "randperm", "randperm.generator", "randperm.out", "randperm.generator_out",
    # indexing (indexing.py)
    "nonzero", "index_put_", "_index_put_impl_",
    # a subclass's legacy constructor (alias_op.py)
    "alias",
    # ZeroTensors (zero_tensors.py)
    "_efficientzerotensor", "_is_zerotensor",
    # linalg.lstsq (linalg.py)
    "linalg_lstsq",
    # out= variants (out_variants.py)
    "add.out",
    # negative and conjugate views (math_bits.py)
    "_neg_view", "is_neg", "resolve_neg", "_conj", "conj", "is_conj", "resolve_conj", "_conj_physical",
    "conj_physical",
    # issue 23's test-file gaps: ranges.py, joining.py, cumulative.py, dtype_views.py, advanced_indexing.py, acos/rsqrt
    "arange", "arange.start", "arange.start_step", "arange.start_out", "cat", "split.Tensor", "cumprod",
    "cumprod_backward", "view.dtype", "index.Tensor", "acos", "rsqrt", "add.Scalar",
    # in-place arithmetic (inplace_arithmetic.py)
    "sub_.Tensor", "mul_.Tensor", "div_.Tensor",
)


class Program(NamedTuple):
    fn: Callable[..., Any]
    inputs: tuple


def mlp(lib: Any, sizes: tuple[int, ...]) -> Callable[[Any], Any]:
    """Linear layers with relu between them, weights and biases of ones (constants of the trace)."""
    layers = [(lib.ones(fan_in, fan_out) * 0.1, lib.ones(fan_out)) for fan_in, fan_out in zip(sizes, sizes[1:])]

    def forward(x: Any) -> Any:
        for i, (weight, bias) in enumerate(layers):
            x = x @ weight + bias
            if i < len(layers) - 1:
                x = x.relu()
        return x

    return forward


def programs(lib: Any) -> dict[str, Program]:
    """name -> a program and its inputs."""
    w = lib.ones(3, 2)
    grad_w = lib.ones(3, requires_grad=True)
    grad_m = lib.ones(2, 3, requires_grad=True)

    def layer_and_factory(x: Any, b: Any) -> Any:
        h = (x @ w).add(b, alpha=2)
        return h.relu().sum(), lib.zeros(2, dtype=lib.float64)

    def factories(x: Any) -> Any:
        return lib.zeros(2), lib.ones(2), lib.full([2], 3.0), lib.empty(2), lib.randn(2)

    def shapes(x: Any) -> Any:
        return x.t(), x.transpose(0, 1), x.T, x.permute(1, 0), x.view(-1), x.expand(2, 2, 3), x.select(0, 1)

    return {
        "layer_and_factory": Program(layer_and_factory, (lib.ones(4, 3), lib.ones(2))),
        "scalar_operand": Program(lambda x: (x * 2).exp(), (lib.ones(2),)),
        "composites": Program(lambda x: x.relu().mean().to(lib.float64), (lib.ones(3),)),
        "in_place": Program(lambda x: x.clone().add_(x), (lib.ones(2),)),
        "copy": Program(lambda x: x.clone().copy_(x * 3), (lib.ones(2),)),
        "mlp": Program(mlp(lib, (3, 5, 2)), (lib.ones(4, 3),)),
        "autograd_runs_above": Program(lambda x: (x * grad_w).sum(), (lib.ones(3),)),
        "vmap": Program(lib.vmap(lambda x: x.exp().sum()), (lib.ones(4, 3),)),
        "vmap.matmul": Program(lib.vmap(lambda x: x @ w), (lib.ones(4, 3),)),
        "rsub": Program(lambda x: 1 - x, (lib.ones(2),)),
        "rdiv": Program(lambda x: 1 / x, (lib.ones(2),)),
        "arithmetic": Program(lambda x: -x / x - x + 2 * x, (lib.ones(2),)),
        "gt": Program(lambda x: x.gt(0), (lib.ones(2),)),
        "sum.dims": Program(lambda x: (x.sum(1), x.sum([0], keepdim=True)), (lib.ones(2, 3),)),
        "matmul.1d_1d": Program(lambda a, b: a @ b, (lib.ones(3), lib.ones(3))),
        "matmul.2d_1d": Program(lambda a, b: a @ b, (lib.ones(2, 3), lib.ones(3))),
        "matmul.1d_2d": Program(lambda a, b: a @ b, (lib.ones(3), lib.ones(3, 2))),
        "matmul.3d_2d": Program(lambda a, b: a @ b, (lib.ones(2, 3, 4), lib.ones(4, 2))),
        "matmul.2d_3d": Program(lambda a, b: a @ b, (lib.ones(2, 3), lib.ones(4, 3, 5))),
        "matmul.4d_3d": Program(lambda a, b: a @ b, (lib.ones(2, 1, 3, 4), lib.ones(3, 4, 2))),
        # Under a dispatch mode torch squeezes a batch of one that broadcasts (isTensorSubclassLike).
        "matmul.3d_3d_batch_of_one": Program(lambda a, b: a @ b, (lib.ones(1, 3, 4), lib.ones(2, 4, 2))),
        "matmul.3d_2d_strided": Program(lambda a: a.transpose(0, 1) @ w, (lib.ones(4, 2, 3),)),
        "matmul.2d_3d_requires_grad": Program(lambda b: grad_m @ b, (lib.ones(4, 3, 5),)),
        "movedim.int": Program(lambda x: x.movedim(0, -1), (lib.ones(2, 3, 4),)),
        "movedim.intlist": Program(lambda x: x.movedim((0, 2), (2, 0)), (lib.ones(2, 3, 4),)),
        "reshape.contiguous": Program(lambda x: x.reshape(6), (lib.ones(2, 3),)),
        "reshape.strided_view": Program(lambda x: x.select(2, 0).reshape(-1), (lib.ones(2, 3, 2),)),
        "reshape.copy": Program(lambda x: x.t().reshape(6), (lib.ones(2, 3),)),
        "shapes": Program(shapes, (lib.ones(2, 3),)),
        "stack": Program(lambda x: lib.stack([x, x * 2], 1), (lib.ones(2),)),
        "factories": Program(factories, (lib.ones(2),)),
        "to.nothing_to_do": Program(lambda x: x.to(lib.float32), (lib.ones(2),)),
    }
