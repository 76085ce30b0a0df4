"""OperatorEntry.computed_table (the stored table, with where each entry comes
from) and the table view the CLI prints and draws from it."""
import itertools

from dispatcher import fallthrough_kernel
from dispatcher._layout import RUNTIME_SLOT_KEYS
from dispatcher.keys import DispatchKey as K
from dispatcher.keys import is_alias_key
from dispatcher.operator_entry import aliases_serving
from dispatcher.table_view import TableView, source_of

KEYS = [K.CPU, K.AutogradCPU, K.FPGA, K.SparseCPU, K.CompositeExplicitAutogradNonFunctional,
        K.CompositeExplicitAutograd, K.CompositeImplicitAutogradNestedTensor, K.CompositeImplicitAutograd,
        K.Autograd, K.FuncTorchBatchedDecomposition]


def test_computed_table_is_the_precedence_and_names_the_registration(world):
    lib = world.library("tv")
    lib.define("f(Tensor x) -> Tensor")
    op = world.registry.find_op("tv::f")
    kernels = {}
    # Kernels arrive one key at a time; after each, every slot is checked.
    for key in KEYS:
        kernels[key] = lambda x: x
        lib.impl("f", kernels[key], key, debug=f"fn_{key.name}")
        for entry in op.computed_table():
            kernel, rule = op.compute_entry(entry.key)
            assert (entry.kernel, entry.tag) == (kernel, rule.tag)
            if entry.origin is not None:
                # The kernel is the active one of the key named as its origin.
                assert op.kernel_for(entry.origin) is entry.kernel
                assert entry.origin == entry.key or entry.origin in aliases_serving(entry.key)
            else:
                assert entry.tag in ("backend fallback", "missing", "ambiguous autogradother")
    assert [e.key for e in op.computed_table()] == list(RUNTIME_SLOT_KEYS)
    lib.close()


def test_default_backend_kernels_name_the_composite_key_they_come_from(world):
    lib = world.library("tv")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CompositeExplicitAutograd", debug="cea")
    lib.impl("f", lambda x: x, "CompositeExplicitAutogradNonFunctional", debug="ceanf")
    table = {e.key: e for e in world.registry.find_op("tv::f").computed_table()}
    assert (table[K.CPU].tag, table[K.CPU].origin) == ("default backend kernel", K.CompositeExplicitAutogradNonFunctional)
    # XLA is a functional backend, which the non-functional kernel does not serve.
    assert (table[K.XLA].kernel.debug, table[K.XLA].origin) == ("cea", K.CompositeExplicitAutograd)
    lib.close()


def test_sources(world):
    lib = world.library("tv")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "FPGA", debug="fpga")
    lib.impl("f", fallthrough_kernel, "CPU")
    lib.impl("f", lambda x: x, "CompositeImplicitAutograd", debug="cia")
    view = TableView(world.registry.find_op("tv::f"))
    source = {e.key: s for e, s in zip(view.entries, view.sources)}
    assert source[K.FPGA] == "direct registration"
    assert source[K.CPU] == "fallthrough"  # registered on the key, but calls skip it
    assert source[K.AutogradCPU] == "fallthrough"  # the standard fallback: CPU's kernel keeps the math kernel out
    assert source[K.XLA] == "CompositeImplicitAutograd"
    assert source[K.AutogradOther] == "ambiguous AutogradOther"
    assert source[K.Python] == "backend fallback"  # the Python key's standard fallback
    assert source[K.Functionalize] == "missing"
    assert view.expansions == {K.CompositeImplicitAutograd: [k for k in RUNTIME_SLOT_KEYS
                                                           if K.CompositeImplicitAutograd in aliases_serving(k)]}
    assert view.registered == sorted([K.FPGA, K.CPU, K.CompositeImplicitAutograd])
    assert all(source_of(e) == s for e, s in zip(view.entries, view.sources))
    lib.close()


def test_aliases_serving_is_each_alias_keys_runtime_set():
    aliases = [k for k in K if is_alias_key(k)]
    for key, alias in itertools.product(RUNTIME_SLOT_KEYS, aliases):
        composite = alias.name.startswith("CompositeExplicit") or alias == K.CompositeImplicitAutograd
        expected = (key == K.Undefined and composite) or (key != K.Undefined and world_has(alias, key))
        assert (alias in aliases_serving(key)) == expected, (key, alias)


def world_has(alias, key):
    from dispatcher.keysets import get_runtime_dispatch_key_set

    return get_runtime_dispatch_key_set(alias).has(key)
