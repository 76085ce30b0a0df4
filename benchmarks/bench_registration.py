"""Defining all 4374 PyTorch 2.13 schemas with one CPU kernel each; a backend
fallback with the whole catalog defined; the first use of catalog operators.

Goal (DESIGN.md) of the first: under 1 s and under 60 MB of extra memory.
The time is the benchmark; the memory (tracemalloc peak, which slows the
run, so it is measured in a separate pass) is recorded in extra_info.  The
step-by-step comparison with torch is ``python -m dispatcher bench``
(dispatcher/registration_timing.py).
"""
import tracemalloc

from dispatcher._core import ENGINE
from dispatcher.catalog import TORCH_2_13
from dispatcher.kernel import AnnotatedKernel, make_fallback_kernel, make_kernel
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


# -- at catalog scale (torch's figures: python -m dispatcher bench) ---------------------
def _catalog_registry():
    """A registry of the default engine with every catalog operator defined."""
    full = Dispatcher(ENGINE, TORCH_2_13)
    for name in TORCH_2_13.names():
        full.packet(name)
    return full


def _fallback(op, *args, **kwargs):
    """Never called: only registered and removed."""


def test_fallback_and_its_removal_with_the_catalog_defined(benchmark):
    # torch: Library("_", "IMPL").fallback(fn, key) and _destroy(), 1-3.5 ms (a slot of each operator).
    full = _catalog_registry()
    kernel = AnnotatedKernel(make_fallback_kernel(_fallback), "bench")

    def run():
        full.undo([full.register_fallback(DispatchKey.PrivateUse3, kernel)])

    benchmark(run)
    assert full.backend_fallback(DispatchKey.PrivateUse3) is None


def test_first_use_of_each_catalog_operator(benchmark):
    # Registry.packet defines the whole overload set, as anything that needs
    # them all does; ops.aten.<name> alone defines nothing (Note [Packets of
    # operators not defined yet] in dispatcher/_engine/core.py: python -m
    # dispatcher bench times it, and the first read of an overload, beside torch's).
    names = TORCH_2_13.names()

    def setup():
        return (Dispatcher(ENGINE, TORCH_2_13),), {}

    def run(fresh):
        for name in names[:200]:
            fresh.packet(name)

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
