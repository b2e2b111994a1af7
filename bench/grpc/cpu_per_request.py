#!/usr/bin/env python
"""Server CPU time per request, gRPC vs HTTP binary, on the demo MLP — the figure a shared
machine cannot spoil the way it spoils throughput.

    python bench/grpc/cpu_per_request.py [--requests 4000] [--rounds 3] [--concurrency 4]
                                         [--baseline GIT_REF] [--floor]

One hybridserve (1 worker, gRPC on) serves model_store/mlp; bench/grpc/oip_load.py sends a
fixed number of ModelInfer calls (raw tensors) or binary-tensor POSTs, transports interleaved
per round; the server's utime+stime (/proc/<pid>/stat, every thread and child) before and
after, minus what it burns idle over the same wall time, divided by the count. Prints the
median µs/request per transport; nothing is asserted. `--baseline REF` also serves the tree of
a git ref (`git archive` into a temporary folder, same venv) and interleaves the two servers
in every round: a before/after on a shared machine, where load drifts between runs.
`--floor` adds bench/grpc/grpc_echo.py (a bare grpc.aio server answering a fixed response):
what grpcio itself costs per call, below which no change of ours can go.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "server"))
sys.path.insert(0, str(HERE))

from oip_load import run as load                                   # noqa: E402
from servers import (Server, cpu_ticks, free_port, hybridserve, loadavg,   # noqa: E402
                     project_python, stop_all)

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def idle_rate(pids, seconds: float = 1.0) -> float:
    """Server CPU ticks per wall second with no request in flight (timers, pollers)."""
    t0, c0 = time.perf_counter(), cpu_ticks(pids)
    time.sleep(seconds)
    return (cpu_ticks(pids) - c0) / (time.perf_counter() - t0)


def measure(pids, url: str, http: bool, n: int, conc: int, idle: float) -> float:
    x = np.random.default_rng(0).standard_normal((1, 512)).astype(np.float32)
    c0 = cpu_ticks(pids)
    r = asyncio.run(load(url, "mlp", "data", x, "FP32", conc, None, n, http))
    ticks = cpu_ticks(pids) - c0 - idle * r["seconds"]
    if r["errors"]:
        raise RuntimeError(f"{'http' if http else 'grpc'}: {r['errors'][:2]}")
    return ticks * TICK_US / r["requests"]


def export(ref: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--baseline", metavar="GIT_REF", help="also serve this ref's tree")
    ap.add_argument("--floor", action="store_true", help="also a bare grpc.aio echo server")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hs-grpc-cpu-"))
    shutil.copytree(ROOT / "model_store" / "mlp", tmp / "store" / "mlp",
                    ignore=shutil.ignore_patterns(".*"))
    servers = {"this tree": hybridserve("hs", 1, tmp / "store", tmp, {})}
    if a.baseline:
        src = export(a.baseline, tmp / "baseline")
        base = hybridserve("base", 1, tmp / "store", tmp, {"PYTHONPATH": str(src)})
        base.cwd = src
        servers = {a.baseline: base, **servers}
    echo = None
    if a.floor:
        port = free_port()
        echo = Server("echo", "grpc.aio echo", [project_python(), str(HERE / "grpc_echo.py"),
                      str(port)], port, log_path=tmp / "echo.log", grpc_port=port)
    got = {(k, p): [] for k in [*servers, "grpc.aio echo floor"] for p in ("grpc", "http")}
    try:
        for srv in servers.values():
            srv.start()
        if echo is not None:
            echo.start()
        for srv in servers.values():
            srv.wait_ready(300)
        time.sleep(1)                   # the echo server: no HTTP to poll
        load0 = loadavg()
        for _ in range(a.rounds):
            for key, srv in servers.items():
                pids = srv.pids()
                idle = idle_rate(pids)
                for proto, port in (("grpc", srv.grpc_port), ("http", srv.port)):
                    got[key, proto].append(measure(pids, f"127.0.0.1:{port}", proto == "http",
                                                   a.requests, a.concurrency, idle))
            if echo is not None:
                pids = echo.pids()
                got["grpc.aio echo floor", "grpc"].append(measure(
                    pids, f"127.0.0.1:{echo.port}", False, a.requests, a.concurrency,
                    idle_rate(pids)))
        load1 = loadavg()
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"MLP c={a.concurrency}, {a.requests} requests x {a.rounds} rounds, 1 worker; "
          f"load average {load0:.1f} -> {load1:.1f}\n")
    print("| server | gRPC µs/req | HTTP binary µs/req | gRPC / HTTP | rounds (gRPC; HTTP) |")
    print("|---|---:|---:|---:|---|")
    for key in servers:
        g, h = (statistics.median(got[key, p]) for p in ("grpc", "http"))
        print(f"| {key} | {g:.0f} | {h:.0f} | {g / h:.2f} | "
              f"{[round(v) for v in got[key, 'grpc']]}; {[round(v) for v in got[key, 'http']]} |")
    if echo is not None:
        g = got["grpc.aio echo floor", "grpc"]
        print(f"| grpc.aio echo floor (no model) | {statistics.median(g):.0f} | — | — | "
              f"{[round(v) for v in g]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
