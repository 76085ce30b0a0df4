"""A kernel's debug text names the line of its impl call (Note [Registration
sites read lazily] in dispatcher/kernel.py): kept as the caller's code and
offset, made into text when first read, and taken at once by a later
registration at a site read before."""
import sys

from dispatcher import DispatchKey
from dispatcher.kernel import AnnotatedKernel, Kernel, KernelKind, annotated_kernel, site_text


def _kernel(x):
    return x


def _register_here(lib, key):
    # A few lines first, so that the call is not the function's first line.
    unused = [key] * 2
    del unused
    line = sys._getframe().f_lineno + 1
    lib.impl("f", _kernel, key)
    return line


def test_the_debug_text_names_the_impl_call_line(world):
    lib = world.library("sites", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    line = _register_here(lib, "CPU")
    kernel = world.registry.find_op("sites::f").kernel_for(DispatchKey.CPU)
    assert kernel.debug == f"registered at {__file__}:{line}"
    dump = world.registry.find_op("sites::f").dump_state()
    assert f"CPU: registered at {__file__}:{line} :: (none)" in dump
    lib.close()


def test_a_site_read_before_gives_later_registrations_its_text(world):
    lib = world.library("sites_again", "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    keys = ("CPU", "Meta")
    lines = []
    for key in keys:
        lines.append(_register_here(lib, key))
        op = world.registry.find_op("sites_again::f")
        assert op.kernel_for(DispatchKey[key]).debug.endswith(f":{lines[-1]}")
    op = world.registry.find_op("sites_again::f")
    meta = op.kernel_for(DispatchKey.Meta)
    # CPU's text was read before Meta registered from the same line: Meta's is text already.
    assert isinstance(meta._debug, str)
    assert meta.debug == f"registered at {__file__}:{lines[0]}"
    lib.close()


def test_site_text_gives_f_lineno_and_keeps_a_given_text():
    frame = sys._getframe()
    assert site_text((frame.f_code, frame.f_lasti)) == f"registered at {__file__}:{frame.f_lineno}"
    assert site_text("registered at somewhere:1") == "registered at somewhere:1"


def test_annotated_kernel_is_the_two_constructors_in_one():
    made = annotated_kernel(KernelKind.WITH_KEYSET, _kernel, "here")
    expected = AnnotatedKernel(Kernel(KernelKind.WITH_KEYSET, _kernel), "here")
    assert made.kernel == expected.kernel
    assert (made.debug, made.inferred_schema) == (expected.debug, expected.inferred_schema)
    assert made.function.__func__ is expected.function.__func__
    assert repr(made) == repr(expected)
