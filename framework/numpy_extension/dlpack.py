"""DLPack exchange (`npx.to_dlpack_for_read/write`, `npx.from_dlpack`, `ndarray.__dlpack__`).

The capsules are NumPy's own (versioned DLPack, CPU): no copy either way. A capsule made for
reading carries DLPack's read-only flag, one made for writing does not, so an array built from it
writes through to the source, as MXNet's `to_dlpack_for_write` promises.
"""
from __future__ import annotations

import numpy as _onp

from ..ndarray import ndarray

__all__ = ["to_dlpack_for_read", "to_dlpack_for_write", "from_dlpack"]

_KDLCPU = 1


def _capsule(data: _onp.ndarray, writable: bool):
    view = data.view()
    if not writable:
        view.flags.writeable = False
    return view.__dlpack__(max_version=(1, 0))


def to_dlpack_for_read(data: ndarray):
    """A DLPack capsule of `data` for readers (read-only)."""
    return _capsule(data._data, writable=False)


def to_dlpack_for_write(data: ndarray):
    """A DLPack capsule of `data` whose consumer may write into `data`'s buffer."""
    return _capsule(data._data, writable=True)


class _Capsule:
    """Hands an existing capsule to NumPy's `from_dlpack`, which takes producers, not capsules."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (_KDLCPU, 0)


def from_dlpack(dlpack) -> ndarray:
    """An array sharing the memory of a DLPack capsule or of any object with `__dlpack__`."""
    src = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    if isinstance(src, ndarray):
        return ndarray(src._data)
    return ndarray(_onp.from_dlpack(src))
