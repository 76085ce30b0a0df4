"""Defining all 4374 PyTorch 2.13 schemas with one CPU kernel each.

Goal (DESIGN.md): under 1 s and under 60 MB of extra memory.  The time is the
benchmark; the memory (tracemalloc peak, which slows the run, so it is
measured in a separate pass) is recorded in extra_info.
"""
import tracemalloc

from dispatcher._core import ENGINE
from dispatcher.catalog import TORCH_2_13
from dispatcher.kernel import AnnotatedKernel, make_kernel
from dispatcher.keys import DispatchKey
from dispatcher.registry import Dispatcher
from dispatcher.schema import FunctionSchema

SCHEMAS = TORCH_2_13.schemas()
# A registry without the catalog: the package's has the catalog's operators
# defined already (on first use), so defining them there is a duplicate.
registry = Dispatcher(ENGINE)


def kernel(*args, **kwargs):
    return None


def define_all():
    handles = []
    for line in SCHEMAS:
        schema = FunctionSchema.parse(line)
        handles.append(registry.register_def(schema, "bench"))
        handles.append(registry.register_impl(schema.name, DispatchKey.CPU, AnnotatedKernel(make_kernel(kernel), "bench")))
    return handles


def test_define_all_schemas_with_a_kernel(benchmark):
    live = []

    def setup():
        registry.undo(live)
        live.clear()

    def run():
        live.extend(define_all())

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
    assert len(registry.all_op_names()) >= len(SCHEMAS)
    registry.undo(live)

    tracemalloc.start()
    handles = define_all()
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    benchmark.extra_info["peak_traced_MB"] = round(peak / 1e6, 1)
    registry.undo(handles)
