"""Samplers: iterables of dataset indices (MXNet's `gluon.data.sampler`)."""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as _onp

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler"]

LAST_BATCH_MODES = ("keep", "discard", "rollover")


class Sampler:
    """Base class: subclasses define `__iter__` (indices) and `__len__`."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """`start, start + 1, …, start + length - 1`."""

    def __init__(self, length: int, start: int = 0):
        self._length = int(length)
        self._start = int(start)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """A fresh permutation of `range(length)` on every pass (NumPy's global random state)."""

    def __init__(self, length: int):
        self._length = int(length)

    def __iter__(self) -> Iterator[int]:
        return iter(_onp.random.permutation(self._length).tolist())

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices of `dataset` whose sample makes `fn` true (evaluated once, at construction)."""

    def __init__(self, fn: Callable, dataset):
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler(Sampler):
    """Lists of `batch_size` indices drawn from `sampler`.

    `last_batch` says what happens to a short final batch: 'keep' yields it, 'discard' drops it,
    'rollover' prepends it to the first batch of the next pass.
    """

    def __init__(self, sampler, batch_size: int, last_batch: str = "keep"):
        if last_batch not in LAST_BATCH_MODES:
            raise ValueError(f"last_batch must be one of {LAST_BATCH_MODES}, got {last_batch!r}")
        if int(batch_size) <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev: list = []

    def __iter__(self) -> Iterator[list]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch and self._last_batch == "keep":
            yield batch
        elif batch and self._last_batch == "rollover":
            self._prev = batch

    def __len__(self) -> int:
        n, b = len(self._sampler), self._batch_size
        if self._last_batch == "keep":
            return (n + b - 1) // b
        if self._last_batch == "discard":
            return n // b
        return (len(self._prev) + n) // b


class IntervalSampler(Sampler):
    """`0, interval, 2·interval, …`; with `rollover` the passes then start at 1, 2, … until every
    index of `range(length)` has come once."""

    def __init__(self, length: int, interval: int, rollover: bool = True):
        if interval > length:
            raise ValueError(f"interval {interval} must be at most length {length}")
        self._length = int(length)
        self._interval = int(interval)
        self._rollover = bool(rollover)

    def __iter__(self) -> Iterator[int]:
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self) -> int:
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))
