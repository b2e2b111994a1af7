#!/usr/bin/env python
"""INT8 inference: real MXNet 1.9.1 running its own `quantize_net` export against hybridserve
running that same export on ONNX Runtime, plus MXNet's float32 network for the ≤ 0.35× target.

    python bench/int8_bench.py [--models resnet18_v1 resnet50_v1 mobilenetv2_1_0] [--rounds 5]
        [--int8-dir artifacts/interop/zoo-int8] [--float-dir artifacts/interop/zoo-1.9.1]

The INT8 exports come from `tests/interop/gen_int8_fixtures.py --zoo DIR` (MXNet 1.9.1,
quantize_net, naive calibration on 16 random inputs, quantized_dtype='auto'). Batch 1. Each round
times, one after the other, per model: MXNet INT8, MXNet float32 and hybridserve INT8 (the same
INT8 files through `SymbolBlock.imports` + `optimize_for(x, backend='onnxruntime')`), single-
threaded as CPU seconds of the process per forward (MXNet OMP_NUM_THREADS=1, ORT
intra_op_threads=1: the measure background load barely moves) and with 2 threads as wall time.
Reported: the median over rounds of each round's median, and ratios hybridserve / MXNet of those.
The machine is shared: the load average is printed with every round.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

from common import machine, run_mxnet_side, sys_path_root
from ort_vs_mxnet import ours

sys_path_root()

MODELS = ["resnet18_v1", "resnet50_v1", "mobilenetv2_1_0"]


def mxnet_ms(prefix: str, threads: int, clock: str, calls: int, repeats: int) -> float:
    res = run_mxnet_side("time_export_mx.py", prefix, "--calls", str(calls), "--repeats",
                         str(repeats), "--clock", clock, env={"OMP_NUM_THREADS": str(threads)})
    return res[prefix]["per_call_ms"]


def one_round(model: str, args) -> dict:
    q = os.path.join(args.int8_dir, f"{model}_int8")
    f = os.path.join(args.float_dir, model)
    c, r = args.calls, args.repeats
    row = {"mx_int8_cpu": mxnet_ms(q, 1, "process", c, r),
           "mx_f32_cpu": mxnet_ms(f, 1, "process", c, r),
           "hs_int8_cpu": ours(q, 1, 1, c, r, time.process_time)}
    if not args.cpu_only:
        row.update(mx_int8_2t=mxnet_ms(q, 2, "wall", c, r),
                   hs_int8_2t=ours(q, 1, 2, c, r, time.perf_counter))
    return row


def table(results: dict) -> str:
    lines = ["| model | MXNet INT8 1 thr (CPU ms) | MXNet f32 1 thr | hybridserve INT8 1 thr | "
             "vs MXNet INT8 | vs MXNet f32 | MXNet INT8 2 thr (wall ms) | hybridserve INT8 "
             "2 thr | vs MXNet INT8 |", "|---|---|---|---|---|---|---|---|---|"]
    for model, rounds in results.items():
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        two = (f"{med['mx_int8_2t']:.2f} | {med['hs_int8_2t']:.2f} | "
               f"{med['hs_int8_2t'] / med['mx_int8_2t']:.2f} |") if "mx_int8_2t" in med else \
            "– | – | – |"
        lines.append(f"| {model} | {med['mx_int8_cpu']:.2f} | {med['mx_f32_cpu']:.2f} | "
                     f"{med['hs_int8_cpu']:.2f} | {med['hs_int8_cpu'] / med['mx_int8_cpu']:.2f} | "
                     f"{med['hs_int8_cpu'] / med['mx_f32_cpu']:.2f} | {two}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--int8-dir", default="artifacts/interop/zoo-int8")
    ap.add_argument("--float-dir", default="artifacts/interop/zoo-1.9.1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cpu-only", action="store_true", help="only the single-threaded figures")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    results: dict = {m: [] for m in args.models}
    for k in range(args.rounds):
        for m in args.models:
            row = one_round(m, args)
            results[m].append(row)
            print(f"round {k} {m} {row} load {os.getloadavg()}", flush=True)
    print(f"machine: {machine()}")
    print(table(results))


if __name__ == "__main__":
    main()
