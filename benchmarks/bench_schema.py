"""Schema parsing and boxing: the registration-time and boxed-call costs.

    pytest benchmarks/bench_schema.py --benchmark-enable

Parsing runs cold (the parser's memos of arguments and of whole schemas
emptied before every round), as when a process defines its operators once.
Printing runs warm: a schema keeps its text once printed.  Boxing uses
whichever core ``dispatcher._core`` selected, since tensor detection goes
through it.
"""

from dispatcher import schema as schema_module
from dispatcher._core import DispatchKeySet
from dispatcher.catalog import TORCH_2_13
from dispatcher.ivalue import box, box_returns, unbox_arguments, unbox_returns
from dispatcher.keys import DispatchKey
from dispatcher.schema import FunctionSchema

# torch 2.13's 4374 schemas (tests/data/schemas.txt became the catalog's file).
LINES = TORCH_2_13.schemas()
THREE = FunctionSchema.parse("ns::op(Tensor self, int dim, float alpha) -> Tensor")


class FakeTensor:
    __dispatch_keys__ = DispatchKeySet(DispatchKey.CPU)


X = FakeTensor()


def parse_all():
    return [FunctionSchema.parse(line) for line in LINES]


def forget_parses():
    schema_module._ELEMENT_CACHE.clear()
    schema_module._SCHEMA_CACHE.clear()


def test_parse_corpus_cold(benchmark):
    schemas = benchmark.pedantic(parse_all, setup=forget_parses, rounds=10, iterations=1)
    assert len(schemas) == 4374


def test_parse_corpus_warm(benchmark):
    parse_all()
    assert len(benchmark(parse_all)) == 4374


def test_print_corpus(benchmark):
    schemas = parse_all()
    assert benchmark(lambda: [str(s) for s in schemas]) == LINES


def test_bind_three_arguments(benchmark):
    assert benchmark(THREE.bind, (X, 1, 2.0)) == (X, 1, 2.0)


def test_box_unbox_three_arguments(benchmark):
    def run():
        return unbox_arguments(THREE, box(THREE, (X, 1, 2.0)))

    assert benchmark(run) == (X, 1, 2.0)


def test_boxed_call_round_trip_three_arguments(benchmark):
    """What a boxed kernel costs around it: box the call, push a result, unbox it."""

    def run():
        stack = box(THREE, (X, 1, 2.0))
        args = unbox_arguments(THREE, stack)
        box_returns(THREE, args[0], stack)
        return unbox_returns(THREE, stack)

    assert benchmark(run) is X


def test_direct_call_baseline(benchmark):
    """The plain Python call the boxed numbers compare with."""

    def kernel(self, dim, alpha):
        return self

    assert benchmark(kernel, X, 1, 2.0) is X
