"""`DataLoader`: batches from a dataset, in the calling thread or in a pool of worker threads.

MXNet 2.0's loader can fork worker processes (`thread_pool=False`) or hand the work to its C++
threaded loader (`try_nopython`). hybridserve has neither: workers are always threads (NumPy
releases the GIL in the array work that dominates batching), and `try_nopython`, `pin_memory`
and `pin_device_id` are accepted and have no effect.
"""
from __future__ import annotations

import collections
import concurrent.futures
from typing import Any, Callable, Iterator

from .batchify import Stack
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]


class DataLoader:
    """Iterate over `dataset` in batches.

    Either `batch_size` (with `shuffle`, or a `sampler` of indices, and `last_batch` in
    'keep'/'discard'/'rollover', default 'keep') or a `batch_sampler` yielding lists of indices.
    `batchify_fn` turns the list of samples of a batch into the batch (default `Stack()`).
    `num_workers > 0` builds batches on that many threads, up to `prefetch` (default
    `2 * num_workers`) batches ahead, in order; a batch that takes longer than `timeout` seconds
    raises RuntimeError.
    """

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False,
                 sampler: Any = None, last_batch: str | None = None, batch_sampler: Any = None,
                 batchify_fn: Callable | None = None, num_workers: int = 0,
                 pin_memory: bool = False, pin_device_id: int = 0, prefetch: int | None = None,
                 thread_pool: bool = False, timeout: float = 120, try_nopython: bool | None = None):
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self._dataset = dataset
        self._batch_sampler = batch_sampler if batch_sampler is not None else \
            _batch_sampler(len(dataset), batch_size, shuffle, sampler, last_batch)
        if batch_sampler is not None and (batch_size is not None or shuffle
                                          or sampler is not None or last_batch is not None):
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be given "
                             "together with batch_sampler")
        self._batchify_fn = batchify_fn if batchify_fn is not None else Stack()
        self._num_workers = max(0, int(num_workers))
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._timeout = timeout

    def _load(self, indices: list) -> Any:
        return self._batchify_fn([self._dataset[i] for i in indices])

    def __iter__(self) -> Iterator:
        if self._num_workers == 0:
            return (self._load(indices) for indices in self._batch_sampler)
        return self._threaded()

    def _threaded(self) -> Iterator:
        pool = concurrent.futures.ThreadPoolExecutor(self._num_workers,
                                                     thread_name_prefix="DataLoader")
        pending: collections.deque = collections.deque()
        batches = iter(self._batch_sampler)
        try:
            for indices in batches:       # keep `prefetch` batches (at least one) in flight
                pending.append(pool.submit(self._load, indices))
                if len(pending) > self._prefetch:
                    yield self._next(pending)
            while pending:
                yield self._next(pending)
        finally:   # also when the caller abandons the iterator: no thread outlives it for long
            pool.shutdown(wait=False, cancel_futures=True)

    def _next(self, pending: collections.deque) -> Any:
        try:
            return pending.popleft().result(timeout=self._timeout)
        except concurrent.futures.TimeoutError:
            raise RuntimeError(f"DataLoader: a worker took more than {self._timeout} s to build "
                               "a batch (raise `timeout` for slow datasets)") from None

    def __len__(self) -> int:
        return len(self._batch_sampler)


def _batch_sampler(length: int, batch_size: int | None, shuffle: bool, sampler: Any,
                   last_batch: str | None) -> BatchSampler:
    if batch_size is None:
        raise ValueError("batch_size must be specified unless batch_sampler is specified")
    if sampler is None:
        sampler = RandomSampler(length) if shuffle else SequentialSampler(length)
    elif shuffle:
        raise ValueError("shuffle must not be specified if sampler is specified")
    return BatchSampler(sampler, batch_size, last_batch or "keep")
