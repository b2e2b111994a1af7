#!/usr/bin/env python
"""ONNX Runtime engine: load time and resident memory of one MXNet export, stage by stage.

    python bench/ort_load_bench.py PREFIX [--threads N] [--repeats 3]

Each repeat runs in a fresh process: parse (`SymbolBlock.imports`), partition + lower + session
(`optimize_for(x, backend='onnxruntime')`), verify (one forward of the NumPy reference graph on
the recorded input against the ORT forward: max|Δ| ≤ 1e-4·max(1, max|ref|)), warm (3 forwards).
Resident memory is the process's VmRSS after each stage minus before parsing (the framework and
onnxruntime already imported), against the parameters' bytes; a last stage trims the C heap
(the reference forward's freed buffers). CPU seconds are given beside wall seconds: on a loaded
machine they are the steadier measure. PREFIX names an export with
`PREFIX-symbol.json`, `PREFIX-0000.params` and `PREFIX-io.npz` (export_zoo_mx.py writes them).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

from common import sys_path_root

sys_path_root()


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def probe(prefix: str, threads: int) -> dict:
    import warnings
    warnings.simplefilter("ignore")
    import onnxruntime  # noqa: F401 - imported before the baseline, as a server has it
    import framework as mx
    from framework.gluon import SymbolBlock
    io = np.load(prefix + "-io.npz")
    x = mx.np.array(io["data"])
    from framework.onnx.runtime import trim_heap
    base, t0, c0 = rss(), time.perf_counter(), time.process_time()
    stages = {}

    def mark(stage: str) -> None:
        stages[stage] = (time.perf_counter() - t0, time.process_time() - c0, rss() - base)
    blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    param_bytes = sum(p.data().asnumpy().nbytes for p in blk.collect_params().values())
    mark("parse")
    blk.optimize_for(x, backend="onnxruntime", intra_op_threads=threads)
    mark("lower+session")
    got = blk(x).asnumpy()
    op, spec = blk.compiled()
    ref = op.plan.run([io["data"] if d else p.data().asnumpy() for d, _, p in spec])[0]
    bound = 1e-4 * max(1.0, float(np.abs(ref).max()))
    ok = float(np.abs(got - ref).max()) <= bound
    mark("verify")
    for _ in range(3):
        blk(x)
    mark("warm")
    trim_heap()              # the reference forward's freed buffers, as a server would after it
    mark("trim")
    return {"param_bytes": param_bytes, "verified": ok, "stages": stages}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.prefix, args.threads)))
        return
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, __file__, args.prefix, "--probe", "--threads",
                              str(args.threads)], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    pb = runs[0]["param_bytes"]
    print(f"params {pb / 2 ** 20:.1f} MB; verified: {all(r['verified'] for r in runs)}; "
          f"median of {len(runs)} fresh processes")
    print("| stage (cumulative) | wall s | CPU s (all threads) | resident added MB | "
          "× param bytes |")
    print("|---|---|---|---|---|")
    for stage in runs[0]["stages"]:
        sec, cpu, mem = (statistics.median(r["stages"][stage][j] for r in runs) for j in range(3))
        print(f"| {stage} | {sec:.2f} | {cpu:.2f} | {mem / 2 ** 20:.0f} | {mem / pb:.2f} |")


if __name__ == "__main__":
    main()
