"""``python -m dispatcher explain ns::op KEY...``, run in-process.

The command explains calls on the package's registry, in this process.
"""
import sys
import textwrap

import pytest

from dispatcher import Library
from dispatcher.__main__ import main


def cli_main(argv):
    """``python -m dispatcher explain *argv``: its exit status."""
    try:
        return main(["explain", *argv])
    except SystemExit as e:  # argparse's exits, and our errors through it
        return e.code


@pytest.fixture
def lib():
    with Library("explaincli", "DEF") as library:
        library.define("f(Tensor x) -> Tensor")
        library.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
        library.impl("f", lambda x: x, "CPU")
        library.impl("f", lambda x: x, "CompositeImplicitAutograd")
        yield library


def test_explains_a_call_with_the_keys_given(lib, capsys):
    assert cli_main(["explaincli::f", "CPU", "AutogradCPU"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("explaincli::f: dispatch of a call")
    assert "union of the arguments: DispatchKeySet(CPU, AutogradCPU)\n" in out
    assert "AutogradCPU (table slot 96): fallthrough [backend fallback]" in out
    assert "the CompositeImplicitAutograd kernel does not serve AutogradCPU" in out
    assert "dispatches to CPU (table slot 1): " in out and "[kernel], registered at " + __file__ in out


def test_without_keys_the_call_has_none(lib, capsys):
    assert cli_main(["explaincli::f.out"]) == 0
    out = capsys.readouterr().out
    assert "union of the arguments: DispatchKeySet()\n" in out
    assert "dispatches to Undefined (table slot 0): no kernel [missing]" in out


@pytest.mark.parametrize("argv, message", [
    (["explaincli::f", "Bogus"], "argument KEY: could not parse dispatch key: Bogus"),
    (["explaincli::f", "CompositeImplicitAutograd"], "argument KEY: CompositeImplicitAutograd is an alias key"),
    (["explaincli"], "argument OPERATOR: expected ns::name or ns::name.overload, got 'explaincli'"),
    (["explaincli::nope", "CPU"], "argument OPERATOR: no operator explaincli::nope is defined (use --import MODULE"),
    (["explaincli::f.bad"], "argument OPERATOR: no operator explaincli::f.bad is defined"),
    (["--import", "no_such_module_here", "explaincli::f"],
     "argument --import: importing no_such_module_here failed: ModuleNotFoundError"),
    ([], "the following arguments are required: OPERATOR"),
])
def test_bad_arguments_exit_2_naming_the_argument(lib, capsys, argv, message):
    assert cli_main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"python -m dispatcher explain: error: {message}")
    assert captured.err.count("\n") == 1  # one line, no usage, no traceback


def test_an_operator_name_without_its_overload_lists_the_overloads(capsys):
    with Library("explaincli2", "DEF") as library:
        library.define("g.Tensor(Tensor x) -> Tensor")
        assert cli_main(["explaincli2::g"]) == 2
    assert "its overloads: explaincli2::g.Tensor" in capsys.readouterr().err


def test_import_defines_the_operator_first(tmp_path, monkeypatch, capsys):
    (tmp_path / "explain_cli_ops.py").write_text(textwrap.dedent("""
        from dispatcher import Library
        lib = Library("explaincli3", "DEF")
        lib.define("h(Tensor x) -> Tensor")
        lib.impl("h", lambda x: x, "XLA")
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert cli_main(["--import", "explain_cli_ops", "explaincli3::h", "XLA"]) == 0
        assert "dispatches to XLA (table slot 4): <lambda> [kernel]" in capsys.readouterr().out
    finally:
        sys.modules.pop("explain_cli_ops").lib.close()


def test_help_exits_0(capsys):
    assert cli_main(["--help"]) == 0
    assert "--import MODULE" in capsys.readouterr().out
