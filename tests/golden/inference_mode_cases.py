"""torch.inference_mode and inference tensors, written once and run on torch
2.13 (generate_inference_mode_golden.py) and on dispatcher.prototype through
tests/torch_shim.py (tests/test_inference_mode.py): ``run(torch)`` returns
what each case gave (a value, or the error's type and text)."""
from typing import Any, Callable


def _try(fn: Callable[[], Any]) -> Any:
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001  (the case records which error, as torch raised it)
        return f"{type(exc).__name__}: {exc}"
    if isinstance(out, tuple):
        return list(out)
    return out


def _keys(torch: Any) -> list[bool]:
    """This thread's TLS: ADInplaceOrView included, autograd keys excluded."""
    key = torch._C.DispatchKey
    return [torch._C._dispatch_tls_is_dispatch_key_included(key.ADInplaceOrView),
            torch._C._dispatch_tls_is_dispatch_key_excluded(key.ADInplaceOrView),
            torch._C._dispatch_tls_is_dispatch_key_excluded(key.AutogradFunctionality),
            torch._C._dispatch_tls_is_dispatch_key_excluded(key.AutogradOther)]


def run(torch: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"tls outside": _keys(torch), "enabled outside": torch.is_inference_mode_enabled()}
    with torch.inference_mode():
        out["tls inside"] = _keys(torch)
        out["enabled inside"] = torch.is_inference_mode_enabled()
        c = torch.ones(2)
        out["made inside"] = [c.is_inference(), c.requires_grad]
        with torch.inference_mode(False):
            out["tls inside inference_mode(False)"] = _keys(torch)
            out["enabled inside inference_mode(False)"] = torch.is_inference_mode_enabled()
            out["made inside inference_mode(False)"] = torch.ones(1).is_inference()
        normal_inside = c + 1
        out["a result inside"] = normal_inside.is_inference()
        c.add_(1)
        out["in-place inside"] = c.tolist()
    out["tls after"] = _keys(torch)
    out["made outside"] = torch.ones(2).is_inference()
    out["inference tensor outside"] = c.is_inference()
    # Each write on a tensor of its own: torch's add_ writes before it refuses.
    with torch.inference_mode():
        written = [torch.ones(2) for _ in range(3)]
    out["in-place outside"] = _try(lambda: written[0].add_(1))
    out["copy_ into outside"] = _try(lambda: written[1].copy_(torch.zeros(2)))
    out["fill_ outside"] = _try(lambda: torch.ops.aten.fill_.Scalar(written[2], 3))
    out["_version"] = _try(lambda: c._version)
    out["requires_grad_ outside"] = _try(lambda: c.requires_grad_())
    out["a result of it outside"] = _try(lambda: [(c * 2).is_inference(), (c * 2).tolist()])
    out["clone outside"] = _try(lambda: c.clone().is_inference())
    out["detach outside"] = _try(lambda: c.detach().is_inference())
    out["normal in-place with it"] = _try(lambda: torch.ones(2).add_(c).tolist())
    leaf = torch.ones(2).requires_grad_()
    out["saved for backward"] = _try(lambda: leaf * c)
    out["not saved (add)"] = _try(lambda: (leaf + c).requires_grad)

    normal = torch.ones(2)
    with torch.inference_mode():
        normal.add_(1)
        view = normal.view(2)
        out["a normal tensor inside"] = [normal.is_inference(), view.is_inference(), normal.tolist()]
        grad_leaf = torch.ones(2).requires_grad_()
        product = grad_leaf * 2
        out["nothing recorded inside"] = [product.requires_grad, product.grad_fn is None]

    @torch.inference_mode()
    def called() -> bool:
        return torch.is_inference_mode_enabled()

    @torch.inference_mode
    def bare() -> bool:
        return torch.is_inference_mode_enabled()

    @torch.inference_mode(False)
    def off() -> bool:
        return torch.is_inference_mode_enabled()

    out["decorators"] = [called(), bare(), off(), called.__name__, torch.is_inference_mode_enabled()]
    with torch.inference_mode():
        out["inference_mode(False) decorator inside"] = off()

    def raises() -> None:
        with torch.inference_mode():
            raise ValueError("inside")

    out["an exception leaves it"] = [_try(raises), torch.is_inference_mode_enabled(), _keys(torch)]
    return out
