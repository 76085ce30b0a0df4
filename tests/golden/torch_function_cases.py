"""The ``__torch_function__`` cases, written once for torch 2.13 and for the prototype.

``run_all(lib)`` returns JSON-able answers: which function a subclass's
``__torch_function__`` or a mode sees for each call (its ``__name__``),
with which types, and what type the call returns; what disabling does;
``redispatch_function``; custom operators' calls.
generate_torch_function_golden.py records torch's answers,
tests/test_torch_function.py compares the prototype's on both engines.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Lib:
    Tensor: type
    tensor: Callable[..., Any]
    ones: Callable[..., Any]
    add: Callable[..., Any]  # torch.add (a torch.* function)
    TorchFunctionMode: type
    DisableTorchFunction: type
    DisableTorchFunctionSubclass: type
    disabled_torch_function_impl: Any
    redispatch_function: Callable[..., Any]
    has_torch_function: Callable[..., Any]
    handle_torch_function: Callable[..., Any]
    is_tensor_like: Callable[..., Any]
    custom_op: Callable[..., Any]


def _type_name(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_type_name(v) for v in value]
    return type(value).__name__


def _seen(func: Any, types: Any) -> list[Any]:
    return [getattr(func, "__name__", repr(func)), [t.__name__ for t in types]]


# Each call on a tensor ``x``: what the handlers see and the result's type.
CALLS: dict[str, Callable[[Lib, Any], Any]] = {
    "x + 1": lambda lib, x: x + 1,
    "1 + x": lambda lib, x: 1 + x,
    "x * x": lambda lib, x: x * x,
    "x - 1": lambda lib, x: x - 1,
    "x / 2": lambda lib, x: x / 2,
    "-x": lambda lib, x: -x,
    "x.sum()": lambda lib, x: x.sum(),
    "x.add(1)": lambda lib, x: x.add(1),
    "x.mul(2)": lambda lib, x: x.mul(2),
    "x.clone()": lambda lib, x: x.clone(),
    "x.detach()": lambda lib, x: x.detach(),
    "x.neg()": lambda lib, x: x.neg(),
    "x.exp()": lambda lib, x: x.exp(),
    "x.reshape(2, 1)": lambda lib, x: x.reshape(2, 1),
    "x.view(2, 1)": lambda lib, x: x.view(2, 1),
    "x.unsqueeze(0)": lambda lib, x: x.unsqueeze(0),
    "x[0]": lambda lib, x: x[0],
    "x.split(1)": lambda lib, x: x.split(1),
    "x.size()": lambda lib, x: x.size(),
    "x.dim()": lambda lib, x: x.dim(),
    "x.numel()": lambda lib, x: x.numel(),
    "x.tolist()": lambda lib, x: x.tolist(),
    "x.item() of x[0]": lambda lib, x: x[0].item(),
    "x == x": lambda lib, x: x == x,
    "x.eq(x)": lambda lib, x: x.eq(x),
    "x.clone().add_(1)": lambda lib, x: x.clone().add_(1),
    "torch.add(x, 1)": lambda lib, x: lib.add(x, 1),
    "ones * x": lambda lib, x: lib.ones(2) * x,
}


def _logging_subclass(lib: Lib, log: list) -> type:
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(_seen(func, types))
            return super().__torch_function__(func, types, args, kwargs)
    return Logged


def subclass_calls(lib: Lib) -> dict:
    """A subclass whose __torch_function__ logs and calls Tensor's default."""
    log: list = []
    logged = _logging_subclass(lib, log)
    x = lib.tensor([1.0, 2.0]).as_subclass(logged)
    out = {}
    for name, call in CALLS.items():
        log.clear()
        result = call(lib, x)
        out[name] = {"seen": list(log), "result": _type_name(result)}
    return out


def plain_subclass(lib: Lib) -> dict:
    """``class Sub(Tensor): pass``: results keep the subclass (Tensor's default __torch_function__)."""
    class Sub(lib.Tensor):
        pass

    x = lib.tensor([1.0, 2.0]).as_subclass(Sub)
    return {name: _type_name(call(lib, x)) for name, call in CALLS.items()}


def mode_calls(lib: Lib) -> dict:
    """A TorchFunctionMode sees plain tensors' calls; inside its handler it is off."""
    log: list = []

    class Logging(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(_seen(func, types))
            return func(*args, **(kwargs or {}))

    out: dict[str, Any] = {}
    x = lib.tensor([1.0, 2.0])
    with Logging():
        for name, call in CALLS.items():
            log.clear()
            result = call(lib, x)
            out[name] = {"seen": list(log), "result": _type_name(result)}
        log.clear()
        lib.ones(2)
        out["torch.ones(2)"] = list(log)
    log.clear()
    x + 1
    out["after the mode"] = list(log)

    class Nested(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["outer"] + _seen(func, types))
            with self:  # on again inside: the inner call is seen too
                if getattr(func, "__name__", "") == "sum":
                    (args[0] * 2)
            return func(*args, **(kwargs or {}))

    log.clear()
    with Nested():
        x.sum()
    out["a mode turned on again inside its handler"] = list(log)

    class Inner(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["inner"] + _seen(func, types))
            return func(*args, **(kwargs or {}))

    class Outer(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["outer"] + _seen(func, types))
            return func(*args, **(kwargs or {}))

    log.clear()
    with Outer(), Inner():
        x.neg()
    out["two modes: the innermost first, then the next"] = list(log)
    return out


# Tensor methods called without arguments (those the prototype's take none).
WITHOUT_ARGUMENTS = ("dim", "numel", "element_size", "__neg__", "abs", "neg", "reciprocal", "exp", "log", "relu", "any",
                     "sin", "cos", "acos", "rsqrt", "sin_", "nonzero", "t", "clone", "detach", "cpu", "is_neg",
                     "resolve_neg", "is_conj", "conj", "resolve_conj", "conj_physical", "is_inference", "stride",
                     "__bool__", "item", "tolist", "storage_offset", "data_ptr", "untyped_storage", "all")


def mode_types_without_arguments(lib: Lib) -> dict:
    """What a mode sees for each method called without arguments: torch's
    argument-less bindings give self's type, the others none."""
    log: list = []

    class Logging(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(_seen(func, types))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([1.0])
    out = {}
    for name in WITHOUT_ARGUMENTS:
        log.clear()
        with Logging():
            getattr(x, name)()
        out[name] = list(log)
    return out


def subclass_and_mode(lib: Lib) -> dict:
    """A mode first, then the subclass's handler."""
    log: list = []
    logged = _logging_subclass(lib, log)

    class Mode(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["mode"] + _seen(func, types))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([1.0, 2.0]).as_subclass(logged)
    with Mode():
        result = x + 1
    return {"seen": log, "result": _type_name(result)}


def disabling(lib: Lib) -> dict:
    """DisableTorchFunctionSubclass turns off subclasses' handlers, DisableTorchFunction modes too."""
    log: list = []
    logged = _logging_subclass(lib, log)

    class Mode(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["mode"] + _seen(func, types))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([1.0, 2.0]).as_subclass(logged)
    out = {}
    with lib.DisableTorchFunctionSubclass():
        result = x + 1
        out["subclass off"] = {"seen": list(log), "result": _type_name(result),
                               "has_torch_function": lib.has_torch_function((x,))}
    log.clear()
    with Mode(), lib.DisableTorchFunctionSubclass():
        result = x + 1
        out["subclass off, mode on"] = {"seen": list(log), "result": _type_name(result)}
    log.clear()
    with Mode(), lib.DisableTorchFunctionSubclass():
        x.neg(), x.split(1), x.add(1)
        out["subclass off, mode on: each kind of method"] = list(log)
    log.clear()
    with Mode(), lib.DisableTorchFunction():
        result = x + 1
        out["all off"] = {"seen": list(log), "result": _type_name(result),
                          "has_torch_function": lib.has_torch_function((x,))}
    log.clear()
    result = x + 1
    out["on again"] = {"seen": list(log), "result": _type_name(result)}

    class Disabled(lib.Tensor):
        __torch_function__ = lib.disabled_torch_function_impl

    d = lib.tensor([1.0]).as_subclass(Disabled)
    out["a subclass with _disabled_torch_function_impl"] = {"result": _type_name(d + 1),
                                                            "has_torch_function": lib.has_torch_function((d,))}

    class Answers(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    out["a subclass with __torch_dispatch__ has its __torch_function__ disabled"] = (
        Answers.__torch_function__ is lib.disabled_torch_function_impl)
    return out


def queries(lib: Lib) -> dict:
    """has_torch_function, is_tensor_like, handle_torch_function's order and its TypeError."""
    log: list = []
    logged = _logging_subclass(lib, log)

    class Declines(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(["declines"] + _seen(func, types))
            return NotImplemented

    class SubLogged(logged):  # type: ignore[valid-type,misc]
        pass

    plain = lib.tensor([1.0])
    x = plain.as_subclass(logged)
    sub = plain.as_subclass(SubLogged)
    declines = plain.as_subclass(Declines)

    def scaled(a: Any, b: Any) -> Any:
        if lib.has_torch_function((a, b)):
            return lib.handle_torch_function(scaled, (a, b), a, b)
        return a * b

    out: dict[str, Any] = {
        "has_torch_function": [lib.has_torch_function((plain,)), lib.has_torch_function((x,)),
                               lib.has_torch_function((1, plain)), lib.has_torch_function(([plain, x],))],
        "is_tensor_like": [lib.is_tensor_like(plain), lib.is_tensor_like(x), lib.is_tensor_like(1),
                           lib.is_tensor_like([plain])],
    }
    log.clear()
    out["scaled(x, sub): a subclass first"] = {"result": _type_name(scaled(x, sub)), "seen": list(log)}
    log.clear()
    try:
        scaled(declines, declines)
        out["every handler declines"] = "no error"
    except TypeError as exc:
        out["every handler declines"] = {"error": "TypeError", "seen": list(log),
                                         "names the types": "Declines" in str(exc)}
    return out


def redispatching(lib: Lib) -> dict:
    """redispatch_function skips one check: the function's own; the calls inside it are checked."""
    log: list = []

    class Redispatching(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(_seen(func, types))
            return lib.redispatch_function(func, types, args, kwargs)

    x = lib.tensor([3.0]).as_subclass(Redispatching)

    def scaled(a: Any, b: Any) -> Any:
        if lib.has_torch_function((a, b)):
            return lib.handle_torch_function(scaled, (a, b), a, b)
        return a * b + 1

    out = {}
    result = scaled(x, x)
    out["scaled(x, x)"] = {"seen": list(log), "result": _type_name(result)}
    log.clear()
    result = x.sum()
    out["x.sum()"] = {"seen": list(log), "result": _type_name(result)}
    log.clear()

    class Mode(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["mode"] + _seen(func, types))
            with self:
                return lib.redispatch_function(func, types, args, kwargs)

    plain = lib.tensor([3.0])
    with Mode():
        result = scaled(plain, plain)
    out["a mode redispatching with itself on"] = {"seen": list(log), "result": _type_name(result)}
    return out


def custom_operators(lib: Lib, namespace: str) -> dict:
    """A custom operator's call reaches __torch_function__ with the operator; inside it, x + 1 again."""
    log: list = []

    class Redispatching(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(_seen(func, types))
            result = lib.redispatch_function(func, types, args, kwargs)
            return result.as_subclass(cls) if type(result) is lib.Tensor else result

    @lib.custom_op(f"{namespace}::plus_one", mutates_args=(), schema="(Tensor x) -> Tensor")
    def plus_one(x):
        return x + 1

    x = lib.tensor([1.0, 2.0]).as_subclass(Redispatching)
    result = plus_one(x)
    out = {"seen": list(log), "result": _type_name(result), "values": result.tolist()}
    log.clear()

    class Mode(lib.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["mode"] + _seen(func, types))
            return func(*args, **(kwargs or {}))

    with Mode():
        plus_one(lib.tensor([1.0]))
    out["under a mode"] = list(log)
    return out


def run_all(lib: Lib, namespace: str) -> dict:
    return {"subclass_calls": subclass_calls(lib), "plain_subclass": plain_subclass(lib), "mode_calls": mode_calls(lib),
            "mode_types_without_arguments": mode_types_without_arguments(lib),
            "subclass_and_mode": subclass_and_mode(lib), "disabling": disabling(lib), "queries": queries(lib),
            "redispatching": redispatching(lib), "custom_operators": custom_operators(lib, namespace)}
