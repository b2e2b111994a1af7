"""NumPy-semantics switches (`npx.set_np` and friends).

hybridserve always runs with NumPy shape and array semantics (the only mode Gluon 2.0 uses), so
`set_np`/`reset_np` only record the flags for code that queries them. `set_np(dtype=True)` turns on
NumPy's default dtype (float64 for creation functions); `framework.numpy` reads
`is_np_default_dtype()`.
"""
from __future__ import annotations

import functools

_flags = {"shape": True, "array": True, "dtype": False}


def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Activate NumPy semantics (MXNet 2.x default). `array=True` needs `shape=True`."""
    if not shape and array:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    _flags["shape"] = bool(shape)
    _flags["array"] = bool(array)
    _flags["dtype"] = bool(dtype)


def reset_np() -> None:
    """Deactivate the NumPy semantics flags (computation is unaffected: always NumPy-like)."""
    set_np(shape=False, array=False, dtype=False)


def set_np_shape(active: bool) -> bool:
    prev = _flags["shape"]
    _flags["shape"] = bool(active)
    return prev


def set_np_default_dtype(is_np_default_dtype: bool = True) -> bool:
    prev = _flags["dtype"]
    _flags["dtype"] = bool(is_np_default_dtype)
    return prev


def is_np_array() -> bool:
    return _flags["array"]


def is_np_shape() -> bool:
    return _flags["shape"]


def is_np_default_dtype() -> bool:
    return _flags["dtype"]


def use_np(func):
    """Decorator (functions and classes): NumPy semantics are always on here, so identity."""
    return func


use_np_array = use_np
use_np_shape = use_np


def use_np_default_dtype(func):
    """Run `func` with NumPy's default dtype (float64) for creation functions."""
    if isinstance(func, type):
        return func

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        prev = set_np_default_dtype(True)
        try:
            return func(*args, **kwargs)
        finally:
            set_np_default_dtype(prev)
    return wrapper
