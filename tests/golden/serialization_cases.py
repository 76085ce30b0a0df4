"""torch.save / torch.load and storage identity (StorageWeakRef), written once
and run on torch 2.13 (generate_serialization_golden.py) and on this package
through tests/torch_shim.py (tests/test_serialization.py): ``run(torch,
modules)`` returns what each case gave.  ``modules`` gives
``torch.multiprocessing.reductions`` and ``torch.utils._python_dispatch``
(the shim's names of them are tests/torch_test_modules.py's)."""
import io
import os
import pickle
import tempfile
from typing import Any


def _error(fn: Any) -> str:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  (the case records which error, as torch raised it)
        return f"{type(exc).__name__}: {exc}"
    return "no error"


def run(torch: Any, reductions: Any, python_dispatch: Any) -> dict[str, Any]:
    StorageWeakRef = reductions.StorageWeakRef

    class Wrapper(torch.Tensor):
        @staticmethod
        def __new__(cls, elem: Any) -> Any:
            r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, device=elem.device,
                                                    strides=elem.stride(), requires_grad=elem.requires_grad)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            unwrapped = [a.elem if isinstance(a, Wrapper) else a for a in args]
            out = func(*unwrapped, **kwargs)
            wrapped = Wrapper(out) if isinstance(out, torch.Tensor) else out
            return python_dispatch.return_and_correct_aliasing(func, args, kwargs, wrapped)

    # pickle finds a class by its module and name: this one is the module's ``Wrapper``.
    Wrapper.__qualname__ = "Wrapper"
    globals()["Wrapper"] = Wrapper

    def same_storage(a: Any, b: Any) -> bool:
        return StorageWeakRef(a.untyped_storage()) == StorageWeakRef(b.untyped_storage())

    out: dict[str, Any] = {}
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = Wrapper(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    out["storage: a tensor and its view"] = same_storage(x, x.t())
    out["storage: a tensor and its transpose's row"] = same_storage(x, x.t()[1])
    out["storage: a tensor and its clone"] = same_storage(x, x.clone())
    out["storage: two tensors"] = same_storage(x, torch.tensor([1.0]))
    out["storage: a wrapper and itself, asked twice"] = same_storage(w, w)
    out["storage: a wrapper and its view"] = same_storage(w, w.view(2, 2))
    out["storage: a wrapper and its clone"] = same_storage(w, w.clone())
    out["storage: a wrapper and its inner tensor"] = same_storage(w, w.elem)
    out["storage: two wrappers"] = same_storage(w, Wrapper(torch.tensor([1.0])))

    def round_trip(obj: Any, **load_kwargs: Any) -> Any:
        f = io.BytesIO()
        torch.save(obj, f)
        f.seek(0)
        return torch.load(f, **load_kwargs)

    for name, t in [("float32", torch.tensor([1.5, -2.25])), ("int64", torch.tensor([[1, 2], [3, 4]])),
                    ("bool", torch.tensor([True, False])), ("float64 0-d", torch.tensor(2.5, dtype=torch.float64))]:
        back = round_trip(t)
        out[f"save/load {name}"] = [str(back.dtype), list(back.shape), back.tolist(), back is t]
    transposed = round_trip(torch.tensor([[1, 2, 3], [4, 5, 6]]).t())
    out["save/load a transposed view"] = [list(transposed.shape), transposed.tolist()]
    nested = round_trip({"w": torch.tensor([1.0]), "steps": [1, 2.5, "three", None]})
    out["save/load a dict of a tensor and numbers"] = [nested["w"].tolist(), nested["steps"]]
    shared = torch.tensor([1.0, 2.0])
    both = round_trip([shared, shared])
    out["save/load one tensor twice is one tensor"] = both[0] is both[1]
    grad = round_trip(torch.tensor([1.0, 2.0], requires_grad=True))
    out["save/load keeps requires_grad"] = grad.requires_grad

    out["load a wrapper subclass not allowed"] = _error(lambda: round_trip(w)).replace(__name__, "<cases>")
    with torch.serialization.safe_globals([Wrapper]):
        back = round_trip(w)
    out["load a wrapper subclass allowed by safe_globals"] = [type(back) is Wrapper, str(back.dtype),
                                                               back.elem.tolist(), list(back.shape)]
    back = round_trip(w, weights_only=False)
    out["load a wrapper subclass with weights_only=False"] = [type(back) is Wrapper, back.elem.tolist()]
    out["save to a number"] = _error(lambda: torch.save(torch.tensor([1.0]), 5))
    # Its first line: what the unpickler then says of the bad byte is the unpickler's own.
    out["load garbage"] = _error(lambda: torch.load(io.BytesIO(b"garbage"))).split("\n")[0]
    out["load a non-tensor object not allowed"] = _error(
        lambda: round_trip(pickle.PickleError("x"))).replace(__name__, "<cases>")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "t.pt")
        torch.save(torch.tensor([7, 8]), path)
        out["save/load by path"] = torch.load(path).tolist()
    return out
