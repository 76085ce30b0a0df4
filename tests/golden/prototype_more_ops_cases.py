"""Calls of the aten operators dispatcher.prototype implements for PyTorch's test
files (rand, randperm, nonzero, index_put_, ...), each written once for either
library: ``lib`` is ``torch`` or tests/torch_shim.py's torch over the prototype.

A case returns what can be compared between the two: values where the
operator is deterministic, else dtype and shape (and properties such as
"a permutation of 0 .. n-1"); a case that raises is recorded as the
exception's type and message.  generate_prototype_more_ops_golden.py records
torch 2.13's answers, tests/test_prototype_more_ops.py compares the
prototype's.  No imports of either library here.
"""
import copy
import pickle
from typing import Any, Callable


def _described(t: Any) -> dict:
    return {"dtype": str(t.dtype), "shape": list(t.shape)}


def _values(t: Any) -> dict:
    return {**_described(t), "values": t.tolist()}


def _uniform(t: Any, low: float = 0.0, high: float = 1.0) -> dict:
    values = t.reshape(-1).tolist() if t.dim() else [t.item()]
    return {**_described(t), "in_range": all(low <= v < high for v in values)}


def _permutation(t: Any) -> dict:
    return {**_described(t), "is_permutation": sorted(int(v) for v in t.tolist()) == list(range(t.shape[0]))}


def cases(lib: Any) -> dict[str, Callable[[], Any]]:
    aten = lib.ops.aten
    return {
        # rand: every argument form torch.rand takes, and its checks
        "rand_sizes": lambda: _uniform(lib.rand(2, 3)),
        "rand_tuple": lambda: _uniform(lib.rand((4,))),
        "rand_scalar": lambda: _uniform(lib.rand(())),
        "rand_float64": lambda: _uniform(lib.rand(3, dtype=lib.float64)),
        "rand_requires_grad": lambda: lib.rand(2, requires_grad=True).requires_grad,
        "rand_meta": lambda: _described(lib.rand(2, 5, device="meta")),
        "rand_int64": lambda: lib.rand(2, dtype=lib.int64),
        "rand_op_default": lambda: _uniform(aten.rand.default([3, 2])),
        "uniform_range": lambda: _uniform(aten.uniform_.default(lib.zeros(50), 2.0, 3.0), 2.0, 3.0),
        "uniform_by_name": lambda: _uniform(aten.uniform_.default(lib.zeros(9), **{"from": -2.0, "to": -1.0}), -2.0, -1.0),
        "uniform_backwards_range": lambda: aten.uniform_.default(lib.zeros(2), 1.0, 0.0),
        "uniform_out_of_bounds": lambda: aten.uniform_.default(lib.zeros(2), 0.0, 1e300),
        "uniform_version": lambda: _bumped(lib, lambda t: aten.uniform_.default(t)),
        "uniform_grad_fn": lambda: _grad_fn_name(lib, lambda t: aten.uniform_.default(t * 1)),
        # randperm
        "randperm": lambda: _permutation(lib.randperm(7)),
        "randperm_zero": lambda: _permutation(lib.randperm(0)),
        "randperm_float32": lambda: _permutation(lib.randperm(5, dtype=lib.float32)),
        "randperm_meta": lambda: _described(lib.randperm(4, device="meta")),
        "randperm_negative": lambda: lib.randperm(-1),
        "randperm_bool": lambda: lib.randperm(3, dtype=lib.bool),
        "randperm_half_too_large": lambda: lib.randperm(3000, dtype=lib.float16),
        "randperm_out_resizes": lambda: _permutation(aten.randperm.out(3, out=lib.zeros(5, dtype=lib.int64))),
        "randperm_out_version": lambda: _bumped(lib, lambda t: aten.randperm.out(4, out=t), lib.int64),
        # nonzero
        "nonzero": lambda: _values(aten.nonzero.default(lib.tensor([0, 1, 2, 0, 0]))),
        "nonzero_2d_bool": lambda: _values(aten.nonzero.default(lib.tensor([[True, False], [True, True]]))),
        "nonzero_0d_nonzero": lambda: _values(aten.nonzero.default(lib.tensor(3.0))),
        "nonzero_0d_zero": lambda: _values(aten.nonzero.default(lib.tensor(0.0))),
        "nonzero_method_empty": lambda: _values(lib.zeros(3).nonzero()),
        "nonzero_meta": lambda: aten.nonzero.default(lib.empty(2, 3, device="meta")),
        "nonzero_requires_grad": lambda: aten.nonzero.default(lib.randn(2, requires_grad=True)).requires_grad,
        # index_put_
        "index_put_rows": lambda: _values(lib.zeros(3, 3).index_put_((lib.tensor([0, 2]),), lib.tensor(1.0))),
        "index_put_accumulate": lambda: _values(
            lib.zeros(3).index_put_((lib.tensor([0, 0]),), lib.tensor([1.0, 2.0]), accumulate=True)),
        "index_put_pairs": lambda: _values(
            lib.zeros(3, 3).index_put_((lib.tensor([0, 2]), lib.tensor([1, 1])), lib.tensor([5.0, 6.0]))),
        "index_put_mask": lambda: _values(lib.zeros(3).index_put_((lib.tensor([True, False, True]),), lib.tensor(4.0))),
        "index_put_2d_mask": lambda: _values(
            lib.zeros(2, 2).index_put_((lib.tensor([[True, False], [False, True]]),), lib.tensor([8.0, 9.0]))),
        "index_put_none_first": lambda: _values(
            aten.index_put_.default(lib.zeros(3, 3), [None, lib.tensor([0, 2])], lib.tensor(2.0))),
        "index_put_negative": lambda: _values(lib.zeros(3).index_put_((lib.tensor([-1]),), lib.tensor(4.0))),
        "index_put_method_none": lambda: lib.zeros(3, 3).index_put_((None, lib.tensor([1])), lib.tensor(7.0)),
        "index_put_out_of_bounds": lambda: lib.zeros(3).index_put_((lib.tensor([5]),), lib.tensor(4.0)),
        "index_put_float_index": lambda: lib.zeros(3).index_put_((lib.tensor([0.0]),), lib.tensor(4.0)),
        "index_put_too_many": lambda: lib.zeros(3).index_put_((lib.tensor([1]), lib.tensor([1])), lib.tensor(4.0)),
        "index_put_dtype_mismatch": lambda: lib.zeros(3, dtype=lib.int64).index_put_((lib.tensor([1]),), lib.tensor(4.0)),
        "index_put_shape_mismatch": lambda: lib.zeros(3).index_put_((lib.tensor([1, 2]),), lib.tensor([4.0, 5.0, 6.0])),
        "index_put_mask_shape": lambda: lib.zeros(3).index_put_((lib.tensor([True, False]),), lib.tensor(4.0)),
        "index_put_meta": lambda: _described(lib.zeros(2, device="meta").index_put_((lib.tensor([1]),), lib.tensor(4.0))),
        "index_put_version": lambda: _bumped(lib, lambda t: aten.index_put_.default(t, [lib.tensor([1])], lib.tensor(2.0))),
        "index_put_impl_version": lambda: _bumped(
            lib, lambda t: aten._index_put_impl_.default(t, [lib.tensor([1])], lib.tensor(2.0))),
        # int32 (torch.int)
        "int32_zeros": lambda: _values(lib.zeros(2, dtype=lib.int)),
        "int32_plus_int": lambda: _values(lib.zeros(2, dtype=lib.int) + 1),
        "int32_plus_int64": lambda: _values(lib.zeros(2, dtype=lib.int) + lib.ones(2, dtype=lib.int64)),
        "int32_times_float": lambda: _values(lib.ones(2, dtype=lib.int) * 0.5),
        "int32_sum": lambda: _values(lib.ones(3, dtype=lib.int32).sum()),
        "int32_plus_bool": lambda: _values(lib.ones(2, dtype=lib.int32) + lib.ones(2, dtype=lib.bool)),
        "int32_uniform": lambda: aten.uniform_.default(lib.zeros(2, dtype=lib.int32)),
        "int32_repr": lambda: repr(lib.zeros(2, dtype=lib.int32)),
        # a subclass made from a tensor (torch's legacy constructor): an alias
        "subclass_of_tensor": lambda: _subclass_alias(lib, lib.zeros(2, dtype=lib.int)),
        "subclass_of_grad_tensor": lambda: _subclass_alias(lib, lib.ones(2, requires_grad=True)),
        "alias_op": lambda: _alias_op(lib),
        # copy.deepcopy and pickle
        "deepcopy_plain": lambda: _copied(lib, copy.deepcopy, lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t()),
        "deepcopy_requires_grad": lambda: _copied(lib, copy.deepcopy, lib.ones(2, requires_grad=True)),
        "deepcopy_not_a_leaf": lambda: copy.deepcopy(lib.ones(2, requires_grad=True) * 2),
        "deepcopy_keeps_sharing": lambda: _shared_in_copy(lib),
        "deepcopy_subclass_with_state": lambda: _copied(lib, copy.deepcopy, _subclass(lib, "Stateful")(2, 2)),
        "deepcopy_subclass_new_empty_plain": lambda: copy.deepcopy(_subclass(lib, "NoNewEmpty")(3)),
        "deepcopy_wrapper": lambda: _copied(lib, copy.deepcopy, _wrapper(lib, "Wrapper", lib.randperm(4))),
        "deepcopy_wrapper_clone_plain": lambda: copy.deepcopy(_wrapper(lib, "PlainClone", lib.ones(2))),
        "pickle_plain": lambda: _copied(lib, _pickled, lib.tensor([1, 2, 3])),
        "pickle_requires_grad": lambda: _copied(lib, _pickled, lib.ones(2, requires_grad=True)),
        "pickle_subclass_with_state": lambda: _copied(lib, _pickled, _subclass(lib, "Stateful")(2, 2)),
        "pickle_wrapper": lambda: _copied(lib, _pickled, _wrapper(lib, "Wrapper", lib.randperm(4))),
        "pickle_meta": lambda: _copied(lib, _pickled, lib.zeros(2, 3, device="meta")),
        # ZeroTensors
        "zerotensor": lambda: _zero(lib._efficientzerotensor(2, 3)),
        "zerotensor_tuple_size": lambda: _zero(lib._efficientzerotensor((4,), dtype=lib.float64)),
        "zerotensor_meta": lambda: _zero(lib._efficientzerotensor(2, device="meta"), values=False),
        "zerotensor_op_default": lambda: _zero(aten._efficientzerotensor.default([3])),
        "zerotensor_times_tensor": lambda: _zero(aten.mul.Tensor(lib.tensor([1, 2]), lib._efficientzerotensor(2))),
        "zerotensor_broadcast_mul": lambda: _zero(aten.mul.Tensor(lib._efficientzerotensor(2, 1), lib.ones(3))),
        "zerotensor_plus_tensor": lambda: _zero(lib.tensor([1.0, 2.0]) + lib._efficientzerotensor(2)),
        "zerotensor_sum": lambda: _zero(lib._efficientzerotensor(2).sum()),
        "zerotensor_clone": lambda: _zero(lib._efficientzerotensor(2).clone()),
        "zerotensor_write": lambda: lib._efficientzerotensor(2).add_(1),
        "zerotensor_negative_size": lambda: lib._efficientzerotensor(-1),
        "plain_is_not_zerotensor": lambda: lib.zeros(2)._is_zerotensor(),
        # linalg.lstsq
        "lstsq_values": lambda: _lstsq(lib, lib.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]),
                                       lib.tensor([[1.0], [2.0], [3.0]]), None),
        "lstsq_gelsd": lambda: _lstsq(lib, lib.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], dtype=lib.float64),
                                      lib.tensor([[1.0, 4.0], [2.0, 0.0], [3.0, 1.0]], dtype=lib.float64), "gelsd"),
        "lstsq_gelss": lambda: _lstsq(lib, lib.tensor([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]]), lib.tensor([[2.0], [2.0], [1.0]]),
                                      "gelss"),
        "lstsq_gels": lambda: _lstsq(lib, lib.tensor([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]]), lib.tensor([[2.0], [2.0], [1.0]]),
                                     "gels"),
        "lstsq_rank_deficient": lambda: _lstsq(lib, lib.tensor([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]),
                                               lib.tensor([[1.0], [2.0], [3.0]]), "gelsd"),
        "lstsq_batched": lambda: _lstsq(lib, lib.ones(2, 4, 3) + aten.expand.default(lib.tensor([[0.0, 1.0, 0.0]]), [4, 3]),
                                        lib.ones(2, 4, 2), "gelsy", values=False),
        "lstsq_wide": lambda: _lstsq(lib, lib.tensor([[1.0, 2.0, 3.0]]), lib.tensor([[6.0]]), None, values=False),
        "lstsq_shapes_differ": lambda: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(4, 1)),
        "lstsq_dtypes_differ": lambda: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(3, 1, dtype=lib.float64)),
        "lstsq_bad_driver": lambda: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(3, 1), driver="nope"),
        "lstsq_vector_input": lambda: lib.linalg.lstsq(lib.ones(3), lib.ones(3)),
        "lstsq_integers": lambda: lib.linalg.lstsq(lib.ones(3, 2, dtype=lib.int64), lib.ones(3, 1, dtype=lib.int64)),
        "lstsq_op_returns_a_tuple": lambda: [type(aten.linalg_lstsq.default(lib.ones(3, 2), lib.ones(3, 1))).__name__,
                                             type(lib.linalg.lstsq(lib.ones(3, 2), lib.ones(3, 1))).__name__],
        # add.out
        "add_out": lambda: _out(lib, lambda o: aten.add.out(lib.ones(2), lib.ones(2), out=o), lib.empty(2)),
        "add_out_resizes": lambda: _out(lib, lambda o: aten.add.out(lib.ones(2), lib.ones(2), alpha=3, out=o),
                                        lib.empty(5)),
        "add_out_broadcasts": lambda: _out(lib, lambda o: aten.add.out(lib.ones(2, 1), lib.ones(3), out=o), lib.empty(0)),
        "add_out_cannot_cast": lambda: aten.add.out(lib.ones(2), lib.ones(2, dtype=lib.float64),
                                                    out=lib.empty(2, dtype=lib.int64)),
        "add_out_requires_grad": lambda: aten.add.out(lib.ones(2, requires_grad=True), lib.ones(2), out=lib.empty(2)),
        "add_out_number": lambda: _out(lib, lambda o: aten.add.out(lib.ones(2), 1, out=o), lib.empty(2)),
        "add_out_casts_up": lambda: _out(lib, lambda o: aten.add.out(lib.ones(2, dtype=lib.int64), lib.ones(2), out=o),
                                         lib.empty(2, dtype=lib.float64)),
        "add_out_bad_shapes": lambda: aten.add.out(lib.ones(2), lib.ones(3), out=lib.empty(2)),
        "add_out_meta": lambda: _out(lib, lambda o: aten.add.out(lib.ones(2, 3, device="meta"), lib.ones(3, device="meta"),
                                                                 out=o), lib.empty(0, device="meta"), values=False),
        # negative views
        "neg_view": lambda: _negative(lib, lib.tensor([1.0, 2.0])._neg_view()),
        "neg_view_twice": lambda: _negative(lib, lib.tensor([1.0, 2.0])._neg_view()._neg_view()),
        "neg_view_plus_one": lambda: _negative(lib, lib.tensor([1.0, 2.0])._neg_view() + 1),
        "neg_view_transposed": lambda: _negative(lib, lib.tensor([[1.0, 2.0], [3.0, 4.0]])._neg_view().t()),
        "neg_view_clone": lambda: _negative(lib, lib.tensor([1.0, 2.0])._neg_view().clone()),
        "neg_view_resolved": lambda: _negative(lib, lib.tensor([1.0, 2.0])._neg_view().resolve_neg()),
        "neg_view_neg": lambda: _negative(lib, lib.ops.aten.neg.default(lib.tensor([1.0, 2.0])._neg_view())),
        "neg_view_item": lambda: lib.tensor([3.0])._neg_view().item(),
        "neg_view_numpy": lambda: lib.tensor([3.0])._neg_view().numpy(),
        "neg_view_written": lambda: _neg_written(lib),
        "neg_view_grad": lambda: _neg_grad(lib),
        "plain_is_not_neg": lambda: lib.ones(2).is_neg(),
        # complex64 and conjugate views
        "complex_rand": lambda: _complex_parts(lib, lib.rand(2, 2, dtype=lib.complex64)),
        "complex_arithmetic": lambda: _complex(lib, (_complex_tensor(lib) * 2 + 1.5)),
        "complex_times_float_tensor": lambda: _complex(lib, _complex_tensor(lib) * lib.tensor([2.0, 3.0])),
        "complex_exp": lambda: _complex(lib, _complex_tensor(lib).exp()),
        "complex_sum": lambda: _complex(lib, _complex_tensor(lib).sum()),
        "conj": lambda: _complex(lib, _complex_tensor(lib).conj()),
        "conj_twice": lambda: _complex(lib, _complex_tensor(lib).conj().conj()),
        "conj_exp": lambda: _complex(lib, _complex_tensor(lib).conj().exp()),
        "conj_of_real": lambda: [lib.ones(2).conj().is_conj(), lib.ones(2).conj_physical().is_conj()],
        "conj_physical": lambda: _complex(lib, _complex_tensor(lib).conj_physical()),
        "conj_resolved": lambda: _complex(lib, _complex_tensor(lib).conj().resolve_conj()),
        "conj_numpy": lambda: _complex_tensor(lib).conj().numpy(),
        "conj_is_a_view": lambda: [_complex_tensor(lib).conj()._base is not None],
        "conj_of_neg_view": lambda: _complex(lib, _complex_tensor(lib)._neg_view().conj() + 0),
        "conj_written": lambda: _conj_written(lib),
    }


def _complex_tensor(lib: Any) -> Any:
    return lib.tensor([1 + 2j, 3 - 1j])


def _pairs(values: Any) -> Any:
    if isinstance(values, list):
        return [_pairs(v) for v in values]
    return [round(values.real, 4), round(values.imag, 4)]


def _complex(lib: Any, t: Any) -> dict:
    return {**_described(t), "is_conj": t.is_conj(), "values": _pairs(t.tolist())}


def _complex_parts(lib: Any, t: Any) -> dict:
    values = t.reshape(-1).tolist()
    return {**_described(t), "parts_in_range": all(0 <= v.real < 1 and 0 <= v.imag < 1 for v in values)}


def _conj_written(lib: Any) -> dict:
    x = _complex_tensor(lib)
    c = x.conj()
    c.add_(1)
    return {"view": _pairs(c.tolist()), "base": _pairs(x.tolist()), "is_conj": c.is_conj()}


def _negative(lib: Any, t: Any) -> dict:
    return {**_described(t), "is_neg": t.is_neg(), "values": t.tolist(), "repr": repr(t)}


def _neg_written(lib: Any) -> dict:
    x = lib.tensor([1.0, 2.0])
    n = x._neg_view()
    before = x._version
    returned = n.add_(1)
    return {"returns_self": returned is n, "view": n.tolist(), "base": x.tolist(), "is_neg": n.is_neg(),
            "base_is_x": n._base is x, "version_bump": x._version - before}


def _neg_grad(lib: Any) -> dict:
    x = lib.ones(2, requires_grad=True)
    y = x._neg_view()
    (y * lib.tensor([1.0, 2.0])).sum().backward()
    return {"grad_fn": y.grad_fn.name(), "grad": x.grad.tolist()}


def _out(lib: Any, call: Callable[[Any], Any], out: Any, values: bool = True) -> dict:
    import warnings

    before = out._version
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(out)
    seen = {**_described(out), "returns_out": result is out, "version_bump": out._version - before,
            "warned": [str(w.message)[:60] for w in caught]}
    if values:
        seen["values"] = out.tolist()
    return seen


def _lstsq(lib: Any, a: Any, b: Any, driver: Any, values: bool = True) -> dict:
    result = lib.linalg.lstsq(a, b, driver=driver)
    seen = {name: _described(getattr(result, name)) for name in ("solution", "residuals", "rank", "singular_values")}
    if values:
        seen["values"] = {name: [round(v, 4) for v in getattr(result, name).reshape(-1).tolist()]
                          for name in ("solution", "residuals", "rank", "singular_values")}
    return seen


def _zero(t: Any, values: bool = True) -> dict:
    # (torch refuses tolist() of a ZeroTensor, which has no storage; the prototype's reads as zeros.)
    seen = {**_described(t), "is_zerotensor": t._is_zerotensor(), "device": str(t.device)}
    if values and not t._is_zerotensor():
        seen["values"] = t.tolist()
    return seen


def _pickled(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


# Subclasses made once per library, at module level so that pickle finds them by name.
def _subclass(lib: Any, name: str) -> type:
    key = f"{name}_{lib.__name__}"
    if key not in globals():
        body: dict[str, Any] = {"__module__": __name__, "__qualname__": key}
        if name == "Stateful":
            body["__slots__"] = ("note",)

            def new_empty(self: Any, shape: Any) -> Any:
                return type(self)(*shape)

            def made(cls: Any, *sizes: Any) -> Any:
                t = lib.Tensor.__new__(cls, *sizes)
                return t

            body["new_empty"] = new_empty
        cls = type(key, (lib.Tensor,), body)
        globals()[key] = cls
    made_cls = globals()[key]
    return _with_state(made_cls) if name == "Stateful" else made_cls


def _with_state(cls: type) -> Callable[..., Any]:
    def make(*sizes: int) -> Any:
        t = cls(*sizes)
        t.note = ["slot"]
        t.extra = {"in": "dict"}
        return t

    return make


def _wrapper(lib: Any, name: str, elem: Any) -> Any:
    key = f"{name}_{lib.__name__}"
    if key not in globals():
        def __new__(cls: Any, elem: Any) -> Any:
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, device=elem.device,
                                                  requires_grad=elem.requires_grad)
            r.elem = elem
            return r

        def __torch_dispatch__(cls: Any, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            unwrapped = [a.elem if isinstance(a, cls) else a for a in args]
            out = func(*unwrapped, **(kwargs or {}))
            if name == "PlainClone" or not isinstance(out, lib.Tensor):
                return out
            return cls(out)

        body = {"__module__": __name__, "__qualname__": key, "__new__": staticmethod(__new__),
                "__torch_dispatch__": classmethod(__torch_dispatch__)}
        globals()[key] = type(key, (lib.Tensor,), body)
    return globals()[key](elem)


def _copied(lib: Any, how: Callable[[Any], Any], t: Any) -> dict:
    c = how(t)
    seen = {"type_is_same": type(c) is type(t), "is_new": c is not t, "dtype": str(c.dtype), "shape": list(c.shape),
            "device": str(c.device), "requires_grad": c.requires_grad, "is_leaf": c.is_leaf}
    if c.device.type != "meta":
        inner = getattr(c, "elem", c)
        seen["values_equal"] = inner.tolist() == getattr(t, "elem", t).tolist()
    if hasattr(t, "note"):
        seen["state"] = [c.note, c.extra, c.note is not t.note]
    if hasattr(t, "elem"):
        seen["elem_is_new"] = c.elem is not t.elem
    if t.device.type == "cpu" and not hasattr(t, "elem"):
        seen["stride"] = list(c.stride())
        t.add_(1) if not t.requires_grad else None
        seen["independent"] = c.tolist() != t.tolist() or t.requires_grad
    return seen


def _shared_in_copy(lib: Any) -> list:
    t = lib.ones(2)
    pair = copy.deepcopy([t, t])
    return [pair[0] is pair[1], pair[0] is not t]


def _subclass_alias(lib: Any, t: Any) -> dict:
    class Sub(lib.Tensor):
        pass

    s = Sub(t)
    before = t._version
    (s.add_(1) if not t.requires_grad else None)
    seen = {"type_is_sub": type(s) is Sub, "base_is_t": s._base is t, "dtype": str(s.dtype),
            "requires_grad": s.requires_grad, "grad_fn": s.grad_fn.name() if s.grad_fn is not None else None,
            "t_sees_writes": t.tolist(), "t_version_bump": t._version - before}
    if t.requires_grad:
        (s * 2).sum().backward()
        seen["grad"] = t.grad.tolist()
    return seen


def _alias_op(lib: Any) -> dict:
    t = lib.ones(3)
    a = lib.ops.aten.alias.default(t)
    return {"base_is_t": a._base is t, "values": a.tolist(), "same_version": a._version == t._version}


def _bumped(lib: Any, write: Callable[[Any], Any], dtype: Any = None) -> int:
    t = lib.zeros(4, dtype=dtype)
    before = t._version
    write(t)
    return t._version - before


def _grad_fn_name(lib: Any, write: Callable[[Any], Any]) -> Any:
    x = lib.zeros(3, requires_grad=True)
    return write(x).grad_fn.name()


def run(lib: Any) -> dict[str, Any]:
    """Every case's answer, an exception as ``{"raises": [type name, message]}``."""
    answers = {}
    for name, case in cases(lib).items():
        try:
            answers[name] = case()
        except Exception as exc:  # noqa: BLE001  (a case's error is its answer)
            answers[name] = {"raises": [type(exc).__name__, str(exc).splitlines()[0]]}
    return answers
