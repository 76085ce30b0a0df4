"""A call with a wrong number of arguments names the operator and its schema,
in torch's words (tests/golden/argument_count_golden.json), on both engines
and on every call (Note [Argument count check] in dispatcher/_engine/core.py)."""
import pytest

from dispatcher import DispatchKey as K
from dispatcher import DispatcherTypeError

from .conftest import load_golden

CASES = load_golden("argument_count_golden.json")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['schema']}{c['args']}{c['kwargs']}" for c in CASES])
def test_wrong_argument_counts_say_what_torch_says(world, case):
    with world.library("argcount") as lib:
        lib.define(case["schema"])
        lib.impl("f", lambda *args, **kwargs: "kernel", "CPU")
        t = world.tensor(K.CPU)
        args = [t if a == "T" else [t] if a == ["T"] else a for a in case["args"]]
        f = world.ops.argcount.f.default
        for _ in range(2):  # every call, not only the first
            with pytest.raises(DispatcherTypeError) as caught:
                f(*args, **case["kwargs"])
            assert str(caught.value).replace("argcount::", "ns::") == case["error"]


def test_calls_that_fit_reach_the_kernel(world):
    with world.library("argcount") as lib:
        lib.define("f(Tensor x, int n, *, int k=2) -> Tensor")
        lib.impl("f", lambda x, n, k=2: (n, k), "CPU")
        t, f = world.tensor(K.CPU), world.ops.argcount.f.default
        assert f(t, 1) == (1, 2) and f(t, n=1) == (1, 2) and f(t, 1, k=3) == (1, 3) and f(x=t, n=4) == (4, 2)
