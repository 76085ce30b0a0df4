"""What torch's own test helpers (LoggingTensor, TwoTensor, capture_logs) ask of
dispatcher.prototype, each piece checked without them: storage offsets, the
dtype abbreviations of torch's logs, factories calling their operators as
torch's Python binding does, a subclass's repr, values a handler's tensor
refuses to give, item() through aten::_local_scalar_dense, indexing,
contiguous(), ``.data``, ``grad_fn._saved_<argument>``, and the kernels those
helpers' tests call (addmv, pow, abs.out, _foobar).  tests/test_torch_test_files.py
runs the helpers themselves, from copies of torch's files when present."""
from __future__ import annotations

import numpy as np
import pytest

import dispatcher
import dispatcher.prototype as P
from dispatcher.dispatch_modes import TorchDispatchMode
from dispatcher.prototype import Tensor
from dispatcher.prototype.dtypes import dtype_abbrs

aten = dispatcher.ops.aten

pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


class Recording(TorchDispatchMode):
    """Every call as a handler sees it: (overload name, args, kwargs)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls.append((func.__name__, args, kwargs))
        return func(*args, **kwargs)


class Wrapper(Tensor):
    """A wrapper subclass in LoggingTensor's manner: the metadata of ``elem``, its handler computing on it."""

    @staticmethod
    def __new__(cls, elem, **options):
        r = Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), storage_offset=elem.storage_offset(),
                                          dtype=elem.dtype, device=elem.device, **options)
        r.elem = elem
        return r

    seen: list[str] = []

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func.__name__)
        unwrapped = [a.elem if isinstance(a, Wrapper) else a for a in args]
        out = func(*unwrapped, **(kwargs or {}))
        return Wrapper(out) if isinstance(out, Tensor) else out


def test_storage_offset_of_views_and_wrappers():
    x = P.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.storage_offset() == 0
    assert x.select(0, 1).storage_offset() == 3
    assert x.select(1, 2).storage_offset() == 2
    assert x.select(0, 1).select(0, 1).storage_offset() == 4
    w = Wrapper(x.select(0, 1))
    assert (w.storage_offset(), w.stride(), w.shape) == (3, (1,), (3,))
    with pytest.raises(RuntimeError, match="storage_offset must be a non-negative int, got -1"):
        Tensor._make_wrapper_subclass(Wrapper, (1,), storage_offset=-1)


def test_dtype_abbreviations_are_torchs():
    # torch 2.13: torch.float32.abbr and torch.utils._dtype_abbrs.dtype_abbrs.
    assert dtype_abbrs == {P.float16: "f16", P.float32: "f32", P.float64: "f64", P.int32: "i32", P.int64: "i64",
                           P.complex64: "c64", P.bool_: "b8", P.uint8: "u8", P.int8: "i8", P.int16: "i16",
                           P.bfloat16: "bf16", P.uint16: "u16", P.uint32: "u32", P.uint64: "u64"}
    assert P.float32.abbr == "f32"


def test_factories_call_their_operators_as_torchs_binding_does():
    with Recording() as mode:
        P.empty(2)
        P.zeros(2, dtype=P.float64)
        P.full((2,), 1.0, device="meta")
    cpu = dispatcher.device("cpu")
    assert [(name, args, kwargs) for name, args, kwargs in mode.calls] == [
        ("empty.memory_format", ([2],), {"device": cpu, "pin_memory": False}),
        ("zeros.default", ([2],), {"dtype": P.float64, "device": cpu, "pin_memory": False}),
        ("full.default", ([2], 1.0), {"device": dispatcher.device("meta"), "pin_memory": False}),
    ]
    assert repr(mode.calls[0][2]["device"]) == "device(type='cpu')"


def test_a_subclass_repr_names_it_and_takes_its_contents():
    w = Wrapper(P.ones(1))
    assert Tensor.__repr__(w, tensor_contents="tensor([1.])") == "Wrapper(tensor([1.]))"
    grad = Wrapper(P.ones(2), requires_grad=True)
    assert Tensor.__repr__(grad, tensor_contents="...") == "Wrapper(..., requires_grad=True)"
    double = Wrapper(P.ones(2, dtype=P.float64))
    assert Tensor.__repr__(double, tensor_contents="x") == "Wrapper(x, dtype=torch.float64)"

    class Plain(Tensor):
        pass

    assert repr(Tensor._make_subclass(Plain, P.tensor([1.0, 2.0]))) == "Plain([1., 2.])"
    assert repr(P.tensor([1.0, 2.0])) == "tensor([1., 2.])"


def test_item_of_a_handlers_tensor_is_its_local_scalar_dense():
    Wrapper.seen.clear()
    assert Wrapper(P.tensor([2.5])).item() == 2.5
    assert Wrapper.seen == ["_local_scalar_dense.default"]
    assert aten._local_scalar_dense.default(P.tensor([3.0, 4.0])) == 3.0  # torch's reads the first element
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        aten._local_scalar_dense.default(P.empty(1, device="meta"))


def test_indexing_with_integers_and_colons_selects():
    x = P.tensor([[1.0, 2.0], [3.0, 4.0]])
    with Recording() as mode:
        column = x[:, 1]
    assert [name for name, _, _ in mode.calls] == ["select.int"]  # torch calls nothing for a ':'
    assert column.tolist() == [2.0, 4.0] and column.stride() == (2,) and column._base is x
    assert x[1].tolist() == [3.0, 4.0] and x[1, 0].item() == 3.0 and x[-1, -1].item() == 4.0
    assert x[:, :] is not x and x[:, :]._base is x  # torch: a view (aten::alias), not the tensor itself
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    assert x[0:1].tolist() == [[1.0, 2.0]]


def test_contiguous_copies_only_a_strided_tensor():
    x = P.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.contiguous() is x
    t = x.t()
    with Recording() as mode:
        c = t.contiguous()
    assert [(name, kwargs) for name, _, kwargs in mode.calls] == [
        ("clone.default", {"memory_format": P.tensor_options.contiguous_format})]
    assert c.is_contiguous() and c.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_data_shares_memory_but_not_the_version_counter():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    data = x.data
    assert not data.requires_grad and data.grad_fn is None
    data.add_(P.ones(2))
    assert x._version == 0 and data._version == 1
    assert x.detach().tolist() == [2.0, 3.0]
    x.data = P.tensor([[5.0]])
    assert x.shape == (1, 1) and x.detach().tolist() == [[5.0]] and x.requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        x.data = [1.0]
    Wrapper.seen.clear()
    w = Wrapper(P.ones(1))
    alias = w.data
    assert Wrapper.seen == ["detach.default"] and type(alias) is Wrapper
    assert alias._version_counter is not w._version_counter


def test_grad_fn_has_torchs_saved_tensors():
    x = P.tensor([3.0], requires_grad=True)
    y = x * x
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is x
    with pytest.raises(AttributeError, match="no attribute '_saved_alpha'"):
        y.grad_fn._saved_alpha
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_self


def test_addmv_and_its_gradients():
    v, m, u = P.tensor([1.0, 2.0]), P.tensor([[1.0, 2.0], [3.0, 4.0]]), P.tensor([1.0, -1.0])
    assert aten.addmv.default(v, m, u).tolist() == [0.0, 1.0]
    assert aten.addmv.default(v, m, u, beta=2, alpha=3).tolist() == [-1.0, 1.0]
    nan = P.tensor([float("nan"), 0.0])
    assert aten.addmv.default(nan, m, u, beta=0).tolist() == [-1.0, -1.0]  # beta=0 ignores self, as torch
    assert aten.addmv.default(P.empty(2, device="meta"), P.empty(2, 2, device="meta"),
                              P.empty(2, device="meta")).shape == (2,)
    inputs = [P.tensor(np.array(a), dtype=P.float64, requires_grad=True)
              for a in ([0.5, -1.0], [[1.0, 2.0], [3.0, 4.0]], [2.0, 0.25])]
    assert P.gradcheck(lambda s, a, b: aten.addmv.default(s, a, b, beta=0.5, alpha=2), inputs)


def test_pow_and_its_gradient():
    x = P.tensor([1.0, 2.0, 3.0])
    assert (x ** 2).tolist() == [1.0, 4.0, 9.0] and x.pow(0.5).dtype is P.float32
    assert (P.tensor([2, 3]) ** 2).dtype is P.int64 and (P.tensor([2, 3]) ** 0.5).dtype is P.float32
    assert aten.pow.Tensor_Scalar(P.empty(2, device="meta"), 2).shape == (2,)
    inputs = [P.tensor([1.5, 2.0], dtype=P.float64, requires_grad=True)]
    assert P.gradcheck(lambda t: t ** 3, inputs)
    leaf = P.tensor([1.5], requires_grad=True)
    (leaf ** 0).sum().backward()
    assert leaf.grad.tolist() == [0.0]


def test_abs_out_writes_out_counts_it_and_refuses_grad():
    out = P.empty(2)
    result = aten.abs.out(P.tensor([-1.0, 2.0]), out=out)
    assert result is out and out.tolist() == [1.0, 2.0] and out._version == 1
    resized = P.empty(0)
    aten.abs.out(P.tensor([[-3.0]]), out=resized)
    assert resized.shape == (1, 1) and resized.tolist() == [[3.0]]
    with pytest.raises(RuntimeError, match=r"^abs\(\): functions with out=\.\.\. arguments don't support automatic "
                                           r"differentiation, but one of the arguments requires grad\.$"):
        aten.abs.out(P.tensor([1.0], requires_grad=True), out=P.empty(1))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        aten.abs.out(P.tensor([1.0]), out=P.empty(1, dtype=P.int64))


def test_foobar_copies_and_has_no_derivative():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    y = aten._foobar.default(x, False, arg3=False)
    assert y.tolist() == [1.0, 2.0] and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="derivative for aten::_foobar is not implemented"):
        y.sum().backward()
    assert aten._foobar.default(P.empty(3, device="meta")).shape == (3,)


def test_a_subclass_constructor_aliases_a_tensor_or_makes_one_of_sizes():
    class Sub(Tensor):
        pass

    x = P.tensor([1.0, 2.0])
    alias = Sub(x)
    assert type(alias) is Sub and alias._values() is x._data and alias._version_counter is x._version_counter
    sized = Sub(2, 3)
    assert (type(sized), sized.shape, sized.dtype) == (Sub, (2, 3), P.float32)


def test_deepcopy_as_torchs():
    import copy

    class Copies(Tensor):
        __slots__ = ["elem"]

        def new_empty(self, shape):
            return Copies(0)

    x = Tensor._make_subclass(Copies, P.tensor([1.0, 2.0]))
    x.elem, x.note = P.tensor([5.0]), ["shared"]
    memo: dict = {}
    y = copy.deepcopy(x, memo)
    assert type(y) is Copies and y._values().tolist() == [1.0, 2.0] and y._values() is not x._values()
    assert y.elem is not x.elem and y.elem.tolist() == [5.0] and y.note == ["shared"] and y.note is not x.note
    assert copy.deepcopy(x, memo) is y
    leaf = P.tensor([1.0], requires_grad=True)
    leaf.grad = P.tensor([0.5])
    copied = copy.deepcopy(leaf)
    assert copied.requires_grad and copied.grad.tolist() == [0.5] and copied.grad is not leaf.grad

    class NoNewEmpty(Tensor):
        pass

    with pytest.raises(RuntimeError, match="for which that function returns another instance of the same subclass"):
        copy.deepcopy(NoNewEmpty(2))
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(leaf * 2)

    class ClonesPlain(Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = Tensor._make_wrapper_subclass(cls, elem.shape)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return args[0].elem.clone()  # clone gives a plain tensor

    with pytest.raises(RuntimeError, match="for which cloning returns another instance of the same subclass"):
        copy.deepcopy(ClonesPlain(P.ones(2)))
    w = Wrapper(P.tensor([3.0]))
    w_copy = copy.deepcopy(w)
    assert type(w_copy) is Wrapper and w_copy.elem.tolist() == [3.0] and w_copy.elem is not w.elem


def test_untyped_storage_describes_the_memory():
    x = P.tensor([1.0, 2.0, 3.0])
    storage = x[1].untyped_storage()
    assert (storage.nbytes(), len(storage), storage.device) == (12, 12, x.device)
    assert storage.data_ptr() == x.untyped_storage().data_ptr() == x._data.__array_interface__["data"][0]
    meta = P.empty(2, device="meta").untyped_storage()
    assert (meta.nbytes(), meta.data_ptr()) == (8, 0)
    with pytest.raises(RuntimeError, match="^Attempted to access the data pointer on an invalid python storage\\.$"):
        Wrapper(P.ones(1)).untyped_storage().data_ptr()


def test_abs_is_abs_out_into_a_new_tensor_and_differentiable():
    x = P.tensor([-1.5, 0.0, 2.0])
    with Recording() as mode:
        y = x.abs()
    assert [name for name, _, _ in mode.calls] == ["abs.default"]  # what abs does below is not the mode's
    assert y.tolist() == [1.5, 0.0, 2.0] and aten.sgn.default(x).tolist() == [-1.0, 0.0, 1.0]
    assert aten.abs.default(P.empty(2, 3, device="meta")).shape == (2, 3)
    leaf = P.tensor([-2.0, 3.0], dtype=P.float64, requires_grad=True)
    assert P.gradcheck(lambda t: t.abs(), [leaf])
    leaf = P.tensor([-2.0, 3.0], requires_grad=True)
    leaf.abs().sum().backward()
    assert leaf.grad.tolist() == [-1.0, 1.0]
    s = P.tensor([1.0], requires_grad=True)
    aten.sgn.default(s).sum().backward()
    assert s.grad.tolist() == [0.0]


def test_set_makes_a_tensor_view_anothers_memory():
    x, source = P.tensor([0.0, 0.0]), P.tensor([1.0, 2.0, 3.0])
    assert x.set_(source) is x
    assert x.shape == (3,) and x._values() is source._values() and x._version == 1
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor of type float"):
        x.set_(P.tensor([1]))
    meta = P.empty(1, device="meta")
    assert aten.set_.source_Tensor(meta, P.empty(2, 2, device="meta")).shape == (2, 2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        P.ones(2, requires_grad=True).set_(source)
    grad_source = P.tensor([1.0], requires_grad=True)
    out = P.ones(1).set_(grad_source)
    with pytest.raises(RuntimeError, match="derivative for aten::set_ is not implemented"):
        out.sum().backward()


def test_diagonal_is_a_view_with_torchs_shape_strides_and_gradient():
    x = P.tensor(np.arange(24.0).reshape(4, 6)).t()
    d = x.diagonal(offset=2)
    # torch: torch.arange(24.).reshape(4, 6).t().diagonal(offset=2) has size [2], stride (7,), offset 12.
    assert (d.shape, d.stride(), d.storage_offset(), d.tolist()) == ((2,), (7,), 12, [12.0, 19.0])
    assert d._base is x._base and d._version_counter is x._version_counter
    d.add_(P.tensor([100.0, 100.0]))
    assert x.tolist()[0][2] == 112.0 and x.tolist()[1][3] == 119.0  # written through
    assert P.ones(2, 3).diagonal(5).shape == (0,) and P.ones(2, 3, 4).diagonal(0, 1, -1).shape == (2, 3)
    assert aten.diagonal.default(P.empty(3, 4, device="meta"), -1).shape == (2,)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 0, 0"):
        P.ones(2, 2).diagonal(0, 0, 0)
    leaf = P.tensor(np.arange(6.0).reshape(2, 3), dtype=P.float64, requires_grad=True)
    assert P.gradcheck(lambda t: t.diagonal(1), [leaf])
    plain = P.ones(2, 3, requires_grad=True)
    plain.diagonal(-1).sum().backward()
    assert plain.grad.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]


def test_a_handlers_tensor_cannot_become_another_subclass():
    class Foo(Tensor):
        pass

    message = ("^Creating a new Tensor subclass Foo but the raw Tensor object is already associated to a python "
               "object of type Wrapper which is not a subclass of the requested type$")
    for make in (lambda w: Tensor._make_subclass(Foo, w), lambda w: w.as_subclass(Foo), lambda w: Foo(w)):
        with pytest.raises(RuntimeError, match=message):
            make(Wrapper(P.ones(2)))

    class Bar(Foo):
        pass

    foo = Tensor._make_subclass(Foo, P.ones(2))  # no handler: any subclass may alias it
    assert type(foo.as_subclass(Bar)) is Bar and type(Bar(foo)) is Bar and type(Tensor._make_subclass(Bar, foo)) is Bar
