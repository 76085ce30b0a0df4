"""The SVG pictures (``table --svg``, ``bench --plot``), read back with xml.etree.

The table's cells are checked against what the engine dumps
(``_dispatch_dump_table``) and against the alias keys' runtime sets, not
against the code that drew them; the bars against the numbers they stand for.
"""
import math
import pathlib
import xml.etree.ElementTree as ET

import pytest

from dispatcher import Library, fallthrough_kernel
from dispatcher import __main__ as cli
from dispatcher._layout import RUNTIME_SLOT_KEYS
from dispatcher.bench import Result
from dispatcher.bench_plot import render as render_plot
from dispatcher.registry import registry_in_use
from dispatcher.keys import DispatchKey as K
from dispatcher.keys import is_alias_key
from dispatcher.keysets import is_included_in_alias
from dispatcher.table_svg import COLOURS

SVG = "{http://www.w3.org/2000/svg}"
COMPOSITES = (K.CompositeImplicitAutograd, K.CompositeExplicitAutograd, K.CompositeExplicitAutogradNonFunctional)


def table_svg(capsys, *argv):
    assert cli.main(["table", *argv, "--svg", "-"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return ET.fromstring(out)


def slots(root):
    return {g.get("data-key"): g for g in root.iter(f"{SVG}g") if g.get("class") == "slot"}


def cell(slot):
    (rect,) = [r for r in slot.iter(f"{SVG}rect") if r.get("class") == "cell"]
    return rect


def dumped(name):
    """key name -> (the text after "Key: ", the tag) of the package's own dump
    table (compat's prints the standard fallbacks as torch's framework ones)."""
    lines = registry_in_use().find_op(name).dump_computed_table().splitlines()
    return {line.split(": ", 1)[0]: (line.split(": ", 1)[1], line.rsplit("[", 1)[1].rstrip("]")) for line in lines}


def check_against_the_engine(root, name, registered):
    """Every runtime slot is drawn once, with the dump's tag and text, in the
    colour of its source; each alias key's strip marks exactly the slots it
    can serve; the legend counts the cells."""
    drawn = slots(root)
    keys = [g.get("data-key") for g in root.iter(f"{SVG}g") if g.get("class") == "slot"]
    assert sorted(keys) == sorted(k.name for k in RUNTIME_SLOT_KEYS)
    lines = dumped(name)
    for key, slot in drawn.items():
        assert cell(slot).get("fill") == COLOURS[slot.get("data-source")]
        if key in lines:
            text, tag = lines[key]
            assert slot.get("data-tag") == tag
            title = slot.find(f"{SVG}title").text
            assert title.startswith(f"{key}: {text}") or (tag == "backend fallback" and "[backend fallback]" in title)
        else:
            assert (slot.get("data-tag"), slot.get("data-source")) == ("missing", "missing")
    for alias in filter(is_alias_key, registered):
        marked = {key for key, slot in drawn.items()
                  if any(r.get("data-alias") == alias.name for r in slot.iter(f"{SVG}rect"))}
        serves = {k.name for k in RUNTIME_SLOT_KEYS if is_included_in_alias(k, alias)}
        if alias in COMPOSITES:  # c10's composite kernels also serve Undefined
            serves.add("Undefined")
        assert marked == serves, alias
    counts = {g.get("data-source"): int(g.get("data-count")) for g in root.iter(f"{SVG}g") if g.get("class") == "source"}
    for source, count in counts.items():
        assert count == sum(1 for slot in drawn.values() if slot.get("data-source") == source)
    return drawn


def test_table_picture_of_registered_keys(capsys):
    keys = [K.CPU, K.XLA, K.FPGA, K.CompositeImplicitAutograd, K.Autograd]
    root = table_svg(capsys, *(k.name for k in keys))
    with Library("__test__", "FRAGMENT") as lib:  # the same registrations, to dump
        lib.define("foo(Tensor x) -> Tensor")
        for key in keys:
            lib.impl("foo", lambda x: x, key, debug=f"fn_{key.name}")
        drawn = check_against_the_engine(root, "__test__::foo", keys)
    source = {key: slot.get("data-source") for key, slot in drawn.items()}
    assert source["CPU"] == source["XLA"] == source["FPGA"] == "direct registration"
    assert source["Lazy"] == source["SparseCUDA"] == source["Undefined"] == "CompositeImplicitAutograd"
    assert source["AutogradCPU"] == "Autograd"  # CPU has a kernel: the math kernel would skip its autograd
    assert source["AutogradOther"] == "ambiguous AutogradOther"  # FPGA's kernel and the math kernel
    assert source["BackendSelect"] == "fallthrough"  # the standard fallbacks
    assert source["Python"] == "backend fallback"  # the Python key's standard fallback
    assert source["Functionalize"] == "missing" and cell(drawn["Functionalize"]).get("fill") == "#ffffff"
    assert root.find(f"{SVG}title").text == "Computed dispatch table of __test__::foo"


def test_table_picture_of_an_operator_with_a_fallback_and_a_fallthrough(capsys):
    def boxed(op, keyset, stack):
        pass

    with Library("clipic", "FRAGMENT") as lib, Library("_", "IMPL") as fallbacks:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU", debug="cpu")
        lib.impl("f", fallthrough_kernel, "AutogradCPU")
        lib.impl("f", lambda x: x, "CompositeExplicitAutograd", debug="explicit")
        fallbacks.fallback(boxed, "TESTING_ONLY_GenericMode", boxed=True, debug="a test fallback")
        root = table_svg(capsys, "--op", "clipic::f")
        drawn = check_against_the_engine(root, "clipic::f", [K.CPU, K.AutogradCPU, K.CompositeExplicitAutograd])
    source = {key: slot.get("data-source") for key, slot in drawn.items()}
    assert source["AutogradCPU"] == "fallthrough"
    assert source["TESTING_ONLY_GenericMode"] == "backend fallback"
    assert source["CUDA"] == "CompositeExplicitAutograd"
    assert "a test fallback" in drawn["TESTING_ONLY_GenericMode"].find(f"{SVG}title").text


def test_table_picture_to_a_file(capsys, tmp_path):
    path = tmp_path / "table.svg"
    assert cli.main(["table", "CPU", "--svg", str(path)]) == 0
    assert capsys.readouterr() == ("", "")
    assert slots(ET.parse(path).getroot())["CPU"].get("data-source") == "direct registration"


def test_every_source_has_its_own_colour():
    assert len(set(COLOURS.values())) == len(COLOURS)


# -- the bench plot --------------------------------------------------------------------
def plot(results):
    """The chart as a file holds it."""
    return ET.fromstring(ET.tostring(render_plot(results, "title")))


def result(name, ratio, peer=False):
    return Result(name, ratio * 30, 30.0, ratio, "", peer=peer)


def test_bars_stand_for_the_ratios():
    results = [result("call", 1.98), result("inline", 2.83), result("boxed", 28.3), result("pure", 70.6),
               result("functools.singledispatch", 8.3, peer=True)]
    root = plot(results)
    ticks = {float(line.get("data-ratio")): float(line.get("x1")) for line in root.iter(f"{SVG}line")}
    assert {1, 10, 100} <= set(ticks) and min(ticks) == 1 and max(ticks) == 100
    decade = ticks[10] - ticks[1]
    assert ticks[100] - ticks[10] == pytest.approx(decade, abs=0.01)
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert [b.get("data-case") for b in bars] == [r.name for r in results]
    for bar, r in zip(bars, results):
        assert float(bar.get("x")) == pytest.approx(ticks[1], abs=0.01)
        assert float(bar.get("width")) == pytest.approx(decade * math.log10(r.ratio), abs=0.02)
        assert bar.get("fill") == ("#bab0ac" if r.peer else "#4e79a7")
    values = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "value"]
    assert values == ["1.98x", "2.83x", "28.30x", "70.60x", "8.30x"]


def test_the_axis_reaches_below_one_for_a_faster_peer():
    root = plot([result("call", 2.0), result("faster", 0.5, peer=True)])
    ticks = {float(line.get("data-ratio")): float(line.get("x1")) for line in root.iter(f"{SVG}line")}
    assert min(ticks) == 0.1 and max(ticks) == 10
    bar = [r for r in root.iter(f"{SVG}rect") if r.get("data-case") == "faster"][0]
    assert float(bar.get("width")) == pytest.approx((ticks[10] - ticks[1]) * math.log10(0.5 / 0.1), abs=0.02)


def test_no_results_no_plot():
    with pytest.raises(ValueError, match="no benchmark results"):
        render_plot([], "title")


# -- the documentation's pictures ------------------------------------------------------------
ROOT = pathlib.Path(__file__).parent.parent
PAGE_OF_PICTURE = {"table.svg": "concepts.md", "bench.svg": "performance.md"}


def readme_command(picture):
    """The command that draws docs/<picture>, as argv for main(), from the page that shows it."""
    page = ROOT / "docs" / PAGE_OF_PICTURE[picture]
    if not page.exists():
        pytest.skip("no docs folder")
    text = page.read_text()
    assert f"]({picture})" in text  # shown
    (line,) = [line for line in text.splitlines()
               if line.startswith("python -m dispatcher ") and line.endswith(f"docs/{picture}")]
    return line.split()[3:]


def test_the_table_picture_is_what_its_command_draws(capsys):
    argv = readme_command("table.svg")
    assert argv[-2:] == ["--svg", "docs/table.svg"]
    assert cli.main([*argv[:-1], "-"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "table.svg").read_text()


def test_the_bench_picture_is_a_run_of_the_benchmark():
    assert readme_command("bench.svg") == ["bench", "--plot", "docs/bench.svg"]
    root = ET.parse(ROOT / "docs" / "bench.svg").getroot()
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    values = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "value"]
    assert len(bars) >= 13 and bars[0].get("data-case") == "call, 2 tensors (compiled core)"
    assert values == [f"{float(bar.get('data-ratio')):.2f}x" for bar in bars]
