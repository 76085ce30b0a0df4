"""``python -m dispatcher``: the key catalog and PythonDispatcher's table, run as a user would."""
from __future__ import annotations

import subprocess
import sys

from dispatcher import DispatchKey

from .conftest import load_golden

PYTHON_DISPATCHER = load_golden("python_dispatcher_golden.json")


def cli(*args: str) -> subprocess.CompletedProcess:
    # The environment is inherited, so the subprocess uses this run's core.
    return subprocess.run([sys.executable, "-m", "dispatcher", *args], capture_output=True, text=True, timeout=120)


def golden_table(keys: list[str]) -> str:
    supported = PYTHON_DISPATCHER["supported_keys"]
    return PYTHON_DISPATCHER["subsets"][sum(1 << supported.index(k) for k in keys)]["dispatchTable"]


def test_table_prints_pytorchs_table():
    out = cli("table", "CPU", "XLA", "CompositeImplicitAutograd")
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == golden_table(["CPU", "XLA", "CompositeImplicitAutograd"])
    assert "Lazy            fn_CompositeImplicitAutograd [math kernel]\n" in out.stdout


def test_table_without_keys_shows_the_fallbacks():
    out = cli("table")
    assert (out.returncode, out.stdout) == (0, golden_table([]))


def test_table_takes_the_seeds_names():
    out = cli("table", "XLA", "Math")
    assert (out.returncode, out.stdout) == (0, golden_table(["XLA", "CompositeImplicitAutograd"]))


def test_bad_keys_exit_2_with_a_message():
    for args, message in [
        (("CPU", "Bogus"), "Bogus is not supported, please select a dispatch key in ['CPU', "),
        (("CPU", "CPU"), "Overridden is not allowed but found duplicates in ['CPU', 'CPU']."),
        (("CompositeImplicitAutograd", "CompositeExplicitAutograd"),
         "Registration to both CompositeImplicitAutograd and CompositeExplicitAutograd is not allowed."),
    ]:
        out = cli("table", *args)
        assert out.returncode == 2, args
        assert out.stdout == ""
        assert "Traceback" not in out.stderr
        assert out.stderr.startswith("usage: python -m dispatcher table")
        assert f"python -m dispatcher table: error: {message}" in out.stderr


def test_table_help_lists_the_keys():
    out = cli("table", "--help")
    assert out.returncode == 0
    assert "CompositeImplicitAutograd" in out.stdout and "Math" in out.stdout


def test_keys_prints_the_catalog_with_priorities():
    out = cli("keys")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    rows = {line.split()[1]: line.split() for line in lines[1:] if line[:5].strip().isdigit()}
    assert set(rows) == {k.name for k in DispatchKey}
    assert rows["CPU"][0] == str(DispatchKey.CPU.value)
    assert rows["AutogradCPU"][-1] == "runtime" and rows["Dense"][-1] == "(per-backend)"
    assert rows["CompositeImplicitAutograd"][-1] == "alias"


def test_unknown_command_exits_2():
    out = cli("nope")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_bench_passes_its_options_on():
    import json

    out = subprocess.run([sys.executable, "-m", "dispatcher", "bench", "--rounds", "1", "--number", "5",
                          "--registration-rounds", "2", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"torch", "results", "registration_us", "import_ms", "bytecode_cache"}
    assert "define" in report["registration_us"]["ours"] and report["import_ms"] > 0
    assert any(r["name"].startswith("call, 2 tensors") for r in report["results"])
