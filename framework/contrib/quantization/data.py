"""Calibration data, duck-typed as MXNet accepts it: any iterable of batches — a
`gluon.data.DataLoader` yielding `(data, label)`, arrays, lists/tuples of arrays, or objects with
a `.data` list (`mx.io.DataBatch`). A network with k inputs reads the first k items of a batch;
an item may itself be a list of arrays (an RNN layer's states), kept nested as the network
takes it and flattened where the graph's inputs are counted."""
from __future__ import annotations

from typing import Any, Iterable, Iterator

import numpy as np


class CalibrationDataError(ValueError):
    """`calib_data` is not an iterable of batches of arrays."""


def as_numpy(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    for attr in ("asnumpy", "numpy"):
        f = getattr(x, attr, None)
        if callable(f):
            return np.asarray(f())
    try:
        return np.asarray(x)
    except Exception as e:  # noqa: BLE001
        raise CalibrationDataError(f"a calibration batch holds {type(x).__name__}, "
                                   "not an array") from e


Item = Any   # an array, or a (nested) list of arrays


def _nested(x: Any) -> Item:
    return [_nested(e) for e in x] if isinstance(x, (list, tuple)) else as_numpy(x)


def flatten(items: list[Item]) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for x in items:
        out.extend(flatten(x) if isinstance(x, list) else [x])
    return out


def regroup(flat: list, like: list[Item]) -> list:
    """`flat` (in flatten order) in the nesting of `like`."""
    it = iter(flat)

    def take(x):
        return [take(e) for e in x] if isinstance(x, list) else next(it)
    return [take(x) for x in like]


def batch_arrays(batch: Any) -> list[Item]:
    if hasattr(batch, "data") and isinstance(getattr(batch, "data"), (list, tuple)):
        batch = batch.data
    items = list(batch) if isinstance(batch, (list, tuple)) else [batch]
    if not items or not flatten([_nested(x) for x in items]):
        raise CalibrationDataError("a calibration batch is empty")
    return [_nested(x) for x in items]


def batches(calib_data: Iterable) -> Iterator[list[np.ndarray]]:
    try:
        it = iter(calib_data)
    except TypeError as e:
        raise CalibrationDataError(f"calib_data is not a valid iterator: {type(calib_data).__name__} "
                                   "(give a DataLoader or any iterable of batches)") from e
    for b in it:
        yield batch_arrays(b)
