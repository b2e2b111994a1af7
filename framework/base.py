"""Errors and small shared helpers used across the framework."""
from __future__ import annotations

from typing import Any

import numpy as _np


class MXNetError(RuntimeError):
    """Base error of the framework (MXNet's name, so user code catching it keeps working)."""


class DeferredInitializationError(MXNetError):
    """Raised when a parameter's data is read before its deferred initialisation ran."""


class OperatorError(MXNetError, ValueError):
    """An operator was given inputs or attributes it cannot work with."""


class GraphFormatError(MXNetError, ValueError):
    """A symbol graph (JSON or in memory) is malformed: unknown op, bad reference, cycle, limits."""


class LegacyExportError(GraphFormatError):
    """The graph uses something MXNet 1.9.1 cannot express (`export(..., format='1.x')`)."""


class ShapeError(OperatorError):
    """Input shapes do not fit an operator or a compiled signature."""


def brief_list(names, limit: int = 7) -> str:
    """MXNet's `_brief_print_list`: quoted names, elided in the middle past `limit`."""
    names = list(names)
    if len(names) > limit:
        return ", ".join(f"'{n}'" for n in names[: limit // 2]) + ", ..., " + \
            ", ".join(f"'{n}'" for n in names[-limit // 2:])
    return ", ".join(f"'{n}'" for n in names)


class NotImplementedForSymbol(MXNetError):
    """An array-only operation (truth value, `asnumpy`…) was asked of a Symbol."""


# -- bfloat16 -------------------------------------------------------------------------------------
# numpy has no bfloat16. Files keep its 16-bit patterns in MXNet's own structured dtype
# (flag 12, `[('bfloat16', '<u2')]`); computing engines hold a bfloat16 tensor as float32 whose
# values are bfloat16 numbers (`held_dtype`, `round_to_bfloat16`).
BFLOAT16 = _np.dtype([("bfloat16", "<u2")])


def is_bfloat16(dt: Any) -> bool:
    """True for MXNet's structured bfloat16 dtype or an ``ml_dtypes.bfloat16``."""
    if isinstance(dt, str):
        return dt == "bfloat16"
    try:
        dt = _np.dtype(dt)
    except TypeError:
        return False
    if dt.itemsize != 2:
        return False
    if dt.names is not None:  # [('bfloat16', '<u2')] in any byte order
        return dt.names == ("bfloat16",) and dt.fields["bfloat16"][0].kind == "u"
    return dt.name == "bfloat16"  # ml_dtypes registers this name


def bfloat16_to_float32(arr: _np.ndarray) -> _np.ndarray:
    """Widen a :data:`BFLOAT16` (or raw uint16 bit pattern) array to float32, exactly."""
    bits = _np.asarray(arr)
    if bits.dtype.names is not None:
        bits = bits["bfloat16"]
    return (bits.astype("<u4") << 16).view("<f4").astype(_np.float32)


def float32_to_bfloat16(arr: _np.ndarray) -> _np.ndarray:
    """Round float32 to bfloat16 (round-to-nearest-even, NaN kept quiet) as :data:`BFLOAT16`."""
    f = _np.ascontiguousarray(arr, dtype="<f4")
    u = f.view("<u4").astype(_np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    out = _np.where(_np.isnan(f), (u >> 16) | 0x40, rounded).astype("<u2")
    return out.view(BFLOAT16)


def round_to_bfloat16(arr: _np.ndarray) -> _np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32: how the
    engines hold a bfloat16 tensor in memory (see :func:`held_dtype`)."""
    return bfloat16_to_float32(float32_to_bfloat16(arr))


def held_dtype(dt: Any) -> _np.dtype:
    """The dtype an array of `dt` is held in while computing: bfloat16 (which numpy cannot
    compute with) is held as float32 whose values are bfloat16 numbers; files keep flag 12."""
    return _np.dtype(_np.float32) if is_bfloat16(dt) else _np.dtype(dt)
