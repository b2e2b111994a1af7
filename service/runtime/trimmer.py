"""Memory given back after large requests, not only at unload.

A large body, its parse or an inspection's response leave big freed blocks in glibc's heap,
and glibc keeps them resident (RSS stayed at 870 MiB after one 52 MiB request, issue 26) until
asked with `malloc_trim`. `HeapTrimmer.note(nbytes)` is called on the event loop once a request
is answered; a request of `LARGE_BYTES` or more schedules a trim `delay_s` later (a burst is
trimmed once, then at most every `interval_s`), run in a thread: ctypes drops the GIL for the
call, so serving goes on meanwhile. A no-op where the libc has no malloc_trim.
"""
from __future__ import annotations

import asyncio

from framework._heap import trim_heap

LARGE_BYTES = 1 << 20


class HeapTrimmer:
    def __init__(self, delay_s: float = 0.5, interval_s: float = 2.0):
        self.delay_s, self.interval_s = delay_s, interval_s
        self.trims = 0                       # done so far (tests, figures)
        self._pending: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None   # the pending trim's loop
        self._last = float("-inf")

    def note(self, nbytes: int) -> None:
        """A request that moved `nbytes` (body or response) is done."""
        if nbytes < LARGE_BYTES:
            return
        loop = asyncio.get_running_loop()
        if self._pending is not None and self._loop is loop:
            return                           # (a pending one of another loop: a server gone)
        self._loop = loop
        wait = max(self.delay_s, self._last + self.interval_s - loop.time())
        self._pending = loop.call_later(wait, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._pending = None
        self._last = loop.time()
        loop.run_in_executor(None, self._trim)

    def _trim(self) -> None:
        trim_heap()
        self.trims += 1


TRIMMER = HeapTrimmer()      # one per process: the heap is the process's
