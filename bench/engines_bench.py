#!/usr/bin/env python
"""The three ways hybridserve runs a model, alternating in one process: what each NumPy-side
speed measure still buys beside the ONNX Runtime engine.

    python bench/engines_bench.py PREFIX [PREFIX ...] [--rounds 7] [--calls 5]

Per export: `hybridize` (the NumPy reference graph, plain), `hybridserve` (`optimize_for`,
backend 'hybridserve': BatchNorm folded, channels-last kernels, Winograd 3x3 convolutions, fused
epilogues) and `onnxruntime` (`optimize_for`, backend 'onnxruntime', 1 intra-op thread). All
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
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    from threadpoolctl import threadpool_limits
    print(f"machine: {machine()}")
    print("| model | " + " | ".join(f"{m} CPU ms" for m in MODES) + " | hybridize / hybridserve "
          "| hybridserve / onnxruntime |")
    print("|---|" + "---:|" * (len(MODES) + 2))
    with threadpool_limits(1, user_api="blas"):
        for prefix in args.prefixes:
            builds = {m: build(prefix, o) for m, o in MODES.items()}
            got: dict = {m: [] for m in MODES}
            for _ in range(args.rounds):
                for m, (blk, x) in builds.items():
                    got[m].append(cpu_ms(blk, x, args.calls))
            med = {m: statistics.median(v) for m, v in got.items()}
            print(f"| {os.path.basename(prefix)} | " + " | ".join(f"{med[m]:.1f}" for m in MODES)
                  + f" | {med['hybridize'] / med['hybridserve']:.2f} | "
                  f"{med['hybridserve'] / med['onnxruntime']:.2f} |")


if __name__ == "__main__":
    main()
