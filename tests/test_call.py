"""The call path: extraction, TLS, masks, kernel kinds, boxing, errors, trace.

Each test gets an engine (the pure-Python one and, when built, the compiled
one: conftest.py's ``engine`` fixture) and a registry of its own on it
(``world``), so one pytest run checks both.  Only the trace switched on by
the environment runs in a subprocess on the default engine.
"""
import threading

import pytest

import dispatcher
from dispatcher import DispatchKey as K
from dispatcher import fallthrough_kernel
from dispatcher.ivalue import box, box_returns, unbox_arguments


@pytest.fixture
def lib(world):
    with world.library("calltest", "DEF") as library:
        yield library


def cpu(world):
    return world.tensor(K.CPU, K.ADInplaceOrView, K.AutogradCPU)


def handle(world, lib, name):
    return getattr(getattr(world.ops, lib.ns), name).default


def test_unboxed_kernel_by_backend(world, lib):
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", lambda x, y: "cpu", "CPU")
    lib.impl("f", lambda x, y: "xla", "XLA")
    f = handle(world, lib, "f")
    assert f(cpu(world), cpu(world)) == "cpu"
    # The highest backend of the union wins, as in c10.
    assert f(cpu(world), world.tensor(K.XLA)) == "xla"
    assert f(x=cpu(world), y=cpu(world)) == "cpu"
    assert f(cpu(world), y=cpu(world)) == "cpu"


def test_arguments_named_self_and_keyset_pass_by_keyword(world, lib):
    # torch's OpOverload and packet calls take self= (their own receiver is
    # positional-only): torch.ops.aten.add.Tensor(self=t, other=t) works.
    lib.define("f(Tensor self, Tensor keyset) -> Tensor")
    lib.impl("f", lambda self, keyset: ("cpu", self, keyset), "CPU")
    a, b = cpu(world), cpu(world)
    packet = getattr(world.ops, lib.ns).f
    assert packet.default(self=a, keyset=b) == ("cpu", a, b)
    assert packet(self=a, keyset=b) == ("cpu", a, b)
    below = world.keyset(K.CPU)
    assert packet.default.redispatch(below, self=a, keyset=b) == ("cpu", a, b)


def test_priority_and_redispatch_with_keyset(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    after_autograd = world.own(dispatcher.keysets.AFTER_AUTOGRAD_KEYSET)

    def autograd(keyset, x):
        seen.append(keyset)
        return ("autograd", f.redispatch(keyset & after_autograd, x))

    lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
    lib.impl("f", lambda x: "cpu", "CPU")
    f = handle(world, lib, "f")
    assert f(cpu(world)) == ("autograd", "cpu")
    # The keyset a kernel gets has the fallthrough keys (ADInplaceOrView) masked out.
    assert seen == [world.keyset(K.CPU, K.AutogradCPU)]


def test_fallthrough_kernel_skips_its_key(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "python", "Python")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = handle(world, lib, "f")
    t = world.tensor(K.CPU, K.Python)
    assert f(t) == "python"
    with world.library(lib.ns, "IMPL", "Python") as over:
        with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
            over.impl("f", fallthrough_kernel)
        assert f(t) == "cpu"
    assert f(t) == "python"


def test_backend_fallback_and_per_backend_fallthrough(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "cuda", "CUDA")
    lib.impl("f", lambda x: "autograd-cuda", "AutogradCUDA")
    f = handle(world, lib, "f")
    # AutogradCPU has the standard fallthrough fallback; AutogradCUDA a kernel.
    assert f(cpu(world)) == "cpu"
    assert f(world.tensor(K.CUDA, K.AutogradCUDA)) == "autograd-cuda"
    entry = world.registry.find_op(f.name())
    assert not entry.non_fallthrough_mask(dispatcher.BackendComponent.CPUBit).has(K.AutogradCPU)
    assert entry.non_fallthrough_mask(dispatcher.BackendComponent.CUDABit).has(K.AutogradCUDA)


def test_tls_include_exclude(world, lib):
    engine = world.engine
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "tracer", "Tracer")
    f = handle(world, lib, "f")
    assert f(cpu(world)) == "cpu"
    with engine.IncludeDispatchKeyGuard(world.keyset(K.Tracer)):
        assert f(cpu(world)) == "tracer"
        with engine.ExcludeDispatchKeyGuard(world.keyset(K.Tracer)):
            assert f(cpu(world)) == "cpu"
        assert f(cpu(world)) == "tracer"
    assert f(cpu(world)) == "cpu"
    assert engine.tls_local_include_set() == engine.DEFAULT_INCLUDED_SET


def test_compute_dispatch_key_set_applies_tls_and_mask(world):
    engine = world.engine
    cpu_keys = world.keyset(K.CPU, K.AutogradCPU)
    assert engine.compute_dispatch_key_set(cpu_keys) == cpu_keys | engine.DEFAULT_INCLUDED_SET
    with engine.AutoDispatchBelowAutograd():
        assert engine.compute_dispatch_key_set(cpu_keys) == world.keyset(K.CPU, K.BackendSelect, K.ADInplaceOrView)
    mask = world.own(dispatcher.keysets.AFTER_ADINPLACEORVIEW_KEYSET)
    assert engine.compute_dispatch_key_set(cpu_keys, mask) == world.keyset(K.CPU, K.BackendSelect)
    with pytest.raises(TypeError):
        engine.compute_dispatch_key_set(K.CPU)


def test_guards_restore_on_exception(engine, tls_restored):
    before = (engine.tls_local_include_set(), engine.tls_local_exclude_set())
    with pytest.raises(ValueError):
        with engine.AutoDispatchBelowAutograd():
            # The guard excludes functionalities, not backends: AutogradOther is a
            # functionality key, AutogradCPU needs the CPU bit too.
            assert engine.tls_is_dispatch_key_excluded(K.AutogradOther)
            assert engine.tls_local_exclude_set().has(K.AutogradFunctionality)
            with engine.AutoDispatchBelowADInplaceOrView():
                assert engine.tls_is_dispatch_key_excluded(K.ADInplaceOrView)
                raise ValueError
    assert (engine.tls_local_include_set(), engine.tls_local_exclude_set()) == before
    guard = engine.IncludeDispatchKeyGuard(K.Python)
    with guard:
        with pytest.raises(RuntimeError):
            with guard:
                pass


def test_tls_is_per_thread_during_calls(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "tracer", "Tracer")
    f = handle(world, lib, "f")
    results = {}
    inside = threading.Event()
    done = threading.Event()

    def traced():
        with world.engine.IncludeDispatchKeyGuard(K.Tracer):
            inside.set()
            results["traced"] = f(cpu(world))
            done.wait(5)

    thread = threading.Thread(target=traced)
    thread.start()
    inside.wait(5)
    results["main"] = f(cpu(world))
    done.set()
    thread.join()
    assert results == {"traced": "tracer", "main": "cpu"}


def test_no_tensor_arguments_use_tls_and_backend_select(world, lib):
    lib.define("make(int n, *, Tensor? like=None) -> Tensor")
    lib.impl("make", lambda n, like=None: ("backend_select", n), "BackendSelect")
    make = handle(world, lib, "make")
    assert make(3) == ("backend_select", 3)
    assert make(3, like=cpu(world)) == ("backend_select", 3)


def test_tensor_lists_and_optionals(world, lib):
    lib.define("cat(Tensor[] xs, Tensor?[] ys, Tensor? w=None) -> Tensor")
    lib.impl("cat", lambda xs, ys, w=None: "cpu", "CPU")
    lib.impl("cat", lambda xs, ys, w=None: "xla", "XLA")
    cat = handle(world, lib, "cat")
    assert cat([cpu(world), cpu(world)], []) == "cpu"
    assert cat([cpu(world)], [], world.tensor(K.XLA)) == "xla"
    assert cat([cpu(world)], [None, world.tensor(K.XLA)], None) == "xla"
    assert cat((cpu(world),), ys=[world.tensor(K.XLA)]) == "xla"
    with pytest.raises(TypeError, match="argument 'xs'.*list of tensors"):
        cat(cpu(world), [])
    with pytest.raises(TypeError, match="argument 'xs'.*must be a tensor"):
        cat([cpu(world), 3], [])
    with pytest.raises(TypeError, match="argument 'ys'.*must be a tensor"):
        cat([cpu(world)], [3])


def test_objects_with_dispatch_keys_and_registered_types(world, lib):
    np = pytest.importorskip("numpy")
    engine = world.engine
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "xla", "XLA")
    f = handle(world, lib, "f")

    class Duck:
        __dispatch_keys__ = world.keyset(K.XLA)

    assert f(Duck()) == "xla"
    engine.register_tensor_type(np.ndarray, world.keyset(K.CPU))
    try:
        assert f(np.zeros(1)) == "cpu"
    finally:
        engine.unregister_tensor_type(np.ndarray)
    with pytest.raises(TypeError, match=r"argument 'x' \(position 1\) must be a tensor, not ndarray"):
        f(np.zeros(1))


def test_boxed_kernel_and_call_boxed(world, lib):
    lib.define("f(Tensor x, int n=2) -> (Tensor, int)")
    calls = []

    def boxed(op, keyset, stack):
        x, n = unbox_arguments(op, stack)
        calls.append((keyset, n))
        box_returns(op, (x, n * 10), stack)

    lib.impl("f", boxed, "CPU", boxed=True)
    f = handle(world, lib, "f")
    t = cpu(world)
    assert f(t) == (t, 20)
    assert f(t, n=3) == (t, 30)
    stack = world.engine.Stack(box(f, (t, 4)))
    f.call_boxed(stack)
    assert [iv.to_python() for iv in stack] == [t, 40]
    assert calls[0][0] == world.keyset(K.CPU)
    # An unboxed kernel called boxed: the dispatcher unboxes and reboxes.
    lib.impl("f", lambda x, n=2: (x, -n), "XLA")
    x = world.tensor(K.XLA)
    stack = world.engine.Stack(box(f, (x, 5)))
    f.call_boxed(stack)
    assert [iv.to_python() for iv in stack] == [x, -5]


def test_boxed_kernel_calls_box_every_way_of_passing_arguments(world, lib):
    # The vectorcall path boxes a positional call straight from its argument
    # array and packs any other call first: both must give the same stack.
    lib.define("f(Tensor x, Tensor? y, *, int n=2, str s='a') -> (Tensor, ...)")
    seen = []

    def boxed(op, keyset, stack):
        seen.append(list(stack))
        values = unbox_arguments(op, stack)
        box_returns(op, values, stack)

    lib.impl("f", boxed, "CPU", boxed=True)
    f = handle(world, lib, "f")
    t = cpu(world)
    assert f(t, None) == (t, None, 2, "a")
    assert f(t, y=t, n=5) == (t, t, 5, "a")
    assert f(x=t, y=None, s="b") == (t, None, 2, "b")
    with pytest.raises(TypeError, match=r"argument 'n' \(position 3\) must be int, not str"):
        f(t, None, n="x")
    with pytest.raises(TypeError, match=r"calltest::f\(\) is missing value for argument 'y'\. Declaration: calltest::f\("):
        f(t)
    assert len(seen) == 3
    assert all(type(iv) is world.engine.IValue for stack in seen for iv in stack)


def test_a_bad_boxed_return_leaves_the_stack_as_it_was(world, lib):
    lib.define("f(Tensor x) -> (Tensor, int)")
    stacks = []

    def boxed(op, keyset, stack):
        stacks.append(stack)
        (x,) = unbox_arguments(op, stack)
        box_returns(op, (x, "not an int"), stack)

    lib.impl("f", boxed, "CPU", boxed=True)
    f = handle(world, lib, "f")
    with pytest.raises(TypeError, match=r"return value 2 must be int, not str"):
        f(cpu(world))
    # box_returns is all or nothing: the tensor it could box was not pushed.
    assert stacks == [[]]
    stack = box(f, (cpu(world),))
    with pytest.raises(TypeError, match=r"return value 2 must be int, not str"):
        f.call_boxed(stack)
    assert stack == []


def test_repeated_calls_follow_keysets_tls_and_registrations(world, lib):
    # Note [Last dispatch cache]: a call site that alternates keysets, TLS
    # changes and re-registrations must never see a remembered kernel that no
    # longer applies.
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "xla", "XLA")
    lib.impl("f", lambda x: "autograd", "AutogradCPU")
    f = handle(world, lib, "f")
    c, x = cpu(world), world.tensor(K.XLA)
    assert [f(t) for t in (c, c, x, x, c)] == ["autograd", "autograd", "xla", "xla", "autograd"]
    with world.engine.AutoDispatchBelowAutograd():
        assert f(c) == "cpu"
    assert f(c) == "autograd"
    with world.library(lib.ns, "IMPL") as extra, pytest.warns(UserWarning, match="Overriding"):
        extra.impl("f", lambda x: "autograd again", "AutogradCPU")
        assert f(c) == "autograd again"
    assert f(c) == "autograd"


def test_boxed_calls_pass_keyword_only_arguments_by_name(world, lib):
    lib.define("f(Tensor self, *, int alpha=1) -> int")
    lib.impl("f", lambda self, *, alpha=1: alpha, "CPU")
    f = handle(world, lib, "f")
    t = cpu(world)
    stack = world.engine.Stack(box(f, (t,), {"alpha": 7}))
    f.call_boxed(stack)
    assert [iv.to_python() for iv in stack] == [7]
    stack = world.engine.Stack(box(f, (t,), {"alpha": 3}))
    f.redispatch_boxed(world.keyset(K.CPU), stack)
    assert [iv.to_python() for iv in stack] == [3]


def test_boxed_fallback(world, lib):
    lib.define("f(Tensor x, float s) -> Tensor")
    seen = []

    def fallback(op, keyset, stack):
        seen.append((op.name(), keyset.highest_priority_key()))
        args = unbox_arguments(op, stack)
        box_returns(op, op.redispatch(keyset.remove(K.TESTING_ONLY_GenericMode), *args), stack)

    lib.impl("f", lambda x, s: x, "CPU")
    t = world.tensor(K.CPU, K.TESTING_ONLY_GenericMode)
    with world.library("_", "IMPL") as fb:
        fb.fallback(fallback, "TESTING_ONLY_GenericMode", boxed=True)
        assert handle(world, lib, "f")(t, 1.0) is t
    assert seen == [(f"{lib.ns}::f", K.TESTING_ONLY_GenericMode)]
    with pytest.raises(NotImplementedError, match="from the 'TESTING_ONLY_GenericMode' backend"):
        handle(world, lib, "f")(t, 1.0)


def test_missing_kernel_error_names_op_key_and_backends(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    lib.impl("f", lambda x: x, "Meta")
    f = handle(world, lib, "f")
    with pytest.raises(NotImplementedError) as info:
        f(world.tensor(K.XLA))
    msg = str(info.value)
    assert msg.startswith(f"Could not run '{lib.ns}::f' with arguments from the 'XLA' backend.")
    assert f"'{lib.ns}::f' is only available for these backends: [CPU, Meta, BackendSelect," in msg


def test_no_tensor_and_no_kernel(world, lib):
    lib.define("g(int n) -> Tensor")
    lib.impl("g", lambda n: n, "CPU")
    with pytest.raises(NotImplementedError, match="There were no tensor arguments to this function"):
        handle(world, lib, "g")(1)


def test_ambiguous_autograd_other(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "math", "CompositeImplicitAutograd")
    lib.impl("f", lambda x: "sparse", "SparseCPU")
    with pytest.raises(RuntimeError, match="has kernels registered to both CompositeImplicitAutograd"):
        handle(world, lib, "f")(world.tensor(K.SparseCPU, K.AutogradOther))


def test_composite_kernels(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "math", "CompositeImplicitAutograd")
    f = handle(world, lib, "f")
    assert f(cpu(world)) == "math"
    assert f(world.tensor(K.XLA, K.AutogradXLA)) == "math"
    lib.impl("f", lambda x: "explicit", "CompositeExplicitAutograd")
    assert f(cpu(world)) == "explicit"


def test_wrong_arity_is_a_clean_error(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = handle(world, lib, "f")
    with pytest.raises(TypeError, match=r"is missing value for argument 'x'\. Declaration: calltest::f\(Tensor x\) -> Tensor"):
        f()
    with pytest.raises(TypeError, match=r"expected at most 1 argument\(s\) but received 2 argument\(s\)"):
        f(cpu(world), cpu(world))
    with pytest.raises(TypeError):
        f(x=cpu(world), y=1)


def test_redispatch_rejects_non_keysets(world, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    with pytest.raises(TypeError):
        handle(world, lib, "f").redispatch(K.CPU, cpu(world))


def test_overload_packet_resolution(world, lib):
    lib.define("add(Tensor x, Tensor y) -> Tensor")
    lib.define("add.Scalar(Tensor x, Scalar y) -> Tensor")
    lib.impl("add", lambda x, y: "tensor", "CPU")
    lib.impl("add.Scalar", lambda x, y: "scalar", "CPU")
    packet = getattr(world.ops, lib.ns).add
    assert packet.overloads() == ["default", "Scalar"]
    assert packet(cpu(world), cpu(world)) == "tensor"
    assert packet(cpu(world), 2.5) == "scalar"
    assert packet.Scalar(cpu(world), 1) == "scalar"
    with pytest.raises(TypeError, match="no overload"):
        packet(cpu(world), "nope")
    with pytest.raises(AttributeError):
        packet.nonexistent
    with pytest.raises(AttributeError):
        getattr(world.ops, lib.ns).nonexistent


def test_a_handle_outlives_its_operator_and_says_it_is_gone(world):
    """Note [An entry goes with its last registration]: a handle held after
    the operator's last registration goes keeps saying, by name, that the
    operator is not defined (torch's would dangle); a new def of the name
    makes a new handle, which ops gives from then on."""
    with world.library("calltest_redef", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: 1, "CPU")
        f = world.ops.calltest_redef.f.default
        packet = world.ops.calltest_redef.f
        assert f(cpu(world)) == 1
    assert world.registry.find_op("calltest_redef::f") is None
    with pytest.raises(RuntimeError, match="calltest_redef::f.*not defined|not defined.*calltest_redef::f"):
        f(cpu(world))
    with world.library("calltest_redef", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: 2, "CPU")
        assert world.ops.calltest_redef.f.default is not f
        assert world.ops.calltest_redef.f is not packet
        assert world.ops.calltest_redef.f.default(cpu(world)) == 2
        with pytest.raises(RuntimeError, match="not defined"):
            f(cpu(world))


def test_dispatch_trace(world, lib, capfd):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda ks, x: f.redispatch(ks.remove(K.AutogradCPU), x), "AutogradCPU", with_keyset=True)
    lib.impl("f", lambda x: x, "CPU")
    f = handle(world, lib, "f")
    world.engine.set_show_dispatch_trace(True)
    try:
        f(cpu(world))
    finally:
        world.engine.set_show_dispatch_trace(False)
    err = capfd.readouterr().err.splitlines()
    assert err == [f"[call] op=[{lib.ns}::f], key=[AutogradCPU]", f" [redispatch] op=[{lib.ns}::f], key=[CPU]"]
    f(cpu(world))
    assert capfd.readouterr().err == ""


def test_trace_from_environment(tmp_path):
    import subprocess
    import sys

    script = (
        "import dispatcher\n"
        "from dispatcher import Library, TensorBase, DispatchKeySet, DispatchKey as K, ops\n"
        "lib = Library('envtrace', 'DEF'); lib.define('f(Tensor x) -> Tensor')\n"
        "lib.impl('f', lambda x: x, 'CPU')\n"
        "ops.envtrace.f.default(TensorBase(DispatchKeySet(K.CPU)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**__import__("os").environ, "DISPATCHER_SHOW_DISPATCH_TRACE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == "[call] op=[envtrace::f], key=[CPU]"
