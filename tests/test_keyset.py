"""DispatchKeySet behaviour, for both cores (golden agreement is in test_keys_golden.py)."""
import pickle
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatcher.keys import BackendComponent, DispatchKey

K = DispatchKey
ALL_KEYS = list(DispatchKey)
ALL_BACKENDS = list(BackendComponent)


def test_construction_forms(core):
    KS = core.DispatchKeySet
    assert KS().raw_repr() == 0
    assert KS(K.CPU) == KS("CPU") == KS(49) == KS([K.CPU])
    # A per-backend key sets a functionality bit and a backend bit.
    assert KS(K.CPU).raw_repr() == (1 << 16) | 1
    assert KS(BackendComponent.CUDABit).raw_repr() == 2
    assert KS([K.CPU, K.AutogradCPU]) == KS(K.CPU) | KS(K.AutogradCPU)
    assert KS(KS(K.XLA)) == KS(K.XLA)
    assert KS(K.Undefined).empty() and KS(K.Autograd).empty()
    assert KS.full().raw_repr() == (1 << 62) - 1
    assert KS.from_raw_repr(KS(K.CPU).raw_repr()) == KS(K.CPU)


@pytest.mark.parametrize(
    "bad, exc",
    [(3.5, TypeError), (object(), TypeError), ("Bogus", ValueError), (200, ValueError), ([K.CPU, None], TypeError)],
)
def test_construction_errors(core, bad, exc):
    with pytest.raises(exc):
        core.DispatchKeySet(bad)


@pytest.mark.parametrize("bad, exc", [(-1, ValueError), (1 << 64, ValueError), (1 << 62, ValueError), ("1", TypeError), (True, TypeError)])
def test_from_raw_repr_rejects_what_c10_could_not_index(core, bad, exc):
    with pytest.raises(exc):
        core.DispatchKeySet.from_raw_repr(bad)


def test_immutable_hashable_picklable(core):
    ks = core.DispatchKeySet([K.CPU, K.AutogradCPU])
    with pytest.raises(AttributeError):
        ks.foo = 1
    assert hash(ks) == hash(core.DispatchKeySet([K.AutogradCPU, K.CPU]))
    assert {ks: 1}[core.DispatchKeySet([K.CPU, K.AutogradCPU])] == 1
    assert pickle.loads(pickle.dumps(ks)) == ks
    assert ks != core.DispatchKeySet(K.CPU)
    assert (ks == 5) is False


def test_difference_and_remove_keep_backend_bits(core):
    KS = core.DispatchKeySet
    cpu_cuda = KS([K.CPU, K.CUDA])
    # Removing CPU only drops the Dense functionality bit: CUDA needs the
    # backend bits, and c10 never clears backend bits this way.
    assert (cpu_cuda - KS(K.CPU)).raw_repr() == 0b11
    assert cpu_cuda.remove(K.CPU).raw_repr() == 0b11
    assert KS([K.CPU, K.AutogradCPU]).remove(K.AutogradCPU) == KS(K.CPU)
    assert KS([K.CPU, K.CUDA]).remove_backend(BackendComponent.CUDABit) == KS(K.CPU)


def test_membership(core):
    ks = core.DispatchKeySet([K.CPU, K.SparseCUDA])
    # The bits of CPU and SparseCUDA also spell CUDA and SparseCPU.
    assert ks.has(K.CUDA) and ks.has(K.SparseCPU) and K.CPU in ks and "CPU" in ks
    assert not ks.has(K.XLA)
    assert ks.has_backend(BackendComponent.CUDABit)
    assert ks.has_all(core.DispatchKeySet(K.CPU)) and ks.is_superset_of(core.DispatchKeySet(K.CPU))
    assert ks.has_any(core.DispatchKeySet([K.XLA, K.CUDA]))
    assert not ks.has_any(core.DispatchKeySet(K.Python))
    with pytest.raises(TypeError):
        ks.has_all(K.CPU)


def test_iteration_order_and_repr(core):
    ks = core.DispatchKeySet([K.AutogradCUDA, K.CPU, K.Python, K.SparseCPU])
    assert list(ks) == [K.CPU, K.CUDA, K.SparseCPU, K.SparseCUDA, K.Python, K.AutogradCPU, K.AutogradCUDA]
    assert repr(ks) == "DispatchKeySet(CPU, CUDA, SparseCPU, SparseCUDA, Python, AutogradCPU, AutogradCUDA)"
    assert len(ks) == 7
    # Backend bits alone name no key.
    assert repr(core.DispatchKeySet(BackendComponent.CPUBit)) == "DispatchKeySet()"
    assert len(core.DispatchKeySet(BackendComponent.CPUBit)) == 0


def test_priority(core):
    ks = core.DispatchKeySet([K.CPU, K.CUDA, K.AutogradCPU, K.ADInplaceOrView])
    assert ks.highest_priority_key() == K.AutogradCUDA
    assert ks.highest_functionality_key() == K.AutogradFunctionality
    assert ks.highest_backend() == BackendComponent.CUDABit
    assert core.DispatchKeySet().highest_priority_key() == K.Undefined
    assert core.DispatchKeySet().dispatch_table_index() == 0


def test_full_after(core):
    after = core.DispatchKeySet.full_after(K.AutogradOther)
    assert not after.has(K.AutogradOther) and not after.has(K.AutogradCPU)
    assert after.has(K.ADInplaceOrView) and after.has(K.CPU)
    assert after.has(K.PythonDispatcher)


keys_strategy = st.lists(st.sampled_from(ALL_KEYS + ALL_BACKENDS), max_size=8)


@given(keys_strategy, keys_strategy)
@settings(max_examples=300, deadline=None)
def test_cores_agree(a, b):
    from dispatcher import _engine

    cores = [_engine.pure_engine()]
    if _engine.compiled_engine() is not None:
        cores.append(_engine.compiled_engine())
    results = []
    for c in cores:
        x, y = c.DispatchKeySet(a), c.DispatchKeySet(b)
        results.append(
            (
                [(x | y).raw_repr(), (x & y).raw_repr(), (x - y).raw_repr(), (x ^ y).raw_repr()],
                repr(x), list(x), len(x), x.dispatch_table_index(), x.highest_backend(),
                x.highest_functionality_key(), x.has_all(y), x.has_any(y),
            )
        )
        assert len(x) == len(list(x))
    assert all(r == results[0] for r in results)


# -- thread-local state ----------------------------------------------------------
def test_tls_defaults_and_setters(core):
    inc, exc = core.tls_local_include_set(), core.tls_local_exclude_set()
    try:
        assert inc == core.DEFAULT_INCLUDED_SET == core.DispatchKeySet([K.BackendSelect, K.ADInplaceOrView])
        assert exc == core.DEFAULT_EXCLUDED_SET and exc.has(K.AutocastCPU)
        core.tls_set_dispatch_key_included(K.Python, True)
        assert core.tls_is_dispatch_key_included(K.Python)
        core.tls_set_dispatch_key_included(K.Python, False)
        assert not core.tls_is_dispatch_key_included(K.Python)
        core.tls_set_dispatch_key_excluded("AutogradCPU", True)
        assert core.tls_is_dispatch_key_excluded(K.AutogradCPU)
        core.tls_set_local_include_set(core.DispatchKeySet())
        assert core.tls_local_include_set().empty()
        with pytest.raises(TypeError):
            core.tls_set_local_include_set(K.CPU)
    finally:
        core.tls_set_local_include_set(inc)
        core.tls_set_local_exclude_set(exc)
    assert core.tls_local_include_set() == inc


def test_tls_is_per_thread(core):
    inc = core.tls_local_include_set()
    core.tls_set_local_include_set(core.DispatchKeySet(K.Python))
    seen = {}
    barrier = threading.Barrier(2)

    def worker(name, key):
        seen[name + "-start"] = core.tls_local_include_set()
        core.tls_set_local_include_set(core.DispatchKeySet(key))
        barrier.wait()
        seen[name + "-end"] = core.tls_local_include_set()

    try:
        threads = [threading.Thread(target=worker, args=(n, k)) for n, k in (("a", K.Tracer), ("b", K.Batched))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen["a-start"] == seen["b-start"] == core.DEFAULT_INCLUDED_SET
        assert seen["a-end"] == core.DispatchKeySet(K.Tracer)
        assert seen["b-end"] == core.DispatchKeySet(K.Batched)
        assert core.tls_local_include_set() == core.DispatchKeySet(K.Python)
    finally:
        core.tls_set_local_include_set(inc)


# -- tensors ------------------------------------------------------------------------
def test_tensor_base(core):
    t = core.TensorBase(core.DispatchKeySet(K.CPU))
    assert core.tensor_key_set(t) == t.key_set == core.DispatchKeySet(K.CPU)
    t.key_set = core.DispatchKeySet(K.XLA)
    assert core.tensor_key_set(t) == core.DispatchKeySet(K.XLA)
    with pytest.raises(TypeError):
        t.key_set = "CPU"

    class Lazy(core.TensorBase):
        def __init__(self):  # forgets TensorBase.__init__
            self.payload = 1

    assert Lazy().key_set == core.DispatchKeySet()


def test_tensor_base_init_forms(core):
    # Compiled, TensorBase.__init__ is a fast method descriptor that hands
    # the rarer forms to the slot wrapper (Note [TensorBase.__init__ without
    # an argument tuple]): every form, and every way of reaching it, as in Python.
    cpu, xla = core.DispatchKeySet(K.CPU), core.DispatchKeySet(K.XLA)

    class Explicit(core.TensorBase):
        def __init__(self, *args, **kwargs):
            core.TensorBase.__init__(self, *args, **kwargs)

    class Super(core.TensorBase):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

    class Inherited(core.TensorBase):
        pass

    for cls in (core.TensorBase, Explicit, Super, Inherited):
        assert cls().key_set == core.DispatchKeySet()
        assert cls(cpu).key_set == cls(key_set=cpu).key_set == cpu
        assert cls(None).key_set == cls(key_set=None).key_set == core.DispatchKeySet()
        with pytest.raises(TypeError, match="key_set must be a DispatchKeySet"):
            cls("CPU")
        with pytest.raises(TypeError, match="key_set must be a DispatchKeySet"):
            cls(key_set="CPU")
        with pytest.raises(TypeError, match="positional argument"):
            cls(cpu, xla)
        with pytest.raises(TypeError, match="unexpected keyword argument 'keys'"):
            cls(keys=cpu)
    t = Inherited(cpu)
    core.TensorBase.__init__(t, xla)  # initialising again sets the keyset again
    assert t.key_set == xla
    core.TensorBase.__init__(t)
    assert t.key_set == core.DispatchKeySet()
    with pytest.raises((TypeError, AttributeError)):  # Python's function takes any self
        core.TensorBase.__init__(object(), cpu)
    with pytest.raises(TypeError):
        core.TensorBase.__init__()


def test_tensor_detection(core):
    class Duck:
        def __init__(self, ks):
            self.__dispatch_keys__ = ks

    class Plain:
        pass

    ks = core.DispatchKeySet(K.CPU)
    assert core.tensor_key_set(Duck(ks)) == ks
    assert core.tensor_key_set(Plain()) is None
    for not_tensor in (1, 2.0, "x", None, (1,), [ks]):
        assert core.tensor_key_set(not_tensor) is None
    with pytest.raises(TypeError, match="must be a DispatchKeySet"):
        core.tensor_key_set(Duck("CPU"))


def test_register_tensor_type(core):
    np = pytest.importorskip("numpy")
    cpu = core.DispatchKeySet(K.CPU)
    core.register_tensor_type(np.ndarray, cpu)
    try:
        assert core.tensor_key_set(np.zeros(2)) == cpu
        assert core.tensor_key_set(np.ma.masked_array([1])) == cpu  # subclasses too
    finally:
        core.unregister_tensor_type(np.ndarray)
    assert core.tensor_key_set(np.zeros(2)) is None

    class Box:
        def __init__(self, key):
            self.key = key

    core.register_tensor_type(Box, lambda b: core.DispatchKeySet(b.key))
    try:
        assert core.tensor_key_set(Box(K.XLA)) == core.DispatchKeySet(K.XLA)
        core.register_tensor_type(Box, lambda b: "oops")
        with pytest.raises(TypeError):
            core.tensor_key_set(Box(K.XLA))
    finally:
        core.unregister_tensor_type(Box)
    with pytest.raises(TypeError):
        core.register_tensor_type(Box(K.CPU), cpu)
    with pytest.raises(TypeError):
        core.register_tensor_type(Box, 5)
    with pytest.raises(KeyError):
        core.unregister_tensor_type(Box)
