"""What `import dispatcher.prototype` leaves for later (docs/performance.md): numpy.random,
and the CatalogOverloads of operators it does not register for.

Each check runs in a fresh interpreter, where nothing imported numpy.random before.
"""
import subprocess
import sys
import textwrap


def run(script):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_numpy_random_is_imported_by_its_first_user():
    run("""
    import sys
    import numpy as np
    import dispatcher.prototype as P
    assert "numpy.random" not in sys.modules, "imported by the prototype's import"
    a = P.randn(3).tolist()  # the default generator, made now
    assert "numpy.random" in sys.modules and len(a) == 3
    """)


def test_a_numpy_generator_made_after_the_import_is_a_generator_argument():
    run("""
    import sys
    import numpy as np
    import dispatcher.prototype as P
    from dispatcher import ops
    from dispatcher.registry import default_registry
    from dispatcher.prototype.generator import NumpyGenerator
    assert not isinstance(object(), NumpyGenerator)  # numpy.random not imported: nothing is one
    g = np.random.default_rng(1)
    assert isinstance(g, NumpyGenerator) and not isinstance(np.random.RandomState(1), NumpyGenerator)
    # The boxing takes it as a Generator: the packet picks the overload with one.
    assert str(default_registry.engine.resolve_overload(ops.aten.randn, ([4],), {"generator": g})) == "aten.randn.generator"
    assert P.randn(4, generator=g).tolist() == P.randn(4, generator=np.random.default_rng(1)).tolist()
    P.manual_seed(3)
    first = P.rand(2).tolist()
    P.manual_seed(3)
    assert P.rand(2).tolist() == first
    """)


def test_seeded_before_any_default_generator_leaves_none_made():
    run("""
    import dispatcher.prototype as P
    from dispatcher.prototype import generator
    with generator.seeded(7):
        inside = P.rand(2).tolist()
    with generator.seeded(7):
        assert P.rand(2).tolist() == inside
    assert generator._generator is None  # the one before: not made yet
    assert len(P.rand(2).tolist()) == 2
    """)


def test_the_import_makes_overloads_only_of_the_operators_it_uses():
    run("""
    import dispatcher.prototype
    from dispatcher.catalog import TORCH_2_13
    made = set(TORCH_2_13._overloads)
    assert "aten::add" in made and 0 < len(made) < len(TORCH_2_13.names()) // 4, len(made)
    """)
