"""The call path: extraction, TLS, masks, kernel kinds, boxing, errors, trace.

These run against whichever core dispatcher._core selected; CI runs the suite
once per core.
"""
import threading

import pytest

import dispatcher
from dispatcher import DispatchKey as K
from dispatcher import DispatchKeySet, Library, TensorBase, fallthrough_kernel, ops
from dispatcher import _core
from dispatcher.ivalue import Stack, box, box_returns, unbox_arguments

_counter = iter(range(10**6))


@pytest.fixture
def lib():
    ns = f"calltest{next(_counter)}"
    with Library(ns, "DEF") as library:
        yield library


def tensor(*keys):
    return TensorBase(DispatchKeySet(list(keys)))


def cpu():
    return tensor(K.CPU, K.ADInplaceOrView, K.AutogradCPU)


def handle(lib, name):
    return getattr(getattr(ops, lib.ns), name).default


def test_unboxed_kernel_by_backend(lib):
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", lambda x, y: "cpu", "CPU")
    lib.impl("f", lambda x, y: "xla", "XLA")
    f = handle(lib, "f")
    assert f(cpu(), cpu()) == "cpu"
    # The highest backend of the union wins, as in c10.
    assert f(cpu(), tensor(K.XLA)) == "xla"
    assert f(x=cpu(), y=cpu()) == "cpu"
    assert f(cpu(), y=cpu()) == "cpu"


def test_priority_and_redispatch_with_keyset(lib):
    lib.define("f(Tensor x) -> Tensor")
    seen = []

    def autograd(keyset, x):
        seen.append(keyset)
        return ("autograd", f.redispatch(keyset & dispatcher.keysets.AFTER_AUTOGRAD_KEYSET, x))

    lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
    lib.impl("f", lambda x: "cpu", "CPU")
    f = handle(lib, "f")
    assert f(cpu()) == ("autograd", "cpu")
    # The keyset a kernel gets has the fallthrough keys (ADInplaceOrView) masked out.
    assert seen == [DispatchKeySet([K.CPU, K.AutogradCPU])]


def test_fallthrough_kernel_skips_its_key(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "python", "Python")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = handle(lib, "f")
    t = tensor(K.CPU, K.Python)
    assert f(t) == "python"
    with Library(lib.ns, "IMPL", "Python") as over:
        with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
            over.impl("f", fallthrough_kernel)
        assert f(t) == "cpu"
    assert f(t) == "python"


def test_backend_fallback_and_per_backend_fallthrough(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "cuda", "CUDA")
    lib.impl("f", lambda x: "autograd-cuda", "AutogradCUDA")
    f = handle(lib, "f")
    # AutogradCPU has the standard fallthrough fallback; AutogradCUDA a kernel.
    assert f(cpu()) == "cpu"
    assert f(tensor(K.CUDA, K.AutogradCUDA)) == "autograd-cuda"
    entry = dispatcher.registry.default_registry.find_op(f.name)
    assert not entry.non_fallthrough_mask(dispatcher.BackendComponent.CPUBit).has(K.AutogradCPU)
    assert entry.non_fallthrough_mask(dispatcher.BackendComponent.CUDABit).has(K.AutogradCUDA)


def test_tls_include_exclude(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "tracer", "Tracer")
    f = handle(lib, "f")
    assert f(cpu()) == "cpu"
    with _core.IncludeDispatchKeyGuard(DispatchKeySet(K.Tracer)):
        assert f(cpu()) == "tracer"
        with _core.ExcludeDispatchKeyGuard(DispatchKeySet(K.Tracer)):
            assert f(cpu()) == "cpu"
        assert f(cpu()) == "tracer"
    assert f(cpu()) == "cpu"
    assert _core.tls_local_include_set() == _core.DEFAULT_INCLUDED_SET


def test_compute_dispatch_key_set_applies_tls_and_mask():
    cpu_keys = DispatchKeySet([K.CPU, K.AutogradCPU])
    assert _core.compute_dispatch_key_set(cpu_keys) == cpu_keys | _core.DEFAULT_INCLUDED_SET
    with _core.AutoDispatchBelowAutograd():
        assert _core.compute_dispatch_key_set(cpu_keys) == DispatchKeySet([K.CPU, K.BackendSelect, K.ADInplaceOrView])
    mask = dispatcher.keysets.AFTER_ADINPLACEORVIEW_KEYSET
    assert _core.compute_dispatch_key_set(cpu_keys, mask) == DispatchKeySet([K.CPU, K.BackendSelect])
    with pytest.raises(TypeError):
        _core.compute_dispatch_key_set(K.CPU)


def test_guards_restore_on_exception():
    before = (_core.tls_local_include_set(), _core.tls_local_exclude_set())
    with pytest.raises(ValueError):
        with _core.AutoDispatchBelowAutograd():
            # The guard excludes functionalities, not backends: AutogradOther is a
            # functionality key, AutogradCPU needs the CPU bit too.
            assert _core.tls_is_dispatch_key_excluded(K.AutogradOther)
            assert _core.tls_local_exclude_set().has(K.AutogradFunctionality)
            with _core.AutoDispatchBelowADInplaceOrView():
                assert _core.tls_is_dispatch_key_excluded(K.ADInplaceOrView)
                raise ValueError
    assert (_core.tls_local_include_set(), _core.tls_local_exclude_set()) == before
    guard = _core.IncludeDispatchKeyGuard(K.Python)
    with guard:
        with pytest.raises(RuntimeError):
            with guard:
                pass


def test_tls_is_per_thread_during_calls(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "tracer", "Tracer")
    f = handle(lib, "f")
    results = {}
    inside = threading.Event()
    done = threading.Event()

    def traced():
        with _core.IncludeDispatchKeyGuard(K.Tracer):
            inside.set()
            results["traced"] = f(cpu())
            done.wait(5)

    thread = threading.Thread(target=traced)
    thread.start()
    inside.wait(5)
    results["main"] = f(cpu())
    done.set()
    thread.join()
    assert results == {"traced": "tracer", "main": "cpu"}


def test_no_tensor_arguments_use_tls_and_backend_select(lib):
    lib.define("make(int n, *, Tensor? like=None) -> Tensor")
    lib.impl("make", lambda n, like=None: ("backend_select", n), "BackendSelect")
    make = handle(lib, "make")
    assert make(3) == ("backend_select", 3)
    assert make(3, like=cpu()) == ("backend_select", 3)


def test_tensor_lists_and_optionals(lib):
    lib.define("cat(Tensor[] xs, Tensor?[] ys, Tensor? w=None) -> Tensor")
    lib.impl("cat", lambda xs, ys, w=None: "cpu", "CPU")
    lib.impl("cat", lambda xs, ys, w=None: "xla", "XLA")
    cat = handle(lib, "cat")
    assert cat([cpu(), cpu()], []) == "cpu"
    assert cat([cpu()], [], tensor(K.XLA)) == "xla"
    assert cat([cpu()], [None, tensor(K.XLA)], None) == "xla"
    assert cat((cpu(),), ys=[tensor(K.XLA)]) == "xla"
    with pytest.raises(TypeError, match="argument 'xs'.*list of tensors"):
        cat(cpu(), [])
    with pytest.raises(TypeError, match="argument 'xs'.*must be a tensor"):
        cat([cpu(), 3], [])
    with pytest.raises(TypeError, match="argument 'ys'.*must be a tensor"):
        cat([cpu()], [3])


def test_objects_with_dispatch_keys_and_registered_types(lib):
    np = pytest.importorskip("numpy")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "xla", "XLA")
    f = handle(lib, "f")

    class Duck:
        __dispatch_keys__ = DispatchKeySet(K.XLA)

    assert f(Duck()) == "xla"
    _core.register_tensor_type(np.ndarray, DispatchKeySet(K.CPU))
    try:
        assert f(np.zeros(1)) == "cpu"
    finally:
        _core.unregister_tensor_type(np.ndarray)
    with pytest.raises(TypeError, match=r"argument 'x' \(position 1\) must be a tensor, not ndarray"):
        f(np.zeros(1))


def test_boxed_kernel_and_call_boxed(lib):
    lib.define("f(Tensor x, int n=2) -> (Tensor, int)")
    calls = []

    def boxed(op, keyset, stack):
        x, n = unbox_arguments(op.schema, stack)
        calls.append((keyset, n))
        box_returns(op.schema, (x, n * 10), stack)

    lib.impl("f", boxed, "CPU", boxed=True)
    f = handle(lib, "f")
    t = cpu()
    assert f(t) == (t, 20)
    assert f(t, n=3) == (t, 30)
    stack = Stack(box(f.schema, (t, 4)))
    f.call_boxed(stack)
    assert [iv.to_python() for iv in stack] == [t, 40]
    assert calls[0][0] == DispatchKeySet(K.CPU)
    # An unboxed kernel called boxed: the dispatcher unboxes and reboxes.
    lib.impl("f", lambda x, n=2: (x, -n), "XLA")
    x = tensor(K.XLA)
    stack = Stack(box(f.schema, (x, 5)))
    f.call_boxed(stack)
    assert [iv.to_python() for iv in stack] == [x, -5]


def test_boxed_kernel_calls_box_every_way_of_passing_arguments(lib):
    # The vectorcall path boxes a positional call straight from its argument
    # array and packs any other call first: both must give the same stack.
    lib.define("f(Tensor x, Tensor? y, *, int n=2, str s='a') -> (Tensor, ...)")
    seen = []

    def boxed(op, keyset, stack):
        seen.append(list(stack))
        values = unbox_arguments(op.schema, stack)
        box_returns(op.schema, values, stack)

    lib.impl("f", boxed, "CPU", boxed=True)
    f = handle(lib, "f")
    t = cpu()
    assert f(t, None) == (t, None, 2, "a")
    assert f(t, y=t, n=5) == (t, t, 5, "a")
    assert f(x=t, y=None, s="b") == (t, None, 2, "b")
    with pytest.raises(TypeError, match=r"argument 'n' \(position 3\) must be int, not str"):
        f(t, None, n="x")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'y'"):
        f(t)
    assert len(seen) == 3
    assert all(type(iv) is dispatcher.IValue for stack in seen for iv in stack)


def test_a_failed_boxed_call_leaves_no_stack_behind(lib):
    lib.define("f(Tensor x) -> (Tensor, int)")

    def boxed(op, keyset, stack):
        (x,) = unbox_arguments(op.schema, stack)
        box_returns(op.schema, (x, "not an int"), stack)

    lib.impl("f", boxed, "CPU", boxed=True)
    with pytest.raises(TypeError, match=r"return value 2 must be int, not str"):
        handle(lib, "f")(cpu())


def test_repeated_calls_follow_keysets_tls_and_registrations(lib):
    # Note [Last dispatch cache]: a call site that alternates keysets, TLS
    # changes and re-registrations must never see a remembered kernel that no
    # longer applies.
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "xla", "XLA")
    lib.impl("f", lambda x: "autograd", "AutogradCPU")
    f = handle(lib, "f")
    c, x = cpu(), tensor(K.XLA)
    assert [f(t) for t in (c, c, x, x, c)] == ["autograd", "autograd", "xla", "xla", "autograd"]
    with dispatcher.AutoDispatchBelowAutograd():
        assert f(c) == "cpu"
    assert f(c) == "autograd"
    with Library(lib.ns, "IMPL") as extra, pytest.warns(UserWarning, match="Overriding"):
        extra.impl("f", lambda x: "autograd again", "AutogradCPU")
        assert f(c) == "autograd again"
    assert f(c) == "autograd"


def test_boxed_calls_pass_keyword_only_arguments_by_name(lib):
    lib.define("f(Tensor self, *, int alpha=1) -> int")
    lib.impl("f", lambda self, *, alpha=1: alpha, "CPU")
    f = handle(lib, "f")
    t = cpu()
    stack = Stack(box(f.schema, (t,), {"alpha": 7}))
    f.call_boxed(stack)
    assert [iv.to_python() for iv in stack] == [7]
    stack = Stack(box(f.schema, (t,), {"alpha": 3}))
    f.redispatch_boxed(DispatchKeySet(K.CPU), stack)
    assert [iv.to_python() for iv in stack] == [3]


def test_boxed_fallback(lib):
    lib.define("f(Tensor x, float s) -> Tensor")
    seen = []

    def fallback(op, keyset, stack):
        seen.append((op.name, keyset.highest_priority_key()))
        args = unbox_arguments(op.schema, stack)
        box_returns(op.schema, op.redispatch(keyset.remove(K.TESTING_ONLY_GenericMode), *args), stack)

    lib.impl("f", lambda x, s: x, "CPU")
    t = tensor(K.CPU, K.TESTING_ONLY_GenericMode)
    with Library("_", "IMPL") as fb:
        fb.fallback(fallback, "TESTING_ONLY_GenericMode", with_keyset=True)
        assert handle(lib, "f")(t, 1.0) is t
    assert seen == [(f"{lib.ns}::f", K.TESTING_ONLY_GenericMode)]
    with pytest.raises(NotImplementedError, match="from the 'TESTING_ONLY_GenericMode' backend"):
        handle(lib, "f")(t, 1.0)


def test_missing_kernel_error_names_op_key_and_backends(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    lib.impl("f", lambda x: x, "Meta")
    f = handle(lib, "f")
    with pytest.raises(NotImplementedError) as info:
        f(tensor(K.XLA))
    msg = str(info.value)
    assert msg.startswith(f"Could not run '{lib.ns}::f' with arguments from the 'XLA' backend.")
    assert f"'{lib.ns}::f' is only available for these backends: [CPU, Meta, BackendSelect," in msg


def test_no_tensor_and_no_kernel(lib):
    lib.define("g(int n) -> Tensor")
    lib.impl("g", lambda n: n, "CPU")
    with pytest.raises(NotImplementedError, match="There were no tensor arguments to this function"):
        handle(lib, "g")(1)


def test_ambiguous_autograd_other(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "math", "CompositeImplicitAutograd")
    lib.impl("f", lambda x: "sparse", "SparseCPU")
    with pytest.raises(RuntimeError, match="has kernels registered to both CompositeImplicitAutograd"):
        handle(lib, "f")(tensor(K.SparseCPU, K.AutogradOther))


def test_composite_kernels(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "math", "CompositeImplicitAutograd")
    f = handle(lib, "f")
    assert f(cpu()) == "math"
    assert f(tensor(K.XLA, K.AutogradXLA)) == "math"
    lib.impl("f", lambda x: "explicit", "CompositeExplicitAutograd")
    assert f(cpu()) == "explicit"


def test_wrong_arity_is_a_clean_error(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = handle(lib, "f")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        f()
    with pytest.raises(TypeError):
        f(cpu(), cpu())
    with pytest.raises(TypeError):
        f(x=cpu(), y=1)


def test_redispatch_rejects_non_keysets(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    with pytest.raises(TypeError):
        handle(lib, "f").redispatch(K.CPU, cpu())


def test_overload_packet_resolution(lib):
    lib.define("add(Tensor x, Tensor y) -> Tensor")
    lib.define("add.Scalar(Tensor x, Scalar y) -> Tensor")
    lib.impl("add", lambda x, y: "tensor", "CPU")
    lib.impl("add.Scalar", lambda x, y: "scalar", "CPU")
    packet = getattr(ops, lib.ns).add
    assert packet.overloads() == ["default", "Scalar"]
    assert packet(cpu(), cpu()) == "tensor"
    assert packet(cpu(), 2.5) == "scalar"
    assert packet.Scalar(cpu(), 1) == "scalar"
    with pytest.raises(TypeError, match="no overload"):
        packet(cpu(), "nope")
    with pytest.raises(AttributeError):
        packet.nonexistent
    with pytest.raises(AttributeError):
        getattr(ops, lib.ns).nonexistent


def test_handles_survive_redefinition():
    with Library("calltest_redef", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: 1, "CPU")
        f = ops.calltest_redef.f.default
        assert f(cpu()) == 1
    with Library("calltest_redef", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: 2, "CPU")
        assert ops.calltest_redef.f.default is f
        assert f(cpu()) == 2


def test_dispatch_trace(lib, capfd):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda ks, x: f.redispatch(ks.remove(K.AutogradCPU), x), "AutogradCPU", with_keyset=True)
    lib.impl("f", lambda x: x, "CPU")
    f = handle(lib, "f")
    _core.set_show_dispatch_trace(True)
    try:
        f(cpu())
    finally:
        _core.set_show_dispatch_trace(False)
    err = capfd.readouterr().err.splitlines()
    assert err == [f"[call] op=[{lib.ns}::f], key=[AutogradCPU]", f" [redispatch] op=[{lib.ns}::f], key=[CPU]"]
    f(cpu())
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
