"""``python -m dispatcher``: its commands, and its manners (--version, --help, errors, pipes).

Most tests call ``main(argv)`` in this process (capsys reads what it
prints); a few run ``python -m dispatcher`` to check the program as a shell
runs it (the environment is inherited, so it uses this run's engine).
"""
import importlib.metadata
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import dispatcher
from dispatcher import DispatchKey, Library, fallthrough_kernel
from dispatcher import __main__ as cli
from dispatcher._layout import RUNTIME_SLOT_KEYS
from dispatcher.compat import torch_C

from .conftest import load_golden

PYTHON_DISPATCHER = load_golden("python_dispatcher_golden.json")
SVG = "{http://www.w3.org/2000/svg}"


def run(capsys, *argv):
    """main(argv): (exit status, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as e:  # argparse's exits, and our errors through it
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def python_m(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "dispatcher", *args], capture_output=True, text=True,
                          timeout=120, **kwargs)


def golden_table(keys):
    supported = PYTHON_DISPATCHER["supported_keys"]
    return PYTHON_DISPATCHER["subsets"][sum(1 << supported.index(k) for k in keys)]["dispatchTable"]


def dump_lines(name):
    """_dispatch_dump_table's lines (c10's format), by key name."""
    return {line.split(": ", 1)[0]: line for line in torch_C._dispatch_dump_table(name).splitlines()}


# -- table: text -----------------------------------------------------------------------
def test_table_prints_pytorchs_table():
    out = python_m("table", "CPU", "XLA", "CompositeImplicitAutograd")
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == golden_table(["CPU", "XLA", "CompositeImplicitAutograd"])
    assert "Lazy            fn_CompositeImplicitAutograd [math kernel]\n" in out.stdout


def test_table_matches_python_dispatcher_on_every_subset_of_its_keys(capsys):
    # PyTorch's PythonDispatcher, on each of the 2048 subsets of its eleven
    # keys, but those it refuses (CompositeImplicitAutograd with
    # CompositeExplicitAutograd, which this command takes: see below).
    checked = 0
    for subset in PYTHON_DISPATCHER["subsets"]:
        if subset["error"] is None:
            assert run(capsys, "table", *subset["keys"]) == (0, subset["dispatchTable"], ""), subset["keys"]
            checked += 1
    assert checked == 1536


def test_table_takes_the_seeds_names(capsys):
    assert run(capsys, "table", "XLA", "Math") == (0, golden_table(["XLA", "CompositeImplicitAutograd"]), "")


def test_table_takes_any_key_and_shows_the_engines_entries(capsys):
    keys = ["SparseCUDA", "QuantizedXLA", "AutogradNestedTensor", "CompositeExplicitAutograd",
            "CompositeImplicitAutograd", "Python"]
    code, out, err = run(capsys, "table", *keys)
    assert (code, err) == (0, "")
    rows = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines()[4:]}
    # PythonDispatcher's example keys, and every runtime key with a kernel of its own.
    assert set(rows) == {"CPU", "XLA", "Lazy", "FPGA", "AutogradOther", "AutogradCPU", "AutogradXLA",
                         "AutogradLazy", "SparseCUDA", "QuantizedXLA", "AutogradNestedTensor", "Python"}
    assert rows["SparseCUDA"] == "fn_SparseCUDA [kernel]"
    assert rows["CPU"] == "fn_CompositeExplicitAutograd [default backend kernel]"  # it wins over the math kernel
    with Library("__test__", "FRAGMENT") as lib:  # the same registrations, dumped as c10 does
        lib.define("foo(Tensor x) -> Tensor")
        for key in keys:
            lib.impl("foo", lambda x: x, key, debug=f"fn_{key}")
        dumped = dump_lines("__test__::foo")
    for key, text in rows.items():
        if not text.startswith("["):  # the standard fallbacks' texts are left out, as PythonDispatcher does
            assert dumped[key] == f"{key}: {text}"


def test_table_all_prints_every_slot_with_an_entry(capsys):
    code, out, _ = run(capsys, "table", "--all", "CompositeImplicitAutograd")
    lines = out.splitlines()[4:]
    assert code == 0
    with Library("__test__", "FRAGMENT") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        lib.impl("foo", lambda x: x, "CompositeImplicitAutograd", debug="fn_CompositeImplicitAutograd")
        dumped = dump_lines("__test__::foo")
    assert [line.split()[0] for line in lines] == [k.name for k in RUNTIME_SLOT_KEYS if k.name in dumped]
    # The key column widens for names longer than PythonDispatcher's 15 characters.
    width = max(len(k) for k in dumped) + 1
    assert {line[width:] for line in lines if line.startswith("Quantized")} == {"fn_CompositeImplicitAutograd [math kernel]"}


def test_table_of_a_registered_operator(capsys):
    with Library("clitest", "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU", debug="cpu kernel")
        lib.impl("f", fallthrough_kernel, "AutogradCPU")
        lib.impl("f", lambda x: x, "CompositeExplicitAutograd", debug="explicit")
        code, out, err = run(capsys, "table", "--op", "clitest::f")
        assert run(capsys, "table", "--op", "clitest::f.default")[1] == out  # torch.ops' spelling
        dumped = dump_lines("clitest::f")
    assert (code, err) == (0, "")
    rows = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines()[4:]}
    assert rows["CPU"] == "cpu kernel [kernel]"
    assert rows["XLA"] == "explicit [default backend kernel]"
    assert dumped["AutogradCPU"].startswith("AutogradCPU: fallthrough ")
    assert rows["AutogradCPU"] == dumped["AutogradCPU"].split(": ", 1)[1]


def test_table_imports_modules_for_their_operators(capsys):
    prototype = pytest.importorskip("dispatcher.prototype")  # numpy
    try:
        code, out, err = run(capsys, "table", "--import", "dispatcher.prototype", "--op", "aten::mean")
    finally:
        prototype.uninstall()  # the suite runs without its fallbacks (tests/conftest.py)
    assert (code, err) == (0, "")
    # The prototype's kernel of aten::mean, a composite for every backend.
    assert "[default backend kernel]" in out and "composite.py" in out


# -- table: errors ---------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["table", "CPU", "Bogus"], "argument KEY: could not parse dispatch key: Bogus"),
    (["table", "CPUU"], "argument KEY: could not parse dispatch key: CPUU; did you mean CPU"),
    (["table", "CPU", "CPU"], "argument KEY: CPU is given twice"),
    (["table", "Undefined"], "argument KEY: Undefined is not a key a kernel can be registered on"),
    (["table", "CPU", "--op", "clitest::f"], "argument KEY: give KEYs or --op, not both"),
    (["table", "--op", "nope::nothing"], "argument --op: no operator nope::nothing is registered"),
    (["table", "--op", "::"], "argument --op: no operator :: is registered"),
    (["table", "--import", "no_such_module_here"], "argument --import: No module named 'no_such_module_here'"),
    (["table", "--svg", "/no/such/folder/t.svg"], "argument --svg: cannot write /no/such/folder/t.svg"),
    (["table", "--svg"], "argument --svg: expected one argument"),
    (["table", "--svg", "."], "argument --svg: cannot write .: it is a folder or not writable"),
    (["table", "--nope"], "unrecognized arguments: --nope"),
    (["nope"], "argument COMMAND: invalid choice: 'nope'"),
    ([], "the following arguments are required: COMMAND"),
    (["bench", "--rounds", "many"], "argument --rounds: must be a whole number of at least 1, not 'many'"),
    (["bench", "--plot", "/no/such/folder/b.svg"], "argument --plot: cannot write /no/such/folder/b.svg"),
])
def test_errors_are_one_line_naming_the_argument(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("python -m dispatcher")
    assert ": error: " + message in err


def test_a_misspelt_operator_gets_suggestions(capsys):
    with Library("clitest", "FRAGMENT") as lib:
        lib.define("long_name(Tensor x) -> Tensor")
        code, _, err = run(capsys, "table", "--op", "clitest::long_nam")
    assert code == 2
    assert "argument --op: no operator clitest::long_nam is registered; did you mean clitest::long_name" in err


def test_an_error_leaves_no_test_operator_behind(capsys):
    assert run(capsys, "table", "CPU", "CPU")[0] == 2
    assert torch_C._dispatch_dump("__test__::foo") == ""
    assert run(capsys, "table", "CPU")[0] == 0
    assert torch_C._dispatch_dump("__test__::foo") == ""


# -- manners ---------------------------------------------------------------------------
def test_version_is_the_packages(capsys):
    code, out, _ = run(capsys, "--version")
    engine = "compiled" if dispatcher.HAS_EXTENSION else "pure-Python"
    assert (code, out) == (0, f"dispatcher {dispatcher.__version__} ({engine} engine)\n")
    # The distribution that installed the package (c10-dispatcher; an older
    # install of this checkout may still be called dispatcher).
    distribution = importlib.metadata.packages_distributions()["dispatcher"][0]
    assert dispatcher.__version__ == importlib.metadata.version(distribution)


def test_help_lists_every_command_on_one_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "--help")
    assert code == 0
    lines = out.splitlines()
    names = [name for name, _, _ in cli._COMMANDS]
    assert names == ["keys", "table", "explain", "demo", "bench"]
    for name, summary, _ in cli._COMMANDS:
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert line.split(None, 1)[1] == summary
        following = lines[lines.index(line) + 1:][:1] or [""]
        assert following[0].split()[:1] in [[], *([n] for n in names)], f"{name}'s summary wraps"


def test_each_command_has_help(capsys):
    for name, _, setup in cli._COMMANDS:
        code, out, _ = run(capsys, name, "--help")
        assert code == 0 and out.startswith(f"usage: python -m dispatcher {name}")
        assert " ".join(setup.__doc__.split()[:4]) in " ".join(out.split())


def test_a_new_command_is_one_function(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_COMMANDS", list(cli._COMMANDS))

    @cli.command("echo", "print the words given")
    def _echo(parser):
        """Print WORDs."""
        parser.add_argument("words", nargs="+", metavar="WORD")
        return lambda args: print(*args.words)

    assert run(capsys, "echo", "a", "b") == (0, "a b\n", "")
    assert "print the words given" in run(capsys, "--help")[1]
    assert run(capsys, "echo")[0] == 2


def test_output_into_a_closed_pipe_ends_quietly():
    # As `python -m dispatcher keys | head -1` when head has exited.
    for argv in (["keys"], ["table", "--all", "CompositeImplicitAutograd"]):
        process = subprocess.Popen([sys.executable, "-m", "dispatcher", *argv], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        process.stdout.close()
        _, err = process.communicate(timeout=120)
        assert (process.returncode, err) == (cli.EXIT_BROKEN_PIPE, b""), argv


def test_keys_prints_the_catalog_with_priorities(capsys):
    code, out, _ = run(capsys, "keys")
    assert code == 0
    lines = out.splitlines()
    rows = {line.split()[1]: line.split() for line in lines[1:] if line[:5].strip().isdigit()}
    assert set(rows) == {k.name for k in DispatchKey}
    assert rows["CPU"][0] == str(DispatchKey.CPU.value)
    assert rows["AutogradCPU"][-1] == "runtime" and rows["Dense"][-1] == "(per-backend)"
    assert rows["CompositeImplicitAutograd"][-1] == "alias"


def test_bench_passes_its_options_on_and_plots(tmp_path):
    plot = tmp_path / "bench.svg"
    out = python_m("bench", "--rounds", "1", "--number", "5", "--registration-rounds", "2", "--json",
                   "--plot", str(plot))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"torch", "results", "registration_us", "first_catalog_use_us", "first_overload_use_us",
                           "round_robin", "import_ms"}
    assert report["round_robin"]["ours_ns"] > 0
    # Keyed by the number of catalog operators defined: 0, at least 10, all.
    counts = sorted(int(count) for count in report["registration_us"])
    assert len(counts) == 3 and counts[0] == 0 and counts[1] >= 10 and counts[2] >= 4374
    assert all("impl CompositeImplicitAutograd" in r["ours"] for r in report["registration_us"].values())
    assert report["first_catalog_use_us"]["ours"] and report["first_overload_use_us"]["ours"]
    assert report["import_ms"]["cached"] > 0 < report["import_ms"]["uncached"]
    assert any(r["name"].startswith("call, 2 tensors") for r in report["results"])
    # The picture has the run's results: one bar each, with its ratio.
    bars = ET.parse(plot).getroot().iter(f"{SVG}rect")
    drawn = [(bar.get("data-case"), bar.get("data-ratio")) for bar in bars if bar.get("class") == "bar"]
    assert drawn == [(r["name"], f"{r['ratio']:.2f}") for r in report["results"]]
