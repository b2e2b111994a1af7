"""Datasets: indexable collections of samples (MXNet's `gluon.data.dataset`).

MXNet 2.0 also offers `__mx_handle__()`, a C++ twin of a dataset or batchify function for its
native loader. hybridserve runs everything in Python, so the handle is the object itself.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator

from ... import recordio
from ...ndarray import ndarray
from .sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset"]


class Dataset:
    """Base class: subclasses define `__getitem__` and `__len__`."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __iter__(self) -> Iterator:
        for i in range(len(self)):
            yield self[i]

    def __mx_handle__(self) -> "Dataset":
        return self

    def filter(self, fn: Callable[[Any], bool]) -> "Dataset":
        """The samples for which `fn(sample)` is true (decided once, now)."""
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> "Dataset":
        """The `index`-th of `num_shards` contiguous parts; the first `len % num_shards` parts
        hold one sample more than the others."""
        if num_shards <= 0 or not 0 <= index < num_shards:
            raise ValueError(f"shard index {index} out of range for {num_shards} shards")
        size, rest = divmod(len(self), num_shards)
        start = size * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(size + (index < rest), start))

    def take(self, count: int | None) -> "Dataset":
        """The first `count` samples (all of them when `count` is None or too large)."""
        n = len(self) if count is None else min(int(count), len(self))
        return _SampledDataset(self, SequentialSampler(n))

    def sample(self, sampler: Sampler) -> "Dataset":
        """The samples at the indices `sampler` yields."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"expected a gluon.data.Sampler, got {type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable, lazy: bool = True) -> "Dataset":
        """Each sample passed through `fn` (a tuple sample is unpacked into its arguments).
        `lazy=False` applies `fn` to every sample now and keeps the results."""
        out = _LazyTransformDataset(self, fn)
        return out if lazy else SimpleDataset(list(out))

    def transform_first(self, fn: Callable, lazy: bool = True) -> "Dataset":
        """Like `transform`, on the first element of each sample only (features, not label)."""
        return self.transform(_TransformFirst(fn), lazy)


class SimpleDataset(Dataset):
    """Any object with `len()` and `[]` (a list, an array) as a dataset."""

    def __init__(self, data: Any):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class ArrayDataset(Dataset):
    """Several equally long dataset-like objects zipped: sample i is `(a[i], b[i], …)`, or `a[i]`
    alone for one argument. A 1-D framework array is indexed as NumPy (scalar samples)."""

    def __init__(self, *args: Any):
        if not args:
            raise ValueError("ArrayDataset needs at least one array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError(f"all arrays must have the same length; array 0 has "
                                 f"{self._length}, array {i} has {len(data)}")
            if isinstance(data, ndarray) and data.ndim == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class _LazyTransformDataset(Dataset):
    def __init__(self, data: Any, fn: Callable):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class _TransformFirst:
    """A class, not a closure, so that a transformed dataset stays picklable."""

    def __init__(self, fn: Callable):
        self._fn = fn

    def __call__(self, x: Any, *rest: Any) -> Any:
        return (self._fn(x),) + rest if rest else self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset: Any, sampler: Sampler):
        self._dataset = dataset
        self._indices = list(sampler)

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, idx: int) -> Any:
        return self._dataset[self._indices[idx]]


class RecordFileDataset(Dataset):
    """The raw records of a RecordIO `.rec` file, through the `.idx` beside it."""

    def __init__(self, filename: str):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)
