"""In-place writes through views under autograd (torch's CopySlices and view
grad_fn regeneration), written once and run on torch 2.13
(generate_view_inplace_golden.py) and on dispatcher.prototype through
tests/torch_shim.py (tests/test_prototype_view_inplace.py).  ``run(torch)``
returns, per case, what torch shows of it: grad_fn names (with the names of
their next_functions), versions, values and gradients as nested lists, or
the error's type and text.  Inputs are small fixed numbers."""
from typing import Any, Callable


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  (the case records which error, as torch raised it)
        return f"{type(exc).__name__}: {exc}"


def _node(fn: Any) -> Any:
    """A grad_fn's class name and those of its next functions (None where an edge is empty)."""
    if fn is None:
        return None
    # (torch's next_functions are (node, output number) pairs; the prototype's, nodes)
    nodes = [f[0] if isinstance(f, tuple) else f for f in fn.next_functions]
    return [fn.name(), [None if f is None else f.name() for f in nodes]]


def _leaf(torch: Any, *shape: int) -> Any:
    count = 1
    for n in shape:
        count *= n
    return torch.tensor([float(i + 1) for i in range(count)]).view(*shape).requires_grad_()


def _write_through_view(torch: Any, make_view: Callable[[Any], Any], write: Callable[[Any], Any]) -> dict[str, Any]:
    """base = leaf * 1; view = make_view(base); write(view); backward of (base * base).sum()."""
    leaf = _leaf(torch, 2, 3)
    base = leaf * 1
    view = make_view(base)
    returned = write(view)
    out = {"same object": returned is view, "base grad_fn": _node(base.grad_fn), "view grad_fn": _node(view.grad_fn),
           "versions": [base._version, view._version], "base": base.tolist(), "view is leaf": view.is_leaf,
           "view requires grad": view.requires_grad}
    (base * base).sum().backward()
    out["leaf grad"] = leaf.grad.tolist()
    return out


def _through_view_then_backward_of_view(torch: Any) -> dict[str, Any]:
    """The view's regenerated history leads to the base's: backward from the view itself."""
    leaf = _leaf(torch, 2, 3)
    base = leaf * 1
    view = base[1]
    view.mul_(3)
    view.sum().backward()
    return {"view grad_fn": _node(view.grad_fn), "leaf grad": leaf.grad.tolist()}


def _other_operand_gets_gradient(torch: Any) -> dict[str, Any]:
    leaf = _leaf(torch, 2, 3)
    other = torch.tensor([2.0, 3.0, 4.0]).requires_grad_()
    base = leaf * 1
    base[0].mul_(other)
    base.sum().backward()
    return {"base grad_fn": _node(base.grad_fn), "leaf grad": leaf.grad.tolist(), "other grad": other.grad.tolist()}


def _base_without_grad(torch: Any) -> dict[str, Any]:
    """A base that does not require grad gets history from the written view's other operand."""
    base = torch.zeros(2, 3)
    other = torch.tensor([1.0, 2.0, 3.0]).requires_grad_()
    view = base[1]
    view.add_(other)
    out = {"base requires grad": base.requires_grad, "base grad_fn": _node(base.grad_fn),
           "view grad_fn": _node(view.grad_fn), "base": base.tolist()}
    (base * 2).sum().backward()
    out["other grad"] = other.grad.tolist()
    return out


def _older_view_after_base_write(torch: Any) -> dict[str, Any]:
    """A view made before its base was written in place sees the base's new history."""
    leaf = _leaf(torch, 2, 3)
    base = leaf * 1
    view = base[0]
    before = _node(view.grad_fn)
    base.mul_(2)
    after = _node(view.grad_fn)
    view.sum().backward()
    return {"before": before, "after": after, "leaf grad": leaf.grad.tolist()}


def _sibling_view(torch: Any) -> dict[str, Any]:
    """A write through one view; another view of the same base sees it in backward."""
    leaf = _leaf(torch, 2, 3)
    base = leaf * 1
    first, second = base[0], base[:, 1]
    first.mul_(5)
    out = {"second grad_fn": _node(second.grad_fn)}
    second.sum().backward()
    out["leaf grad"] = leaf.grad.tolist()
    return out


def _view_of_leaf(torch: Any) -> Any:
    leaf = _leaf(torch, 2, 3)
    return _try(lambda: leaf[0].mul_(2))


def _view_of_leaf_no_grad_base(torch: Any) -> Any:
    leaf = _leaf(torch, 2, 3)
    with torch.no_grad():
        view = leaf[0]
    return _try(lambda: view.mul_(2).tolist())


def _view_made_in_no_grad(torch: Any) -> Any:
    leaf = _leaf(torch, 2, 3)
    base = leaf * 1
    with torch.no_grad():
        view = base[0]
    return _try(lambda: view.mul_(2))


def _view_made_and_written_in_no_grad(torch: Any) -> dict[str, Any]:
    leaf = _leaf(torch, 2, 3)
    base = leaf * 1
    with torch.no_grad():
        view = base[0]
        view.mul_(2)
    return {"base grad_fn": _node(base.grad_fn), "versions": [base._version], "base": base.tolist()}


def _multiple_output_view(torch: Any) -> Any:
    leaf = _leaf(torch, 4)
    first, _ = (leaf * 1).split(2)
    return _try(lambda: first.mul_(2))


def _custom_op_view(torch: Any, pure: bool) -> Any:
    """A custom operator returning a view of its input: writable in place only if
    its setup_context sets ``ctx._is_pure_view`` (then the view is regenerated by
    calling the operator again on the base)."""
    name = f"view_inplace_cases::alias_of_{'pure' if pure else 'plain'}"

    @torch.library.custom_op(name, mutates_args=(), schema="(Tensor(a) x) -> Tensor(a)")
    def alias_of(x: Any) -> Any:
        return x.view_as(x)

    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        if pure:
            ctx._is_pure_view = True

    alias_of.register_autograd(lambda ctx, g: g * 10, setup_context=setup_context)
    leaf = _leaf(torch, 3)
    base = leaf * 1
    view = alias_of(base)
    out = {"is view": view._is_view(), "base is": view._base is base, "write": _try(lambda: view.mul_(2).tolist())}
    if pure:
        out["base grad_fn"] = _node(base.grad_fn)
        base.sum().backward()
        out["leaf grad"] = leaf.grad.tolist()
    return out


def _dunders(torch: Any) -> dict[str, Any]:
    out = {}
    for name, write in (("iadd", lambda t: t.__iadd__(2)), ("isub", lambda t: t.__isub__(2)),
                        ("imul", lambda t: t.__imul__(2)), ("itruediv", lambda t: t.__itruediv__(2)),
                        ("iadd tensor", lambda t: t.__iadd__(torch.tensor([1.0, 2.0, 3.0]))),
                        ("isub alpha-free", lambda t: t.__isub__(torch.tensor(0.5)))):
        t = torch.tensor([1.0, 2.0, 3.0])
        result = write(t)
        out[name] = [result is t, t._version, t.tolist()]
    ints = torch.tensor([1, 2, 3])
    out["int itruediv"] = _try(lambda: ints.__itruediv__(2))
    out["int imul float"] = _try(lambda: ints.__imul__(2.5))
    out["int iadd"] = [ints.__iadd__(2).tolist(), ints._version]
    out["broadcast"] = _try(lambda: torch.tensor([1.0]).__imul__(torch.tensor([1.0, 2.0])))
    return out


def _inplace_grad_fns(torch: Any) -> dict[str, Any]:
    """The nodes in-place arithmetic records (on a non-leaf that requires grad)."""
    out = {}
    for name, write in (("add_ tensor", lambda t: t.add_(torch.tensor(1.0))), ("add_ number", lambda t: t.add_(1)),
                        ("sub_ tensor", lambda t: t.sub_(torch.tensor(1.0))), ("sub_ number", lambda t: t.sub_(1)),
                        ("mul_ tensor", lambda t: t.mul_(torch.tensor(3.0))), ("mul_ number", lambda t: t.mul_(3)),
                        ("div_ tensor", lambda t: t.div_(torch.tensor(2.0))), ("div_ number", lambda t: t.div_(2)),
                        ("imul", lambda t: t.__imul__(3)), ("itruediv", lambda t: t.__itruediv__(2))):
        leaf = _leaf(torch, 3)
        t = leaf * 1
        write(t)
        t.sum().backward()
        out[name] = [_node(t.grad_fn), t._version, t.tolist(), leaf.grad.tolist()]
    return out


CASES: dict[str, Callable[[Any], Any]] = {
    "select mul_": lambda torch: _write_through_view(torch, lambda b: b[0], lambda v: v.mul_(2)),
    "select imul": lambda torch: _write_through_view(torch, lambda b: b[0], lambda v: v.__imul__(2)),
    "view iadd": lambda torch: _write_through_view(torch, lambda b: b.view(6), lambda v: v.__iadd__(1)),
    "transpose mul_ tensor": lambda torch: _write_through_view(torch, lambda b: b.t(),
                                                               lambda v: v.mul_(torch.tensor([[1.0, 2.0]]))),
    "slice of transpose sub_": lambda torch: _write_through_view(torch, lambda b: b.t()[1:], lambda v: v.sub_(1)),
    "diagonal div_": lambda torch: _write_through_view(torch, lambda b: b.diagonal(), lambda v: v.div_(2)),
    "view copy_": lambda torch: _write_through_view(torch, lambda b: b[1],
                                                    lambda v: v.copy_(torch.tensor([7.0, 8.0, 9.0]))),
    "view fill_": lambda torch: _write_through_view(torch, lambda b: b[:, 0], lambda v: v.fill_(4.0)),
    "two writes": lambda torch: _write_through_view(torch, lambda b: b[0], lambda v: v.mul_(2).add_(1)),
    "backward of view": _through_view_then_backward_of_view,
    "other operand": _other_operand_gets_gradient,
    "base without grad": _base_without_grad,
    "older view after base write": _older_view_after_base_write,
    "sibling view": _sibling_view,
    "view of leaf": _view_of_leaf,
    "view of leaf made in no_grad": _view_of_leaf_no_grad_base,
    "view made in no_grad": _view_made_in_no_grad,
    "view made and written in no_grad": _view_made_and_written_in_no_grad,
    "multiple output view": _multiple_output_view,
    "custom op view": lambda torch: _custom_op_view(torch, False),
    "custom op pure view": lambda torch: _custom_op_view(torch, True),
    "dunders": _dunders,
    "in-place grad_fns": _inplace_grad_fns,
}


def run_two_tensor(torch: Any, two_tensor: Any) -> dict[str, Any]:
    """Writes through views of a tensor subclass whose handler sees the view operators
    (torch's TwoTensor, from torch.testing._internal.two_tensor): torch replays the
    views on the base (SelectBackward0), instead of an as_strided of it."""
    def written(make_view: Callable[[Any], Any]) -> Any:
        leaf = two_tensor.TwoTensor(torch.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                    torch.tensor([[5.0, 6.0], [7.0, 8.0]])).requires_grad_()
        base = leaf * 1
        view = make_view(base)
        view.mul_(3)
        out = [_node(base.grad_fn), _node(view.grad_fn), [base.a.tolist(), base.b.tolist()]]
        (base * base).sum().backward()
        return out + [[leaf.grad.a.tolist(), leaf.grad.b.tolist()]]

    return {"select": _try(lambda: written(lambda b: b[1])),
            "select of transpose": _try(lambda: written(lambda b: b.t()[0]))}


def run(torch: Any) -> dict[str, Any]:
    return {name: _try(lambda: case(torch)) for name, case in CASES.items()}
