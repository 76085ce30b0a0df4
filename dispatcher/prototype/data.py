"""``torch.utils.data.DataLoader`` for map-style datasets, with worker processes.

``DataLoader(dataset, batch_size=1, shuffle=False, num_workers=0,
collate_fn=None, drop_last=False)`` yields the batches of a dataset (anything
with ``__len__`` and ``__getitem__``), each ``collate_fn`` of the list of its
samples (``default_collate`` by default: tensors stacked, numbers made
tensors, tuples and dicts collated field by field).

With ``num_workers > 0`` the batches are made in that many worker processes,
started by multiprocessing's default method (fork on Linux, as torch's), which
inherit the dataset and collate_fn; worker ``i`` makes batches ``i``,
``i + num_workers``, ...; each batch comes back pickled (tensors and tensor
subclasses by copying.py's ``__reduce_ex__``, which keeps their dtype), and
the loader yields them in order.  An exception in a worker is raised again in
the loader's process, as torch's: "Caught ValueError in DataLoader worker
process 0." and the worker's traceback.

What differs from torch: tensors travel pickled, not in shared memory; there
are no iterable-style datasets, samplers, ``pin_memory``, ``prefetch_factor``,
persistent workers or ``worker_init_fn``.
"""
from __future__ import annotations

import collections.abc
import multiprocessing
import traceback
from typing import Any, Callable, Iterator, Optional, Sequence

from .dtypes import DType
from .generator import default_generator
from .tensor import Tensor, stack, tensor

__all__ = ["DataLoader", "default_collate"]


def default_collate(batch: Sequence[Any]) -> Any:
    """torch's default_collate, for tensors, numbers, strings, tuples, lists and dicts."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, bool):
        return tensor(list(batch), dtype=DType.bool)
    if isinstance(first, int):
        return tensor(list(batch), dtype=DType.int64)
    if isinstance(first, float):
        return tensor(list(batch), dtype=DType.float64)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numbers, dicts or lists; found {type(first)}")


class _WorkerError:
    """An exception raised in a worker, sent back as its type and traceback text."""

    def __init__(self, worker_id: int, exc: BaseException) -> None:
        self.kind = type(exc)
        self.text = (f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\nOriginal "
                     + "".join(traceback.format_exception(exc)))

    def reraise(self) -> None:
        try:
            error = self.kind(self.text)
        except Exception:  # noqa: BLE001  (an exception type that takes other arguments)
            error = RuntimeError(self.text)
        raise error


def _worker_loop(worker_id: int, dataset: Any, collate_fn: Callable[[list], Any], tasks: Any, results: Any) -> None:
    while True:
        task = tasks.get()
        if task is None:
            return
        number, indices = task
        try:
            results.put((number, collate_fn([dataset[i] for i in indices]), None))
        except Exception as exc:  # noqa: BLE001  (sent back and raised again in the loader)
            results.put((number, None, _WorkerError(worker_id, exc)))


class DataLoader:
    """torch.utils.data.DataLoader, for map-style datasets (see the module's docstring)."""

    def __init__(self, dataset: Any, batch_size: Optional[int] = 1, shuffle: bool = False, num_workers: int = 0,
                 collate_fn: Optional[Callable[[list], Any]] = None, drop_last: bool = False) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.num_workers, self.drop_last = num_workers, drop_last
        # With batching off, torch's default is default_convert (numpy arrays to
        # tensors); here the samples are passed as they are.
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_size is not None else (lambda sample: sample))

    def _batches(self) -> list[list[int]]:
        count = len(self.dataset)
        order = (default_generator().permutation(count).tolist() if self.shuffle else list(range(count)))
        if self.batch_size is None:  # batching off: one sample at a time, not collated into a batch
            return [[i] for i in order]
        size = self.batch_size
        batches = [order[start:start + size] for start in range(0, count, size)]
        if self.drop_last and batches and len(batches[-1]) < size:
            batches.pop()
        return batches

    def __len__(self) -> int:
        count = len(self.dataset)
        if self.batch_size is None:
            return count
        return count // self.batch_size if self.drop_last else -(-count // self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        batches = self._batches()
        collate: Callable[[list], Any] = self.collate_fn
        if self.batch_size is None:
            collate = _first_sample(self.collate_fn)
        if self.num_workers == 0:
            for indices in batches:
                yield collate([self.dataset[i] for i in indices])
            return
        yield from self._from_workers(batches, collate)

    def _from_workers(self, batches: list[list[int]], collate: Callable[[list], Any]) -> Iterator[Any]:
        context = multiprocessing.get_context()
        results = context.Queue()
        task_queues = [context.Queue() for _ in range(self.num_workers)]
        workers = [context.Process(target=_worker_loop, args=(i, self.dataset, collate, task_queues[i], results),
                                   daemon=True) for i in range(self.num_workers)]
        for worker in workers:
            worker.start()
        try:
            for number, indices in enumerate(batches):
                task_queues[number % self.num_workers].put((number, indices))
            waiting: dict[int, tuple[Any, Optional[_WorkerError]]] = {}
            for number in range(len(batches)):
                while number not in waiting:
                    done, data, error = results.get()
                    waiting[done] = (data, error)
                data, error = waiting.pop(number)
                if error is not None:
                    error.reraise()
                yield data
        finally:
            for queue in task_queues:
                queue.put(None)
            for worker in workers:
                worker.join(timeout=5)
                if worker.is_alive():
                    worker.terminate()


def _first_sample(collate_fn: Callable[[Any], Any]) -> Callable[[list], Any]:
    """With batching off, collate_fn sees each sample itself (torch's default converts it)."""
    return lambda samples: collate_fn(samples[0])

