"""`mx.util`: the NumPy-semantics scopes and small helpers Gluon 2.0 code imports from here.

Computation is always NumPy-like in hybridserve; the scopes set the flags that code (and
`Symbol.tojson`) reads, and restore them on exit.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Iterator

from ._np_state import (is_np_array, is_np_default_dtype, is_np_shape,  # noqa: F401
                                     reset_np, set_np, set_np_default_dtype, set_np_shape,
                                     use_np, use_np_array, use_np_default_dtype, use_np_shape)
from ._np_state import _flags


class _FlagScope(contextlib.ContextDecorator):
    """`with np_shape(False):` / `@np_shape(False)`: set one flag, restore it on exit."""

    def __init__(self, flag: str, active: bool):
        self._flag, self._active, self._prev = flag, bool(active), []

    def __enter__(self):
        self._prev.append(_flags[self._flag])
        _flags[self._flag] = self._active
        return self

    def __exit__(self, *exc):
        _flags[self._flag] = self._prev.pop()
        return False


def np_shape(active: bool = True) -> _FlagScope:
    return _FlagScope("shape", active)


def np_array(active: bool = True) -> _FlagScope:
    return _FlagScope("array", active)


def np_default_dtype(active: bool = True) -> _FlagScope:
    return _FlagScope("dtype", active)


def set_flush_denorms(value: bool) -> bool:
    """NumPy has no flush-to-zero switch; report the previous state (off) as MXNet does on CPU."""
    return False


def getenv(name: str) -> str | None:
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@contextlib.contextmanager
def TemporaryDirectory(*args, **kwargs) -> Iterator[str]:  # noqa: N802 (MXNet's name)
    """A temporary directory removed on exit, even when files in it are still open elsewhere."""
    path = tempfile.mkdtemp(*args, **kwargs)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
