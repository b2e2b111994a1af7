#!/usr/bin/env python
"""The detection operators' NumPy kernels against real MXNet 1.9.1's, at detector sizes.

Cases (inputs seeded, written once to a temp npz that both sides read):
* `nms_ssd`     — box_nms as GluonCV's SSD-300 calls it: 8732 anchors × 20 classes of rows,
                  valid_thresh 0.01, topk 400, per-class IoU 0.45;
* `nms_rpn`     — box_nms as GluonCV's RPN calls it: ~17k anchors, topk 6000, IoU 0.7,
                  force_suppress (the quadratic case);
* `roi_align`   — Faster R-CNN's head: (1, 1024, 38, 50) features, 300 rois, 14×14, 1/16,
                  sample_ratio 2.

Rounds alternate MXNet (its venv, `mx.nd.contrib.*`, wait_to_read) and hybridserve (the
registry kernel, as the plan calls it); medians within a round, the best round kept per side;
ratio = hybridserve / MXNet. Outputs are compared too (max|Δ|).

    python bench/detection_ops_bench.py [--rounds 3] [--calls 5] [--repeats 5]
        [--threads 1 --clock process]

`--threads 1 --clock process`: both sides single-threaded (MXNet OMP_NUM_THREADS=1, BLAS one
thread here), CPU time of the process per call: the work, which a shared machine's load
barely changes.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from common import machine, run_mxnet_side, sys_path_root
from zoo_bench import time_ms

sys_path_root()


def _boxes(rng, n: int, size: float) -> np.ndarray:
    xy = rng.uniform(0, size, (n, 2))
    wh = rng.uniform(size / 40, size / 4, (n, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def cases() -> dict:
    rng = np.random.default_rng(7)
    n_ssd = 8732 * 20
    ssd = np.concatenate([rng.integers(0, 20, (n_ssd, 1)), rng.uniform(0, 0.2, (n_ssd, 1)),
                          _boxes(rng, n_ssd, 1.0)], 1).astype(np.float32)[None]
    n_rpn = 9 * 38 * 50
    rpn = np.concatenate([rng.uniform(0, 1, (n_rpn, 1)), _boxes(rng, n_rpn, 600.0)],
                         1).astype(np.float32)[None]
    feat = rng.standard_normal((1, 1024, 38, 50)).astype(np.float32)
    rois = np.concatenate([np.zeros((300, 1)), _boxes(rng, 300, 600.0)], 1).astype(np.float32)
    return {
        "nms_ssd": ("box_nms", {"data": ssd},
                    dict(overlap_thresh=0.45, valid_thresh=0.01, topk=400, id_index=0,
                         score_index=1, coord_start=2, force_suppress=False)),
        "nms_rpn": ("box_nms", {"data": rpn},
                    dict(overlap_thresh=0.7, topk=6000, id_index=-1, score_index=0,
                         coord_start=1, force_suppress=True)),
        "roi_align": ("ROIAlign", {"data": feat, "rois": rois},
                      dict(pooled_size=(14, 14), spatial_scale=1 / 16, sample_ratio=2)),
    }


def ours(op: str, inputs: dict, attrs: dict):
    from framework.ops.attrs import format_value
    from framework.ops.registry import get_op
    name = {"box_nms": "_contrib_box_nms", "ROIAlign": "_contrib_ROIAlign"}[op]
    d = get_op(name)
    parsed = d.parse_attrs({k: format_value(v) for k, v in attrs.items()})
    xs = list(inputs.values())
    if d.out:           # as a static_alloc plan calls it: into a buffer reused across calls
        buf = np.empty(d.shapes(parsed, [v.shape for v in xs])[0], xs[0].dtype)
        return lambda: d.kernel(parsed, *xs, out=buf)
    return lambda: d.kernel(parsed, *xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clock", choices=("wall", "process"), default="wall")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    spec = cases()
    with tempfile.TemporaryDirectory() as d:
        base = Path(d) / "cases"
        np.savez(str(base) + ".npz", **{f"{c}:{k}": v for c, (_, ins, _) in spec.items()
                                        for k, v in ins.items()})
        (base.with_suffix(".json")).write_text(json.dumps(
            {c: (op, list(ins), {k: list(v) if isinstance(v, tuple) else v
                                 for k, v in at.items()}) for c, (op, ins, at) in spec.items()}))
        mx_best: dict = {}
        hs_best: dict = {}
        for _ in range(args.rounds):
            res = run_mxnet_side("detection_ops_mx.py", str(base), "--calls", str(args.calls),
                                 "--repeats", str(args.repeats), "--clock", args.clock,
                                 env={"OMP_NUM_THREADS": str(args.threads)})
            for c, r in res.items():
                mx_best[c] = min(mx_best.get(c, 1e18), r["per_call_ms"])
            for c, (op, ins, at) in spec.items():
                fn = ours(op, ins, at)
                with threadpool_limits(args.threads, user_api="blas"):
                    ms = time_ms(fn, args.calls, args.repeats, clock)[0]
                hs_best[c] = min(hs_best.get(c, 1e18), ms)
        print(json.dumps({"machine": machine(), "threads": args.threads, "clock": args.clock}))
        print("| case | MXNet 1.9.1 ms | hybridserve ms | ratio | max abs diff |")
        print("|---|---|---|---|---|")
        for c, (op, ins, at) in spec.items():
            got = ours(op, ins, at)()
            got = got[0] if isinstance(got, tuple) else got
            ref = np.load(f"{base}-{c}-mx.npy")
            diff = float(np.abs(got.astype(np.float64) - ref).max())
            print(f"| {c} | {mx_best[c]:.2f} | {hs_best[c]:.2f} | "
                  f"{hs_best[c] / mx_best[c]:.2f} | {diff:.2e} |")


if __name__ == "__main__":
    main()
