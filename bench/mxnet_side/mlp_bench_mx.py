#!/usr/bin/env python
"""Reference timings of the seeds' benchmark MLP under REAL MXNet (1.9.1).

    bash tests/interop/setup_mxnet_venv.sh 1.9.1
    .mxnet-venvs/mxnet-1.9.1/bin/python bench/mxnet_side/mlp_bench_mx.py [--calls 1000 --repeats 5]

Model (crash-course tutorial): HybridSequential(Dense(256, relu), Dense(128, relu),
Dense(2)), input normal (1, 512), float32, CPU.  MXNet 1.x style: mx.nd arrays,
built-in (hybrid_forward-based) layers, name_scope.

Modes:
  imperative            not hybridized
  hybridize             hybridize()
  hybridize_static      hybridize(static_alloc=True, static_shape=True)
For every mode each call is followed by out.wait_to_read(), so the time of the
asynchronous engine is included.  Modes are interleaved within each repeat.  The *_wait_at_end variants only wait once after
the loop (pipelined throughput, for information).

Prints one JSON dict: per-call microseconds = median over `repeats` runs of
`calls` forwards (after `warmup` forwards), plus min and all repeats, and the
thread-related environment (OMP_NUM_THREADS, OPENBLAS_*, MXNET_*), which must be
set by the caller before this script starts (MXNet reads them at import).

Measured here (2 cores, shared with other jobs, load avg ~2): OMP_NUM_THREADS=2
(same as unset on this machine), OPENBLAS_CORETYPE unset (OpenBLAS detects the
CPU fine), default ThreadedEnginePerDevice.  Medians were noisy run to run
(imperative ~260-600 us, hybridize ~90-300 us, static ~70-160 us per call);
OMP_NUM_THREADS=1 was not faster.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings

ENV_KEYS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "MKL_NUM_THREADS",
            "MXNET_ENGINE_TYPE", "MXNET_CPU_WORKER_NTHREADS", "MXNET_CPU_PRIORITY_NTHREADS",
            "MXNET_EXEC_BULK_EXEC_INFERENCE")


def build(mx, nn):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation='relu'),
                nn.Dense(128, activation='relu'),
                nn.Dense(2))
    net.initialize(mx.init.Uniform(0.07))
    return net


def time_loop(net, x, calls, wait_each):
    if wait_each:
        t0 = time.perf_counter()
        for _ in range(calls):
            net(x).wait_to_read()
        t1 = time.perf_counter()
    else:
        t0 = time.perf_counter()
        for _ in range(calls):
            y = net(x)
        y.wait_to_read()
        t1 = time.perf_counter()
    return (t1 - t0) / calls * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=200)
    args = ap.parse_args()

    warnings.simplefilter("ignore")
    import mxnet as mx
    from mxnet import nd
    from mxnet.gluon import nn

    mx.random.seed(0)
    x = nd.random.normal(shape=(1, 512))

    modes = {
        "imperative": None,
        "hybridize": {},
        "hybridize_static": {"static_alloc": True, "static_shape": True},
    }
    nets = {}
    for name, flags in modes.items():
        net = build(mx, nn)
        if flags is not None:
            net.hybridize(**flags)
        for _ in range(args.warmup):
            net(x).wait_to_read()
        assert net(x).asnumpy().shape == (1, 2)
        nets[name] = net

    # Interleave the modes inside every repeat so that background load on the
    # (shared, 2-core) machine hits all modes alike.
    reps = {}
    for _ in range(args.repeats):
        for name, net in nets.items():
            for wait_each, suffix in ((True, ""), (False, "_wait_at_end")):
                reps.setdefault(name + suffix, []).append(time_loop(net, x, args.calls, wait_each))
    results = {
        key: {
            "median_us": round(statistics.median(r), 2),
            "min_us": round(min(r), 2),
            "repeats_us": [round(v, 2) for v in r],
        }
        for key, r in reps.items()
    }

    report = {
        "mxnet_version": mx.__version__,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "calls": args.calls,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "env": {k: os.environ.get(k) for k in ENV_KEYS},
        "per_call_us": {k: v["median_us"] for k, v in results.items()},
        "detail": results,
    }
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
