#!/usr/bin/env python
"""Where an ONNX Runtime forward spends its time: ORT's own profiler, summed per op type.

    python bench/ort_profile.py PREFIX [--threads 1] [--calls 20] [--batch 1]

Lowers the export as the onnxruntime backend does (one region: the zoo models are wholly
lowerable), builds the session with the backend's options plus profiling, runs `calls` forwards
and prints the kernel time per ORT op type (after ORT's fusions: `FusedConv`, NCHWc `Conv`
variants, `ReorderInput`/`ReorderOutput` layout transforms…) and the share of the wall time that
is outside kernels (per-call overhead of the session).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import tempfile
import time

import numpy as np

from common import sys_path_root

sys_path_root()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--spinning", type=int, default=1)
    args = ap.parse_args()
    import onnxruntime as ort
    from framework.io.params_file import load_params, strip_prefixes
    from framework.onnx import lower_symbol
    from framework.symbol import load
    sym = load(args.prefix + "-symbol.json")
    params = {k: np.asarray(getattr(v, "_data", v))
              for k, v in strip_prefixes(load_params(args.prefix + "-0000.params")).items()}
    x = np.load(args.prefix + "-io.npz")["data"]
    x = np.concatenate([x] * args.batch)
    model = lower_symbol(sym, params, {"data": x.shape})
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads, so.inter_op_num_threads = args.threads, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", str(args.spinning))
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    for _ in range(3):
        sess.run(None, {"data": x})
    t0 = time.perf_counter()
    for _ in range(args.calls):
        sess.run(None, {"data": x})
    wall = (time.perf_counter() - t0) / args.calls * 1e3
    events = json.load(open(sess.end_profiling()))
    per_op: collections.Counter = collections.Counter()
    runs = [e for e in events if e.get("name") == "model_run"][-args.calls:]
    start = runs[0]["ts"] if runs else 0
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= start:
            per_op[e["args"]["op_name"]] += e["dur"]
    total = sum(per_op.values()) / args.calls / 1e3
    print(f"{os.path.basename(args.prefix)} b{args.batch}, {args.threads} thread(s): "
          f"{wall:.2f} ms per forward, kernels {total:.2f} ms "
          f"({total / wall:.0%}); per op type (ms per forward):")
    for op, us in per_op.most_common(12):
        print(f"  {op:<24}{us / args.calls / 1e3:8.3f}")


if __name__ == "__main__":
    main()
