"""Errors that say what to do (issue 26, point 4): a bad number on the command
line is argparse's one-line error, a mistyped key or operator gets the names
it meant, ``explain`` names the fallback the user registered, and boolean
environment variables read the usual spellings of false."""
import os
import subprocess
import sys
import warnings

import pytest

from dispatcher import DispatchKey, DispatchKeySet, Library, TensorBase, explain, ops
from dispatcher import __main__ as cli
from dispatcher._env import FALSE_SPELLINGS, TRUE_SPELLINGS, env_flag
from dispatcher._suggest import closest_names, closest_operator_names
from dispatcher.keys import parse_dispatch_key


def run_cli(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


# -- numbers on the command line ---------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["bench", "--rounds", "-3"], "argument --rounds: must be a whole number of at least 1, not -3"),
    (["bench", "--rounds", "0"], "argument --rounds: must be a whole number of at least 1, not 0"),
    (["bench", "--number", "0"], "argument --number: must be a whole number of at least 1, not 0"),
    (["bench", "--number", "1.5"], "argument --number: must be a whole number of at least 1, not '1.5'"),
    (["bench", "--registration-rounds", "-1"], "argument --registration-rounds: must be a whole number of at least 1, not -1"),
])
def test_cli_numbers_are_validated(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == f"python -m dispatcher bench: error: {message}\n"


def test_registration_timing_rounds_are_validated():
    out = subprocess.run([sys.executable, "-m", "dispatcher.registration_timing", "0"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "argument rounds: must be a whole number of at least 1, not 0" in out.stderr
    assert "Traceback" not in out.stderr


def test_bench_run_refuses_no_rounds():
    from dispatcher import bench

    with pytest.raises(ValueError, match="rounds and number must be at least 1"):
        bench.run(rounds=0)


# -- dispatch keys -----------------------------------------------------------------------
@pytest.mark.parametrize("name, meant", [
    ("Cpu", "CPU"), ("cpu", "CPU"), ("autogradcpu", "AutogradCPU"), ("COMPOSITEIMPLICITAUTOGRAD", "CompositeImplicitAutograd"),
    ("privateuse1", "PrivateUse1"),
])
def test_a_key_in_the_wrong_case_is_named(name, meant):
    with pytest.raises(ValueError) as info:
        parse_dispatch_key(name)
    assert str(info.value) == f"could not parse dispatch key: {name}; did you mean {meant}?"


def test_impl_with_a_key_in_the_wrong_case_suggests_it():
    with Library("hintns", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(ValueError, match=r"could not parse dispatch key: Cpu; did you mean CPU\?"):
            lib.impl("f", lambda x: x, "Cpu")


def test_a_misspelt_key_still_gets_the_closest_names():
    with pytest.raises(ValueError, match="did you mean CPU"):
        parse_dispatch_key("CPUU")


def test_closest_names_prefers_a_case_only_difference():
    assert closest_names("Cpu", ["XPU", "CPU", "IPU"]) == ["CPU"]
    assert closest_names("nothing-like-it", ["CPU"]) == []


# -- operators ---------------------------------------------------------------------------
OPERATORS = ["aten::add.Tensor", "aten::add.Scalar", "aten::add", "aten::addr", "aten::extend.t", "aten::mul.Tensor",
             "myns::nonexistent_up", "prims::add"]


@pytest.mark.parametrize("name, meant", [
    ("aten::nonexistent_op", []),  # no aten name is near: nothing (not aten::extend.t, nor myns's)
    ("aten::ad", ["aten::add", "aten::addr"]),
    ("aten::add.Tensr", ["aten::add.Tensor"]),
    ("aten::mull.Tensor", ["aten::mul.Tensor"]),
    ("ATEN::ADD", ["aten::add"]),  # a namespace with no operators: whole names, case aside
    ("atne::add", ["aten::add"]),
])
def test_operator_suggestions_come_from_the_namespace(name, meant):
    assert closest_operator_names(name, OPERATORS)[:len(meant) or None] == meant


@pytest.mark.parametrize("name, message", [
    ("aten::nonexistent_op", "no operator aten::nonexistent_op is registered (--import the module that registers it)"),
    ("aten::mull.Tensor", "no operator aten::mull.Tensor is registered; did you mean aten::mul.Tensor"),
    ("Aten::Sin", "no operator Aten::Sin is registered; did you mean aten::sin?"),
])
def test_table_op_suggestions(capsys, name, message):
    code, _, err = run_cli(capsys, "table", "--op", name)
    assert code == 2
    assert f"argument --op: {message}" in err


# -- explain names what the user registered -------------------------------------------------
def user_fallback(op, *args, **kwargs):
    return args[0]


def user_fallback_with_keyset(op, keyset, *args, **kwargs):
    return args[0]


@pytest.mark.parametrize("fn, with_keyset", [(user_fallback, False), (user_fallback_with_keyset, True)])
def test_explain_names_the_registered_fallback(fn, with_keyset):
    with Library("explainfb", "DEF") as lib, Library("_", "IMPL") as fallbacks:
        lib.define("f(Tensor x) -> Tensor")
        fallbacks.fallback(fn, "XLA", with_keyset=with_keyset)
        t = TensorBase(DispatchKeySet([DispatchKey.XLA]))
        text = str(explain(ops.explainfb.f.default, t, run=True))
    assert f"dispatches to XLA (table slot 4): {fn.__qualname__} (Python fallback) [backend fallback]" in text
    assert f"a call runs {fn.__qualname__} (Python fallback)" in text
    assert "<locals>" not in text


# -- boolean environment variables -----------------------------------------------------------
@pytest.mark.parametrize("value", ["", "0", "false", "FALSE", "No", "off", " off "])
def test_false_spellings(monkeypatch, value):
    monkeypatch.setenv("DISPATCHER_TEST_FLAG", value)
    assert env_flag("DISPATCHER_TEST_FLAG") is False


@pytest.mark.parametrize("value", ["1", "true", "Yes", "ON"])
def test_true_spellings(monkeypatch, value):
    monkeypatch.setenv("DISPATCHER_TEST_FLAG", value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert env_flag("DISPATCHER_TEST_FLAG") is True


def test_unset_is_false(monkeypatch):
    monkeypatch.delenv("DISPATCHER_TEST_FLAG", raising=False)
    assert env_flag("DISPATCHER_TEST_FLAG") is False


def test_another_value_warns_and_counts_as_on(monkeypatch):
    monkeypatch.setenv("DISPATCHER_TEST_FLAG", "maybe")
    with pytest.warns(RuntimeWarning, match="DISPATCHER_TEST_FLAG='maybe' is read as on; write 1/true/yes/on"):
        assert env_flag("DISPATCHER_TEST_FLAG") is True


def _run(code, **env):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCHER_")}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True)


@pytest.mark.parametrize("variable, code", [
    ("DISPATCHER_NO_EXTENSIONS", "import dispatcher, dispatcher._engine as e; print(dispatcher.HAS_EXTENSION == (e.compiled_engine() is not None))"),
    ("DISPATCHER_SHOW_DISPATCH_TRACE", "import dispatcher; print(not dispatcher.show_dispatch_trace())"),
    ("DISPATCHER_CHECK_CALLS", "import dispatcher; print(not dispatcher.checked_calls_enabled())"),
])
@pytest.mark.parametrize("value", ["false", "off", "no"])
def test_each_variable_reads_false(variable, code, value):
    out = _run(code, **{variable: value})
    assert (out.returncode, out.stdout.strip(), out.stderr) == (0, "True", "")


def test_setup_py_reads_the_same_spellings():
    # setup.py cannot import the package it builds: it keeps its own copy.
    import pathlib
    import re

    setup = (pathlib.Path(__file__).parent.parent / "setup.py")
    if not setup.exists():
        pytest.skip("no source tree")
    text = setup.read_text()
    false = re.search(r"FALSE_SPELLINGS = (\{.*?\})", text)
    true = re.search(r"TRUE_SPELLINGS = (\{.*?\})", text)
    assert false and true
    assert eval(false.group(1)) == set(FALSE_SPELLINGS)
    assert eval(true.group(1)) == set(TRUE_SPELLINGS)
