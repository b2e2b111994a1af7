"""Helpers shared by the `framework.numpy` front-end modules."""
from __future__ import annotations

import numbers

import numpy as _onp

from .._np_state import is_np_default_dtype
from ..dispatch import invoke
from ..ndarray import ndarray
from ..ops.attrs import parse_dtype
from ..symbol import trace as _trace

__all__ = ["ndarray", "invoke", "as_nd", "is_scalar", "is_int_scalar", "tracing", "dtype_of",
           "default_float", "axis_tuple", "owned"]

_F32 = _onp.dtype(_onp.float32)
_F64 = _onp.dtype(_onp.float64)


def default_float() -> _onp.dtype:
    """MXNet's default float: float32, or float64 under `npx.set_np(dtype=True)`."""
    return _F64 if is_np_default_dtype() else _F32


def tracing() -> bool:
    return _trace.current() is not None


def is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, _onp.generic)) and not isinstance(x, _onp.ndarray)


def is_int_scalar(x) -> bool:
    return isinstance(x, (numbers.Integral, _onp.integer, _onp.bool_))


def dtype_of(dtype):
    """A dtype argument ('float32', np.float32, numpy dtype, None) → numpy dtype or None."""
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype in ("bool", "bfloat16"):
        return parse_dtype(dtype)
    return _onp.dtype(dtype)


def as_nd(x, dtype=None) -> ndarray:
    """Array-like → framework array (no copy for framework / NumPy arrays)."""
    if isinstance(x, ndarray):
        return x
    if isinstance(x, _onp.ndarray):
        return ndarray(x)
    if hasattr(x, "_outputs"):   # a Symbol: let invoke compose it
        return x
    if is_scalar(x) and dtype is None:
        if isinstance(x, (bool, _onp.bool_)):
            return ndarray(_onp.asarray(x, dtype=_onp.bool_))
        if isinstance(x, _onp.generic):
            return ndarray(_onp.asarray(x))
        return ndarray(_onp.asarray(x, dtype=_onp.int64 if isinstance(x, int) else _F32))
    arr = _onp.asarray(x)
    if dtype is not None:
        arr = arr.astype(dtype_of(dtype), copy=False)
    elif arr.dtype == _onp.float64 and not isinstance(x, _onp.ndarray):
        arr = arr.astype(_F32)
    return ndarray(arr)


def owned(res, src):
    """Imperative results of view-producing kernels (reshape, transpose, broadcast_to…) get their
    own buffer, as MXNet's ops write fresh outputs: later in-place updates of the result must not
    leak into the input (a Parameter's data, say). Traced calls keep the view."""
    if isinstance(res, ndarray) and isinstance(src, ndarray) and _trace.current() is None:
        if _onp.may_share_memory(res._data, src._data):
            res._data = res._data.copy()
    return res


def axis_tuple(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return (int(axis),)


def shape_tuple(shape):
    if isinstance(shape, (list, tuple)):
        return tuple(int(s) for s in shape)
    return (int(shape),)
