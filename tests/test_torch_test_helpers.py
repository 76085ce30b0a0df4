"""tests/torch_test_helpers.py: torch's LoggingTensor and TwoTensor helper
modules load from copies of torch's files when there are copies, and stand
for the feature they are (naming it) when there are none."""
from __future__ import annotations

import pytest

import dispatcher.prototype as P

from . import torch_test_files as files
from .torch_test_helpers import HELPERS, helper_modules
from .torch_test_modules import COMMON_SUBCLASS, LOGGING_TENSOR, TWO_TENSOR, modules

FEATURES = {"torch.testing._internal.logging_tensor": LOGGING_TENSOR, "torch.testing._internal.two_tensor": TWO_TENSOR,
            "torch.testing._internal.common_subclass": COMMON_SUBCLASS}


def test_without_copies_the_helpers_name_what_they_are(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "UPSTREAM", tmp_path)
    loaded = helper_modules(modules(), FEATURES)
    assert set(loaded) == set(HELPERS)
    with pytest.raises(NotImplementedError, match="logging_tensor.LoggingTensor needs torch.testing._internal.logging_tensor"):
        loaded["torch.testing._internal.logging_tensor"].LoggingTensor(P.ones(1))
    with pytest.raises(NotImplementedError, match="two_tensor.TwoTensor needs torch.testing._internal.two_tensor"):
        loaded["torch.testing._internal.two_tensor"].TwoTensor(P.ones(1), P.ones(1))
    with pytest.raises(NotImplementedError, match="common_subclass.RedispatchTensor needs torch.testing._internal.common_subclass"):
        loaded["torch.testing._internal.common_subclass"].RedispatchTensor(P.ones(1))


def test_a_copy_that_does_not_load_says_why(tmp_path, monkeypatch):
    (tmp_path / "testing_internal").mkdir()
    (tmp_path / "testing_internal" / "logging_tensor.py").write_text("import torch\nraise ValueError('broken copy')\n")
    monkeypatch.setattr(files, "UPSTREAM", tmp_path)
    loaded = helper_modules(modules(), FEATURES)
    with pytest.raises(NotImplementedError, match=r"does not load through the shim \(ValueError: broken copy\)"):
        loaded["torch.testing._internal.logging_tensor"].capture_logs()


def test_copies_of_torchs_helpers_run_on_the_prototype():
    copies = files.UPSTREAM / "testing_internal"
    if not all((copies / name).is_file() for name in HELPERS.values()):
        pytest.skip(f"no copies of torch's logging_tensor.py and two_tensor.py at {copies}")
    loaded = modules()
    logging_tensor = loaded["torch.testing._internal.logging_tensor"]
    two_tensor = loaded["torch.testing._internal.two_tensor"]
    with files.torch_installed(loaded), files.torch_logs_uncaptured():
        with logging_tensor.capture_logs() as logs:
            x = logging_tensor.LoggingTensor(P.tensor([2.0]))
            logging_tensor.log_input("x", x)
            y = x * x
        assert isinstance(y, logging_tensor.LoggingTensor) and y.elem.tolist() == [4.0]
        assert logs == ["$0: f32[1] = input('x')", "$1: f32[1] = torch._ops.aten.mul.Tensor($0, $0)"]
        t = two_tensor.TwoTensor(P.tensor([[1.0, 2.0], [3.0, 4.0]]), P.tensor([[5.0, 6.0], [7.0, 8.0]]))
        column = t[:, 0]
        assert type(column) is two_tensor.TwoTensor and column.stride() == (2,)
        assert (column.a.tolist(), column.b.tolist()) == ([1.0, 3.0], [5.0, 7.0])


# torch 2.13's torch._subclasses.fake_tensor._is_tensor_constructor on these operators.
TENSOR_CONSTRUCTORS = {
    "randn.default": True, "empty.memory_format": True, "sin.default": False, "scalar_tensor.default": True,
    "arange.default": True, "_efficientzerotensor.default": True, "split.Tensor": False, "rand.generator_out": False,
    "tensor_split.indices": False, "randperm.default": True, "cat.default": False, "sym_size.int": False,
    "full.default": True, "lift_fresh.default": False, "_assert_async.msg": False,
}


@pytest.mark.parametrize("name, expected", sorted(TENSOR_CONSTRUCTORS.items()))
def test_is_tensor_constructor_is_torchs(name, expected):
    """TwoTensorMode asks it of every operator it sees (a question about the schema)."""
    from dispatcher import ops

    fake_tensor = modules()["torch._subclasses.fake_tensor"]
    packet, _, overload = name.partition(".")
    assert fake_tensor._is_tensor_constructor(getattr(getattr(ops.aten, packet), overload)) is expected


def test_assert_close_compares_as_torch_testing_does():
    testing = modules()["torch.testing"]
    testing.assert_close(P.tensor([1.0, 2.0]), P.tensor([1.0, 2.0 + 1e-7]))
    testing.assert_close((P.tensor([1.0]),), (P.tensor([1.0]),))
    with pytest.raises(AssertionError):
        testing.assert_close(P.tensor([1.0, 2.0]), P.tensor([1.0, 2.1]))
    testing.assert_close(P.tensor([1.0, 2.0]), P.tensor([1.0, 2.1]), rtol=0.1, atol=0.0)
