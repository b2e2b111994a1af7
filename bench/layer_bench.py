#!/usr/bin/env python
"""Where a compiled model's time goes, layer by layer, and what a kernel choice changes.

Two builds of one export (optimize_for, backend 'hybridserve') run ALTERNATELY in one process:
the model's own Winograd choice against im2col everywhere. Every `_hs_conv2d` call is timed;
the table keeps, per conv geometry, the best of the rounds for each build. On this VM separate
processes differ by 10–20 % for identical code, and even four identical builds alternating in
one process came out 39–49 ms on ResNet-18: trust only differences well beyond that (stage 1
of ResNet-18: 7 ms with Winograd against 14 ms with im2col, every run).

With `--gemms`, every `np.matmul` of the model's own build is timed instead and grouped by
shape (batch, M, K, N), with its GFLOP/s: which GEMMs run below BLAS speed.

    python bench/layer_bench.py PREFIX [--threads 1|2] [--rounds 8] [--gemms]

PREFIX is an export (`PREFIX-symbol.json`, `-0000.params`, `-io.npz`), e.g. one that
bench/zoo_bench.py wrote. `--threads` is the BLAS thread count (kernels serial).
"""
from __future__ import annotations

import argparse
import collections
import time
import warnings

import numpy as np

from common import sys_path_root

sys_path_root()


def build(prefix: str, choose_tile):
    from framework import np as fnp
    from framework.gluon import SymbolBlock
    from framework.ops._kernels import winograd
    io = np.load(prefix + "-io.npz")
    x = fnp.array(io["data"])
    real, winograd.choose_tile = winograd.choose_tile, choose_tile
    try:
        blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
        blk.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
        blk(x)
    finally:
        winograd.choose_tile = real
    return blk, x


def conv_table(prefix: str, rounds: int) -> None:
    from framework.ops._kernels import winograd
    from framework.ops.compiled import nhwc
    real_tile = winograd.choose_tile

    def im2col(*_a, **_k):
        return 0
    builds = {"chosen": (build(prefix, real_tile), real_tile), "im2col": (build(prefix, im2col),
                                                                          im2col)}
    real_conv = nhwc.conv2d_nhwc
    calls: dict = collections.defaultdict(float)

    def timed(*a, **k):
        t0 = time.perf_counter()
        r = real_conv(*a, **k)
        calls[(a[0].shape, a[4], a[5])] += time.perf_counter() - t0
        return r
    best: dict = collections.defaultdict(lambda: float("inf"))
    total: dict = collections.defaultdict(lambda: float("inf"))
    nhwc.conv2d_nhwc = timed
    try:
        for _ in range(rounds):
            for name, ((blk, x), tile) in builds.items():
                # the per-call choice of GEMM-layout weights follows the same policy
                winograd.choose_tile = tile
                calls.clear()
                t0 = time.perf_counter()
                blk(x)
                total[name] = min(total[name], time.perf_counter() - t0)
                for key, t in calls.items():
                    best[(name,) + key] = min(best[(name,) + key], t)
    finally:
        nhwc.conv2d_nhwc, winograd.choose_tile = real_conv, real_tile
    keys = sorted({k[1:] for k in best}, key=lambda k: -best[("im2col",) + k])
    print("| input (NHWC or NCHW) | kernel | stride | im2col ms | model's choice ms |")
    print("|---|---|---|---:|---:|")
    for k in keys:
        print(f"| {k[0]} | {k[1]} | {k[2]} | {best[('im2col',) + k] * 1e3:.2f} | "
              f"{best[('chosen',) + k] * 1e3:.2f} |")
    print(f"\nwhole forward (best of {rounds}): im2col {total['im2col'] * 1e3:.1f} ms, "
          f"model's choice {total['chosen'] * 1e3:.1f} ms")


def gemm_table(prefix: str, rounds: int) -> None:
    from framework.ops._kernels import winograd
    blk, x = build(prefix, winograd.choose_tile)
    real = np.matmul
    acc: dict = collections.defaultdict(lambda: [0.0, 0.0, 0])

    def timed(a, b, *r, **k):
        t0 = time.perf_counter()
        out = real(a, b, *r, **k)
        batch = a.shape[0] if a.ndim == 3 else 1
        key = (batch,) + tuple(a.shape[-2:]) + (b.shape[-1],)
        e = acc[key]
        e[0] += time.perf_counter() - t0
        e[1] += 2.0 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
        e[2] += 1
        return out
    t0 = time.perf_counter()
    for _ in range(rounds):
        blk(x)
    plain = (time.perf_counter() - t0) / rounds
    np.matmul = timed
    try:
        for _ in range(rounds):
            blk(x)
    finally:
        np.matmul = real
    spent = sum(e[0] for e in acc.values()) / rounds
    print(f"forward {plain * 1e3:.1f} ms; in np.matmul {spent * 1e3:.1f} ms "
          f"({sum(e[1] for e in acc.values()) / rounds / 1e9:.2f} GFLOP)\n")
    print("| batch × M × K × N | calls | ms | GFLOP/s |")
    print("|---|---:|---:|---:|")
    for k, (t, f, c) in sorted(acc.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f"| {k[0]} × {k[1]} × {k[2]} × {k[3]} | {c // rounds} | {t / rounds * 1e3:.2f} | "
              f"{f / t / 1e9:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefix")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (1)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--gemms", action="store_true", help="time every np.matmul instead")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    from threadpoolctl import threadpool_limits
    with threadpool_limits(args.threads, user_api="blas"):
        (gemm_table if args.gemms else conv_table)(args.prefix, args.rounds)


if __name__ == "__main__":
    main()
