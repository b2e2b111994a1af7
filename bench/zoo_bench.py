#!/usr/bin/env python
"""Model-zoo inference: hybridserve vs real MXNet 1.9.1 on the SAME exported files, one run.

MXNet (its venv) builds each model with random weights, exports it, and times its static
hybridized forward; hybridserve imports that export (SymbolBlock.imports), checks its output
against MXNet's, and times its own forward:

* `hybridize`  — `hybridize(static_alloc=True, static_shape=True, backend="numpy")`: the NumPy
                 reference engine (BLAS's own threads);
* `opt`        — `optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)`
                 with BLAS's own threads (OpenBLAS, 2 threads here);
* `opt_intra`  — the same, built and run with the kernels' intra-op threads (ops/parallel.py:
                 every heavy op split in row blocks over 2 threads, BLAS single-threaded);
* `ort` (--ort) — `optimize_for(x, backend="onnxruntime", intra_op_threads=2)`: the graph's
                 ONNX-expressible regions run by warm ONNX Runtime sessions; with --cpu also
                 its single-threaded CPU time (`intra_op_threads=1`) against MXNet's;
* `hyb_default` (--ort) — `hybridize()` and nothing else: the default engine (ONNX Runtime,
                 issue 31), threads as the user set them (here: 2 cores; with --cpu
                 OMP_NUM_THREADS=1): its figures should equal the `ort` ones.

Each mode, and the single-threaded CPU measurement, gets its own build (the intra-op threads
are set before `optimize_for`, as a user would).

The MXNet side runs twice (before and after hybridserve's timing) and the better of the two is
kept, so that background load on a shared machine hits both sides alike. Times are the median
over `repeats` of `calls` forwards (also the minimum, less sensitive to load). Also reported:
the fraction of the machine's measured float32 GEMM peak, the build time (imports +
optimize_for + first call), and for `--memory` models the peak memory of a forward (tracemalloc,
in a fresh process) against 2x the parameter bytes plus the largest activation set.

    python bench/zoo_bench.py --models resnet18_v1:1,16 resnet50_v1 mobilenetv2_1.0 densenet121 \
        --memory resnet50_v1 --write bench/RESULTS.md
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from common import ROOT, machine, run_mxnet_side, sys_path_root

sys_path_root()


def gemm_peak_gflops(n: int = 1024, repeats: int = 10) -> float:
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    c = np.empty((n, n), np.float32)
    np.matmul(a, b, out=c)
    best = 1e9
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def graph_stats(sym, data_shape) -> tuple[int, int]:
    """(FLOPs, largest activation set in bytes: max over ops of input + output activations)."""
    from framework.symbol.infer import infer_shapes
    shapes = infer_shapes(sym, {"data": data_shape})
    total, largest = 0, 0
    for n in sym.topo():
        if n.is_var:
            continue
        ins = [shapes.get((id(s), i)) for s, i in n.inputs]
        outs = [shapes.get((id(n), i)) for i in range(n.num_visible())]
        act = sum(4 * int(np.prod(s)) for (src, _), s in zip(n.inputs, ins)
                  if s is not None and not src.is_var)
        act += sum(4 * int(np.prod(s)) for s in outs if s is not None)
        largest = max(largest, act)
        if n.op.flops is None or any(s is None for s in ins + outs):
            continue
        total += int(n.op.flops(n.parsed, ins, outs))
    return total, largest


def time_ms(fn, calls: int, repeats: int, clock=time.perf_counter) -> tuple[float, float]:
    for _ in range(2):
        fn()
    reps = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(calls):
            fn()
        reps.append((clock() - t0) / calls * 1e3)
    return statistics.median(reps), min(reps)


def cpu_ms(blk, x, calls: int, repeats: int) -> float:
    """CPU milliseconds of the whole process per forward, everything single-threaded: the total
    work, which background load on a shared machine barely changes (unlike wall time)."""
    from threadpoolctl import threadpool_limits
    set_policy(1)
    with threadpool_limits(1, user_api="blas"):
        return time_ms(lambda: blk(x), calls, repeats, time.process_time)[0]


def load(prefix: str, backend: str | None, **opts):
    from framework import np as fnp
    from framework.gluon import SymbolBlock
    io = np.load(prefix + "-io.npz")
    x = fnp.array(io["data"])
    t0 = time.perf_counter()
    blk = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    if backend == "default":
        blk.hybridize()                     # what a Gluon user writes: the default engine
    elif backend:
        blk.optimize_for(x, backend=backend, static_alloc=True, static_shape=True, **opts)
    else:
        blk.hybridize(static_alloc=True, static_shape=True, backend="numpy")
    y = blk(x).asnumpy()
    return blk, x, y, io, time.perf_counter() - t0


def memory_probe(prefix: str, backend: str | None) -> dict:
    """Peak traced memory (NumPy buffers included) of the forward, in this fresh process."""
    import resource
    import tracemalloc
    import warnings
    warnings.simplefilter("ignore")
    from framework.io.params_file import load_params
    param_bytes = sum(v.nbytes for v in load_params(prefix + "-0000.params").values())
    tracemalloc.start()
    blk, x, _, _, _ = load(prefix, backend)
    build_peak = tracemalloc.get_traced_memory()[1]
    resident = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    blk(x).asnumpy()
    cur, peak = tracemalloc.get_traced_memory()
    return {"param_bytes": param_bytes, "resident_before_forward": resident,
            "forward_peak": peak, "forward_extra": peak - resident, "build_peak": build_peak,
            "maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def set_policy(intra: int) -> None:
    from framework.ops import parallel
    parallel.set_intra_op_threads(intra)


def bench_model(prefix: str, mx_ms: float, args) -> dict:
    import warnings
    warnings.simplefilter("ignore")
    set_policy(1)
    plain, x, y_plain, io, _ = load(prefix, None)
    ref = io["output"]
    bound = 1e-4 * max(1.0, float(np.abs(ref).max()))
    opt, x, y_opt, _, build_s = load(prefix, "hybridserve")
    row = {"err_plain": float(np.abs(y_plain - ref).max()),
           "err_opt": float(np.abs(y_opt - ref).max()), "bound": bound,
           "build_s": round(build_s, 3)}
    row["hybridize_ms"], row["hybridize_min"] = time_ms(lambda: plain(x), args.calls, args.repeats)
    row["opt_ms"], row["opt_min"] = time_ms(lambda: opt(x), args.calls, args.repeats)
    # each mode gets its own build, made with its threading in force
    set_policy(2)
    intra, x, y2, _, _ = load(prefix, "hybridserve")
    row["err_intra"] = float(np.abs(y2 - ref).max())
    row["opt_intra_ms"], row["opt_intra_min"] = time_ms(lambda: intra(x), args.calls, args.repeats)
    set_policy(1)
    del intra
    if args.cpu:
        from threadpoolctl import threadpool_limits
        with threadpool_limits(1, user_api="blas"):
            serial, x, _, _, _ = load(prefix, "hybridserve")
        row["hs_cpu_ms"] = round(cpu_ms(serial, x, args.calls, args.repeats), 2)
    if args.ort:
        row.update(bench_ort(prefix, ref, args))
    flops, largest = graph_stats(plain._cached_graph[1], tuple(io["data"].shape))
    row["gflop"] = round(flops / 1e9, 3)
    row["largest_act_bytes"] = largest
    return row


def bench_ort(prefix: str, ref: np.ndarray, args) -> dict:
    """The ONNX Runtime engine: `optimize_for(backend='onnxruntime')` with 2 intra-op threads
    (wall time) and with 1 (single-threaded CPU time, the server's case)."""
    set_policy(1)
    blk, x, y, _, build_s = load(prefix, "onnxruntime", intra_op_threads=2)
    row = {"err_ort": float(np.abs(y - ref).max()), "ort_build_s": round(build_s, 3)}
    row["ort_ms"], row["ort_min"] = time_ms(lambda: blk(x), args.calls, args.repeats)
    del blk
    if args.cpu:
        serial, x, _, _, _ = load(prefix, "onnxruntime", intra_op_threads=1)
        row["ort_cpu_ms"] = round(cpu_ms(serial, x, args.calls, args.repeats), 2)
        del serial
    plain, x, y, _, build_s = load(prefix, "default")
    row["err_hyb_default"] = float(np.abs(y - ref).max())
    row["hyb_default_ms"], row["hyb_default_min"] = time_ms(lambda: plain(x), args.calls,
                                                            args.repeats)
    del plain
    if args.cpu:
        os.environ["OMP_NUM_THREADS"] = "1"          # the user's setting, read by the engine
        try:
            serial, x, _, _, _ = load(prefix, "default")
        finally:
            del os.environ["OMP_NUM_THREADS"]
        row["hyb_default_cpu_ms"] = round(cpu_ms(serial, x, args.calls, args.repeats), 2)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["resnet18_v1"],
                    help="name or name:b1,b2 (batch sizes; default 1)")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--memory", nargs="*", default=[], help="models whose b1 peak memory to probe")
    ap.add_argument("--write", help="write the results table (markdown) to this file")
    ap.add_argument("--cpu", action="store_true",
                    help="also compare single-threaded CPU time per forward (load-robust)")
    ap.add_argument("--ort", action="store_true",
                    help="also time the ONNX Runtime engine (optimize_for backend='onnxruntime')")
    ap.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)     # internal: prefix backend
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(memory_probe(args.probe[0], None if args.probe[1] == "-" else args.probe[1])))
        return

    outdir = tempfile.mkdtemp(prefix="hs-zoo-")
    jobs: dict[int, list[str]] = {}
    for spec in args.models:
        name, _, bs = spec.partition(":")
        for b in (bs.split(",") if bs else ["1"]):
            jobs.setdefault(int(b), []).append(name)
    peak2 = gemm_peak_gflops()
    rows = []
    for batch, names in sorted(jobs.items()):
        mxargs = ["--models", ",".join(names), "--batch", str(batch), "--calls",
                  str(max(2, args.calls // batch)), "--repeats", str(args.repeats)]
        env = {"OMP_NUM_THREADS": "2"}
        mx1 = run_mxnet_side("zoo_bench_mx.py", outdir, *mxargs, env=env)
        if mx1 is None:
            sys.exit("the MXNet 1.9.1 venv is missing: bash tests/interop/setup_mxnet_venv.sh 1.9.1")
        ours = {}
        for name in names:
            m = mx1["models"][name]
            a = argparse.Namespace(calls=max(2, args.calls // batch), repeats=args.repeats,
                                   cpu=args.cpu, ort=args.ort)
            ours[name] = bench_model(m["prefix"], m["per_call_ms"], a)
        mx2 = run_mxnet_side("zoo_bench_mx.py", outdir, *mxargs, env=env)
        mxc = run_mxnet_side("zoo_bench_mx.py", outdir, *mxargs, "--clock", "process",
                             env={"OMP_NUM_THREADS": "1"}) \
            if args.cpu else None
        for name in names:
            m1, m2 = mx1["models"][name], mx2["models"][name]
            r = ours[name]
            mx_ms = min(m1["per_call_ms"], m2["per_call_ms"])
            mx_min = min(m1["min_ms"], m2["min_ms"])
            best = min(r["opt_ms"], r["opt_intra_ms"], r["hybridize_ms"])
            best_min = min(r["opt_min"], r["opt_intra_min"], r["hybridize_min"])
            rows.append({"model": name, "batch": batch, "mxnet_ms": round(mx_ms, 2),
                         "mxnet_min_ms": round(mx_min, 2),
                         **{k: (round(v, 2) if isinstance(v, float) and k.endswith(("ms", "min"))
                                else v) for k, v in r.items()},
                         "ratio": round(best / mx_ms, 3), "ratio_min": round(best_min / mx_min, 3),
                         "per_image_ms": round(best / batch, 2),
                         **({"mx_cpu_ms": mxc["models"][name]["per_call_ms"],
                             "cpu_ratio": round(r["hs_cpu_ms"] / mxc["models"][name]["per_call_ms"], 3)}
                            if mxc else {}),
                         **(ort_ratios(r, mx_ms, mxc["models"][name]["per_call_ms"] if mxc
                                       else None, batch) if args.ort else {}),
                         "peak_fraction": round(r["gflop"] / (best / 1e3) / peak2, 3)})
    mem = {}
    for name in args.memory:
        prefix = os.path.join(outdir, f"{name}-b1")
        if not os.path.exists(prefix + "-symbol.json"):
            run_mxnet_side("zoo_bench_mx.py", outdir, "--models", name, "--batch", "1",
                           "--calls", "2", "--repeats", "1", env={"OMP_NUM_THREADS": "2"})
        largest = next((r["largest_act_bytes"] for r in rows
                        if r["model"] == name and r["batch"] == 1), None)
        for backend in ("hybridserve", "-"):
            out = subprocess.run([sys.executable, __file__, "--probe", prefix, backend],
                                 capture_output=True, text=True, check=True)
            d = json.loads(out.stdout.strip().splitlines()[-1])
            d["largest_act_bytes"] = largest
            mem[(name, "optimize_for" if backend != "-" else "hybridize")] = d
    report(rows, mem, peak2, args)


def ort_ratios(r: dict, mx_ms: float, mx_cpu_ms: float | None, batch: int) -> dict:
    out = {"ort_ratio": round(r["ort_ms"] / mx_ms, 3),
           "ort_per_image_ms": round(r["ort_ms"] / batch, 2),
           "hyb_default_ratio": round(r["hyb_default_ms"] / mx_ms, 3)}
    if mx_cpu_ms and "ort_cpu_ms" in r:
        out["ort_cpu_ratio"] = round(r["ort_cpu_ms"] / mx_cpu_ms, 3)
        out["hyb_default_cpu_ratio"] = round(r["hyb_default_cpu_ms"] / mx_cpu_ms, 3)
    return out


def report(rows, mem, peak2, args) -> None:
    mach = machine()
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    cols = ["model", "batch", "mxnet_ms", "hybridize_ms", "opt_ms", "opt_intra_ms", "ratio",
            "mxnet_min_ms", "ratio_min", "per_image_ms", "peak_fraction", "build_s", "gflop",
            "err_opt", "bound"]
    if rows and "cpu_ratio" in rows[0]:
        cols[-2:-2] = ["mx_cpu_ms", "hs_cpu_ms", "cpu_ratio"]
    if rows and "ort_ratio" in rows[0]:
        cols[-2:-2] = ["ort_ms", "ort_ratio", "hyb_default_ms", "hyb_default_ratio",
                       "ort_per_image_ms", "ort_build_s", "err_ort", "err_hyb_default"] + \
            (["ort_cpu_ms", "ort_cpu_ratio", "hyb_default_cpu_ms", "hyb_default_cpu_ratio"]
             if "ort_cpu_ratio" in rows[0] else [])
    lines = [f"Run {now}; GEMM peak (1024³ sgemm, OpenBLAS 2 threads) {peak2:.0f} GFLOP/s",
             f"Machine: {json.dumps(mach)}", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(
            (f"{r[c]:.1e}" if c in ("err_opt", "err_ort", "err_hyb_default", "bound")
             else str(r[c]))
            for c in cols) + " |")
    if mem:
        lines += ["", "| model (b1) | path | params MB | resident before forward MB | forward "
                  "peak MB | forward extra MB | largest activation set MB | target MB "
                  "(2x params + largest) | maxrss MB |", "|---|---|---|---|---|---|---|---|---|"]
        for (name, path), d in mem.items():
            mb = 1 / 2 ** 20
            tgt = 2 * d["param_bytes"] + (d["largest_act_bytes"] or 0)
            lines.append(f"| {name} | {path} | {d['param_bytes'] * mb:.1f} | "
                         f"{d['resident_before_forward'] * mb:.1f} | {d['forward_peak'] * mb:.1f} | "
                         f"{d['forward_extra'] * mb:.1f} | {(d['largest_act_bytes'] or 0) * mb:.1f} | "
                         f"{tgt * mb:.1f} | {d['maxrss_bytes'] * mb:.0f} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        with open(args.write, "a") as f:
            f.write("\n" + text + "\n")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
