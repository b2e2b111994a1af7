#!/usr/bin/env python
"""`hybridize()` with nothing else against `optimize_for(x, backend='onnxruntime')` (issue 31),
float32 and `quantize_net` INT8, CPU time of the process per batch-1 forward, in one process
with OMP_NUM_THREADS=1 (what a user sets for single-threaded work):

* `hybridize`        — `net.hybridize()`: the default engine, threads from OMP_NUM_THREADS;
* `optimize_for`     — `net.optimize_for(x, backend='onnxruntime')`: threads likewise;
* `optimize_for_1t`  — the same with `intra_op_threads=1` given explicitly (the reference);
* `two_spinning`     — `intra_op_threads=2` (what optimize_for made before issue 31 on this
                       2-core machine whatever OMP_NUM_THREADS said: spinning pool threads).

    OMP_NUM_THREADS=1 python bench/default_engine_bench.py [--models resnet18_v1 mobilenetv2_1.0]

Random weights (the timing does not depend on them); INT8: naive calibration on 8 random
images. Alternating measurements, minimum over rounds; the machine may be shared: ratios only.
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from common import per_call_us, sys_path_root

sys_path_root()


def cpu_ms(fn, calls: int) -> float:
    return per_call_us(fn, calls, 1, warmup=1, clock=time.process_time)["median_us"] / 1e3


def builds(name: str, int8: bool) -> dict:
    import framework as mx
    from framework.contrib.quantization import quantize_net
    from framework.gluon import SymbolBlock
    from framework.gluon.model_zoo import vision
    net = vision.get_model(name)
    net.initialize(mx.init.Xavier())
    x = mx.np.array(np.random.rand(1, 3, 224, 224).astype(np.float32))
    net.hybridize(backend="numpy")
    net(x)
    sym, args = net.export(None)
    params = {k.split(":", 1)[1]: v for k, v in args.items()}

    def fresh():
        blk = SymbolBlock(sym, [mx.sym.var("data")])
        blk.load_dict(params, ignore_extra=True)
        if int8:
            calib = [mx.np.array(np.random.rand(8, 3, 224, 224).astype(np.float32))]
            blk = quantize_net(blk, calib_mode="naive", calib_data=calib, num_calib_examples=8)
        return blk
    out = {}
    for mode, how in (("hybridize", None), ("optimize_for", {}),
                      ("optimize_for_1t", {"intra_op_threads": 1}),
                      ("two_spinning", {"intra_op_threads": 2})):
        blk = fresh()
        if how is None:
            blk.hybridize()
        else:
            blk.optimize_for(x, backend="onnxruntime", **how)
        blk(x)
        out[mode] = lambda blk=blk: blk(x).asnumpy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet18_v1", "mobilenetv2_1.0"])
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("OMP_NUM_THREADS =", os.environ.get("OMP_NUM_THREADS"), "; load", os.getloadavg())
    for name in args.models:
        for int8 in (False, True):
            fns = builds(name, int8)
            times: dict[str, list[float]] = {m: [] for m in fns}
            for _ in range(args.rounds):            # modes alternate: load hits all alike
                for m, f in fns.items():
                    times[m].append(cpu_ms(f, args.calls))
            best = {m: min(t) for m, t in times.items()}
            ref = best["optimize_for_1t"]
            print(f"{name} {'INT8' if int8 else 'float32'}: " + ", ".join(
                f"{m} {v:.1f} ms ({v / ref:.2f}×)" for m, v in best.items()), flush=True)


if __name__ == "__main__":
    main()
