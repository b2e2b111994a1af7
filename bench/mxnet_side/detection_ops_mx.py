"""Real MXNet side of bench/detection_ops_bench.py (MXNet 1.9.1 venv python): time each case's
operator on the arrays of CASES.npz (`<case>:<input>`), attributes from CASES.json.

    python detection_ops_mx.py CASES --calls 5 --repeats 5 [--clock wall|process]

Prints one JSON document: {case: {"per_call_ms": median, "min_ms": minimum}}.
"""
import argparse
import json
import os
import sys
import warnings

import numpy as onp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_export_mx import time_forward, timing_args  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    args, clock = timing_args(ap, 5, 5)
    warnings.simplefilter("ignore")
    import mxnet as mx
    spec = json.load(open(args.cases + ".json"))
    arrays = onp.load(args.cases + ".npz")
    report = {}
    for case, (op, inputs, attrs) in spec.items():
        fn = getattr(mx.nd.contrib, op)
        xs = [mx.nd.array(arrays[f"{case}:{k}"]) for k in inputs]
        report[case] = time_forward(lambda _x: fn(*xs, **attrs), None, args.calls, args.repeats,
                                    clock)
        out = fn(*xs, **attrs)
        out = out[0] if isinstance(out, (list, tuple)) else out
        onp.save(f"{args.cases}-{case}-mx.npy", out.asnumpy())
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
