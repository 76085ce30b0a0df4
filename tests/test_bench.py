"""The comparison script runs and reports every case (timings are not asserted)."""
from dispatcher import bench


def test_compare_runs_every_case():
    results = bench.run(rounds=1, number=10)
    names = [r.name for r in results]
    assert any(n.startswith("call, 2 tensors") for n in names)
    assert any(n.startswith("boxed backend fallback") for n in names)
    assert any(n == "functools.singledispatch" for n in names)
    assert all(r.ns_per_call > 0 and r.direct_ns > 0 for r in results)
    table = bench.format_table(results)
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    assert len(rows) == len([r for r in results if r.name != bench.TORCH_VS_OURS])
