#!/usr/bin/env python
"""The seeds' benchmark: 1 000 forwards of the 512→256→128→2 MLP on a (1, 512) input, before and
after hybridize, and with static_alloc/static_shape — hybridserve and real MXNet 1.9.1 side by side
in one run; hybridserve also with `optimize_for(x, backend='onnxruntime')` (its ratio is to MXNet's
static hybridized forward) (the MXNet side runs from `.mxnet-venvs/mxnet-1.9.1` when it exists).

    python bench/mlp_bench.py [--calls 1000 --repeats 7 --rounds 3]

Prints per-call microseconds (median over repeats, the best of `rounds` alternating rounds of
both sides so that background load hits both alike) and the ratio hybridserve / MXNet.
"""
from __future__ import annotations

import argparse
import json
import sys

from common import machine, per_call_us, run_mxnet_side, sys_path_root

sys_path_root()


def hybridserve_side(calls: int, repeats: int) -> dict:
    import framework as mx
    from framework import np
    from framework.gluon import nn

    mx.random.seed(0)
    x = np.random.normal(size=(1, 512))
    out = {}
    static = {"static_alloc": True, "static_shape": True}
    numpy = {"backend": "numpy"}       # the reference engine (hybridize()'s default is ORT)
    for mode, flags in (("imperative", None), ("hybridize", numpy),
                        ("hybridize_static", {**static, **numpy}),
                        ("onnxruntime", {**static, "backend": "onnxruntime"})):
        net = nn.HybridSequential()
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
        net.initialize()
        if flags and flags.get("backend") == "onnxruntime":
            net.optimize_for(x, **flags)
        elif flags is not None:
            net.hybridize(**flags)
        out[mode] = per_call_us(lambda: net(x).wait_to_read(), calls, repeats)["median_us"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the raw JSON report only")
    args = ap.parse_args()
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for k, v in hybridserve_side(args.calls, args.repeats).items():
            ours.setdefault(k, []).append(v)
        mx = run_mxnet_side("mlp_bench_mx.py", "--calls", str(args.calls),
                            "--repeats", str(args.repeats), env={"OMP_NUM_THREADS": "2"})
        if mx is not None:
            for k in ("imperative", "hybridize", "hybridize_static"):
                theirs.setdefault(k, []).append(mx["per_call_us"][k])
    report = {"machine": machine(), "hybridserve_us": {k: min(v) for k, v in ours.items()},
              "mxnet_1.9.1_us": {k: min(v) for k, v in theirs.items()} or None}
    if theirs:
        report["ratio"] = {k: round(report["hybridserve_us"][k] / report["mxnet_1.9.1_us"][k], 3)
                           for k in theirs}
        report["ratio"]["onnxruntime"] = round(report["hybridserve_us"]["onnxruntime"]
                                               / report["mxnet_1.9.1_us"]["hybridize_static"], 3)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return
    print(f"{'mode':<20}{'hybridserve µs':>16}{'MXNet 1.9.1 µs':>16}{'ratio':>8}")
    for k, v in report["hybridserve_us"].items():
        m = (report["mxnet_1.9.1_us"] or {}).get(k)
        r = report.get("ratio", {}).get(k)
        print(f"{k:<20}{v:>16.1f}{(m if m else float('nan')):>16.1f}{(r if r else float('nan')):>8.2f}")
    print(json.dumps(report["machine"]))


if __name__ == "__main__":
    main()
