"""Hand the C heap's free pages back to the OS (glibc's `malloc_trim`; a no-op elsewhere), and
read the resident memory they show in.

Large models leave big freed blocks in the allocator after lowering, verification or an unload;
glibc keeps them resident until asked. Looked up once: not every libc has it (musl, macOS).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Callable

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _load() -> Callable[[int], int] | None:
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c")), "malloc_trim")
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn


_malloc_trim = _load()


def trim_heap() -> None:
    """Return the C heap's free memory to the OS where the platform allows."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def rss_bytes() -> int:
    """This process's resident memory now (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0
