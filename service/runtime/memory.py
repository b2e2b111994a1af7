"""What loaded model versions hold in memory: measured at load, summed against a budget, and
given back to the operating system at unload.

A version's cost is measured, never guessed from file sizes: the largest of
- the growth of the C heap's bytes in use across its load and warm-up (glibc's mallinfo2) —
  parameters, compiled engine copies (native sessions NumPy cannot see), static buffers and
  plan caches — which, unlike RSS, does not shrink when the load reuses pages an earlier one
  freed (RSS growth of the same models differs by 15 % between load orders; this by < 1 %);
- the growth of resident memory (RSS) across it, taken with the allocator trimmed first
  (memory that is not from the C heap, and the measure where mallinfo2 is missing);
- the bytes of every NumPy buffer reachable from the loaded runner (a floor that concurrent
  traffic, which also moves the other two, cannot lower).
Loads are measured one at a time (a lock), so two loads never share one RSS delta. What the
process pays once, whichever model comes first (importing and initialising the compiled
engine's libraries, its thread pools), is paid before the first measurement by a warm-up
(`measured(..., warm=)`), so every model is measured the way a second load would be.

Freed memory only leaves the process when the allocator returns it: after an unload, a
garbage collection and glibc's `malloc_trim(0)` (through ctypes, where the platform has it).
"""
from __future__ import annotations

import gc
import logging
import threading
import types
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np

from framework.heap import heap_in_use, rss_bytes, trim_heap

from .probe import attempt

T = TypeVar("T")
_measure_lock = threading.Lock()
_warmed = False         # the process-wide warm-up ran (once, before the first measurement)
_keep: list = []        # what it loaded: kept, so what it initialised stays initialised


def trim() -> None:
    """Collect garbage and hand free allocator memory back to the OS (glibc)."""
    gc.collect()
    trim_heap()


def _read_int(p: Path) -> int | None:
    try:
        text = p.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_headroom() -> int | None:
    """Limit minus usage of this process's memory cgroup (v2, else v1), if it has a limit."""
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        lim, use = _read_int(Path(limit)), _read_int(Path(usage))
        if lim is not None and use is not None and lim < 1 << 60:
            return max(0, lim - use)
    return None


def available_bytes() -> int | None:
    """Memory this process could still take: MemAvailable, or the cgroup's headroom when
    that is smaller; None when neither can be read."""
    avail = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    room = _cgroup_headroom()
    known = [v for v in (avail, room) if v is not None]
    return min(known) if known else None


def default_budget(fraction: float) -> int:
    """`fraction` of the memory available at startup; 0 (no budget) when unknown."""
    avail = available_bytes()
    return int(avail * fraction) if avail else 0


def held_bytes(root: object) -> int:
    """Bytes of the distinct NumPy buffers reachable from `root`. The walk follows objects'
    references but not modules, classes or a function's globals (shared by everyone), only
    its closure and defaults."""
    seen: set[int] = set()
    buffers: dict[int, int] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            base = obj
            while isinstance(base.base, np.ndarray):
                base = base.base
            buffers[id(base)] = base.nbytes
            continue
        if isinstance(obj, types.FunctionType):
            stack.extend(c.cell_contents for c in (obj.__closure__ or ())
                         if _filled(c))
            stack.extend(obj.__defaults__ or ())
            continue
        stack.extend(gc.get_referents(obj))
    return sum(buffers.values())


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:          # an empty cell
        return False
    return True


def measured(load: Callable[[], T], warm: Callable[[], object] | None = None) -> tuple[T, int]:
    """Run `load` (blocking) and return its result with the memory it holds: max(RSS growth
    across it, NumPy buffers reachable from the result). One measured load at a time.
    `warm` runs once per process before the first measurement, its result kept alive: a load
    that pays what every later load shares (so the first model is not charged for it)."""
    global _warmed
    with _measure_lock:
        if warm is not None and not _warmed:
            _warmed = True
            kept, e = attempt(warm)         # only the figures suffer: never fail a load
            if e is None:
                _keep.append(kept)
            else:
                logging.getLogger("hybridserve.memory").warning(
                    "memory warm-up failed: the first model's figure includes process-wide "
                    "costs", exc_info=e)
        trim()
        before, heap_before = rss_bytes(), heap_in_use()
        out = load()
        trim()              # what the load freed (the reference forward's buffers) leaves now
        grown = rss_bytes() - before
        heap = heap_in_use()
        if heap is not None and heap_before is not None:
            grown = max(grown, heap - heap_before)
    return out, max(grown, held_bytes(out))


def mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"
