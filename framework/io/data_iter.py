"""MXNet's `mx.io` data iterators: `DataDesc`, `DataBatch`, `DataIter` and `NDArrayIter`.

What `quantize_net`'s `data_shapes`/`calib_data` and MXNet's tests take: a DataDesc is a
(name, shape) tuple with `dtype` and `layout`; an NDArrayIter slices arrays (a single array, a
list, or a name → array dict) into DataBatches, handling the last short batch as MXNet does
('pad' wraps round to the start and reports `pad`, 'discard' drops it, 'roll_over' carries it
into the next epoch).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..base import MXNetError
from ..ndarray import ndarray

LAST_BATCH = ("pad", "discard", "roll_over")


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """A named shape with its dtype and layout (`N` marks the batch axis)."""

    def __new__(cls, name: str, shape, dtype: Any = np.float32, layout: str = "NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types) -> list["DataDesc"]:
        if types is None:
            return [DataDesc(n, s) for n, s in shapes]
        dtypes = dict(types)
        return [DataDesc(n, s, dtypes[n]) for n, s in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, how many trailing examples are padding."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise MXNetError("DataBatch: data must be a list of arrays")
        if label is not None and not isinstance(label, (list, tuple)):
            raise MXNetError("DataBatch: label must be a list of arrays")
        self.data, self.label, self.pad, self.index = data, label, pad, index
        self.bucket_key = bucket_key
        self.provide_data, self.provide_label = provide_data, provide_label

    def __str__(self) -> str:
        shapes = lambda xs: [tuple(x.shape) for x in xs] if xs else None  # noqa: E731
        return f"{type(self).__name__}: data shapes: {shapes(self.data)} " \
               f"label shapes: {shapes(self.label)}"


class DataIter:
    """The iterator protocol MXNet's iterators share: `next()` is `iter_next()` then the
    `getdata/getlabel/getpad/getindex` of the current batch."""

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self) -> None:
        pass

    def next(self) -> DataBatch:
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.iter_next")

    def getdata(self):
        raise NotImplementedError(f"{type(self).__name__}.getdata")

    def getlabel(self):
        raise NotImplementedError(f"{type(self).__name__}.getlabel")

    def getindex(self):
        return None

    def getpad(self):
        raise NotImplementedError(f"{type(self).__name__}.getpad")


def _named(data, default: str, allow_empty: bool) -> list[tuple[str, np.ndarray]]:
    """MXNet's accepted forms: None, one array, a list of arrays, a dict name → array."""
    if data is None:
        if allow_empty:
            return []
        raise MXNetError("NDArrayIter: data must not be None")
    if isinstance(data, dict):
        items = list(data.items())
    else:
        arrays = list(data) if isinstance(data, (list, tuple)) else [data]
        if len(arrays) == 1:
            items = [(default, arrays[0])]
        else:
            items = [(f"_{i}_{default}", a) for i, a in enumerate(arrays)]
    if not items and not allow_empty:
        raise MXNetError("NDArrayIter: data must not be empty")
    out = []
    for name, a in items:
        a = a.asnumpy() if hasattr(a, "asnumpy") else np.asarray(a)
        out.append((name, a))
    return out


class NDArrayIter(DataIter):
    """Batches over in-memory arrays (all first axes the same length)."""

    def __init__(self, data, label=None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label"):
        super().__init__(batch_size)
        if last_batch_handle not in LAST_BATCH:
            raise MXNetError(f"NDArrayIter: last_batch_handle must be one of {LAST_BATCH}, "
                             f"got {last_batch_handle!r}")
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise MXNetError(f"NDArrayIter: batch_size must be a positive int, got {batch_size!r}")
        self.data = _named(data, data_name, allow_empty=False)
        self.label = _named(label, label_name, allow_empty=True)
        self.num_data = self.data[0][1].shape[0]
        for name, a in self.data + self.label:
            if a.shape[0] != self.num_data:
                raise MXNetError(f"NDArrayIter: {name!r} has {a.shape[0]} examples, "
                                 f"expected {self.num_data}")
        self.shuffle, self.last_batch_handle = shuffle, last_batch_handle
        self.layout = "NCHW"
        self.idx = np.arange(self.num_data)
        self.cursor = -batch_size
        self._carry: int = 0          # roll_over: examples of the last short batch left over
        self.reset()

    @property
    def provide_data(self) -> list[DataDesc]:
        return [DataDesc(k, (self.batch_size,) + v.shape[1:], v.dtype) for k, v in self.data]

    @property
    def provide_label(self) -> list[DataDesc]:
        return [DataDesc(k, (self.batch_size,) + v.shape[1:], v.dtype) for k, v in self.label]

    def hard_reset(self) -> None:
        self._carry = 0
        self._reset()

    def reset(self) -> None:
        left = self.num_data - self.cursor
        if self.last_batch_handle == "roll_over" and 0 < left < self.batch_size:
            self._carry = left
        else:
            self._carry = 0
        self._reset()

    def _reset(self) -> None:
        if self.shuffle:
            np.random.shuffle(self.idx)
        self.cursor = -self.batch_size - self._carry

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        if self.cursor >= self.num_data:
            return False
        short = self.cursor + self.batch_size > self.num_data
        return not (short and self.last_batch_handle in ("discard", "roll_over"))

    def _take(self, source) -> list:
        start, stop = self.cursor, self.cursor + self.batch_size
        if start < 0:                # roll_over: last epoch's tail, then this epoch's head
            rows = np.concatenate([self._tail, self.idx[:stop]])
        else:
            rows = self.idx[np.arange(start, stop) % self.num_data]
        return [ndarray(a[rows]) for _, a in source]

    @property
    def _tail(self) -> np.ndarray:
        return self.idx[self.num_data - self._carry:]

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        batch = DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad())
        self._carry = 0
        return batch

    def getdata(self) -> list:
        return self._take(self.data)

    def getlabel(self) -> list:
        return self._take(self.label)

    def getpad(self) -> int:
        over = self.cursor + self.batch_size - self.num_data
        return over if self.last_batch_handle == "pad" and over > 0 else 0
