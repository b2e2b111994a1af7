#!/usr/bin/env python
"""Model-zoo inference: hybridserve vs real MXNet 1.9.1 on the SAME exported files, one run.

MXNet (its venv) builds each model with random weights, exports it, and times its static
hybridized forward; hybridserve imports that export (SymbolBlock.imports), checks its output
against MXNet's, and times its own forward (plain hybridize, and optimize_for with the
'hybridserve' backend). Also reports the fraction of the machine's measured float32 GEMM peak.

    python bench/zoo_bench.py --models resnet18_v1,resnet50_v1 --batch 1
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time

import numpy as np

from common import machine, run_mxnet_side, sys_path_root

sys_path_root()


def gemm_peak_gflops(n: int = 1024, repeats: int = 10) -> float:
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    a @ b
    best = 1e9
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def graph_flops(sym, data_shape) -> int:
    from framework.symbol.infer import infer_shapes
    shapes = infer_shapes(sym, {"data": data_shape})
    total = 0
    for n in sym.topo():
        if n.is_var or n.op.flops is None:
            continue
        ins = [shapes.get((id(s), i)) for s, i in n.inputs]
        outs = [shapes.get((id(n), i)) for i in range(n.num_outputs())]
        if any(s is None for s in ins + outs):
            continue
        total += int(n.op.flops(n.parsed, ins, outs))
    return total


def time_ms(fn, calls: int, repeats: int) -> float:
    for _ in range(3):
        fn()
    reps = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        reps.append((time.perf_counter() - t0) / calls * 1e3)
    return statistics.median(reps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet18_v1")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from framework import np as fnp
    from framework.gluon import SymbolBlock

    outdir = tempfile.mkdtemp(prefix="hs-zoo-")
    mx = run_mxnet_side("zoo_bench_mx.py", outdir, "--models", args.models, "--batch",
                        str(args.batch), "--calls", str(args.calls), "--repeats", str(args.repeats),
                        env={"OMP_NUM_THREADS": "2"})
    if mx is None:
        sys.exit("the MXNet 1.9.1 venv is missing: bash tests/interop/setup_mxnet_venv.sh 1.9.1")
    peak = gemm_peak_gflops()
    rows = []
    for name, m in mx["models"].items():
        prefix = m["prefix"]
        io = np.load(prefix + "-io.npz")
        x = fnp.array(io["data"])
        t0 = time.perf_counter()
        blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
        blk.hybridize(static_alloc=True, static_shape=True)
        y = blk(x).asnumpy()
        build_s = time.perf_counter() - t0
        err = float(np.abs(y - io["output"]).max())
        bound = 1e-4 * max(1.0, float(np.abs(io["output"]).max()))
        ours = time_ms(lambda: blk(x), args.calls, args.repeats)
        opt = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
        opt.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
        err_opt = float(np.abs(opt(x).asnumpy() - io["output"]).max())
        ours_opt = time_ms(lambda: opt(x), args.calls, args.repeats)
        flops = graph_flops(blk._cached_graph[1], tuple(io["data"].shape))
        best = min(ours, ours_opt)
        rows.append({"model": name, "batch": args.batch, "mxnet_ms": m["per_call_ms"],
                     "hybridserve_ms": round(ours, 3), "hybridserve_opt_ms": round(ours_opt, 3),
                     "ratio": round(best / m["per_call_ms"], 3),
                     "max_abs_err": err, "err_opt": err_opt, "bound": bound,
                     "build_s": round(build_s, 3), "gflop": round(flops / 1e9, 3),
                     "peak_fraction": round(flops / (best / 1e3) / 1e9 / peak, 3)})
    print(f"GEMM peak {peak:.1f} GFLOP/s; machine {json.dumps(machine())}")
    hdr = ["model", "batch", "mxnet_ms", "hybridserve_ms", "hybridserve_opt_ms", "ratio",
           "max_abs_err", "err_opt", "bound", "build_s", "gflop", "peak_fraction"]
    print(" | ".join(hdr))
    for r in rows:
        print(" | ".join(str(r[h]) for h in hdr))


if __name__ == "__main__":
    main()
