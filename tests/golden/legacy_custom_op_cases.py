"""Cases of torch's older CustomOp API (torch._custom_ops, torch._custom_op.impl),
written once for both sides: ``run(api, ns)`` runs each case with ``api``'s
modules and tensors and returns what it gave -- a value, or the error it
raised as ``"<class>: <message>"`` (file locations replaced by
``<location>``, the tensor class by ``<Tensor>``).

``generate_legacy_custom_op_golden.py`` runs them on torch 2.13;
tests/test_legacy_custom_op.py on dispatcher._custom_ops and
dispatcher.prototype.  (No ``from __future__ import annotations``: the
operators' annotations must be the API's own types, not strings.)
"""
import re
import warnings
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple


class Api(NamedTuple):
    custom_ops: Any  # torch._custom_ops
    impl: Any  # torch._custom_op.impl
    Library: Callable[..., Any]
    Tensor: type
    randn: Callable[..., Any]  # randn(*sizes, requires_grad=False, device="cpu")
    no_grad: Callable[[], Any]


_LOCATION = re.compile(r"(/[^\s:'\"]+|<[^\s>]+>):\d+")


def _outcome(api: Api, case: Callable[[Api, str], Any], qualname: str) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return case(api, qualname)
    except Exception as e:  # noqa: BLE001  (the error is the case's outcome)
        text = _LOCATION.sub("<location>", f"{type(e).__name__}: {e}")
        return text.replace(repr(api.Tensor), "<Tensor>")


def _destroy_custom_op(api: Api, qualname: str) -> None:
    custom_op = api.impl.global_registry.get(qualname)
    if custom_op is not None:
        custom_op._destroy()


def _values(t: Any) -> list:
    return [round(float(v), 4) for v in t.detach().numpy().reshape(-1)]


def _define(api: Api, qualname: str, fn: Callable[..., Any]) -> Any:
    """``fn`` as a custom op named ``qualname`` (fn's own name is the op's)."""
    fn.__name__ = qualname.split("::")[1]
    api.custom_ops.custom_op(qualname)(fn)
    return api.impl.get_op(qualname)


# -- definitions and their checks ------------------------------------------------------------
def invalid_schema(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q, "(")


def overload_in_name(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q + ".Tensor", "() -> ()")


def no_namespace(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q.split("::")[1], "(Tensor x) -> Tensor")


def reserved_namespace(api: Api, q: str) -> Any:
    api.custom_ops.custom_op("prims::" + q.split("::")[1], "(Tensor x) -> Tensor")


def name_mismatch(api: Api, q: str) -> Any:
    def baz(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    api.custom_ops.custom_op(q)(baz)


def not_a_function(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q)(len)


def mutable_schema(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q, "(Tensor(a!) x) -> Tensor(a)")


def view_schema(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q, "(Tensor(a) x) -> Tensor(a)")


def no_returns_schema(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q, "(Tensor x) -> ()")


def self_argument(api: Api, q: str) -> Any:
    api.custom_ops.custom_op(q, "(Tensor self) -> Tensor")


def manual_schema_names_differ(api: Api, q: str) -> Any:
    def f(x):
        pass

    f.__name__ = q.split("::")[1]
    api.impl.custom_op(q, "(Tensor y) -> Tensor")(f)


def manual_schema_varargs(api: Api, q: str) -> Any:
    def f(*args):
        pass

    f.__name__ = q.split("::")[1]
    api.impl.custom_op(q, "(Tensor x) -> Tensor")(f)


def manual_schema_defaults(api: Api, q: str) -> Any:
    def f(x=1, *, y):
        pass

    f.__name__ = q.split("::")[1]
    api.impl.custom_op(q, "(Tensor x, *, Tensor y) -> Tensor")(f)


def manual_schema_annotated(api: Api, q: str) -> Any:
    def f(x: int):
        pass

    f.__name__ = q.split("::")[1]
    api.impl.custom_op(q, "(Tensor x) -> Tensor")(f)


def manual_schema_matches(api: Api, q: str) -> Any:
    def f(x, *, y):
        pass

    f.__name__ = q.split("::")[1]
    op = api.impl.custom_op(q, "(Tensor x, *, Tensor y) -> Tensor")(f)
    return [repr(op), op.__name__, str(op._schema)]


def private_constructor(api: Api, q: str) -> Any:
    api.impl.CustomOp(None, None, None, None, None)


def defined_twice(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)
    text = _outcome(api, lambda api, _: _define(api, q, f), q)
    return text.split(" Each overload")[0]


def unknown_custom_op(api: Api, q: str) -> Any:
    api.impl._find_custom_op(q)


def unknown_operator(api: Api, q: str) -> Any:
    api.impl.get_op(q)


def invalid_device_type(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)
    api.custom_ops.impl(q, device_types=["cpu", "hip"])(lambda x: x)


# -- calls -----------------------------------------------------------------------------------
def no_cpu_impl(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)(api.randn(3))


def no_tensor_inputs(api: Api, q: str) -> Any:
    def f(sizes: Sequence[int]) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)((1, 2, 3))


def impl_cpu(api: Api, q: str) -> Any:
    def f(x: api.Tensor, k: int) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q, device_types="cpu")(lambda x, k: x * k)
    return _values(op(api.randn(2) * 0 + 1.5, 3))


def impl_twice(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)
    api.custom_ops.impl(q, device_types="cpu")(lambda x: x)
    api.custom_ops.impl(q, device_types="cpu")(lambda x: x)


def autograd_not_implemented(api: Api, q: str) -> Any:
    def f(x: Sequence[api.Tensor]) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)([api.randn(3), api.randn(3, requires_grad=True)])


def autograd_not_implemented_no_grad(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda x: x * 2)
    with api.no_grad():
        return _values(op(api.randn(2, requires_grad=True) * 0 + 1))


# -- autograd formulas ---------------------------------------------------------------------
def _sin_op(api: Api, q: str, backward: Callable[..., Any], save: Optional[Callable[..., Any]] = None) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda x: x.sin())
    api.custom_ops.impl_save_for_backward(q)(save or (lambda inputs, output: inputs.x))
    api.custom_ops.impl_backward(q)(backward)
    return op


def backward_formula(api: Api, q: str) -> Any:
    seen = []

    def save(inputs, output):
        seen.append([type(inputs).__name__, list(inputs._fields)])
        return inputs.x

    op = _sin_op(api, q, lambda ctx, saved, grad: {"x": grad * saved.cos()}, save)
    x = api.randn(3, requires_grad=True) * 0 + 0.5
    x = x.detach().requires_grad_()
    y = op(x)
    y.sum().backward()
    return [seen, y.grad_fn.name(), _values(y), _values(x.grad)]


def backward_not_a_dict(api: Api, q: str) -> Any:
    op = _sin_op(api, q, lambda ctx, saved, grad: grad * saved.cos())
    op(api.randn([], requires_grad=True)).backward()


def backward_wrong_keys(api: Api, q: str) -> Any:
    op = _sin_op(api, q, lambda ctx, saved, grad: {"x": grad, "y": None})
    op(api.randn([], requires_grad=True)).backward()


def backward_tuple_gradient(api: Api, q: str) -> Any:
    op = _sin_op(api, q, lambda ctx, saved, grad: {"x": (grad,)})
    op(api.randn([], requires_grad=True)).backward()


def backward_gradient_for_int(api: Api, q: str) -> Any:
    def f(x: api.Tensor, dim: int) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda x, dim: x.sin())
    api.custom_ops.impl_save_for_backward(q)(lambda inputs, output: inputs.x)
    api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {"x": grad, "dim": None})
    op(api.randn([], requires_grad=True), 3).backward()


def _list_op(api: Api, q: str, gradients: Any) -> Any:
    def f(xs: Sequence[api.Tensor]) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda xs: xs[0].sin())
    api.custom_ops.impl_save_for_backward(q)(lambda inputs, output: inputs.xs[0])
    api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {"xs": gradients(grad)})
    op([api.randn([], requires_grad=True) for _ in range(3)]).backward()


def backward_list_too_short(api: Api, q: str) -> Any:
    _list_op(api, q, lambda grad: [grad, None])


def backward_list_holds_a_tuple(api: Api, q: str) -> Any:
    _list_op(api, q, lambda grad: [grad, None, (None,)])


def backward_list_is_none(api: Api, q: str) -> Any:
    _list_op(api, q, lambda grad: None)


def backward_only(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda x: x.sin())
    api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {"x": grad})
    op(api.randn([], requires_grad=True))


def output_differentiability_not_a_list(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)
    api.custom_ops.impl_backward(q, output_differentiability=True)(lambda ctx, saved, grad: {})


def output_differentiability_of_int(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> Tuple[api.Tensor, int]:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda x: (x.clone(), 3))
    api.custom_ops.impl_save_for_backward(q)(lambda inputs, output: [])
    api.custom_ops.impl_backward(q, output_differentiability=[True, True])(lambda ctx, saved, g0, g1: {"x": g0})
    op(api.randn(3, requires_grad=True))


def output_differentiability_of_list(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> Tuple[List[api.Tensor], api.Tensor]:  # type: ignore[name-defined]
        raise NotImplementedError

    op = _define(api, q, f)
    api.custom_ops.impl(q)(lambda x: ([x.clone(), x.clone()], x.clone()))
    api.custom_ops.impl_save_for_backward(q)(lambda inputs, output: [])
    api.custom_ops.impl_backward(q, output_differentiability=[False, True])(lambda ctx, saved, gl, g: {"x": g})
    [a, b], c = op(api.randn(3, requires_grad=True))
    return [a.requires_grad, b.requires_grad, c.requires_grad]


def backward_of_list_return(api: Api, q: str) -> Any:
    def f(x: api.Tensor) -> api.Tensor:  # type: ignore[name-defined]
        raise NotImplementedError

    _define(api, q, f)
    api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {"x": grad})
    return sorted(k for k in api.impl.global_registry[q]._impls)


# -- operators defined with Library ------------------------------------------------------
def _library_op(api: Api, q: str, schema: str, kernels: dict) -> Any:
    ns, name = q.split("::")
    lib = api.Library(ns, "FRAGMENT")
    lib.define(name + schema)
    for key, kernel in kernels.items():
        lib.impl(name, kernel, key)
    return lib


def existing_op_impl(api: Api, q: str) -> Any:
    lib = _library_op(api, q, "(Tensor x) -> Tensor", {})
    try:
        api.custom_ops.impl(q)(lambda x: x * 3)
        return _values(api.impl.get_op(q)(api.randn(2) * 0 + 1))
    finally:
        _destroy_custom_op(api, q)
        lib._destroy()


def _existing(api: Api, q: str, schema: str, kernels: dict, register: Callable[[], Any]) -> Any:
    lib = _library_op(api, q, schema, kernels)
    try:
        return register()
    finally:
        _destroy_custom_op(api, q)
        lib._destroy()


def existing_op_with_cpu_kernel(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor x) -> Tensor", {"CompositeExplicitAutograd": lambda x: x},
                     lambda: api.custom_ops.impl(q, device_types="cpu", func=lambda x: x))


def existing_op_save_for_backward_implicit(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor x) -> Tensor", {"CompositeImplicitAutograd": lambda x: x},
                     lambda: api.custom_ops.impl_save_for_backward(q)(lambda inputs, output: None))


def existing_op_backward_autograd_cpu(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor x) -> Tensor", {"AutogradCPU": lambda x: x},
                     lambda: api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {}))


def existing_op_backward_view(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor(a) x) -> Tensor(a)", {},
                     lambda: api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {}))


def existing_op_backward_mutable(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor(a!) x) -> Tensor", {},
                     lambda: api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {}))


def existing_op_backward_no_returns(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor x) -> ()", {},
                     lambda: api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {}))


def existing_op_backward_optional_return(api: Api, q: str) -> Any:
    return _existing(api, q, "(Tensor x) -> Tensor?", {},
                     lambda: api.custom_ops.impl_backward(q)(lambda ctx, saved, grad: {}))


def existing_op_impl_abstract_meta(api: Api, q: str) -> Any:
    def register() -> Any:
        api.impl._find_custom_op(q, also_check_torch_library=True).impl_abstract()(lambda x: x)

    return _existing(api, q, "(Tensor x) -> Tensor", {"Meta": lambda x: x}, register)


CASES = [
    invalid_schema, overload_in_name, no_namespace, reserved_namespace, name_mismatch, not_a_function,
    mutable_schema, view_schema, no_returns_schema, self_argument, manual_schema_names_differ,
    manual_schema_varargs, manual_schema_defaults, manual_schema_annotated, manual_schema_matches,
    private_constructor, defined_twice, unknown_custom_op, unknown_operator, invalid_device_type,
    no_cpu_impl, no_tensor_inputs, impl_cpu, impl_twice, autograd_not_implemented,
    autograd_not_implemented_no_grad, backward_formula, backward_not_a_dict, backward_wrong_keys,
    backward_tuple_gradient, backward_gradient_for_int, backward_list_too_short, backward_list_holds_a_tuple,
    backward_list_is_none, backward_only, output_differentiability_not_a_list, output_differentiability_of_int,
    output_differentiability_of_list, backward_of_list_return, existing_op_impl, existing_op_with_cpu_kernel,
    existing_op_save_for_backward_implicit, existing_op_backward_autograd_cpu, existing_op_backward_view,
    existing_op_backward_mutable, existing_op_backward_no_returns, existing_op_backward_optional_return,
    existing_op_impl_abstract_meta,
]


def run(api: Api, ns: str) -> dict[str, Any]:
    """Each case's outcome, by name; every CustomOp a case made is destroyed after it."""
    results = {}
    for case in CASES:
        qualname = f"{ns}::{case.__name__}"
        results[case.__name__] = _outcome(api, case, qualname)
        for name in [name for name in api.impl.global_registry if name.startswith(f"{ns}::")]:
            _destroy_custom_op(api, name)
    return results
