"""MXNet dtype flags (mshadow type codes) <-> numpy dtypes.

The same integer codes appear in legacy ``.params`` records, in the
``__dtype__`` attribute of symbol JSON variables and in the C API.

bfloat16 (flag 12) has no numpy dtype.  We represent it exactly as MXNet's
Python side does, as the structured dtype ``[('bfloat16', '<u2')]``
(:data:`BFLOAT16`): the raw 16-bit patterns are kept, so files round-trip
bit-exactly.  Use :func:`bfloat16_to_float32` to compute with such arrays.
An ``ml_dtypes.bfloat16`` dtype (if that package is used) is also accepted
by :func:`dtype_flag`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..base import (BFLOAT16, bfloat16_to_float32, float32_to_bfloat16, held_dtype,  # noqa: F401
                    is_bfloat16, round_to_bfloat16)
from .errors import ParamsFormatError

# flag -> (MXNet name, little-endian numpy dtype)
_TABLE: dict[int, tuple[str, np.dtype]] = {
    0: ("float32", np.dtype("<f4")),
    1: ("float64", np.dtype("<f8")),
    2: ("float16", np.dtype("<f2")),
    3: ("uint8", np.dtype("u1")),
    4: ("int32", np.dtype("<i4")),
    5: ("int8", np.dtype("i1")),
    6: ("int64", np.dtype("<i8")),
    7: ("bool", np.dtype("?")),
    8: ("int16", np.dtype("<i2")),
    9: ("uint16", np.dtype("<u2")),
    10: ("uint32", np.dtype("<u4")),
    11: ("uint64", np.dtype("<u8")),
    12: ("bfloat16", BFLOAT16),
}

FLAG_TO_DTYPE: dict[int, np.dtype] = {f: dt for f, (_, dt) in _TABLE.items()}
FLAG_TO_NAME: dict[int, str] = {f: name for f, (name, _) in _TABLE.items()}
NAME_TO_FLAG: dict[str, int] = {name: f for f, name in FLAG_TO_NAME.items()}
# (kind, itemsize) identifies every non-bfloat16 entry regardless of byte order
_KIND_SIZE_TO_FLAG = {(dt.kind, dt.itemsize): f for f, dt in FLAG_TO_DTYPE.items() if f != 12}


MAX_NDIM = 32      # MXNet's limit on an array's rank (and a sanity bound for readers)


def storable_flag(arr: np.ndarray, what: str) -> int:
    """The dtype flag of an array about to be saved, which MXNet must be able to store."""
    try:
        flag = dtype_flag(arr.dtype)
    except ParamsFormatError as e:
        raise ParamsFormatError(f"{what}: {e}") from None
    if arr.ndim > MAX_NDIM:
        raise ParamsFormatError(f"{what}: ndim {arr.ndim} exceeds {MAX_NDIM}")
    return flag


def dtype_flag(np_dtype: Any) -> int:
    """MXNet flag of a numpy dtype (or dtype-like, or MXNet name such as 'float32').

    Byte order is ignored (``>f4`` is still float32).  Raises
    :class:`ParamsFormatError` for dtypes MXNet cannot store (object, str, complex...).
    """
    if isinstance(np_dtype, str) and np_dtype in NAME_TO_FLAG:
        return NAME_TO_FLAG[np_dtype]
    if is_bfloat16(np_dtype):
        return 12
    try:
        dt = np.dtype(np_dtype)
    except TypeError as e:
        raise ParamsFormatError(f"not a dtype: {np_dtype!r}") from e
    flag = _KIND_SIZE_TO_FLAG.get((dt.kind, dt.itemsize)) if dt.names is None else None
    if flag is None:
        raise ParamsFormatError(f"dtype {dt} has no MXNet dtype flag")
    return flag


def dtype_from_flag(flag: int | str) -> np.dtype:
    """numpy dtype (little-endian) for an MXNet flag; ``'0'`` strings from JSON attrs work too."""
    if isinstance(flag, (bool, np.bool_)):
        raise ParamsFormatError(f"invalid MXNet dtype flag {flag!r}")
    try:
        key = int(flag)
    except (TypeError, ValueError) as e:
        raise ParamsFormatError(f"invalid MXNet dtype flag {flag!r}") from e
    if isinstance(flag, str) and flag.strip() != str(key):
        raise ParamsFormatError(f"invalid MXNet dtype flag {flag!r}")
    try:
        return FLAG_TO_DTYPE[key]
    except KeyError:
        raise ParamsFormatError(f"unknown MXNet dtype flag {key} (valid: 0..12)") from None


def dtype_name(flag: int | str) -> str:
    """MXNet's dtype name for a flag (``'float32'`` ... ``'bfloat16'``)."""
    return FLAG_TO_NAME[dtype_flag(dtype_from_flag(flag))]


def narrow_bfloat16(arrays: dict, names: set) -> dict:
    """`arrays` for a file: those whose name (without `arg:`/`aux:`) is in `names` — variables
    typed bfloat16 — rounded to :data:`BFLOAT16` from the float32 they are held in."""
    return {k: float32_to_bfloat16(v) if k.split(":", 1)[-1] in names and not is_bfloat16(v.dtype)
            else v for k, v in arrays.items()}


__all__ = [
    "BFLOAT16", "held_dtype", "round_to_bfloat16", "narrow_bfloat16", "FLAG_TO_DTYPE", "FLAG_TO_NAME", "NAME_TO_FLAG", "is_bfloat16",
    "dtype_flag", "dtype_from_flag", "dtype_name", "bfloat16_to_float32",
    "float32_to_bfloat16",
]
