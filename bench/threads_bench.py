#!/usr/bin/env python
"""Threading policy for one request vs many concurrent requests (same model, same process).

For each policy, `W` worker threads each run forwards of one compiled model (optimize_for with
the 'hybridserve' backend, static_alloc) for a fixed time; prints throughput (images/s) and the
median / p90 latency per forward. Policies:

* `blas2`       — OpenBLAS's own threads (2), kernels serial (the library default);
* `blas1`       — `threadpoolctl.threadpool_limits(1, "blas")`, kernels serial;
* `intra2`      — `framework.ops.parallel.set_intra_op_threads(2)`: heavy ops split in row blocks
                  over 2 threads, BLAS single-threaded.

    python bench/threads_bench.py PREFIX [--workers 1 2 4] [--seconds 5]

PREFIX is an export (`PREFIX-symbol.json`, `-0000.params`, `-io.npz`), e.g. one that
bench/zoo_bench.py wrote.
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time

import numpy as np

from common import machine, sys_path_root

sys_path_root()


def build(prefix: str):
    import warnings
    warnings.simplefilter("ignore")
    from framework import np as fnp
    from framework.gluon import SymbolBlock
    io = np.load(prefix + "-io.npz")
    x = fnp.array(io["data"])
    blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    blk.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
    blk(x)
    return blk, x


def run_policy(blk, x, policy: str, workers: int, seconds: float) -> dict:
    from threadpoolctl import threadpool_limits

    from framework.ops import parallel
    limits = None
    if policy == "blas1":
        limits = threadpool_limits(1, user_api="blas")
    elif policy == "intra2":
        parallel.set_intra_op_threads(2)
    lat: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker():
        blk(x)                                   # per-thread specialisation (static_alloc)
        mine = []
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            blk(x).asnumpy()
            mine.append(time.perf_counter() - t0)
        with lock:
            lat.extend(mine)
    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker) for _ in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    if limits is not None:
        limits.restore_original_limits()
    parallel.set_intra_op_threads(1)
    lat.sort()
    n = x.shape[0]
    return {"policy": policy, "workers": workers, "forwards": len(lat),
            "images_per_s": round(len(lat) * n / wall, 1),
            "p50_ms": round(statistics.median(lat) * 1e3, 2),
            "p90_ms": round(lat[int(0.9 * (len(lat) - 1))] * 1e3, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--policies", nargs="+", default=["blas2", "blas1", "intra2"])
    args = ap.parse_args()
    blk, x = build(args.prefix)
    print(f"machine: {machine()}")
    print("| policy | workers | forwards | images/s | p50 ms | p90 ms |")
    print("|---|---|---|---|---|---|")
    for w in args.workers:
        for p in args.policies:
            r = run_policy(blk, x, p, w, args.seconds)
            print(f"| {r['policy']} | {r['workers']} | {r['forwards']} | {r['images_per_s']} | "
                  f"{r['p50_ms']} | {r['p90_ms']} |", flush=True)


if __name__ == "__main__":
    main()
