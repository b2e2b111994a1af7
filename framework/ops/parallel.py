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

Under the GIL a hand-over to a helper costs 100–300 µs, so the split pays off on large ops and
on the cached op's batch split (ResNet-18 b16: 1.8x), not on batch-1 forwards (bench/RESULTS.md).
"""
from __future__ import annotations

import os
import queue
import threading

_nthreads = 1
_workers: list[threading.Thread] = []
_tasks: queue.SimpleQueue = queue.SimpleQueue()
_busy = threading.Lock()
_blas_limit = None
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
        t = threading.Thread(target=_worker, name=f"hybridserve-op-{len(_workers)}",
                             daemon=True)
        t.start()
        _workers.append(t)


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's helper threads: start afresh (lazily)."""
    global _tasks, _busy
    _workers.clear()
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
