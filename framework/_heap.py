"""Hand the C heap's free pages back to the OS (glibc's `malloc_trim`; a no-op elsewhere), and
read how many bytes it has handed out (glibc's `mallinfo2`; None elsewhere) and the resident
memory they show in.

Large models leave big freed blocks in the allocator after lowering, verification or an unload;
glibc keeps them resident until asked. Looked up once: not every libc has it (musl, macOS).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Callable

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]


def _libc_fn(name: str, argtypes: list, restype) -> Callable | None:
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c")), name)
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes, fn.restype = argtypes, restype
    return fn


_malloc_trim = _libc_fn("malloc_trim", [ctypes.c_size_t], ctypes.c_int)
_mallinfo2 = _libc_fn("mallinfo2", [], _MallInfo2)      # glibc >= 2.33


def trim_heap() -> None:
    """Return the C heap's free memory to the OS where the platform allows."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def heap_in_use() -> int | None:
    """Bytes the C heap has handed out and not had back (every arena, mmap'd blocks included):
    unlike resident memory, it does not depend on which freed pages a new allocation reuses."""
    if _mallinfo2 is None:
        return None
    m = _mallinfo2()
    return m.uordblks + m.hblkhd


def rss_bytes() -> int:
    """This process's resident memory now (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0
