"""Intra-op parallelism for the NumPy kernels: split one op's work in row blocks over a few threads.

NumPy releases the GIL inside its copy / ufunc / BLAS loops, so two threads that each run the
im2col copy, the GEMM and the epilogue of half an output really run on two cores. With this on,
BLAS itself must run single-threaded (`set_intra_op_threads` sets that through threadpoolctl),
otherwise each half-GEMM would start its own BLAS threads and oversubscribe the cores.

Policy (see bench/RESULTS.md): one request at a time → `set_intra_op_threads(ncores)` (BLAS 1
thread); many concurrent requests → leave it at 1 and give each worker 1 BLAS thread
(`threadpoolctl.threadpool_limits(1, "blas")`); the default (1) leaves BLAS's own threading alone.
The helper threads are shared by the process; an op that finds them busy (another request is
using them) simply runs its parts itself, so concurrent callers never wait on each other.

On a free-threaded CPython (3.13t, 3.14t; `scripts/freethreaded.sh` builds one) the helpers spin
between tasks, so that a hand-over costs microseconds, and the Python glue between NumPy calls
runs on both cores too: there the intra-op threads are the faster policy for one request at a
time at batch 1 as well (bench/RESULTS.md).
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import time

_nthreads = 1
_workers: list[threading.Thread] = []
_tasks: queue.SimpleQueue = queue.SimpleQueue()
_busy = threading.Lock()
_blas_limit = None
# Without a GIL the helpers spin between tasks (~6 µs per hand-over instead of a 100-300 µs
# thread wake-up); with one, a spinning helper would hold it, so there the queue stays.
_SPIN = not getattr(sys, "_is_gil_enabled", lambda: True)()
_SPIN_S = 2e-3                  # spin this long for the next task (or a helper's end), then sleep


class _Slot:
    """One helper's mailbox in spin mode: the caller writes `task`, the helper sets `done`."""
    __slots__ = ("task", "done", "err", "wake")

    def __init__(self) -> None:
        self.task = None
        self.done = True
        self.err: BaseException | None = None
        self.wake = threading.Event()


_slots: list[_Slot] = []


def _spin_worker(slot: _Slot) -> None:
    clock = time.perf_counter
    while True:
        if slot.task is None:
            end = clock() + _SPIN_S
            while slot.task is None and clock() < end:
                pass
            if slot.task is None:
                slot.wake.wait()
                slot.wake.clear()
                continue
        fn, i = slot.task
        slot.task = None
        try:
            fn(i)
            slot.err = None
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            slot.err = e
        slot.done = True


def _worker() -> None:
    while True:
        fn, i, done = _tasks.get()
        try:
            fn(i)
            done.put(None)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            done.put(e)


def _spawn(n: int) -> None:
    while len(_workers) < n - 1:
        target, args = _worker, ()
        if _SPIN:
            _slots.append(_Slot())
            target, args = _spin_worker, (_slots[-1],)
        t = threading.Thread(target=target, args=args, name=f"hybridserve-op-{len(_workers)}",
                             daemon=True)
        t.start()
        _workers.append(t)


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's helper threads: start afresh (lazily)."""
    global _tasks, _busy
    _workers.clear()
    _slots.clear()
    _tasks = queue.SimpleQueue()
    _busy = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def set_intra_op_threads(n: int, limit_blas: bool = True) -> int:
    """Split heavy ops over `n` threads (n <= 1: off). Returns the previous setting."""
    global _nthreads, _blas_limit
    prev = _nthreads
    n = max(1, int(n))
    with _busy:
        _spawn(n)
        _nthreads = n
    if limit_blas:
        try:
            from threadpoolctl import threadpool_limits
            if n > 1 and _blas_limit is None:
                _blas_limit = threadpool_limits(1, user_api="blas")
            elif n <= 1 and _blas_limit is not None:
                _blas_limit.restore_original_limits()
                _blas_limit = None
        except Exception:  # noqa: BLE001 - threadpoolctl missing: BLAS keeps its own setting
            pass
    return prev


def intra_op_threads() -> int:
    return _nthreads


_blas_ctl = None


def blas_threads() -> int:
    """Threads NumPy's BLAS uses right now (1 if unknown): a direct call into the library, cheap
    enough per op, so kernels can choose algorithms by how a GEMM will be parallelised."""
    global _blas_ctl
    if _blas_ctl is None:
        try:
            from threadpoolctl import ThreadpoolController
            ctls = ThreadpoolController().select(user_api="blas").lib_controllers
            ctls = sorted(ctls, key=lambda c: "numpy" not in str(getattr(c, "filepath", "")))
            _blas_ctl = ctls[0] if ctls else False
        except Exception:  # noqa: BLE001 - threadpoolctl missing: treat BLAS as serial
            _blas_ctl = False
    if not _blas_ctl:
        return 1
    try:
        return max(1, int(_blas_ctl.get_num_threads() or 1))
    except Exception:  # noqa: BLE001
        return 1


def parts(total: int, min_per_part: int = 1) -> int:
    """How many parts to split `total` units of work into."""
    if _nthreads <= 1 or total < 2 * min_per_part:
        return 1
    return max(1, min(_nthreads, total // min_per_part))


def split(total: int, n: int) -> list[tuple[int, int]]:
    step = -(-total // n)
    return [(i, min(total, i + step)) for i in range(0, total, step)]


def run(fn, n: int) -> None:
    """fn(0) … fn(n-1); in parallel on the helper threads when they are free."""
    if n <= 1:
        fn(0)
        return
    if not _busy.acquire(blocking=False):
        for i in range(n):
            fn(i)
        return
    try:
        if len(_workers) < _nthreads - 1:
            _spawn(_nthreads)
        if _SPIN:
            _run_spin(fn, n)
            return
        done: queue.SimpleQueue = queue.SimpleQueue()
        k = min(n - 1, len(_workers))
        for i in range(1, k + 1):
            _tasks.put((fn, i, done))
        fn(0)
        for i in range(k + 1, n):
            fn(i)
        err = None
        for _ in range(k):
            e = done.get()
            err = err or e
        if err is not None:
            raise err
    finally:
        _busy.release()


def _observed() -> bool:
    """A profiler or debugger is attached: then the caller runs every part itself. Its hooks
    run on every thread, and 3.13t's cProfile is not thread-safe (CPython gh-125165: it hung
    here with the helpers running)."""
    mon = getattr(sys, "monitoring", None)
    return bool(sys.getprofile() or sys.gettrace() or (mon is not None and (
        mon.get_tool(mon.PROFILER_ID) or mon.get_tool(mon.DEBUGGER_ID))))


def _run_spin(fn, n: int) -> None:
    if _observed():
        for i in range(n):
            fn(i)
        return
    helpers = _slots[:min(n - 1, _nthreads - 1)]
    for k, slot in enumerate(helpers, 1):
        slot.done = False
        slot.task = (fn, k)
        slot.wake.set()
    err = None
    try:
        fn(0)
        for i in range(len(helpers) + 1, n):
            fn(i)
    except BaseException as e:  # noqa: BLE001 - still wait for the helpers' parts
        err = e
    clock = time.perf_counter
    for slot in helpers:
        end = clock() + _SPIN_S
        while not slot.done:
            if clock() > end:           # a long part: stop burning a core other threads may want
                time.sleep(20e-6)
        err = err or slot.err
    if err is not None:
        raise err
