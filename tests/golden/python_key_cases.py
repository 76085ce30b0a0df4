"""The Python-key scenarios whose events tests/golden/python_key_golden.json records.

Written once, for either library: each scenario takes an ``Api`` (torch's,
built by generate_python_key_golden.py, or one of dispatcher's engines,
built by tests/test_python_key.py) and returns the events its handlers and
kernels logged: which handler ran for which operator, with which ``types``,
the thread's include/exclude sets it saw, the mode on top of the stack, the
sets ``RestorePythonTLSSnapshot`` gives back, and the errors of misuse.  The
operators are defined in namespace ``ns`` with kernels that return their
input, so only the dispatcher's routing shows.  No imports of either library
here.
"""
from typing import Any, Callable, NamedTuple


class Api(NamedTuple):
    """One library's pieces, as the scenarios use them."""

    library: Callable[[str, str], Any]  # Library(ns, kind)
    ops: Any  # torch.ops, or an OpNamespaces
    tensor: Callable[[], Any]  # a plain CPU tensor
    TensorBase: type  # what a tensor subclass derives from
    make_subclass: Callable[[type, Any], Any]  # (cls, elem) -> a tensor of cls wrapping elem (its .elem)
    TorchDispatchMode: type
    current_mode: Callable[[], Any]
    include_set: Callable[[], str]  # repr of this thread's included set
    exclude_set: Callable[[], str]
    exclude_guard: Callable[[list[str]], Any]  # a context excluding the keys named
    include_guard: Callable[[str], Any]  # a context including the key named
    restore_snapshot: Callable[[], Any]  # RestorePythonTLSSnapshot()
    after_autograd: Any  # the after-autograd keyset


def tls(api: Api) -> list[str]:
    return [api.include_set(), api.exclude_set()]


def snapshot(api: Api) -> Any:
    try:
        with api.restore_snapshot():
            return tls(api)
    except RuntimeError as exc:
        return {"error": "RuntimeError", "message": str(exc)}


def _mode_name(api: Api) -> str:
    return type(api.current_mode()).__name__


def define(api: Api, ns: str) -> Any:
    """The scenarios' operators, with kernels returning their input."""
    lib = api.library(ns, "FRAGMENT")
    for schema in ("f(Tensor x) -> Tensor", "g(Tensor x) -> Tensor", "h(Tensor x) -> Tensor",
                   "both(Tensor x, Tensor y) -> Tensor", "three(Tensor a, Tensor b, Tensor c) -> Tensor",
                   "defaults(Tensor x, int a=1, int b=2, *, int c=3, int d=4) -> Tensor",
                   "composite(Tensor x) -> Tensor", "listed(Tensor[] xs) -> Tensor"):
        lib.define(schema)
    for name in ("f", "g", "h"):
        lib.impl(name, lambda x: x, "CPU")
    lib.impl("both", lambda x, y: x, "CPU")
    lib.impl("three", lambda a, b, c: a, "CPU")
    lib.impl("defaults", lambda x, a=1, b=2, *, c=3, d=4: x, "CPU")
    lib.impl("listed", lambda xs: xs[0], "CPU")
    namespace = getattr(api.ops, ns)
    lib.impl("composite", lambda x: namespace.g.default(namespace.f.default(x)), "CompositeImplicitAutograd")
    return lib


def scenarios(api: Api, ns: str) -> dict[str, Any]:
    """Every scenario's events, by name (the library defining ``ns`` stays alive while they run)."""
    lib = define(api, ns)
    op = getattr(api.ops, ns)
    events: list[Any] = []
    out: dict[str, Any] = {}

    class Log(api.TorchDispatchMode):  # type: ignore[name-defined,misc]
        def __init__(self, tag: str) -> None:
            super().__init__()
            self.tag = tag

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            events.append([self.tag, str(func), [t.__name__ for t in types], tls(api), _mode_name(api),
                           snapshot(api)])
            return func(*args, **(kwargs or {}))

    class Sub(api.TensorBase):  # type: ignore[name-defined,misc]
        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            events.append(["Sub", str(func), [t.__name__ for t in types], tls(api), _mode_name(api),
                           snapshot(api)])
            unwrapped = [a.elem if isinstance(a, Sub) else a for a in args]
            return func(*unwrapped, **(kwargs or {}))

    def run(name: str, body: Callable[[], Any]) -> None:
        events.clear()
        body()
        out[name] = list(events)

    x = api.tensor()

    def mode_sees_calls() -> None:
        with Log("mode"):
            op.f.default(x)
            op.both.default(x, x)
        events.append(["after", tls(api), _mode_name(api)])

    run("mode_sees_calls", mode_sees_calls)

    # A mode entered inside a kernel that redispatches: the redispatch goes
    # on below autograd with its keyset as given, a fresh call sees the mode.
    mode_in_kernel = Log("in-kernel")

    def f_autograd(keyset: Any, t: Any) -> Any:
        events.append(["f_autograd", tls(api)])
        with mode_in_kernel:
            result = op.f.default.redispatch(keyset & api.after_autograd, t)
            op.g.default(t)
        return result

    lib.impl("f", f_autograd, "AutogradCPU", with_keyset=True)
    run("mode_entered_in_kernel", lambda: op.f.default(x))

    # A key excluded inside a kernel, then a call on a subclass: the snapshot has it.
    def h_autograd(keyset: Any, t: Any) -> Any:
        with api.exclude_guard(["FuncTorchBatched"]):
            events.append(["h_autograd", tls(api)])
            return op.g.default(api.make_subclass(Sub, t))

    lib.impl("h", h_autograd, "AutogradCPU", with_keyset=True)
    run("key_excluded_in_kernel", lambda: op.h.default(x))

    s = api.make_subclass(Sub, api.tensor())
    run("subclass", lambda: op.g.default(s))
    run("subclass_with_autograd_kernel", lambda: op.f.default(s))

    def excluded_at_top() -> None:
        # Autograd excluded (its functionality keys, as AutoDispatchBelowAutograd does):
        # f's autograd kernel is skipped, and the snapshot shows the exclusion.
        with api.exclude_guard(["AutogradFunctionality", "AutogradOther", "AutogradNestedTensor"]):
            op.f.default(s)

    run("key_excluded_at_top", excluded_at_top)

    class DeclineSubclasses(api.TorchDispatchMode):  # type: ignore[name-defined,misc]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            events.append(["decline", str(func), [t.__name__ for t in types], tls(api)])
            if types:
                return NotImplemented
            return func(*args, **(kwargs or {}))

    def mode_declines() -> None:
        with DeclineSubclasses():
            op.g.default(s)

    run("mode_returns_not_implemented", mode_declines)

    def nested() -> None:
        with Log("outer"), Log("inner"):
            op.g.default(s)

    run("nested_modes", nested)

    class Reenter(api.TorchDispatchMode):  # type: ignore[name-defined,misc]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            events.append(["reenter", str(func), tls(api)])
            if func is op.g.default:
                with Log("in-handler"):
                    op.composite.default(args[0])
            return func(*args, **(kwargs or {}))

    def mode_in_handler() -> None:
        with Reenter():
            op.g.default(x)

    run("mode_entered_in_handler", mode_in_handler)

    def composite() -> None:
        with Log("mode"):
            op.composite.default(x)

    run("composite_calls", composite)

    # Handler order: a subclass before its base, other types in argument order.
    class A(api.TensorBase):  # type: ignore[name-defined,misc]
        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            events.append([cls.__name__, str(func), [t.__name__ for t in types]])
            return NotImplemented

    class B(A):
        pass

    marker = api.tensor()

    class C(api.TensorBase):  # type: ignore[name-defined,misc]
        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            events.append(["C", str(func), [t.__name__ for t in types]])
            return marker

    a, b, c = (api.make_subclass(cls, api.tensor()) for cls in (A, B, C))

    def ordering() -> None:
        events.append(["C's result", op.three.default(a, c, b) is marker])
        events.append(["C's result", op.three.default(c, b, b) is marker])
        try:
            op.listed.default([x, b, a])
        except TypeError:
            events.append(["TypeError"])

    run("handler_order", ordering)

    def arguments() -> None:
        calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
            ((), {}), ((1,), {}), ((1, 2), {}), ((5,), {}), ((1, 7), {}), ((), {"c": 3}), ((), {"c": 9}),
            ((), {"a": 1, "d": 8}), ((), {"b": 6}), ((2,), {"b": 2, "c": 3, "d": 4}),
        ]

        class Arguments(api.TorchDispatchMode):  # type: ignore[name-defined,misc]
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                events.append([list(args[1:]), kwargs])
                return args[0]

        with Arguments():
            for extra, keywords in calls:
                op.defaults.default(x, *extra, **keywords)

    run("handler_arguments", arguments)

    def all_not_implemented() -> None:
        class Decline(api.TorchDispatchMode):  # type: ignore[name-defined,misc]
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                return NotImplemented

            def __repr__(self) -> str:
                return "<Decline mode>"

        for use_mode, call in ((False, lambda: op.both.default(a, b)), (True, lambda: op.g.default(x)),
                               (True, lambda: op.both.default(x, a))):
            try:
                if use_mode:
                    with Decline():
                        call()
                else:
                    call()
            except TypeError as exc:
                events.append(["TypeError", str(exc)])

    run("all_not_implemented", all_not_implemented)

    def python_included_by_hand() -> None:
        with api.include_guard("Python"):
            events.append(["result is input", op.g.default(x) is x])

    run("python_key_included_without_modes", python_included_by_hand)
    run("snapshot_outside_handlers", lambda: events.append(snapshot(api)))
    del lib
    return out
