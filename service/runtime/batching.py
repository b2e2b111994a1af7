"""Dynamic batching: concurrent requests to one model are merged along axis 0 and run once.

A per-model collector task takes the oldest queued request, waits (up to the model's max delay,
and only while there is concurrent traffic) for more requests with the same non-batch shapes
and dtypes, concatenates them up to
`max_batch_size`, runs the model once and slices the outputs back. While every execution slot
is busy requests keep accumulating, so batches grow with load. If a merged run fails, each
request is re-run alone so one bad request cannot fail its neighbours. The queue is bounded:
beyond `max_queue` waiting requests `submit` raises Unavailable (503 + Retry-After).
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import Unavailable

log = logging.getLogger("hybridserve.batching")


@dataclass(slots=True)
class _Item:
    arrays: list[np.ndarray]
    batch: int
    key: tuple
    t0: float                       # loop time when queued
    t0_ns: int
    future: asyncio.Future = field(default=None)  # type: ignore[assignment]


def timed(fn, arrays):
    """(fn(arrays), the ns it took): every model execution is timed by this."""
    t = time.perf_counter_ns()
    out = fn(arrays)
    return out, time.perf_counter_ns() - t


class Batcher:
    def __init__(self, run: Callable[[list[np.ndarray]], list[np.ndarray]], executor: Executor,
                 max_batch_size: int, max_delay_us: int, preferred: list[int], max_queue: int,
                 concurrency: int, on_execution: Callable[[int, int, int], None],
                 inline: Callable[[int], bool] = lambda n: False,
                 outstanding: Callable[[], int] | None = None):
        self._run, self._executor = run, executor
        self.max_batch_size = max_batch_size
        self.max_delay = max_delay_us / 1e6
        self.target = min(max(preferred), max_batch_size) if preferred else max_batch_size
        self.max_queue = max_queue
        self._on_execution = on_execution
        self._inline = inline
        self._items: deque[_Item] = deque()
        self._wakeup: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self._concurrency = max(1, concurrency)
        self._task: asyncio.Task | None = None
        self._inflight: set[asyncio.Task] = set()
        self._closed = False
        self._last_size = 0
        self._busy = 0                      # executions running now
        self._rest_ready = False            # the last batch left ready rows for the next slot
        self._rows = 0                      # rows queued in _items
        self._running = 0                   # requests in the executions running now
        # requests the server has read and not yet answered (all models), if it counts them
        self._outstanding = outstanding
        self._gathering = False             # the collector waits for company for a formed batch

    def start(self) -> None:
        self._wakeup = asyncio.Event()
        self._slots = asyncio.Semaphore(self._concurrency)
        self._task = asyncio.get_running_loop().create_task(self._collect())

    @property
    def queued(self) -> int:
        return len(self._items)

    async def submit(self, arrays: list[np.ndarray], batch: int) -> tuple[list[np.ndarray], int, int]:
        """Queue one request → (its output rows, queue ns, size of the batch it ran in)."""
        if self._closed:
            raise Unavailable("model is unloading")
        if len(self._items) >= self.max_queue:
            raise Unavailable(f"queue of {self.max_queue} requests is full; retry later")
        loop = asyncio.get_running_loop()
        key = tuple((a.shape[1:], a.dtype.str) for a in arrays)
        item = _Item(arrays, batch, key, loop.time(), time.perf_counter_ns(), loop.create_future())
        if not self._items and not self._busy and self._last_size <= 1 and not self._slots.locked():
            # idle model, lone request: run it now, skipping the collector's hand-off
            await self._slots.acquire()
            self._last_size = batch
            self._busy += 1
            await self._execute([item])
            return item.future.result()
        self._items.append(item)
        self._rows += batch
        # while a batch gathers, wake the collector only once it can be full (the deadline
        # timer covers the rest): a wake-up per arrival cost ~13 % of a tiny model's req/s
        if not self._gathering or self._rows >= self.target:
            self._wakeup.set()
        return await item.future

    async def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._items:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            await self._slots.acquire()
            if not self._items:
                self._slots.release()
                continue
            first = self._items[0]
            deadline = first.t0 + self.max_delay
            # rows left over from a shared-out batch go at once: their batch was already formed
            while (not self._rest_ready and self._worth_waiting()
                   and self._ready_size(first.key) < self.target):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                self._wakeup.clear()
                timer = loop.call_later(remaining, self._wakeup.set)   # no task per wait
                self._gathering = True
                try:
                    await self._wakeup.wait()
                finally:
                    self._gathering = False
                    timer.cancel()
            ready = self._ready_size(first.key)
            share = self._share(ready)
            self._rest_ready = share < min(self.max_batch_size, ready)
            items = self._take(first.key, share)
            self._last_size = sum(it.batch for it in items)
            if not items:
                self._slots.release()
                continue
            self._busy += 1
            task = loop.create_task(self._execute(items))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)

    def _worth_waiting(self) -> bool:
        """Wait for company only when there is traffic to batch with: a lone request on an
        idle model runs at once (max delay is an upper bound, so this is allowed), which keeps
        single-client latency at the unbatched level."""
        if self._outstanding is not None and \
                self._outstanding() <= len(self._items) + self._running:
            # every request the server holds is queued or running here: clients that wait
            # for their answers (closed loops) send nothing more until this batch answers
            return False
        return len(self._items) > 1 or self._busy > 0 or self._last_size > 1

    def _ready_size(self, key: tuple) -> int:
        n = 0
        for it in self._items:
            if it.key == key:
                n += it.batch
                if n >= self.max_batch_size:
                    break
        return n

    def _share(self, ready: int) -> int:
        """Rows to take now. A batch that runs on an inference thread (not inline) while other
        execution slots are idle takes only its share of the ready rows: the rest becomes the
        next batch, on the next idle thread, so the cores work in parallel instead of one
        batch running alone (a heavy model's cost per row barely drops with batch size)."""
        idle = self._concurrency - self._busy - 1          # our own slot is already taken
        if idle <= 0 or ready <= 1 or self._inline(ready):
            return self.max_batch_size
        return -(-ready // (idle + 1))

    def _take(self, key: tuple, limit: int | None = None) -> list[_Item]:
        limit = self.max_batch_size if limit is None else min(limit, self.max_batch_size)
        taken, keep, total = [], deque(), 0
        while self._items:
            it = self._items.popleft()
            if it.future.done():            # cancelled by its client
                self._rows -= it.batch
                continue
            if it.key == key and total + it.batch <= (limit if taken else self.max_batch_size):
                taken.append(it)
                total += it.batch
                self._rows -= it.batch
            else:
                keep.append(it)
        keep.extend(self._items)
        self._items = keep
        return taken

    async def _call(self, arrays: list[np.ndarray], n: int):
        if self._inline(n):      # cheaper than a thread hop; arrivals queue up meanwhile
            return timed(self._run, arrays)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, timed, self._run, arrays)

    async def _attempt(self, arrays: list[np.ndarray], n: int):
        """(outputs, ns, None) of one run, or (None, 0, the exception it raised)."""
        try:
            outs, ns = await self._call(arrays, n)
        except Exception as e:  # noqa: BLE001 - a model failure goes to its requests
            return None, 0, e
        return outs, ns, None

    async def _execute(self, items: list[_Item]) -> None:
        self._running += len(items)
        try:
            start = time.perf_counter_ns()
            total = sum(it.batch for it in items)
            if len(items) == 1:
                arrays = items[0].arrays
            else:
                arrays = [np.concatenate([it.arrays[k] for it in items])
                          for k in range(len(items[0].arrays))]
            outs, ns, e = await self._attempt(arrays, total)
            if e is not None:           # isolate per request: one bad request fails alone
                if len(items) == 1:
                    _fail(items[0], e)
                else:
                    await self._one_by_one(items, start)
                return
            if len(items) > 1 and any(o.ndim == 0 or o.shape[0] != total for o in outs):
                await self._one_by_one(items, start)   # outputs are not batch-major
                return
            self._on_execution(total, ns, len(items))
            pos = 0
            for it in items:
                rows = outs if len(items) == 1 else [o[pos:pos + it.batch] for o in outs]
                pos += it.batch
                if not it.future.done():
                    it.future.set_result((rows, start - it.t0_ns, total))
        finally:
            self._running -= len(items)
            self._busy -= 1
            self._slots.release()

    async def _one_by_one(self, items: list[_Item], start: int) -> None:
        for it in items:
            outs, ns, e = await self._attempt(it.arrays, it.batch)
            if e is not None:
                _fail(it, e)
                continue
            self._on_execution(it.batch, ns, 1)
            if not it.future.done():
                it.future.set_result((outs, start - it.t0_ns, it.batch))

    async def stop(self, timeout: float = 30.0) -> None:
        """Refuse new work, let queued and running batches finish, then stop the collector."""
        self._closed = True
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while (self._items or self._busy) and loop.time() < end:
            await asyncio.sleep(0.005)
        if self._task is not None:
            self._task.cancel()
        for it in self._items:
            _fail(it, Unavailable("model was unloaded"))
        self._items.clear()
        self._rows = 0


def _fail(it: _Item, e: BaseException) -> None:
    if not it.future.done():
        it.future.set_exception(e)
