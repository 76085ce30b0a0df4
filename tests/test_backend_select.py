"""The generated BackendSelect kernels: options read from the keywords, the backend memoised."""
from __future__ import annotations

import pytest

from dispatcher import DispatchKey as K
from dispatcher import DispatchKeySet, ops
from dispatcher import _backend_select
from dispatcher._backend_select import _KeyCache, backend_select_kernel, tensor_options_positions


class _Handle:
    """The operator's handle as the kernel sees it: redispatch records the keyset it is given."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def redispatch(self, keyset, *args, **kwargs):
        self.calls.append((keyset, args, kwargs))
        return keyset


def _kernel(schema, engine):
    handle = _Handle()
    return backend_select_kernel(schema, tensor_options_positions(schema), handle, engine), handle


def test_the_kernel_reads_the_options_from_the_keywords_and_passes_the_call_on_unchanged(core):
    kernel, handle = _kernel(ops.aten.empty.memory_format.schema, core)
    DispatchKeySet = core.DispatchKeySet
    keyset = DispatchKeySet(K.BackendSelect)
    assert kernel(keyset, [2], device="meta") == DispatchKeySet(K.Meta)
    assert kernel(keyset, [2]) == DispatchKeySet(K.CPU)  # no device: the CPU
    assert kernel(keyset, [2], dtype=None, layout=None, device="cpu", pin_memory=False) == DispatchKeySet(K.CPU)
    assert handle.calls[0] == (DispatchKeySet(K.Meta), ([2],), {"device": "meta"})


def test_a_call_the_schema_does_not_take_is_bound_and_fails_as_binding_does(core):
    kernel, handle = _kernel(ops.aten.empty.memory_format.schema, core)
    DispatchKeySet = core.DispatchKeySet
    keyset = DispatchKeySet(K.BackendSelect)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        kernel(keyset, [2], None)  # dtype is keyword-only
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        kernel(keyset, [2], colour="red")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'size'"):
        kernel(keyset)
    assert kernel(keyset, size=[2], device="meta") == DispatchKeySet(K.Meta)  # a positional by name: bound
    assert handle.calls == [(DispatchKeySet(K.Meta), (), {"size": [2], "device": "meta"})]


class _CountingOptions:
    """Stands for dispatch_key_for_options, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail = False

    def __call__(self, dtype, layout, device):
        self.calls += 1
        if self.fail:
            raise ValueError(f"no backend for {device!r}")
        return K.Meta if device == "meta" else K.CPU


@pytest.fixture
def counting(monkeypatch):
    options = _CountingOptions()
    monkeypatch.setattr(_backend_select, "dispatch_key_for_options", options)
    return options


def test_the_backend_of_the_same_options_is_computed_once(counting):
    cache = _KeyCache(DispatchKeySet)
    for _ in range(3):
        assert cache.keyset(None, None, "meta") == DispatchKeySet(K.Meta)
    assert counting.calls == 1
    assert cache.keyset(None, None, "cpu") == DispatchKeySet(K.CPU)
    assert counting.calls == 2


def test_renaming_privateuse1_is_part_of_what_is_memoised(counting, monkeypatch):
    cache = _KeyCache(DispatchKeySet)
    cache.keyset(None, None, "meta")
    monkeypatch.setattr(_backend_select, "get_privateuse1_backend_name", lambda: "npu")
    cache.keyset(None, None, "meta")
    assert counting.calls == 2


def test_failures_and_unhashable_options_are_not_memoised(counting):
    cache = _KeyCache(DispatchKeySet)
    counting.fail = True
    for _ in range(2):
        with pytest.raises(ValueError, match="no backend for 'nowhere'"):
            cache.keyset(None, None, "nowhere")
    assert counting.calls == 2
    counting.fail = False
    for _ in range(2):
        assert cache.keyset(None, None, ["cpu"]) == DispatchKeySet(K.CPU)
    assert counting.calls == 4


def test_the_memo_stops_growing_at_its_limit(counting):
    cache = _KeyCache(DispatchKeySet)
    for i in range(_KeyCache.LIMIT + 10):
        cache.keyset(i, None, "cpu")
    assert counting.calls == _KeyCache.LIMIT + 10
    cache.keyset(_KeyCache.LIMIT + 5, None, "cpu")  # past the limit: computed again
    cache.keyset(0, None, "cpu")  # within it: memoised
    assert counting.calls == _KeyCache.LIMIT + 11
