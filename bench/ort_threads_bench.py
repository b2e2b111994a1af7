#!/usr/bin/env python
"""ONNX Runtime session threads under concurrency: what one shared session per model should use.

    python bench/ort_threads_bench.py PREFIX [--threads 1 2] [--callers 1 2 4] [--rounds 5]

Builds one session per configuration (intra-op threads, spinning or not) the way the
onnxruntime backend does (parameters as external initializers), then, round after round and
alternating the configurations, lets `callers` Python threads call `run` on the same session
(as the server's inference threads do) and reports, per configuration and caller count, the
median forwards per second and the process CPU milliseconds per forward (the work: threads that
spin or oversubscribe show up there even when other load on the machine hides it in wall time).
PREFIX names an export with `PREFIX-symbol.json` and `PREFIX-0000.params`.
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time

import numpy as np

from common import machine, sys_path_root

sys_path_root()


def session(prefix: str, threads: int, spinning: bool, shape: tuple):
    import framework  # noqa: F401 - registers the ops
    from framework.io import load_params, strip_prefixes
    from framework.onnx.build import lower_symbol
    from framework.onnx.runtime import SessionConfig, make_session
    from framework.symbol import load
    sym = load(prefix + "-symbol.json")
    with open(prefix + "-0000.params", "rb") as f:
        params = strip_prefixes(load_params(f.read()))
    external: dict = {}
    model = lower_symbol(sym, params, {"data": shape}, external=external)
    return make_session(model, SessionConfig(None, threads, spinning), external)


def rate(sess, x: np.ndarray, callers: int, calls: int) -> tuple[float, float]:
    """(forwards per second, CPU ms per forward) of `callers` threads sharing `sess`."""
    def work() -> None:
        for _ in range(calls):
            sess.run(None, {"data": x})
    threads = [threading.Thread(target=work) for _ in range(callers)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n = callers * calls
    return n / (time.perf_counter() - t0), 1000 * (time.process_time() - c0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--callers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=6)
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()
    shape = (args.batch, 3, 224, 224)
    x = np.random.default_rng(0).random(shape, np.float32)
    configs = {f"{t} thr{' spin' if spin else ''}": session(args.prefix, t, spin, shape)
               for t in args.threads for spin in ((False, True) if t > 1 else (False,))}
    for s in configs.values():
        rate(s, x, 1, 2)                                   # warm
    got: dict = {}
    for _ in range(args.rounds):
        for c in args.callers:
            for name, s in configs.items():
                got.setdefault((name, c), []).append(rate(s, x, c, args.calls))
    print(f"machine: {machine()}")
    print("| callers | " + " | ".join(f"{n}: fwd/s, CPU ms/fwd" for n in configs) + " |")
    print("|---|" + "---|" * len(configs))
    for c in args.callers:
        cells = [f"{statistics.median(r[0] for r in got[(n, c)]):.1f}, "
                 f"{statistics.median(r[1] for r in got[(n, c)]):.1f}" for n in configs]
        print(f"| {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
