"""The cases generate_tensor_metadata_golden.py records with torch and
tests/test_prototype_metadata.py runs on the prototype."""

# (sizes, strides) of tensors whose layout predicates are compared.
LAYOUTS = [
    ([2, 3], [3, 1]), ([2, 3], [1, 2]), ([3], [1]), ([3], [2]), ([1], [5]), ([0, 3], [7, 9]), ([], []),
    ([2, 1, 3], [3, 7, 1]), ([2, 3], [0, 1]), ([2, 3], [6, 2]), ([2, 2], [1, 1]),
    ([2, 3, 4, 5], [60, 20, 5, 1]), ([2, 3, 4, 5], [60, 1, 15, 3]), ([2, 1, 4, 5], [20, 20, 5, 1]),
    ([2, 1, 4, 5], [20, 1, 5, 1]), ([1, 3, 1, 1], [3, 1, 1, 1]), ([4, 1, 1, 1], [1, 1, 1, 1]),
    ([2, 3, 4, 5], [60, 0, 15, 3]), ([2, 3, 1, 5], [15, 1, 15, 3]),
    ([2, 3, 4, 5, 6], [360, 120, 30, 6, 1]), ([2, 3, 4, 5, 6], [360, 1, 90, 18, 3]),
]

# Views of ``base = arange(24.).reshape(4, 6)``, as Python expressions (the
# golden has their gradients too: of ``(view * weights).sum()`` for ``base``,
# weights 1, 2, ... in the view's shape).
VIEWS = [
    "base", "base.t()", "base.t().diagonal(offset=2)", "base.diagonal()", "base.diagonal(offset=-1)",
    "base.diagonal(1, 1, 0)", "torch.as_strided(base, (2, 2), (1, 2))", "torch.as_strided(base, (3,), (7,), 2)",
    "torch.as_strided(base.t(), (2, 3), (1, 4))", "torch.as_strided(base.select(0, 1), (2,), (2,))",
    "torch.as_strided(base.select(0, 1), (3, 2), (0, 1))", "torch.as_strided(base.select(0, 1).expand(3, 6), (2, 2), (1, 2))",
    "base.expand(2, 4, 6).diagonal(0, 0, 1)", "torch.as_strided(base.t(), (5,), (5,), 1)",
]

# The metadata policies of _make_wrapper_subclass / _make_subclass.
POLICIES = {
    "sizes": {"dispatch_sizes_strides_policy": "sizes"},
    "strides": {"dispatch_sizes_strides_policy": "strides"},
    "device": {"dispatch_device": True},
    "layout": {"dispatch_layout": True},
}

# The queries asked of each (as ``e.<query>``).
QUERIES = [
    "dim()", "ndim", "size()", "size(1)", "shape", "stride()", "stride(0)", "numel()",
    "is_contiguous()", "is_contiguous(memory_format=torch.contiguous_format)",
    "is_contiguous(memory_format=torch.channels_last)", "is_contiguous(memory_format=torch.preserve_format)",
    "is_contiguous(memory_format=torch.channels_last_3d)", "storage_offset()", "device", "layout", "data_ptr()",
]
