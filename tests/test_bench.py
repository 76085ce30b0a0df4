"""The comparison script runs and reports every case (timings are not asserted)."""
from dispatcher import Library, bench


def test_compare_runs_every_case():
    results, torch_version = bench.run(rounds=1, number=10)
    names = [r.name for r in results]
    assert any(n.startswith("call, 2 tensors") for n in names)
    assert any(n.endswith("written inline") for n in names)
    assert any("packet, two overloads" in n for n in names)
    assert any(n.startswith("Autograd kernel") for n in names)
    assert any(n.startswith("boxed backend fallback") for n in names)
    assert any(n == "functools.singledispatch" for n in names)
    assert any(n.startswith("no-op prototype wrapper subclass (_make_wrapper_subclass)") for n in names)
    assert all(r.ns_per_call > 0 and r.direct_ns > 0 for r in results)
    table = bench.format_table(results, torch_version)
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    assert len(rows) == len(results)


def test_torch_columns_sit_beside_ours():
    result = bench.Result("case", 100.0, 50.0, 2.0, "", torch_ns=1000.0, torch_ratio=10.0)
    bare = bench.Result("peer", 80.0, 50.0, 1.6, "")
    table = bench.format_table([result, bare], "2.13.0")
    assert "torch 2.13.0 (ns) | torch / ours |" in table.splitlines()[0]
    assert "| case | 100 | 50 | 2.00x | 1000 | 10.0x |" in table
    assert "| peer | 80 | 50 | 1.60x | | |" in table
    assert "torch" not in bench.format_table([bare])


def test_each_torch_figure_says_which_torch_path_it_times():
    result = bench.Result("case", 100.0, 50.0, 2.0, "", torch_ns=1000.0, torch_ratio=10.0, torch_path="torch.add(a, a)")
    table = bench.format_table([result], "2.13.0")
    assert table.splitlines()[0].endswith("| torch's path |")
    assert "| 1000 | 10.0x | torch.add(a, a) |" in table
    # The cases: every one timed beside torch names its path, and one row is
    # torch's own C++ kernel on a real tensor, for scale.
    with Library("bench_paths", "DEF") as lib, Library("_", "IMPL") as fallbacks:
        cases = bench._our_cases(lib, fallbacks)
    assert all(case.torch_path for case in cases if case.torch_call)
    assert any(case.torch_call == "torch.add(a, a)" and "C++" in case.torch_path for case in cases)
