"""Batchify functions: turn a list of samples into one batch (MXNet's `gluon.data.batchify`)."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as _onp

from ... import numpy as _np
from ...ndarray import ndarray

__all__ = ["Stack", "Pad", "Append", "Group", "AsList"]


class _Handle:
    """`__mx_handle__()` is MXNet's native twin of a batchify function; here, the function."""

    def __mx_handle__(self) -> "_Handle":
        return self


class Stack(_Handle):
    """Stack equally shaped samples along a new first axis. Samples that are tuples or lists are
    stacked field by field (a list of batches); numbers and NumPy arrays keep their dtype."""

    def __init__(self, use_shared_mem: bool = False):
        self._use_shared_mem = use_shared_mem   # no shared memory on a CPU-only framework

    def __call__(self, data: Sequence[Any]) -> Any:
        first = data[0]
        if isinstance(first, ndarray):
            return _np.stack(list(data))
        if isinstance(first, (tuple, list)):
            return [self(list(field)) for field in zip(*data)]
        out = _onp.asarray(data)
        return _np.array(out, dtype=out.dtype)


class Pad(_Handle):
    """Pad every sample with `val` to the largest size along each axis (rounded up to a multiple
    of `round_to` if given), then stack. `dtype` defaults to the samples' own."""

    def __init__(self, val: float | None = None, dtype: Any = None, round_to: int | None = None,
                 use_shared_mem: bool = False):
        self._pad_val = 0 if val is None else val
        self._dtype = dtype
        self._round_to = round_to

    def __call__(self, data: Sequence[Any]) -> ndarray:
        if not isinstance(data[0], (ndarray, _onp.ndarray, list)):
            raise NotImplementedError("Pad() batches samples of one array each; for samples of "
                                      "several fields use Group(Pad(), Pad(), ...)")
        arrs = [_onp.asarray(a) for a in data]
        dtype = arrs[0].dtype if self._dtype is None else _onp.dtype(self._dtype)
        if any(a.ndim != arrs[0].ndim for a in arrs):
            raise ValueError(f"Pad: samples differ in rank: {[a.ndim for a in arrs]}")
        size = [max(a.shape[ax] for a in arrs) for ax in range(arrs[0].ndim)]
        if self._round_to:
            size = [self._round_to * math.ceil(s / self._round_to) for s in size]
        out = _onp.full([len(arrs)] + size, self._pad_val, dtype=dtype)
        for i, a in enumerate(arrs):
            out[(i,) + tuple(slice(0, n) for n in a.shape)] = a
        return _np.array(out, dtype=dtype)


class Append(_Handle):
    """The samples as a list of arrays, each with a batch axis of size 1 added at `batch_axis`
    when `expand` (no shape constraint across samples)."""

    def __init__(self, expand: bool = True, batch_axis: int = 0, use_shared_mem: bool = False):
        self._expand = expand
        self._batch_axis = batch_axis

    def __call__(self, data: Sequence[Any]) -> list:
        out = [x if isinstance(x, ndarray) else _np.array(x) for x in data]
        if self._expand:
            out = [_np.expand_dims(x, axis=self._batch_axis) for x in out]
        return out


class Group(_Handle):
    """Apply the i-th batchify function to the i-th field of every sample: `Group(f, g)` or
    `Group([f, g])`; returns a tuple of batches."""

    def __init__(self, fn: Callable | Sequence[Callable], *args: Callable):
        if isinstance(fn, (list, tuple)):
            if args:
                raise ValueError("Group takes Group(f, g, ...) or Group([f, g, ...]), not both")
            self._fn = tuple(fn)
        else:
            self._fn = (fn,) + args
        for i, f in enumerate(self._fn):
            if not callable(f):
                raise TypeError(f"batchify function {i} is not callable: {type(f).__name__}")

    def __call__(self, data: Sequence[Any]) -> tuple:
        if len(data[0]) != len(self._fn):
            raise ValueError(f"each sample must have {len(self._fn)} fields, "
                             f"got {len(data[0])}")
        return tuple(f([sample[i] for sample in data]) for i, f in enumerate(self._fn))


class AsList(_Handle):
    """The samples unchanged, as a list (e.g. text fields inside a Group)."""

    def __call__(self, data: Sequence[Any]) -> list:
        return list(data)
