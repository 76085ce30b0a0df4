"""Texts as torch's where code compares them: compat's dump table prints the
standard fallbacks as torch's framework fallbacks (the lines PyTorch's own
test_dispatch.py masks to ``registered in pytorch framework``), unknown
operator names say which namespace and what is near, and overloads and
packets have torch's ``__name__``/``__module__``-style attributes."""
import re
import subprocess
import sys

import pytest

from dispatcher.compat._framework_fallbacks import TORCH_FALLBACK_SOURCES, torch_fallback_line
from dispatcher.standard_fallbacks import STANDARD_FALLTHROUGH_KEYS

from .conftest import load_golden

FRAMEWORK = load_golden("registration_golden.json")["framework_fallbacks"]


def test_the_table_of_torchs_fallback_lines_is_the_recorded_one():
    for key, (fallthrough, source) in TORCH_FALLBACK_SOURCES.items():
        assert FRAMEWORK[key]["fallthrough"] == fallthrough
        assert torch_fallback_line(key) == FRAMEWORK[key]["dump_table_line"]
    # Every standard fallback torch also has is covered.
    assert {k.name for k in STANDARD_FALLTHROUGH_KEYS} & set(FRAMEWORK) <= set(TORCH_FALLBACK_SOURCES)


def pytorch_test_mask(table, keys):
    """What PyTorch's test_dispatch.py does to a dump table (extract_dispatch_table_with_keys)."""
    regex = re.compile(r"registered at .*FallbackKernel\.cpp.*(\[)")
    return "".join(regex.sub("registered in pytorch framework [", t) + "\n"
                   for k in keys for t in table.split("\n") if t.startswith(k))


def test_dump_table_writes_torchs_lines_for_the_standard_fallbacks(world, compat):
    with world.library("h23texts") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        table = compat._dispatch_dump_table("h23texts::f")
        assert pytest_lines(table, ("AutogradCPU", "AutogradOther", "BackendSelect", "AutocastCPU")) == [
            FRAMEWORK["AutogradCPU"]["dump_table_line"],
            FRAMEWORK["AutogradOther"]["dump_table_line"],
            FRAMEWORK["BackendSelect"]["dump_table_line"],
            FRAMEWORK["AutocastCPU"]["dump_table_line"],
        ]
        assert pytorch_test_mask(table, ("CPU", "AutogradCPU", "AutogradOther")) == (
            f"CPU: registered at {__file__}:{lib_line()} [kernel]\n"
            "AutogradCPU: registered in pytorch framework [backend fallback]\n"
            "AutogradOther: registered in pytorch framework [backend fallback]\n"
        )
        assert "AutogradHIP" not in table  # torch has no fallback there
        assert "registered by dispatcher at import" not in table
        # The package's own dump says what it registered.
        assert "standard AutogradCPU fallthrough" in world.registry.find_op("h23texts::f").dump_computed_table()


def pytest_lines(table, keys):
    return [line for key in keys for line in table.split("\n") if line.startswith(key + ":")]


def lib_line():
    import inspect

    source, start = inspect.getsourcelines(test_dump_table_writes_torchs_lines_for_the_standard_fallbacks)
    return start + next(i for i, line in enumerate(source) if 'lib.impl("f"' in line)


def test_unknown_operator_names_say_where_and_what_is_near(world):
    with pytest.raises(AttributeError, match=r"no operator named 'adx' in namespace dispatcher.ops.aten "
                                             r"\(aten::adx is not defined\); did you mean .*add"):
        world.ops.aten.adx  # noqa: B018
    with world.library("h23names") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        with pytest.raises(AttributeError, match=r"'ops.h23names' object has no attribute 'fo'") as caught:
            world.ops.h23names.fo  # noqa: B018
        assert caught.value.name == "fo" and "foo" in dir(caught.value.obj)  # what Python's "Did you mean" reads
    assert not hasattr(world.ops.aten, "__wrapped__")  # probes for dunders stay plain


def test_unknown_overload_names_say_which_packet_and_what_is_near(world):
    """Note [A packet's class names it]: Python's own miss, with no __getattr__
    on a live packet: the message names the packet, the traceback the nearest overload."""
    with world.library("h23ovl") as lib:
        lib.define("foo.bar(Tensor x) -> Tensor")
        lib.define("foo.baz(Tensor x, int y) -> Tensor")
        packet = world.ops.h23ovl.foo
        with pytest.raises(AttributeError, match=r"^'ops.h23ovl.foo' object has no attribute 'baar'$") as caught:
            packet.baar  # noqa: B018
        # What Python's "Did you mean" reads (3.11 prints it in its own excepthook).
        assert caught.value.obj is packet and caught.value.name == "baar" and {"bar", "baz"} <= set(dir(packet))
        with pytest.raises(AttributeError, match=r"'ops.aten.add' object has no attribute 'Tensr'"):
            world.ops.aten.add.Tensr  # noqa: B018
        assert not any("__getattr__" in vars(cls) for cls in type(packet).__mro__)
    with pytest.raises(AttributeError, match=r"no operator named h23ovl::foo is defined \(asked for its overload 'bar'\)"):
        packet.bar  # noqa: B018


def test_pythons_traceback_suggests_the_nearest_overload():
    code = ("from dispatcher import Library, ops\n"
            "lib = Library('h23ovl3', 'DEF')\n"
            "lib.define('foo.bar(Tensor x) -> Tensor')\n"
            "ops.h23ovl3.foo.baar\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == (
        "AttributeError: 'ops.h23ovl3.foo' object has no attribute 'baar'. Did you mean: 'bar'?")


def test_a_packet_hands_its_class_on_when_it_loses_its_last_overload(world):
    """Note [A packet's class names it]: a live packet is the one instance of its
    class; an undefined one gives it back, and the next packet renames it."""
    with world.library("h23ovl2") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        first = world.ops.h23ovl2.foo
        named = type(first)
        assert named.__name__ == "ops.h23ovl2.foo" and isinstance(first, world.engine.OverloadPacket)
        lib.define("foo.more(Tensor x) -> Tensor")
        assert type(first) is named  # a new overload keeps the class
    assert type(first) is world.engine._UndefinedOverloadPacket
    with world.library("h23ovl2b") as lib:
        lib.define("bar.other(Tensor x) -> Tensor")
        lib.impl("bar.other", lambda x: "cpu", "CPU")
        again = world.ops.h23ovl2b.bar
        assert type(again) is named and (named.__name__, named.__qualname__) == ("ops.h23ovl2b.bar",) * 2
        x = world.tensor(world.engine.DispatchKey.CPU)
        assert again(x) == again.other(x) == "cpu"  # vectorcall when compiled: instruction_counts.py's packet row
        with pytest.raises(AttributeError, match=r"'ops.h23ovl2b.bar' object has no attribute 'foo'"):
            again.foo  # noqa: B018


def test_overloads_and_packets_have_torchs_attributes(world):
    add = world.ops.aten.add
    assert (add.Tensor._namespace, add.Tensor._overloadpacket) == ("aten", add)
    assert add.Tensor.op is add.Tensor and add.op is add
    assert (add.__name__, add.__module__) == ("add", "torch._ops.aten")
    # torch 2.13: OpOverload.__name__ 'add.Tensor', __qualname__ 'aten::add.Tensor', __module__
    # 'torch._ops.aten'; the default overload's 'sin.default' / 'aten::sin'.
    assert (add.Tensor.__name__, add.Tensor.__qualname__, add.Tensor.__module__) == (
        "add.Tensor", "aten::add.Tensor", "torch._ops.aten")
    sin = world.ops.aten.sin.default
    assert (sin.__name__, sin.__qualname__, sin.__module__) == ("sin.default", "aten::sin", "torch._ops.aten")
    assert add.__qualname__ == "aten::add"  # torch's is its C function's; here the qualified name
    assert add.Tensor._op is add.Tensor and add._op is add
    assert add.Tensor._is_protocol is False and add._is_protocol is False and add._has_torchbind_op_overload is False
    # The classes keep their own names.
    handle_type = type(add.Tensor)
    assert (handle_type.__name__, handle_type.__qualname__) == ("OperatorHandle", "OperatorHandle")
    assert handle_type.__module__ == world.engine.__name__
    import functools

    assert functools.wraps(add.Tensor)(lambda: None).__name__ == "add.Tensor"
    assert add._dir == add.overloads() and add.op_overloads()[0] is add.Tensor
    assert world.ops.aten.view.default.is_view and not add.Tensor.is_view
    assert world.ops.aten.rand.default._nondeterministic_seeded and not add.Tensor._nondeterministic_seeded
    assert add.Tensor._tags == add.Tensor.tags


def test_tables_pytorchs_tests_mask_read_as_torchs_with_our_own_fallbacks(world, compat):
    """What PyTorch's test_dispatch.py checks of a table with a CPU kernel and a
    CompositeExplicitAutograd one, read through compat with this package's
    standard fallbacks (not torch's framework set swapped in)."""
    m = compat._dispatch_library("FRAGMENT", "h23masked", "")
    m.def_("foo(Tensor x) -> Tensor")
    m.impl_t_t("foo", "CPU", debug="fn_cpu")
    m.impl_t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend")
    keys = ("Undefined", "CPU", "CUDA", "XLA", "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradXLA")
    assert pytorch_test_mask(compat._dispatch_dump_table("h23masked::foo"), keys) == (
        "Undefined: fn_defaultbackend [default backend kernel]\n"
        "CPU: fn_cpu [kernel]\n"
        "CUDA: fn_defaultbackend [default backend kernel]\n"
        "XLA: fn_defaultbackend [default backend kernel]\n"
        "AutogradOther: registered in pytorch framework [backend fallback]\n"
        "AutogradCPU: registered in pytorch framework [backend fallback]\n"
        "AutogradCUDA: registered in pytorch framework [backend fallback]\n"
        "AutogradXLA: registered in pytorch framework [backend fallback]\n"
    )
    m.reset()
