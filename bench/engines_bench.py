#!/usr/bin/env python
"""The three ways hybridserve runs a model, alternating in one process: what each NumPy-side
speed measure still buys beside the ONNX Runtime engine.

    python bench/engines_bench.py PREFIX [PREFIX ...] [--rounds 7] [--calls 5]

Per export: `hybridize` (the NumPy reference graph, plain), `hybridserve` (`optimize_for`,
backend 'hybridserve': BatchNorm folded, channels-last kernels, Winograd 3x3 convolutions, fused
epilogues), `onnxruntime` (`optimize_for`, backend 'onnxruntime', 1 intra-op thread) and, when
the optional `openvino` package is installed, `openvino` (backend 'openvino', 1 thread, f32;
`--bf16` adds `openvino-bf16`: f32 where the CPU lacks native bf16). All
single-threaded (BLAS 1 thread), so the figure is process CPU milliseconds per forward — the
work, which other load on a shared machine barely changes — median over rounds in which the
three builds take turns. PREFIX names an export with `PREFIX-symbol.json`,
`PREFIX-0000.params` and `PREFIX-io.npz`.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np

from common import machine, sys_path_root

sys_path_root()

MODES = {"hybridize": {}, "hybridserve": {"backend": "hybridserve"},
         "onnxruntime": {"backend": "onnxruntime", "intra_op_threads": 1}}
OPENVINO = {"openvino": {"backend": "openvino", "intra_op_threads": 1},
            "openvino-bf16": {"backend": "openvino", "intra_op_threads": 1, "precision": "bf16"}}


def modes(bf16: bool) -> dict:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return dict(MODES)
    return {**MODES, **{m: o for m, o in OPENVINO.items() if bf16 or m == "openvino"}}


def build(prefix: str, opts: dict):
    from framework import np as fnp
    from framework.gluon import SymbolBlock
    x = fnp.array(np.load(prefix + "-io.npz")["data"])
    blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    if opts:
        blk.optimize_for(x, static_alloc=True, static_shape=True, **opts)
    else:
        blk.hybridize(static_alloc=True, static_shape=True, backend="numpy")
    blk(x)
    return blk, x


def cpu_ms(blk, x, calls: int) -> float:
    c0 = time.process_time()
    for _ in range(calls):
        blk(x).asnumpy()
    return 1000 * (time.process_time() - c0) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefixes", nargs="+")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--bf16", action="store_true", help="add OpenVINO with the bf16 hint")
    args = ap.parse_args()
    runs = modes(args.bf16)
    ov = "openvino" in runs
    warnings.simplefilter("ignore")
    from threadpoolctl import threadpool_limits
    print(f"machine: {machine()}")
    print("| model | " + " | ".join(f"{m} CPU ms" for m in runs) + " | hybridize / hybridserve "
          "| hybridserve / onnxruntime |" + (" openvino / onnxruntime |" if ov else ""))
    print("|---|" + "---:|" * (len(runs) + 2 + ov))
    with threadpool_limits(1, user_api="blas"):
        for prefix in args.prefixes:
            builds = {m: build(prefix, o) for m, o in runs.items()}
            got: dict = {m: [] for m in runs}
            for _ in range(args.rounds):
                for m, (blk, x) in builds.items():
                    got[m].append(cpu_ms(blk, x, args.calls))
            med = {m: statistics.median(v) for m, v in got.items()}
            print(f"| {os.path.basename(prefix)} | " + " | ".join(f"{med[m]:.1f}" for m in runs)
                  + f" | {med['hybridize'] / med['hybridserve']:.2f} | "
                  f"{med['hybridserve'] / med['onnxruntime']:.2f} |"
                  + (f" {med['openvino'] / med['onnxruntime']:.2f} |" if ov else ""))


if __name__ == "__main__":
    main()
