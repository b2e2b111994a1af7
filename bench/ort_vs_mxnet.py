#!/usr/bin/env python
"""The ONNX Runtime engine against real MXNet 1.9.1 on the same exports, rounds alternating.

    python bench/ort_vs_mxnet.py PREFIX… [--batch 1] [--rounds 2] [--calls 10] [--repeats 5]

A lighter companion of zoo_bench.py --ort for a loaded machine: no model building (the exports of
tests/interop/export_zoo_mx.py are timed as they are), and each round times MXNet (its venv,
static hybridized) then hybridserve's `optimize_for(x, backend='onnxruntime')`, both ways:
wall time with 2 threads (MXNet OMP_NUM_THREADS=2, ORT intra_op_threads=2) and single-threaded
CPU time of the whole process per forward (OMP_NUM_THREADS=1 / intra_op_threads=1), the work
measure that background load barely changes. Medians within a round, the best round kept for each
side; ratios are hybridserve / MXNet. The load average is printed before and after.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np

from common import machine, run_mxnet_side, sys_path_root

sys_path_root()


def ours(prefix: str, batch: int, threads: int, calls: int, repeats: int, clock) -> float:
    import framework as mx
    from framework.gluon import SymbolBlock
    data = np.load(prefix + "-io.npz")["data"]
    x = mx.np.array(np.concatenate([data] * batch))
    blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    blk.optimize_for(x, backend="onnxruntime", static_alloc=True, static_shape=True,
                     intra_op_threads=threads)
    for _ in range(3):
        blk(x)
    reps = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(calls):
            blk(x)
        reps.append((clock() - t0) / calls * 1e3)
    return statistics.median(reps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefixes", nargs="+")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cpu-only", action="store_true",
                    help="only the single-threaded CPU-time comparison (MXNet's 2 OpenMP threads "
                         "crawl on an oversubscribed machine)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("load before:", os.getloadavg())
    best: dict = {}
    common = ["--batch", str(args.batch), "--calls", str(args.calls), "--repeats",
              str(args.repeats)]
    for _ in range(args.rounds):
        for p in args.prefixes:
            row = best.setdefault(p, {})
            mc = run_mxnet_side("time_export_mx.py", p, *common, "--clock", "process",
                                env={"OMP_NUM_THREADS": "1"})
            got = {"mx_cpu_ms": mc[p]["per_call_ms"],
                   "ort_cpu_ms": ours(p, args.batch, 1, args.calls, args.repeats,
                                      time.process_time)}
            if not args.cpu_only:
                mw = run_mxnet_side("time_export_mx.py", p, *common,
                                    env={"OMP_NUM_THREADS": "2"})
                got.update(mx_ms=mw[p]["per_call_ms"],
                           ort_ms=ours(p, args.batch, 2, args.calls, args.repeats,
                                       time.perf_counter))
            for k, v in got.items():
                row[k] = min(row.get(k, v), v)
            print(os.path.basename(p), got, os.getloadavg(), flush=True)
    print("load after:", os.getloadavg())
    print(f"machine: {machine()}")
    print(f"\n| model | batch | mxnet_ms (2 thr) | ort_ms (2 thr) | ratio | ort per image ms | "
          f"mx_cpu_ms (1 thr) | ort_cpu_ms (1 thr) | cpu_ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p, r in best.items():
        r.setdefault("mx_ms", float("nan"))
        r.setdefault("ort_ms", float("nan"))
        print(f"| {os.path.basename(p)} | {args.batch} | {r['mx_ms']:.2f} | {r['ort_ms']:.2f} | "
              f"{r['ort_ms'] / r['mx_ms']:.3f} | {r['ort_ms'] / args.batch:.2f} | "
              f"{r['mx_cpu_ms']:.2f} | {r['ort_cpu_ms']:.2f} | "
              f"{r['ort_cpu_ms'] / r['mx_cpu_ms']:.3f} |")


if __name__ == "__main__":
    main()
