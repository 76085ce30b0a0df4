"""dispatcher.library as a drop-in for torch.library, checked against torch 2.13.

The golden data (``golden/torch_library_golden.json``, made by
``golden/generate_torch_library_golden.py`` under torch) holds what torch did
with device strings, bad calls of Python-defined operators, a Python
backend fallback's arguments, factory functions' routing through
BackendSelect, ``torch.library.impl``'s device types and AutogradPrivateUse1
fallbacks; each test here makes the same calls.  Tests that call run on
both engines (``world``).
"""
from __future__ import annotations

import itertools
import pickle

import pytest

import dispatcher
from dispatcher import DispatchKey as K
from dispatcher import device, fallthrough_kernel
from dispatcher._backend_select import tensor_options_positions
from dispatcher.backends import dispatch_key_for_options
from dispatcher.errors import DispatcherTypeError, DispatcherValueError
from dispatcher.library import impl
from dispatcher.registry import default_registry
from dispatcher.schema import FunctionSchema

from .conftest import load_golden

GOLDEN = load_golden("torch_library_golden.json")
_ns = (f"tlib{i}" for i in itertools.count())

# The torch error classes, by name, and what ours must be to be caught as theirs.
TORCH_ERRORS = {"RuntimeError": RuntimeError, "TypeError": TypeError, "NotImplementedError": NotImplementedError}


@pytest.fixture
def ns():
    return next(_ns)


def cpu(world):
    return world.tensor(K.CPU, K.ADInplaceOrView, K.AutogradCPU)


# -- dispatcher.device -----------------------------------------------------------------------------
@pytest.mark.parametrize("case", GOLDEN["devices"], ids=lambda c: repr(c["args"]))
def test_device_as_torchs(case):
    if "error" in case:
        with pytest.raises(TORCH_ERRORS[case["error"]]) as info:
            device(*case["args"])
        assert str(info.value) == case["message"]
        return
    d = device(*case["args"])
    # torch's PrivateUse1 was not renamed; here the prototype's tests may have named it (toy).
    name = dispatcher.get_privateuse1_backend_name()
    expected = [case["type"], case["index"], case["str"], case["repr"]]
    expected = [x.replace("privateuseone", name) if isinstance(x, str) else x for x in expected]
    assert [d.type, d.index, str(d), repr(d)] == expected


def test_device_values():
    d = device("cuda:1")
    assert d == device("cuda", 1) == device(d) and hash(d) == hash(device("cuda", 1))
    assert d != device("cuda") and d != "cuda:1"  # torch.device is not equal to strings either
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(AttributeError, match="immutable"):
        d.index = 2  # type: ignore[misc]
    with pytest.raises(DispatcherValueError, match="Device index 300 in device string 'cuda:300' is out of range"):
        device("cuda:300")  # torch keeps the low byte: cuda:44
    with pytest.raises(TypeError, match="argument 'type' must be a str such as 'cuda:1' or a device, not NoneType"):
        device(None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="a bare index means a device of the current accelerator"):
        device(3)  # type: ignore[arg-type]
    assert device("privateuseone:1").type == dispatcher.get_privateuse1_backend_name()


def test_a_device_argument_takes_devices_and_strings(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x, Device d) -> Device")
    lib.impl("f", lambda x, d: d, "CPU")
    f = getattr(world.ops, ns).f.default
    assert f(cpu(world), "cuda:1") == "cuda:1"  # a kernel gets what was passed
    assert f(cpu(world), device("cuda:1")) == device("cuda:1")
    stack = world.engine.Stack()
    stack.push(*dispatcher.box(f, (cpu(world), device("meta")))[:])
    f.call_boxed(stack)
    assert stack[0].to_python() == device("meta")


# -- checked calls -------------------------------------------------------------------------------------
def _value(world, x):
    if x == "T":
        return cpu(world)
    if isinstance(x, list):
        return [_value(world, v) for v in x]
    return x


def _torch_lines(message, tensor_value):
    """The lines of an error that must be torch's: not the cast error's (torch's C++ binding
    library's words), nor a tensor's value (printed as each library prints its tensors); the
    tensor type's name is torch's."""
    return [line.replace("found type 'TensorBase'", "found type 'Tensor'") for line in message.splitlines()
            if not line.startswith("Cast error details:") and not (tensor_value and line.startswith("Value: "))]


@pytest.fixture
def golden_ops(world):
    lib = world.library("tlgolden", "FRAGMENT")
    received = []

    def kernel(*args, **kwargs):
        received.append((args, kwargs))
        return args[0] if not isinstance(args[0], list) else args[0][0]

    for name, schema in GOLDEN["schemas"].items():
        lib.define(schema)
        lib.impl(name, kernel, "CPU")
    yield world.ops.tlgolden, received
    lib.close()


@pytest.mark.parametrize("case", GOLDEN["bad_calls"], ids=lambda c: f"{c['op']}{c['args']}{c['kwargs']}")
def test_checked_calls_raise_torchs_errors(world, golden_ops, case):
    ops, _ = golden_ops
    op = getattr(ops, case["op"]).default
    args = [_value(world, a) for a in case["args"]]
    kwargs = {k: _value(world, v) for k, v in case["kwargs"].items()}
    with dispatcher.checked_calls():
        with pytest.raises(RuntimeError) as info:  # torch's class: ours are both RuntimeError and TypeError/ValueError
            op(*args, **kwargs)
    tensor_value = "\nValue: tensor(" in case["message"]
    assert _torch_lines(str(info.value), tensor_value) == _torch_lines(case["message"], tensor_value)
    if "\nCast error details: " in case["message"]:
        assert "\nCast error details: " in str(info.value)


@pytest.mark.parametrize("case", GOLDEN["bad_calls"], ids=lambda c: f"{c['op']}{c['args']}{c['kwargs']}")
def test_unchecked_bad_calls_still_raise_what_torch_raises(world, golden_ops, case):
    # Without checking, a plain kernel gets what was passed: the bad calls that
    # reach the kernel are the kernel's business (here it takes anything).
    ops, _ = golden_ops
    args = [_value(world, a) for a in case["args"]]
    kwargs = {k: _value(world, v) for k, v in case["kwargs"].items()}
    try:
        getattr(ops, case["op"]).default(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001  (whatever the dispatcher raises must be caught as torch's)
        assert isinstance(exc, RuntimeError), exc


def _described(world, x):
    """A received value as the golden file describes it (ScalarType and Device values stay as passed here)."""
    if isinstance(x, world.engine.TensorBase):
        return "T"
    if isinstance(x, (list, tuple)):
        return {"type": type(x).__name__, "items": [_described(world, v) for v in x]}
    return {"type": type(x).__name__, "value": x}


@pytest.mark.parametrize("case", GOLDEN["good_calls"], ids=lambda c: f"{c['op']}{c['args']}{c['kwargs']}")
def test_checked_calls_convert_as_torch(world, golden_ops, case):
    ops, received = golden_ops
    args = [_value(world, a) for a in case["args"]]
    kwargs = {k: _value(world, v) for k, v in case["kwargs"].items()}
    with dispatcher.checked_calls():
        getattr(ops, case["op"]).default(*args, **kwargs)
    got_args, got_kwargs = received[-1]
    expected = case["received"]
    ours = {"args": [_described(world, a) for a in got_args], "kwargs": {k: _described(world, v) for k, v in got_kwargs.items()}}
    # torch gives a ScalarType as a torch.dtype and a Device as a torch.device; here they are as passed.
    for theirs, mine in zip(expected["args"], ours["args"]):
        if isinstance(theirs, dict) and "dtype" in theirs:
            assert theirs["dtype"] == "torch.float32" and mine == {"type": "int", "value": 6}
        elif isinstance(theirs, dict) and "device" in theirs:
            assert mine == {"type": "str", "value": theirs["device"]}
        else:
            assert mine == theirs
    assert len(ours["args"]) == len(expected["args"]) and ours["kwargs"] == expected["kwargs"]


def test_checked_calls_switch_plans_and_back(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x, float s) -> Tensor")
    seen = []
    lib.impl("f", lambda x, s: seen.append(s) or x, "CPU")
    f = getattr(world.ops, ns).f.default
    t = cpu(world)
    f(t, 2)
    assert not dispatcher.checked_calls_enabled()
    with dispatcher.checked_calls():
        assert dispatcher.checked_calls_enabled()
        f(t, 2)
        with dispatcher.checked_calls():  # nested: still on
            f(t, 2)
        f(t, 2)
    f(t, 2)
    assert [type(s) for s in seen] == [int, float, float, float, int]
    dispatcher.set_checked_calls(True)
    try:
        f(t, 3)
        lib.define("g(Tensor x, int n) -> Tensor")  # defined while checking: checked too
        lib.impl("g", lambda x, n: x, "CPU")
        with pytest.raises(DispatcherTypeError, match="Expected a value of type 'int' for argument 'n'"):
            getattr(world.ops, ns).g.default(t, "n")
    finally:
        dispatcher.set_checked_calls(False)
    assert type(seen[-1]) is float
    getattr(world.ops, ns).g.default(t, "n")  # unchecked again


def test_checked_calls_word_a_bad_tensor_as_torch(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x, Tensor? y=None) -> Tensor")
    lib.impl("f", lambda x, y=None: x, "CPU")
    f = getattr(world.ops, ns).f.default
    with pytest.raises(DispatcherTypeError, match=r"must be a tensor, not int"):
        f(1)
    with dispatcher.checked_calls():
        with pytest.raises(DispatcherTypeError) as info:
            f(cpu(world), 3)
    assert str(info.value).splitlines()[:3] == [
        f"{ns}::f() Expected a value of type 'Optional[Tensor]' for argument 'y' but instead found type 'int'.",
        "Position: 1", "Value: 3"]


def test_checked_calls_check_with_keyset_and_boxed_kernels_too(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x, int n=2) -> int")
    lib.impl("f", lambda keyset, x, n=2: n, "CPU", with_keyset=True)
    f = getattr(world.ops, ns).f.default
    with dispatcher.checked_calls():
        assert f(cpu(world), True) == 1
        with pytest.raises(DispatcherTypeError, match="Expected a value of type 'int' for argument 'n'"):
            f(cpu(world), "x")
        with world.library("_", "IMPL") as fallbacks:
            fallbacks.fallback(lambda op, x, n=2: n * 10, "XLA")
            with pytest.raises(DispatcherTypeError, match="Expected a value of type 'int' for argument 'n'"):
                f(world.tensor(K.XLA), 1.5)
            assert f(world.tensor(K.XLA), 3) == 30


# -- Library.fallback: torch's convention ------------------------------------------------------------
def test_fallback_gets_the_arguments_as_torchs(world, ns):
    lib = world.library(ns)
    lib.define(GOLDEN["fallback_schema"])
    received = []

    def fallback(op, *args, **kwargs):
        received.append((op.name(), args, kwargs))
        return args[0]

    f = getattr(world.ops, ns).fb.default
    with world.library("_", "IMPL") as fallbacks:
        fallbacks.fallback(fallback, "PrivateUse1")
        t = world.tensor(K.PrivateUse1)
        for case in GOLDEN["fallback_calls"]:
            assert f(*[_value(world, a) if a != "T" else t for a in case["args"]], **case["kwargs"]) is t
            name, args, kwargs = received[-1]
            assert name == f"{ns}::fb"
            expected = case["received"]
            assert [_described(world, a) for a in args] == expected["args"]
            assert {k: _described(world, v) for k, v in kwargs.items()} == expected["kwargs"]


def test_fallback_with_keyset_boxed_and_fallthrough(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x, int n) -> (Tensor, int)")
    lib.impl("f", lambda x, n: (x, n + 1), "CPU")
    f = getattr(world.ops, ns).f.default
    below = world.own(dispatcher.keysets.DispatchKeySet.full_after(K.TESTING_ONLY_GenericMode))
    seen = []

    def with_keyset(keyset, op, x, n):  # torch: the keyset first
        seen.append(keyset.highest_priority_key())
        return op.redispatch(keyset & below, x, n)

    def boxed(op, keyset, stack):
        x, n = op.boxer.unbox_arguments(stack)
        op.boxer.box_returns((x, -n), stack)

    t = world.tensor(K.CPU, K.TESTING_ONLY_GenericMode)
    with world.library("_", "IMPL") as fallbacks:
        fallbacks.fallback(with_keyset, "TESTING_ONLY_GenericMode", with_keyset=True)
        assert f(t, 1) == (t, 2) and seen == [K.TESTING_ONLY_GenericMode]
    with world.library("_", "IMPL") as fallbacks:
        fallbacks.fallback(boxed, "TESTING_ONLY_GenericMode", boxed=True)
        assert f(t, 1) == (t, -1)
    with world.library("_", "IMPL") as fallbacks:
        fallbacks.fallback(fallthrough_kernel, "TESTING_ONLY_GenericMode")
        assert f(t, 1) == (t, 2)
    with world.library("_", "IMPL") as fallbacks:
        fallbacks.fallback(lambda op, x, n: "no tuple", "TESTING_ONLY_GenericMode")
        with pytest.raises(RuntimeError, match=r"returns a tuple of 2, but the kernel returned str"):
            f(t, 1)
        with pytest.raises(ValueError, match="either boxed or with_keyset"):
            fallbacks.fallback(boxed, "XLA", boxed=True, with_keyset=True)
        with pytest.raises(TypeError, match="Input function is required to be a callable but found type <class 'int'>"):
            fallbacks.fallback(3, "XLA")


# -- AutogradPrivateUse1's fallback can be replaced -------------------------------------------------
def test_autograd_privateuse1_fallback_replaced_as_in_torch(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x) -> Tensor")
    entry = world.registry.find_op(f"{ns}::f")

    def line():
        found = [x for x in entry.dump_computed_table().splitlines() if x.startswith("AutogradPrivateUse1")]
        return found[0].split(" registered")[0] if found else None

    golden = {step["step"]: step for step in GOLDEN["autograd_privateuse1"]["steps"]}
    assert line() == "AutogradPrivateUse1: fallthrough"  # ours at import; torch's is its autograd fallback
    first, second = world.library("_", "IMPL"), world.library("_", "IMPL")
    first.fallback(lambda op, *args, **kwargs: None, "AutogradPrivateUse1")
    assert line() == golden["first fallback"]["line"]
    second.fallback(fallthrough_kernel, "AutogradPrivateUse1")
    assert line() == golden["second fallback (a fallthrough)"]["line"]
    world.registry.check_invariants(f"{ns}::f")
    # torch empties the slot when either is removed (then no fallback is left at all); here the
    # newest one left comes back, as with kernels.
    second.close()
    assert line() == golden["first fallback"]["line"] and golden["second removed"]["line"] is None
    first.close()
    assert line() == "AutogradPrivateUse1: fallthrough"
    world.registry.check_invariants(f"{ns}::f")
    # Removed in the other order: the newer one stays until it goes.
    first, second = world.library("_", "IMPL"), world.library("_", "IMPL")
    first.fallback(lambda op, *args, **kwargs: None, "AutogradPrivateUse1")
    second.fallback(fallthrough_kernel, "AutogradPrivateUse1")
    first.close()
    assert line() == "AutogradPrivateUse1: fallthrough"
    second.close()
    assert line() == "AutogradPrivateUse1: fallthrough"
    world.registry.check_invariants(f"{ns}::f")
    # Every other key keeps one fallback, with torch's error.
    other = GOLDEN["autograd_privateuse1"]["autograd_cpu_second_fallback"]["message"]
    with pytest.raises(RuntimeError) as info:
        world.library("_", "IMPL").fallback(lambda op, *args, **kwargs: None, "AutogradCPU")
    assert str(info.value).split("; previous")[0] == other.split("; previous")[0]


# -- torch.library.impl's forms --------------------------------------------------------------------------
@pytest.mark.parametrize("case", GOLDEN["impl_types"], ids=lambda c: repr(c["types"]))
def test_impl_types_register_torchs_keys(world, ns, case):
    lib = world.library(ns)
    lib.define("f(Tensor x) -> Tensor")
    if "error" in case:
        with pytest.raises(RuntimeError) as info:
            impl(f"{ns}::f", case["types"], lambda x: x, lib=lib)
        if "INTERNAL ASSERT" not in case["message"]:
            assert str(info.value) == case["message"]
        assert not world.registry.find_op(f"{ns}::f").kernels
        return
    assert impl(f"{ns}::f", case["types"], lambda x: x, lib=lib) is None
    keys = sorted(f"{key.name}[alias]" if key.name.startswith("Composite") else key.name
                  for key in world.registry.find_op(f"{ns}::f").kernels)
    assert keys == case["keys"]


def test_impl_decorators_and_the_renamed_backend(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x) -> Tensor")
    name = dispatcher.get_privateuse1_backend_name()

    @impl(f"{ns}::f", ["cpu", name], lib=lib)
    def f_kernel(x):
        return "kernel"

    @impl(lib, "f", "XLA")  # torch's older form
    def f_xla(x):
        return "xla"

    assert f_kernel(None) == "kernel" and f_xla(None) == "xla"  # both decorators return the function
    f = getattr(world.ops, ns).f.default
    assert f(cpu(world)) == "kernel" and f(world.tensor(K.PrivateUse1)) == "kernel" and f(world.tensor(K.XLA)) == "xla"
    with pytest.raises(ValueError, match='Expected `qualname` to be of the form "namespace::name", but got f'):
        impl("f", "cpu", lambda x: x)
    with pytest.raises(TypeError, match="types must be a device type"):
        impl(f"{ns}::f", 3, lambda x: x, lib=lib)


def test_define_forms(world, ns):
    lib = world.library(ns)
    assert dispatcher.define(f"{ns}::f", "(Tensor x) -> Tensor", lib=lib) is None
    with pytest.raises(ValueError, match=r'expected schema to look like e.g. "\(Tensor x\) -> Tensor" but got "Tensor x"'):
        dispatcher.define(f"{ns}::g", "Tensor x", lib=lib)
    with pytest.raises(ValueError, match="expected qualname to be instance of str, got <class 'int'>"):
        dispatcher.define(3, "(Tensor x) -> Tensor", lib=lib)  # type: ignore[call-overload]

    @dispatcher.define(lib, "h(Tensor x) -> Tensor")  # torch's older form: the function is the composite kernel
    def h(x):
        return "h"

    assert getattr(world.ops, ns).h.default(cpu(world)) == "h"
    assert world.registry.find_op(f"{ns}::h").kernel_for(K.CompositeImplicitAutograd) is not None


def test_library_impl_takes_an_operator_handle(world, ns):
    lib = world.library(ns)
    lib.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    f = getattr(world.ops, ns).f.out
    lib.impl(f, lambda x, *, out: out, "CPU")
    t = cpu(world)
    assert f(t, out=t) is t
    with pytest.raises(RuntimeError, match="impl should be passed either a name or an OpOverload object as the first "
                                           "argument, got <class 'int'>"):
        lib.impl(3, lambda x: x, "CPU")
    with pytest.raises(RuntimeError, match="got <class '.*OverloadPacket'>"):
        lib.impl(getattr(world.ops, ns).f, lambda x: x, "CPU")
    with pytest.raises(TypeError, match="Input function is required to be a callable but found type <class 'int'>"):
        lib.impl("f.out", 3, "CPU")


def test_meta_beside_composite_implicit_is_refused_as_by_torch_library(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x)  # CompositeImplicitAutograd
    with pytest.raises(RuntimeError, match="We should not register a meta kernel directly to the operator 'f', because "
                                           "it has a CompositeImplicitAutograd kernel in core."):
        lib.impl("f", lambda x: x, "Meta")
    assert world.registry.find_op(f"{ns}::f").kernel_for(K.Meta) is None


# -- the catalog's factory operators ------------------------------------------------------------------
def test_the_aten_operators_with_backend_select_kernels_are_torchs():
    ours = sorted(str(schema.name) for schema in map(FunctionSchema.parse, default_registry.catalog.schemas())
                  if tensor_options_positions(schema) is not None)
    # torch's prims register BackendSelect kernels in Python, with rules of their own.
    assert ours == [name for name in GOLDEN["backend_select_operators"] if name.startswith("aten::")]


ROUTE_KEYS = ["CPU", "CUDA", "Meta", "XLA", "Lazy", "MPS", "MAIA", "PrivateUse1", "FPGA", "Vulkan", "QuantizedCPU",
              "QuantizedCUDA", "QuantizedMeta", "SparseCPU", "SparseCUDA", "SparseCsrCPU", "SparseCsrCUDA", "SparseCsrMeta",
              "MkldnnCPU"]


@pytest.mark.parametrize("case", GOLDEN["factory_routes"], ids=lambda c: f"{c['op']}-{c['device']}-{c['dtype']}-{c['layout']}")
def test_factories_reach_torchs_backend(world, case):
    reached = []
    lib = world.library("aten", "IMPL")

    def recorder(key):
        return lambda *args, **kwargs: reached.append(key)

    op_name = case["op"]
    for key in ROUTE_KEYS:
        lib.impl(op_name, recorder(key), key)
    kwargs = {name: case[name] for name in ("device", "dtype", "layout") if case[name] is not None}
    op = world.ops.aten.empty.memory_format if op_name == "empty.memory_format" else world.ops.aten._to_copy.default
    args = ([2],) if op_name == "empty.memory_format" else (cpu(world),)
    try:
        if "error" in case:
            with pytest.raises(TORCH_ERRORS[case["error"]]) as info:
                op(*args, **kwargs)
            if "INTERNAL ASSERT" not in case["message"]:
                assert str(info.value) == case["message"]
        else:
            op(*args, **kwargs)
            # None: a key torch's parser does not name (QuantizedMeta), which the generator could not record
            assert reached == [case["key"] or "QuantizedMeta"]
    finally:
        lib.close()


def test_backend_select_is_lazy_and_overridable(world):
    assert "aten::zeros" not in {str(n) for n in world.registry._from_catalog}
    lib = world.library("aten", "IMPL")
    lib.impl("zeros", lambda size, **kwargs: "cpu zeros", "CPU")
    assert world.ops.aten.zeros.default([2]) == "cpu zeros"
    name = dispatcher.get_privateuse1_backend_name()
    lib.impl("zeros", lambda size, **kwargs: "private zeros", "PrivateUse1")
    assert world.ops.aten.zeros.default([2], device=name) == "private zeros"
    assert world.ops.aten.zeros.default([2], device=device("privateuseone:0")) == "private zeros"
    with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
        lib.impl("zeros", lambda keyset, size, **kwargs: "selected", "BackendSelect", with_keyset=True)
    assert world.ops.aten.zeros.default([2]) == "selected"
    lib.close()
    assert world.ops.aten.zeros.default.has_kernel_for_dispatch_key(K.BackendSelect)  # the catalog's stays


def test_dispatch_key_for_options():
    assert dispatch_key_for_options(None, None, None) == K.CPU
    assert dispatch_key_for_options(12, None, "cuda:0") == K.QuantizedCUDA
    assert dispatch_key_for_options(None, 2, device("meta")) == K.SparseCsrMeta
    with pytest.raises(DispatcherValueError, match="Unsupported layout: 9"):
        dispatch_key_for_options(None, 9, None)
    with pytest.raises(TypeError, match="a layout is c10's Layout number"):
        dispatch_key_for_options(None, "strided", None)


# -- errors torch raises as RuntimeError are caught as RuntimeError ---------------------------------
def test_errors_are_caught_where_torchs_are(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x, int n) -> Tensor")
    lib.impl("f", lambda x, n: "not a tensor", "CPU")
    f = getattr(world.ops, ns).f.default
    bad = [
        lambda: world.library(ns, "IMPL", "Nope"),
        lambda: lib.define("g(Tensor x -> Tensor"),
        lambda: lib.impl("f", lambda x, n: x, "Nope"),
        lambda: lib.impl(3, lambda x, n: x, "CPU"),
        lambda: lib.impl("f g", lambda x, n: x, "CPU"),
        lambda: f(1, 2),
        lambda: f(),
        lambda: f.call_boxed(dispatcher.box(f, (cpu(world), 1))),  # a boxed call checks the result
        lambda: getattr(world.ops, ns).f(1, 2),  # no overload accepts
        lambda: device("nope"),
        lambda: dispatcher.backends.dispatch_key_for_device("cuda:0"),
        lambda: K.parse("Nope"),
        lambda: f(world.tensor(K.XLA), 1),  # no kernel: NotImplementedError
    ]
    for make_error in bad:
        with pytest.raises(RuntimeError):
            make_error()
    with pytest.raises(AttributeError):  # as torch.ops
        getattr(world.ops, ns).nope


def test_texts_do_not_talk_about_torch_internals(world, ns):
    lib = world.library(ns)
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError) as info:
        getattr(world.ops, ns).f.default(world.tensor(K.XLA))
    text = str(info.value)
    assert text.startswith(f"Could not run '{ns}::f' with arguments from the 'XLA' backend. ")
    assert "Facebook" not in text and "fburl" not in text and "selective/custom build" not in text
