"""Real MXNet side of bench/ort_vs_mxnet.py (run with the MXNet 1.9.1 venv python): time the
static-hybridized forward of existing exports (`PREFIX-symbol.json`/`-0000.params`/`-io.npz`).

    python time_export_mx.py PREFIX[,PREFIX…] --batch 1 --calls 10 --repeats 5 [--clock process]

Prints one JSON document: {prefix: {"per_call_ms": median, "min_ms": minimum}}.
"""
import argparse
import json
import statistics
import sys
import time
import warnings

import numpy as onp


def time_forward(net, x, calls: int, repeats: int, clock) -> dict:
    """Median and minimum ms per forward (each followed by wait_to_read) after 3 warm calls."""
    for _ in range(3):
        net(x).wait_to_read()
    reps = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(calls):
            net(x).wait_to_read()
        reps.append((clock() - t0) / calls * 1e3)
    return {"per_call_ms": round(statistics.median(reps), 3), "min_ms": round(min(reps), 3)}


def timing_args(ap: argparse.ArgumentParser, calls: int, repeats: int):
    """--calls, --repeats, --clock (wall, or process: CPU seconds of all threads) for the
    MXNet-side scripts; parses and returns (args, clock)."""
    ap.add_argument("--calls", type=int, default=calls)
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--clock", choices=("wall", "process"), default="wall")
    args = ap.parse_args()
    return args, time.perf_counter if args.clock == "wall" else time.process_time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefixes")
    ap.add_argument("--batch", type=int, default=1)
    args, clock = timing_args(ap, 10, 5)
    warnings.simplefilter("ignore")
    import mxnet as mx
    out = {}
    for prefix in args.prefixes.split(","):
        net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                           prefix + "-0000.params")
        net.hybridize(static_alloc=True, static_shape=True)
        data = onp.load(prefix + "-io.npz")["data"]
        x = mx.nd.array(onp.concatenate([data] * args.batch))
        out[prefix] = time_forward(net, x, args.calls, args.repeats, clock)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
