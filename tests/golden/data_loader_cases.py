"""torch.utils.data.DataLoader over map-style datasets, in the loader's process
and in worker processes, written once and run on torch 2.13
(generate_data_loader_golden.py) and on dispatcher.prototype through
tests/torch_shim.py (tests/test_data_loader.py): ``run(torch)`` returns what
each case gave (batches as dtype and values)."""
from typing import Any


def _described(batch: Any) -> Any:
    if hasattr(batch, "dtype") and hasattr(batch, "tolist"):
        return [str(batch.dtype), batch.tolist()]
    if isinstance(batch, dict):
        return {key: _described(value) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [_described(value) for value in batch]
    return batch


def _identity(batch: Any) -> Any:
    return batch


def _fails(batch: Any) -> Any:
    raise ValueError("no batch today")


def run(torch: Any) -> dict[str, Any]:
    DataLoader = torch.utils.data.DataLoader
    out: dict[str, Any] = {}
    numbers = list(range(7))
    tensors = [torch.tensor([i, i + 1]) for i in range(5)]
    pairs = [(torch.tensor([float(i)]), i % 2 == 0) for i in range(4)]
    records = [{"x": torch.tensor(i, dtype=torch.float64), "name": f"r{i}"} for i in range(3)]
    for workers in (0, 2):
        tag = f" ({workers} workers)"
        loader = DataLoader(numbers, batch_size=3, num_workers=workers)
        out["numbers, batch_size=3" + tag] = [len(loader), _described(list(loader))]
        loader = DataLoader(numbers, batch_size=3, drop_last=True, num_workers=workers)
        out["numbers, drop_last" + tag] = [len(loader), _described(list(loader))]
        out["int64 tensors stacked" + tag] = _described(list(DataLoader(tensors, batch_size=2, num_workers=workers)))
        out["tuples collated by field" + tag] = _described(list(DataLoader(pairs, batch_size=4, num_workers=workers)))
        out["dicts collated by key" + tag] = _described(list(DataLoader(records, batch_size=2, num_workers=workers)))
        out["collate_fn" + tag] = _described(list(DataLoader(tensors, batch_size=2, num_workers=workers,
                                                             collate_fn=_identity)))
        out["batch_size=None" + tag] = _described(list(DataLoader(numbers[:3], batch_size=None, num_workers=workers)))
    try:
        list(DataLoader(numbers, batch_size=2, num_workers=1, collate_fn=_fails))
    except ValueError as exc:
        out["a worker's exception"] = str(exc).splitlines()[:2]
    try:
        DataLoader(numbers, num_workers=-1)
    except ValueError as exc:
        out["negative num_workers"] = str(exc)
    return out
