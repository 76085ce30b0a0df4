"""dispatcher.streams.Stream against torch 2.13's torch.Stream
(tests/golden/stream_golden.json), and Streams through operators and modes."""
from __future__ import annotations

import pickle

import pytest

import dispatcher.prototype as P
from dispatcher import Library, ops
from dispatcher.backends import get_privateuse1_backend_name
from dispatcher.dispatch_modes import TorchDispatchMode
from dispatcher.streams import Stream

from .conftest import load_golden

GOLDEN = load_golden("stream_golden.json")["streams"]
pytestmark = pytest.mark.usefixtures("prototype_fallbacks")


@pytest.mark.parametrize("expression", sorted(GOLDEN))
def test_a_stream_is_torchs(expression):
    expected = GOLDEN[expression]
    if "error" in expected:
        kind, message = expected["error"]
        with pytest.raises(Exception) as info:
            eval(expression, {"Stream": Stream})
        assert (type(info.value).__name__, str(info.value)) == (kind, message)
        return
    s = eval(expression, {"Stream": Stream})
    if s.device_type == 20:  # PrivateUse1, which the prototype's toy device renames (as torch names a renamed one)
        expected = {key: value.replace("privateuseone", get_privateuse1_backend_name()) if isinstance(value, str)
                    else value for key, value in expected.items()}
        expected["query"] = [expected["query"][0], expected["query"][1].replace("privateuseone",
                                                                                 get_privateuse1_backend_name())]
    assert repr(s) == expected["repr"]
    assert [s.stream_id, s.device_index, s.device_type] == expected["numbers"]
    assert repr(s.device) == expected["device"]
    if expected["query"] is True:
        assert s.query() is True
        assert s.synchronize() is None
    else:
        kind, message = expected["query"]
        for wait in (s.query, s.synchronize):
            with pytest.raises(RuntimeError, match=f"^{message}$"):
                wait()


def test_streams_are_values():
    s = Stream(stream_id=1, device_index=2, device_type=3)
    assert s == Stream(1, 2, 3) and hash(s) == hash(Stream(1, 2, 3)) and s != Stream() and s != 1
    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(AttributeError, match="readonly attribute"):
        s.stream_id = 4  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Stream(stream_id=1, device_index=2, device_type=3, colour=1)
    with pytest.raises(TypeError, match="missing required argument 'device_index'"):
        Stream(stream_id=1)


class Seen(TorchDispatchMode):
    def __init__(self, answer=None):
        self.calls, self.answer = [], answer

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func.name(), args))
        return self.answer


def test_record_stream_reaches_a_mode_with_the_stream():
    t, s = P.tensor(5.0), Stream(stream_id=1, device_index=2, device_type=3)
    with Seen() as mode:
        assert t.record_stream(s) is None
    assert mode.calls == [("aten::record_stream", (t, s))]
    # As on a CPU-only torch, the CPU has no kernel of it.
    with pytest.raises(NotImplementedError, match="Could not run 'aten::record_stream'"):
        t.record_stream(s)


def test_an_operator_returns_a_stream():
    with Library("test_streams", "DEF") as lib:
        lib.define("return_stream(Tensor self) -> Stream")
        lib.impl("return_stream", lambda _: Stream(stream_id=0, device_index=1, device_type=2), "CPU")
        t = P.tensor(5.0)
        assert ops.test_streams.return_stream(t) == Stream(0, 1, 2)
        with Seen(answer=Stream(1, 2, 3)) as mode:
            assert ops.test_streams.return_stream(t) == Stream(1, 2, 3)
        assert mode.calls == [("test_streams::return_stream", (t,))]
