"""What api_gaps_golden.json records: torch 2.13's answers for the features
PyTorch's test files needed of ``torch.library``, ``torch.ops`` and
``torch._C`` (issue 23): dtype names as ScalarType defaults (the schema
parser, infer_schema, custom_op), opaque schema types, the warn_always flag,
the error for Meta tensors reaching no Meta kernel, the list arguments a
custom operator's kernel gets, and an ops namespace's packets (``_dir``,
iteration, ``type(ns).__getattr__``) as a library comes and goes.

Written once for either library: ``run(torch, custom_ops)`` takes a ``torch``
module -- torch 2.13 itself (generate_api_gaps_golden.py), or
tests/torch_shim.py's over this package (tests/test_api_gaps.py) -- and its
older CustomOp API module (torch._custom_ops, dispatcher._custom_ops).  No imports of either library here.
"""
# No ``from __future__ import annotations``: the operators' annotations name the
# ``torch`` passed to run(), which infer_schema could not find by their text.
import collections.abc
import gc
import warnings
from typing import Any, Callable, Optional, Sequence

NS = "_api_gap_cases"

# torch 2.13's dtype names (torch.<name>), and names that are none.
DTYPE_NAMES = (
    "bfloat16", "bit", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bool", "cdouble", "cfloat", "chalf",
    "complex128", "complex32", "complex64", "double", "float", "float16", "float32", "float4_e2m1fn_x2", "float64",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "half", "int", "int1",
    "int16", "int2", "int3", "int32", "int4", "int5", "int6", "int64", "int7", "int8", "long", "qint32", "qint8",
    "quint2x4", "quint4x2", "quint8", "short", "uint1", "uint16", "uint2", "uint3", "uint32", "uint4", "uint5",
    "uint6", "uint64", "uint7", "uint8",
)
NOT_DTYPE_NAMES = ("Float", "Long", "float128", "nope")
# The dtypes of both libraries' torch modules, as infer_schema defaults.
SHIM_DTYPES = ("float", "float32", "float64", "float16", "half", "double", "int", "int32", "int64", "long", "bool",
               "complex64", "cfloat")
OPAQUE = "torch.testing.OpaqueObjectForApiGapCases"


def _first_line(exc: BaseException) -> str:
    """The message's first line, to its first colon (after which this package's
    parser says more than torch's: what it would have taken)."""
    line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return line.split(":")[0] + ":" if line.startswith("invalid numeric default value") else line


def _outcome(fn: Callable[[], Any], message: bool = True) -> Any:
    """What ``fn()`` gives (as text), or the exception it raises: its class and
    (unless ``message`` is False: the libraries word it differently) its message's first line."""
    try:
        return {"value": str(fn())}
    except Exception as exc:  # noqa: BLE001  (what is recorded is which exception)
        return {"error": type(exc).__name__, "is": [c.__name__ for c in type(exc).__mro__],
                "message": _first_line(exc) if message else ""}


def dtype_defaults(torch: Any) -> dict[str, Any]:
    parse = torch._C.parse_schema
    found: dict[str, Any] = {}
    for name in DTYPE_NAMES + NOT_DTYPE_NAMES:
        found[name] = {
            "ScalarType": _outcome(lambda: parse(f"f(ScalarType a={name}) -> ()")),
            "ScalarType?": _outcome(lambda: parse(f"f(ScalarType? a={name}) -> ()")),
            "int": _outcome(lambda: parse(f"f(int a={name}) -> ()")),
        }
    return found


def inferred_dtype_defaults(torch: Any) -> dict[str, Any]:
    """infer_schema's text for a dtype default, and the schema custom_op defines with it."""
    found: dict[str, Any] = {}
    for name in SHIM_DTYPES:
        default = getattr(torch, name)

        def fn(x: torch.Tensor, dt: torch.dtype = default, odt: Optional[torch.dtype] = default) -> torch.Tensor:
            raise NotImplementedError

        text = torch.library.infer_schema(fn, mutates_args=())
        op = torch.library.custom_op(f"{NS}::dtype_default_{name}", mutates_args=())(fn)
        found[name] = {"inferred": text, "defined": str(op._opoverload._schema)}
    return found


def opaque_types(torch: Any) -> list[Any]:
    """A sequence of registrations and parses, each step's outcome in order."""
    C = torch._C
    steps: list[Any] = []

    def step(label: str, fn: Callable[[], Any]) -> None:
        steps.append([label, _outcome(fn)])

    step("registered at first", lambda: C._is_opaque_type_registered(OPAQUE))
    step("register", lambda: C._register_opaque_type(OPAQUE))
    step("register again", lambda: C._register_opaque_type(OPAQUE))
    step("registered", lambda: C._is_opaque_type_registered(OPAQUE))
    step("parse", lambda: C.parse_schema(f"foo({OPAQUE} a, {OPAQUE}(a!)[] b, {OPAQUE}? c=None) -> ({OPAQUE}, Tensor)"))
    steps.append(["a default", _outcome(lambda: C.parse_schema(f"foo({OPAQUE} a=3) -> Tensor"), message=False)])
    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        step("define", lambda: lib.define(f"opaque_op({OPAQUE} a, int n) -> int"))
        lib.impl("opaque_op", lambda a, n: len(a.items) + n, "CompositeExplicitAutograd")

        class Holder:
            items = (1, 2, 3)

        op = getattr(getattr(torch.ops, NS), "opaque_op").default
        step("schema", lambda: op._schema)
        step("call with any object", lambda: op(Holder(), 4))
        step("unregister", lambda: C._unregister_opaque_type(OPAQUE))
        step("unregister again", lambda: C._unregister_opaque_type(OPAQUE))
        step("registered after", lambda: C._is_opaque_type_registered(OPAQUE))
        step("define after", lambda: lib.define(f"opaque_op2({OPAQUE} a) -> Tensor"))
        step("schema after", lambda: op._schema)
        step("PyObject spelt", lambda: lib.define("opaque_op3(PyObject a) -> Tensor"))
    step("register int", lambda: C._register_opaque_type("int"))
    step("int is opaque", lambda: C.parse_schema("foo(int a) -> int"))
    step("unregister int", lambda: C._unregister_opaque_type("int"))
    step("int again", lambda: C.parse_schema("foo(int a) -> int"))
    step("register Tensor", lambda: C._register_opaque_type("Tensor"))
    step("Tensor stays", lambda: C.parse_schema("foo(Tensor a) -> Tensor"))
    step("unregister Tensor", lambda: C._unregister_opaque_type("Tensor"))
    steps.append(["not a str", _outcome(lambda: C._register_opaque_type(3), message=False)])
    return steps


def warn_always(torch: Any) -> list[Any]:
    steps: list[Any] = [["at first", _outcome(torch.is_warn_always_enabled)]]
    for value in (True, False, 1, None, "yes"):
        steps.append([repr(value), _outcome(lambda: torch.set_warn_always(value)),
                      _outcome(torch.is_warn_always_enabled)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.set_warn_always(True)
        try:
            @torch.library.custom_op(f"{NS}::mutating", mutates_args=("x",))
            def mutating(x: torch.Tensor) -> None:
                x.add_(1)

            x = torch.zeros(3)
            mutating(x)
        finally:
            torch.set_warn_always(False)
    steps.append(["warnings defining and calling a mutating custom op", [str(w.message) for w in caught],
                  x.tolist()])
    return steps


def meta_without_kernel(torch: Any) -> dict[str, Any]:
    """An operator with no fake implementation or Meta kernel, called on Meta tensors."""
    found: dict[str, Any] = {}

    @torch.library.custom_op(f"{NS}::no_fake", mutates_args=())
    def no_fake(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    meta = torch.empty(3, device="meta")
    # custom_op's own Meta kernel's error: its class (the text says what the fake
    # implementation is needed for, which differs: tests/test_optests.py compares it).
    found["custom_op"] = _outcome(lambda: no_fake(meta), message=False)
    with torch.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("cpu_only(Tensor x) -> Tensor")
        lib.define("overloaded.two(Tensor x) -> Tensor")
        lib.define("composite(Tensor x) -> Tensor")
        lib.impl("cpu_only", lambda x: x.clone(), "CPU")
        lib.impl("overloaded.two", lambda x: x.clone(), "CPU")
        lib.impl("composite", lambda x: torch.empty_like(x), "CompositeExplicitAutograd")
        ns = getattr(torch.ops, NS)
        found["cpu kernel only"] = _outcome(lambda: ns.cpu_only.default(meta))
        found["an overload"] = _outcome(lambda: ns.overloaded.two(meta))
        found["CompositeExplicitAutograd"] = _outcome(lambda: list(ns.composite.default(meta).shape))
        found["cpu kernel on cpu"] = _outcome(lambda: ns.cpu_only.default(torch.zeros(2)).tolist())
    return found


class _Triple(collections.abc.Sequence):
    def __getitem__(self, index: Any) -> Any:
        return (1, 2, 3)[index]

    def __len__(self) -> int:
        return 3


def list_arguments(torch: Any) -> list[Any]:
    """What a custom operator's kernel gets for its list arguments, given various sequences."""
    seen: list[Any] = []

    def describe(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [type(value).__name__, [describe(v) for v in value]]
        if isinstance(value, torch.Tensor):
            return "Tensor"
        return [type(value).__name__, value]

    @torch.library.custom_op(f"{NS}::lists", mutates_args=())
    def lists(x: torch.Tensor, ints: Sequence[int], floats: Sequence[float], tensors: Sequence[torch.Tensor],
              maybe: Optional[Sequence[int]] = None) -> torch.Tensor:
        seen.append([describe(ints), describe(floats), describe(tensors), describe(maybe)])
        return x.clone()

    x = torch.zeros(2)
    lists(x, (1, 2), (1, 2.5), (x, x), maybe=(4,))
    lists(x, range(3), [3], [x], None)
    lists(x, _Triple(), _Triple(), (), maybe=range(2))
    lists(x, [5], [1.5], [x], [6, 7])

    # The fake implementation and setup_context get them so too.
    @torch.library.custom_op(f"{NS}::lists_grad", mutates_args=())
    def lists_grad(x: torch.Tensor, sizes: Sequence[int]) -> torch.Tensor:
        seen.append(["kernel", describe(sizes)])
        return x.clone()

    @lists_grad.register_fake
    def _(x: Any, sizes: Any) -> Any:
        seen.append(["fake", describe(sizes)])
        return torch.empty_like(x)

    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        seen.append(["setup_context", describe(inputs[1])])

    lists_grad.register_autograd(lambda ctx, grad: (grad, None), setup_context=setup_context)
    lists_grad(torch.zeros(2, requires_grad=True), (1, 2))
    lists_grad(torch.empty(2, device="meta"), range(2))
    return seen


def legacy_list_arguments(torch: Any, custom_ops: Any) -> list[Any]:
    """The older CustomOp API (``torch._custom_ops``): what its kernel, abstract
    implementation and save_for_backward get for a list argument given as a tuple."""
    seen: list[Any] = []
    qualname = f"{NS}::legacy_lists"

    @custom_ops.custom_op(qualname)
    def legacy_lists(x: torch.Tensor, sizes: Sequence[int]) -> torch.Tensor:
        raise NotImplementedError

    @custom_ops.impl(qualname)
    def _(x: Any, sizes: Any) -> Any:
        seen.append(["kernel", type(sizes).__name__])
        return x.clone()

    @custom_ops.impl_abstract(qualname)
    def _(x: Any, sizes: Any) -> Any:
        seen.append(["abstract", type(sizes).__name__])
        return torch.empty_like(x)

    @custom_ops.impl_save_for_backward(qualname)
    def _(inputs: Any, output: Any) -> None:
        seen.append(["save_for_backward", type(inputs.sizes).__name__])

    @custom_ops.impl_backward(qualname)
    def _(ctx: Any, saved: Any, grad: Any) -> Any:
        return {"x": grad}

    op = getattr(getattr(torch.ops, NS), "legacy_lists").default
    op(torch.zeros(2, requires_grad=True), (1, 2)).sum().backward()
    op(torch.empty(2, device="meta"), (1, 2))
    custom_ops._destroy(qualname)
    return seen


def namespaces(torch: Any) -> list[Any]:
    """An ops namespace's packets (all read first: torch lists those it has cached) as a library comes and goes."""
    steps: list[Any] = []
    lib = torch.library.Library(f"{NS}_ns", "DEF")
    lib.define("first(Tensor x) -> Tensor")
    lib.define("second(Tensor x) -> Tensor")
    lib.define("second.other(Tensor x, int y) -> Tensor")
    namespace = getattr(torch.ops, f"{NS}_ns")
    namespace.first, namespace.second  # noqa: B018  (read: cached in torch)
    steps.append(["defined", sorted(namespace._dir), sorted(namespace)])
    getattr_of_class = type(namespace).__getattr__
    steps.append(["type(ns).__getattr__ of a name that is no operator",
                  _outcome(lambda: getattr_of_class(namespace, "nope"))["error"]])
    steps.append(["a packet's overloads", sorted(namespace.second.overloads())])
    del lib
    gc.collect()
    steps.append(["after the library went", sorted(namespace._dir), sorted(namespace), hasattr(namespace, "first")])
    return steps


def run(torch: Any, custom_ops: Any) -> dict[str, Any]:
    """Every section's answers; ``custom_ops`` is the library's older CustomOp API module."""
    return {
        "legacy_list_arguments": legacy_list_arguments(torch, custom_ops),
        "dtype_defaults": dtype_defaults(torch),
        "inferred_dtype_defaults": inferred_dtype_defaults(torch),
        "opaque_types": opaque_types(torch),
        "warn_always": warn_always(torch),
        "meta_without_kernel": meta_without_kernel(torch),
        "list_arguments": list_arguments(torch),
        "namespaces": namespaces(torch),
    }
