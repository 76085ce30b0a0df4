"""Keyset arithmetic from Python: the per-call work of key selection."""
from dispatcher.keys import DispatchKey


def test_union_priority_index(benchmark, core):
    a = core.DispatchKeySet([DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU])
    b = core.DispatchKeySet([DispatchKey.CUDA, DispatchKey.AutogradCUDA])

    def run():
        ks = a | b
        return ks.highest_priority_key(), ks.dispatch_table_index()

    assert benchmark(run) == (DispatchKey.AutogradCUDA, 97)
