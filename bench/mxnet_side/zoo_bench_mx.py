#!/usr/bin/env python
"""Real MXNet side of bench/zoo_bench.py (run with the MXNet 1.9.1 venv python).

For each model: build it from mxnet.gluon.model_zoo with random weights (seeded), hybridize
(static_alloc, static_shape), export to OUTDIR/<name>-symbol.json/-0000.params plus the input and
the output in OUTDIR/<name>-io.npz, and time forwards (each followed by wait_to_read).
Prints one JSON document: {name: {"batch": b, "per_call_ms": median, "min_ms": ...}}.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as onp

from time_export_mx import time_forward


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--models", default="resnet18_v1")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--clock", choices=("wall", "process"), default="wall",
                    help="process: CPU seconds of the whole process (all threads) per forward")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    warnings.simplefilter("ignore")
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    os.makedirs(args.outdir, exist_ok=True)
    report = {"mxnet_version": mx.__version__, "models": {}}
    for name in args.models.split(","):
        mx.random.seed(0)
        rs = onp.random.RandomState(0)
        net = vision.get_model(name, pretrained=False)
        net.initialize(mx.init.Xavier())
        size = 299 if name.startswith("inception") else 224
        x = mx.nd.array(rs.normal(size=(args.batch, 3, size, size)).astype("float32"))
        net(x)
        for k, p in net.collect_params().items():
            if k.endswith("running_mean") or k.endswith("moving_mean"):
                p.set_data(mx.nd.array(rs.normal(0, 0.1, p.shape)))
            elif k.endswith("running_var") or k.endswith("moving_var"):
                p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape)))
            elif k.endswith("gamma"):
                p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape)))
            elif k.endswith("beta") or k.endswith("bias"):
                p.set_data(mx.nd.array(rs.normal(0, 0.1, p.shape)))
        net.hybridize(static_alloc=True, static_shape=True)
        y = net(x)
        y.wait_to_read()
        prefix = os.path.join(args.outdir, f"{name}-b{args.batch}")
        net.export(prefix)
        onp.savez(prefix + "-io.npz", data=x.asnumpy(), output=y.asnumpy())
        report["models"][name] = {"batch": args.batch, "prefix": prefix,
                                  **time_forward(net, x, args.calls, args.repeats, clock)}
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
