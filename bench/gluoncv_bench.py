#!/usr/bin/env python
"""GluonCV detectors and classifiers: the ONNX Runtime engine against real MXNet 1.9.1 on the
same GluonCV exports, rounds alternating (the GluonCV section of the zoo bench).

MXNet's side (bench/mxnet_side/gluoncv_bench_mx.py, the 1.9.1 venv with GluonCV 0.10.5) builds
each model once with pretrained=False and the seeded recipe of tests/gluoncv_recipe.py at the
bench input size, exports it, and times the export (SymbolBlock.imports, static hybridize).
hybridserve imports the same files, `optimize_for(x, backend='onnxruntime')` (the contrib
detection ops stay on their NumPy kernels, the rest runs in ONNX Runtime regions), checks its
outputs against MXNet's (detections: same ids in the same order, scores/boxes within the
deep-net bound) and times its forward. Each round times MXNet then hybridserve; medians within
a round, the best round kept per side; ratio = hybridserve / MXNet (below 1: faster).

    python bench/gluoncv_bench.py [--models name:HxW,...] [--rounds 3] [--threads 2]
        [--clock wall|process]

`name@defaults:HxW` builds the model with GluonCV's own NMS/proposal settings instead of the
recipe's smaller ones (Faster R-CNN: 6000 pre-NMS and 300 post-NMS proposals).

`--threads 1 --clock process`: single-threaded CPU time per forward (MXNet OMP_NUM_THREADS=1,
ORT intra_op_threads=1), the work measure that a shared machine's load barely changes.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings

import numpy as np

from common import machine, run_mxnet_side, sys_path_root
from zoo_bench import time_ms

sys_path_root()

DEFAULT = ("ssd_300_vgg16_atrous_voc:300x300,ssd_512_resnet18_v1_voc:512x512,"
           "yolo3_mobilenet0.25_voc:416x416,yolo3_darknet53_voc:416x416,"
           "faster_rcnn_resnet50_v1b_voc:512x512,center_net_resnet18_v1b_voc:512x512")


def build(prefix: str, threads: int):
    """The export through optimize_for(onnxruntime): (block, input, outputs, MXNet's io)."""
    import framework as mx
    from framework.gluon import SymbolBlock
    io = np.load(prefix + "-io.npz")
    x = mx.np.array(io["data"])
    blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    blk.optimize_for(x, backend="onnxruntime", static_alloc=True, static_shape=True,
                     intra_op_threads=threads)
    outs = blk(x)
    outs = [o.asnumpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
    return blk, x, outs, io


def compiled_share(blk, prefix: str) -> tuple[int, int]:
    """(op nodes inside ONNX Runtime regions, op nodes of the exported graph)."""
    from framework.compiler.passes.partition import regions
    from framework.symbol.json_io import load_json
    graph = load_json(open(prefix + "-symbol.json", "rb").read())
    total = sum(not n.is_var for n in graph.topo())
    op, _ = blk.compiled()
    inside = sum(sum(not m.is_var for m in n.subgraphs[0].topo()) for n in regions(op.symbol))
    return inside, total


def agreement(outs: list, io) -> str:
    refs = [io[f"out{i}"] for i in range(len(outs))]
    worst = 0.0
    for o, r in zip(outs, refs):
        if o.shape != r.shape:
            return f"shape {o.shape} != {r.shape}"
        worst = max(worst, float(np.abs(o.astype(np.float64) - r).max())
                    / max(1.0, float(np.abs(r).max())))
    same_ids = len(outs) == 3 and np.array_equal(outs[0], refs[0])
    return f"{'ids equal, ' if same_ids else ''}rel {worst:.1e}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clock", choices=("wall", "process"), default="wall")
    ap.add_argument("--outdir", help="keep the exports here (default: a temp dir)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    from threadpoolctl import threadpool_limits
    names = [m.split(":")[0] for m in args.models.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = args.outdir or tmp
        os.makedirs(out, exist_ok=True)
        mx_args = [out, "--models", args.models, "--calls", str(args.calls), "--repeats",
                   str(args.repeats), "--clock", args.clock]
        env = {"OMP_NUM_THREADS": str(args.threads), "MXNET_ENGINE_TYPE": "NaiveEngine"
               if args.threads == 1 else "ThreadedEnginePerDevice"}
        mx_best = {n: float("inf") for n in names}
        first = run_mxnet_side("gluoncv_bench_mx.py", *mx_args, env=env)   # exports, round 1
        built = {n: build(os.path.join(out, n), args.threads) for n in names}
        ours_best = {n: float("inf") for n in names}
        for r in range(args.rounds):
            res = first if r == 0 else run_mxnet_side("gluoncv_bench_mx.py", *mx_args, env=env)
            for n in names:
                mx_best[n] = min(mx_best[n], res[n]["per_call_ms"])
            with threadpool_limits(args.threads, user_api="blas"):
                for n in names:
                    blk, x = built[n][0], built[n][1]
                    ours_best[n] = min(ours_best[n], time_ms(lambda: blk(x), args.calls,
                                                             args.repeats, clock)[0])
        print(json.dumps({"machine": machine(), "threads": args.threads, "clock": args.clock}))
        print("| model | input | nodes in ORT regions | MXNet 1.9.1 ms | hybridserve ORT ms "
              "| ratio | outputs vs MXNet |")
        print("|---|---|---|---|---|---|---|")
        for item in args.models.split(","):
            n, size = item.split(":")
            blk, _, outs, io = built[n]
            inside, total = compiled_share(blk, os.path.join(out, n))
            print(f"| {n} | {size} | {inside}/{total} ({100 * inside / total:.0f} %) | "
                  f"{mx_best[n]:.1f} | {ours_best[n]:.1f} | {ours_best[n] / mx_best[n]:.2f} | "
                  f"{agreement(outs, io)} |")


if __name__ == "__main__":
    main()
