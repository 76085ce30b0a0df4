"""Calls of the operators dispatcher.prototype implements for issue 23's gaps in
PyTorch's test files (arange, cat, split, cumprod, view(dtype), advanced
indexing, acos and rsqrt, torch.empty's pin_memory, a handler's None), each
written once for either library: ``lib`` is ``torch`` or tests/torch_shim.py's
torch over the prototype.

A case returns what can be compared between the two: values, dtype and shape,
the autograd results (gradients, node names, whether a result is a view), the
calls a dispatch mode sees; a case that raises is recorded as the exception's
type and first line.  generate_prototype_test_file_ops_golden.py records
torch 2.13's answers, tests/test_prototype_test_file_ops.py compares the
prototype's.  No imports of either library here.
"""
import itertools
import warnings
from typing import Any, Callable


def _described(t: Any) -> dict:
    return {"dtype": str(t.dtype), "shape": list(t.shape), "device": str(t.device)}


def _values(t: Any) -> dict:
    seen = _described(t)
    if t.device.type != "meta":
        seen["values"] = t.tolist()
    return seen


def _rounded(t: Any) -> dict:
    return {**_described(t), "values": [round(v, 5) for v in t.reshape(-1).tolist()]}


def _pieces(pieces: Any) -> dict:
    return {"type": type(pieces).__name__, "pieces": [_values(p) for p in pieces]}


def _warned(call: Callable[[], Any]) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return {"result": result, "warned": [str(w.message)[:70] for w in caught]}


def cases(lib: Any) -> dict[str, Callable[[], Any]]:
    aten = lib.ops.aten
    x234 = lambda: lib.arange(24.0).reshape(2, 3, 4)  # noqa: E731
    return {
        # arange: its three overloads, dtypes, checks, meta, out=
        "arange_end": lambda: _values(lib.arange(5)),
        "arange_float_start": lambda: _values(lib.arange(0.5, 3)),
        "arange_step": lambda: _values(lib.arange(0, 5, 2)),
        "arange_negative_step": lambda: _values(lib.arange(5, 0, -2)),
        "arange_float_step": lambda: _rounded(lib.arange(0, 1, 0.3)),
        "arange_float64": lambda: _values(lib.arange(0, 5, dtype=lib.float64)),
        "arange_int_dtype_float_end": lambda: _values(lib.arange(0, 2.5, dtype=lib.int64)),
        "arange_bool_start": lambda: _values(lib.arange(True, 3)),
        "arange_float16": lambda: _values(lib.arange(0, 5, dtype=lib.float16)),
        "arange_empty": lambda: _values(lib.arange(3, 3)),
        "arange_meta": lambda: _values(lib.arange(0, 10, 3, device="meta")),
        "arange_zero_step": lambda: lib.arange(0, 5, 0),
        "arange_wrong_sign": lambda: lib.arange(5, 0, 1),
        "arange_negative_end": lambda: lib.arange(-3),
        "arange_infinite": lambda: lib.arange(0, float("inf")),
        "arange_bool_dtype": lambda: lib.arange(0, 3, dtype=lib.bool),
        "arange_requires_grad_int": lambda: lib.arange(5, requires_grad=True),
        "arange_requires_grad_float": lambda: lib.arange(5.0, requires_grad=True).requires_grad,
        "arange_op_start": lambda: _values(aten.arange.start(0, 3)),
        "arange_op_start_step": lambda: _values(aten.arange.start_step(1, 7, 3, dtype=lib.float64)),
        "arange_out_resizes": lambda: _warned(lambda: _values(aten.arange.start_out(0, 3, 1, out=lib.empty(7)))),
        "arange_out_empty": lambda: _warned(lambda: _values(aten.arange.start_out(0, 3, 1, out=lib.empty(0)))),
        "arange_seen_by_a_mode": lambda: _seen_by_a_mode(lib, lambda: (lib.arange(0, 6), lib.arange(5),
                                                                       lib.arange(0, 5, 2))),
        # torch.empty's keywords
        "empty_keywords_seen_by_a_mode": lambda: _seen_by_a_mode(lib, lambda: lib.empty(
            2, 3, pin_memory=False, dtype=lib.float64, layout=lib.strided, memory_format=lib.contiguous_format)),
        "empty_pin_memory": lambda: lib.empty(2, pin_memory=True),
        "fill_": lambda: _values(lib.ones(3).fill_(2)),
        # cat
        "cat_rows": lambda: _values(aten.cat.default([lib.ones(2, 2), lib.zeros(1, 2)])),
        "cat_columns": lambda: _values(aten.cat.default([lib.ones(2, 2), lib.zeros(2, 1)], -1)),
        "cat_tuple": lambda: _values(aten.cat.default((lib.ones(2), lib.zeros(3)))),
        "cat_promotes": lambda: _values(aten.cat.default([lib.ones(2, dtype=lib.int64), lib.ones(2)])),
        "cat_int_and_bool": lambda: _values(aten.cat.default([lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.bool)])),
        "cat_legacy_empty": lambda: _values(aten.cat.default([lib.ones(2, 2), lib.ones(0)], 1)),
        "cat_all_legacy_empty": lambda: _values(aten.cat.default([lib.ones(0), lib.zeros(0)])),
        "cat_zero_rows": lambda: _values(aten.cat.default([lib.ones(0, 2), lib.zeros(2, 2)])),
        "cat_one": lambda: _values(aten.cat.default([lib.ones(2, 2)])),
        "cat_meta": lambda: _values(aten.cat.default([lib.ones(2, 2, device="meta"), lib.ones(2, 1, device="meta")], -1)),
        "cat_nothing": lambda: aten.cat.default([]),
        "cat_ranks_differ": lambda: aten.cat.default([lib.ones(2, 2), lib.ones(2)]),
        "cat_sizes_differ": lambda: aten.cat.default([lib.ones(2, 2), lib.ones(3, 3)], 1),
        "cat_sizes_differ_dim0": lambda: aten.cat.default([lib.ones(2, 2), lib.ones(1, 3)]),
        "cat_zero_dim": lambda: aten.cat.default([lib.tensor(1.0), lib.tensor(2.0)]),
        "cat_dim_out_of_range": lambda: aten.cat.default([lib.ones(2, 2), lib.ones(2, 2)], 2),
        "cat_devices_differ": lambda: aten.cat.default([lib.ones(2, 2, device="meta"), lib.ones(2, 1)], -1),
        "cat_grad": lambda: _cat_grad(lib),
        "cat_grad_promoted": lambda: _cat_grad_promoted(lib),
        # split
        "split_rows": lambda: _pieces(aten.split.Tensor(lib.arange(10.0).reshape(5, 2), 2)),
        "split_columns": lambda: _pieces(aten.split.Tensor(lib.arange(10.0).reshape(5, 2), 1, 1)),
        "split_larger_than_dim": lambda: _pieces(aten.split.Tensor(lib.arange(10.0).reshape(5, 2), 7)),
        "split_empty_dim_zero_size": lambda: _pieces(aten.split.Tensor(lib.ones(0, 2), 0)),
        "split_meta": lambda: _pieces(aten.split.Tensor(lib.ones(4, device="meta"), 3)),
        "split_packet": lambda: _pieces(aten.split(lib.arange(5), 2)),
        "split_method": lambda: _pieces(lib.arange(5).split(2)),
        "split_zero_size": lambda: aten.split.Tensor(lib.ones(5, 2), 0),
        "split_negative_size": lambda: aten.split.Tensor(lib.ones(5, 2), -1),
        "split_zero_dim": lambda: aten.split.Tensor(lib.tensor(1.0), 1),
        "split_dim_out_of_range": lambda: aten.split.Tensor(lib.ones(5, 2), 2, 2),
        "split_grad": lambda: _split_grad(lib),
        "split_views": lambda: _split_views(lib),
        # cumprod
        "cumprod_rows": lambda: _values(aten.cumprod.default(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), 0)),
        "cumprod_last": lambda: _values(aten.cumprod.default(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), -1)),
        "cumprod_int64": lambda: _values(aten.cumprod.default(lib.tensor([1, 2, 3]), 0)),
        "cumprod_int32": lambda: _values(aten.cumprod.default(lib.tensor([1, 2, 3], dtype=lib.int32), 0)),
        "cumprod_bool": lambda: _values(aten.cumprod.default(lib.tensor([True, False]), 0)),
        "cumprod_dtype": lambda: _values(aten.cumprod.default(lib.tensor([1, 2, 3]), 0, dtype=lib.float64)),
        "cumprod_dtype_int_of_float": lambda: _values(aten.cumprod.default(lib.tensor([1.5, 2.0, 3.0]), 0, dtype=lib.int64)),
        "cumprod_0d": lambda: _values(aten.cumprod.default(lib.tensor(3.0), 0)),
        "cumprod_0d_bad_dim": lambda: aten.cumprod.default(lib.tensor(3.0), 1),
        "cumprod_bad_dim": lambda: aten.cumprod.default(lib.ones(2, 3), 2),
        "cumprod_meta": lambda: _values(aten.cumprod.default(lib.ones(2, 3, device="meta"), 1, dtype=lib.float16)),
        "cumprod_packet_dtype": lambda: _values(aten.cumprod(lib.ones(2, 2), 0, dtype=lib.float64)),
        "cumprod_method": lambda: _values(lib.tensor([2.0, 3.0, 4.0]).cumprod(0)),
        "cumprod_grad": lambda: _cumprod_grad(lib, [2.0, 3.0, 4.0], 0),
        "cumprod_grad_zero": lambda: _cumprod_grad(lib, [2.0, 0.0, 4.0, 5.0], 0),
        "cumprod_grad_zeros": lambda: _cumprod_grad(lib, [0.0, 0.0, 3.0], 0),
        "cumprod_grad_rows": lambda: _cumprod_grad(lib, [[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]], -1),
        "cumprod_grad_columns": lambda: _cumprod_grad(lib, [[1.0, 2.0, 0.5], [3.0, 0.0, 2.0]], 0),
        "cumprod_grad_0d": lambda: _cumprod_grad(lib, 3.0, 0),
        "cumprod_grad_dtype": lambda: _cumprod_grad_dtype(lib),
        # view(dtype)
        "view_dtype_same_size": lambda: _values(lib.tensor([1.0, 2.0, 3.0, 4.0]).view(lib.int32)),
        "view_dtype_wider": lambda: _values(lib.tensor([1.0, 2.0, 3.0, 4.0]).view(lib.float64)),
        "view_dtype_narrower": lambda: _values(lib.tensor([1.0, 2.0]).view(lib.float16)),
        "view_dtype_same": lambda: _values(lib.tensor([1.0, 2.0]).view(lib.float32)),
        "view_dtype_bool_to_half": lambda: _values(lib.tensor([True, False]).view(lib.float16)),
        "view_dtype_offset": lambda: _values(lib.ones(4)[2:].view(lib.float64)),
        "view_dtype_transposed_same_size": lambda: _values(lib.ones(2, 4).t().view(lib.float32)),
        "view_dtype_0d_same_size": lambda: _values(lib.tensor(1.0).view(lib.int32)),
        "view_dtype_meta": lambda: _values(lib.ones(2, 4, device="meta").view(lib.float64)),
        "view_dtype_odd_size": lambda: lib.ones(3).view(lib.float64),
        "view_dtype_strided": lambda: lib.ones(4, 2).t().view(lib.float64),
        "view_dtype_0d": lambda: lib.tensor(1.0).view(lib.float64),
        "view_dtype_op": lambda: _values(aten.view.dtype(lib.tensor([1.0, 2.0]), lib.float32)),
        "view_dtype_aliasing": lambda: _view_dtype_aliasing(lib),
        "view_dtype_of_grad_tensor": lambda: _view_dtype_of_grad_tensor(lib),
        # advanced indexing
        "index_list": lambda: _values(x234()[[0, 1]]),
        "index_select_then_list": lambda: _values(x234()[0, :, [0, 1]]),
        "index_lists_apart": lambda: _values(x234()[[0, 1], :, [0, 1]]),
        "index_lists_adjacent": lambda: _values(x234()[:, [0, 2], [1, 3]]),
        "index_mask": lambda: _values(x234()[lib.tensor([True, False])]),
        "index_mask_of_values": lambda: _values(x234()[x234().gt(20)]),
        "index_negative": lambda: _values(x234()[[-1]]),
        "index_nested_list": lambda: _warned(lambda: _values(x234()[[[0, 1]]])),
        "index_int_and_list": lambda: _values(x234()[1, [0, 2]]),
        "index_ellipsis_and_list": lambda: _values(x234()[..., [0, 2]]),
        "index_none_and_list": lambda: _values(x234()[None, [0]]),
        "index_0d_tensor": lambda: _values(x234()[lib.tensor(1)]),
        "index_bool_list": lambda: _values(x234()[[True, False]]),
        "index_tuple_in_tuple": lambda: _values(x234()[(0, 1), 2]),
        "index_long_list": lambda: _described(lib.arange(40.0)[list(range(0, 40, 1))]),
        "index_int32": lambda: _values(aten.index.Tensor(x234(), [lib.tensor([0, 1], dtype=lib.int32)])),
        "index_none_first": lambda: _values(aten.index.Tensor(x234(), [None, lib.tensor([0, 2])])),
        "index_2d_index": lambda: _values(aten.index.Tensor(x234(), [lib.tensor([[0, 1], [1, 0]])])),
        "index_out_of_bounds": lambda: x234()[[0, 5]],
        "index_float": lambda: aten.index.Tensor(x234(), [lib.tensor([0.0])]),
        "index_too_many": lambda: aten.index.Tensor(x234(), [lib.tensor([0])] * 4),
        "index_mask_shape": lambda: aten.index.Tensor(x234(), [lib.tensor([True, False, True])]),
        "index_not_broadcastable": lambda: aten.index.Tensor(x234(), [lib.tensor([0, 1]), lib.tensor([0, 1, 2])]),
        "index_nothing": lambda: aten.index.Tensor(x234(), []),
        "index_meta": lambda: _values(aten.index.Tensor(lib.ones(2, 3, device="meta"), [lib.tensor([0, 1, 1])])),
        "index_meta_cpu_mask": lambda: _values(aten.index.Tensor(lib.ones(2, 3, device="meta"), [lib.tensor([True, False])])),
        "index_meta_meta_index": lambda: _values(aten.index.Tensor(lib.ones(2, 3, device="meta"),
                                                                   [None, lib.ones(2, 1, dtype=lib.int64, device="meta")])),
        "index_grad": lambda: _index_grad(lib),
        "index_is_a_copy": lambda: _index_is_a_copy(lib),
        "index_torch_function": lambda: _index_torch_function(lib),
        # acos, rsqrt, add.Scalar
        "acos": lambda: _rounded(lib.tensor([0.1, 0.5, -1.0]).acos()),
        "acos_int": lambda: _rounded(lib.tensor([1, 0]).acos()),
        "acos_meta": lambda: _values(lib.ones(2, device="meta", dtype=lib.float64).acos()),
        "rsqrt": lambda: _rounded(lib.tensor([4.0, 0.25]).rsqrt()),
        "rsqrt_zero": lambda: repr(lib.tensor([0.0, -1.0]).rsqrt().tolist()),  # (inf and nan, as text)
        "add_scalar": lambda: _values(aten.add.Scalar(lib.tensor([1, 2]), 2, 3)),
        "add_scalar_float": lambda: _values(aten.add.Scalar(lib.tensor([1, 2]), 0.5)),
        "acos_grad": lambda: _unary_grad(lib, lambda t: t.acos(), [0.1, 0.5]),
        "rsqrt_grad": lambda: _unary_grad(lib, lambda t: t.rsqrt(), [4.0, 0.25]),
        "add_scalar_grad": lambda: _unary_grad(lib, lambda t: aten.add.Scalar(t, 1), [1.0, 2.0]),
        "acos_grad_calls": lambda: _acos_grad_calls(lib),
        # None from a handler, and None given as a tensor
        "handler_returns_none": lambda: _handler_returns_none(lib),
        "none_as_tensor": lambda: aten.neg.default(None),
        "none_as_second_tensor": lambda: aten.mul.Tensor(lib.ones(1), None),
        # a custom operator returning the input it wrote
        "custom_op_returns_its_input": lambda: _custom_op_returns_its_input(lib),
        # a subclass of a subclass with __init__
        "subclass_inherits_init": lambda: _subclass_inherits_init(lib),
    }


def _seen_by_a_mode(lib: Any, call: Callable[[], Any]) -> list:
    seen = []

    class Recorder(lib.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append([str(func), repr(args), sorted([k, str(v)] for k, v in (kwargs or {}).items())])
            return func(*args, **(kwargs or {}))

    with Recorder():
        call()
    return seen


def _cat_grad(lib: Any) -> dict:
    x = lib.ones(2, requires_grad=True)
    y = lib.ones(3, requires_grad=True)
    out = lib.ops.aten.cat.default((x, y * 2))
    (out * lib.arange(5.0)).sum().backward()
    return {"grad_fn": out.grad_fn.name(), "x": x.grad.tolist(), "y": y.grad.tolist()}


def _cat_grad_promoted(lib: Any) -> dict:
    x = lib.ones(2, requires_grad=True)
    y = lib.ones(2, dtype=lib.float64, requires_grad=True)
    out = lib.ops.aten.cat.default([x, y, lib.ones(0)])
    out.sum().backward()
    return {"dtype": str(out.dtype), "x": [str(x.grad.dtype), x.grad.tolist()], "y": [str(y.grad.dtype), y.grad.tolist()]}


def _split_grad(lib: Any) -> dict:
    x = lib.ones(5, requires_grad=True)
    pieces = lib.ops.aten.split.Tensor(x, 2)
    (pieces[0] * 2 + pieces[2].sum() * 3).sum().backward()
    return {"grad_fns": [p.grad_fn.name() for p in pieces], "one_node": pieces[0].grad_fn is pieces[1].grad_fn,
            "output_nrs": [p.output_nr if hasattr(p, "output_nr") else p._output_nr for p in pieces],
            "grad": x.grad.tolist()}


def _split_views(lib: Any) -> dict:
    x = lib.arange(6.0)
    pieces = lib.ops.aten.split.Tensor(x, 4)
    before = x._version
    pieces[1].add_(1)
    return {"bases": [p._base is x for p in pieces], "x_sees_write": x.tolist(), "x_version_bump": x._version - before,
            "other_piece_version_bump": pieces[0]._version - before}


def _cumprod_grad(lib: Any, values: Any, dim: int) -> dict:
    x = lib.tensor(values, requires_grad=True)
    y = x.cumprod(dim)
    weights = lib.arange(1.0, 1 + y.numel()).reshape(*y.shape) if y.dim() else lib.tensor(2.0)
    (y * weights).sum().backward()
    return {"grad_fn": y.grad_fn.name(), "grad": x.grad.tolist()}


def _cumprod_grad_dtype(lib: Any) -> dict:
    x = lib.tensor([1.5, 2.0, 3.0], requires_grad=True)
    y = lib.ops.aten.cumprod.default(x, 0, dtype=lib.float64)
    y.sum().backward()
    return {"dtype": str(y.dtype), "grad_dtype": str(x.grad.dtype), "grad": x.grad.tolist()}


def _view_dtype_aliasing(lib: Any) -> dict:
    a = lib.zeros(4)
    b = a.view(lib.float32)
    before = a._version
    b.add_(1)
    return {"new_tensor": b is not a, "base": b._base is not None, "a_sees_write": a.tolist(),
            "version_bump": a._version - before, "same_version": a._version == b._version}


def _view_dtype_of_grad_tensor(lib: Any) -> dict:
    y = lib.ones(4, requires_grad=True)
    found = {}
    for name, dtype in (("int32", lib.int32), ("float32", lib.float32)):
        v = y.view(dtype)
        found[name] = [v.requires_grad, v.grad_fn is None, v._base is None]
    return found


def _index_grad(lib: Any) -> dict:
    y = lib.arange(6.0).reshape(2, 3).requires_grad_()
    z = y[[0, 0, 1]]
    (z * lib.arange(9.0).reshape(3, 3)).sum().backward()
    x = lib.arange(6.0, requires_grad=True)
    w = x[lib.tensor([True, False, True, False, False, True])]
    w.sum().backward()
    return {"grad_fn": z.grad_fn.name(), "grad": y.grad.tolist(), "mask_grad": x.grad.tolist(), "base": z._base is None}


def _index_is_a_copy(lib: Any) -> dict:
    x = lib.arange(4.0)
    picked = x[[1, 2]]
    picked.add_(10)
    return {"x": x.tolist(), "picked": picked.tolist()}


def _index_torch_function(lib: Any) -> dict:
    called = []

    class Indexer(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            called.append([func.__name__, [t.__name__ for t in types], len(args)])
            return "from the handler"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = lib.ones(3)[[Indexer(), Indexer()]]
    return {"result": result, "called": called}


def _unary_grad(lib: Any, fn: Callable[[Any], Any], values: list) -> dict:
    x = lib.tensor(values, requires_grad=True)
    y = fn(x)
    y.sum().backward()
    return {"grad_fn": y.grad_fn.name(), "grad": [round(v, 5) for v in x.grad.tolist()]}


def _acos_grad_calls(lib: Any) -> list:
    x = lib.tensor([0.1, 0.5], requires_grad=True)
    y = x.acos().sum()
    seen = _seen_by_a_mode(lib, lambda: y.backward())
    return [call[0] for call in seen]


def _handler_returns_none(lib: Any) -> dict:
    class NoneForAdd(lib.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return None if func.__name__.startswith("add") else out

    with NoneForAdd():
        added = lib.ones(2) + 2
        multiplied = lib.ones(2) * 2
    try:
        lib.ops.aten.mul.Tensor(added, 2)
    except RuntimeError as exc:
        used = str(exc).splitlines()[0]
    return {"added": added, "multiplied": multiplied.tolist(), "then_used": used}


_DEFINED = itertools.count()


def _custom_op_returns_its_input(lib: Any) -> dict:
    name = f"_test_file_ops::add_into{next(_DEFINED)}"  # (one operator per run: custom_op defines for good)

    @lib.library.custom_op(name, mutates_args={"x"}, tags=lib.Tag.inplace)
    def add_into(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
        x.add_(y)
        return x

    x = lib.ones(3, requires_grad=True)
    result = add_into(x, lib.ones(3))
    seen = {"x": x.detach().tolist(), "result_is_x": result is x, "requires_grad": result.requires_grad,
            "x_is_leaf": x.is_leaf, "x_grad_fn": x.grad_fn is None, "base_is_x": result._base is x}
    try:
        result.sum().backward()
    except RuntimeError as exc:
        # The operator as torch names it there (ns.name.default) or as this package does (ns::name).
        seen["backward"] = str(exc).splitlines()[0].replace(name.replace("::", ".") + ".default", "<op>").replace(
            name, "<op>")
    return seen


def _subclass_inherits_init(lib: Any) -> dict:
    class Holder(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, device=elem.device)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Child(Holder):
        pass

    child = Child(lib.ones(2))
    return {"has_elem": hasattr(child, "elem"), "elem": child.elem.tolist(), "shape": list(child.shape)}


def run(lib: Any) -> dict[str, Any]:
    """Every case's answer, an exception as ``{"raises": [type name, message]}``."""
    answers = {}
    for name, case in cases(lib).items():
        try:
            answers[name] = case()
        except Exception as exc:  # noqa: BLE001  (a case's error is its answer)
            answers[name] = {"raises": [type(exc).__name__, str(exc).splitlines()[0]]}
    return answers
