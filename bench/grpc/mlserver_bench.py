#!/usr/bin/env python
"""hybridserve's gRPC vs MLServer 1.7.1's gRPC on the same MXNet export, one load client.

    bash bench/grpc/setup_mlserver.sh      # once: .venv-mlserver (mlserver 1.7.1, mxnet 1.9.1)
    python bench/grpc/mlserver_bench.py [--seconds 5] [--rounds 2] [--concurrency 4]
                                        [--mlserver-workers 1]

Both servers serve the same files: the demo MLP (model_store/mlp, its own weights) exported
in MXNet 1.x format by MXNet 1.9.1 (bench/server/mx_export.py, as bench/server/run.py does for
MMS: the demo export itself is 2.x format, which MXNet 1.9.1 cannot read). hybridserve serves
it with the demo's config.json (1 worker, dynamic batching), MLServer through
bench/grpc/mlserver_runtime
(MXNet 1.9.1 itself, NumpyCodec; MLServer's defaults otherwise: one parallel inference
worker, no adaptive batching). bench/grpc/oip_load.py sends the same serialized ModelInfer
(raw FP32 1x512) to both at the given concurrency for a fixed time, servers interleaved per
round; one request to each first checks that the two answer the same numbers. Prints the
median req/s, the ratio (issue 28's target: hybridserve >= 2x MLServer) and each server's CPU
time per request (every process it started: MLServer's inference workers too; on a shared
machine the steadier figure); nothing asserted.
perf_analyzer cannot drive MLServer: it asks for Triton's ModelConfig, which MLServer lacks.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import grpc
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "server"))
sys.path.insert(0, str(HERE))

from oip_load import METHOD, infer_request, run as load                     # noqa: E402
from cpu_per_request import TICK_US                                        # noqa: E402
from servers import (Server, cpu_ticks, free_port, hybridserve, loadavg,  # noqa: E402
                     stop_all)
from workload import export_models                                         # noqa: E402
from service.api.grpc.pb import grpc_service_pb2 as pb                     # noqa: E402

VENV = ROOT / ".venv-mlserver"


def mlserver(tmp: Path, export: Path, workers: int) -> Server:
    home = tmp / "mlserver"
    (home / "mlp").mkdir(parents=True)
    http, grpc_port, metrics = free_port(), free_port(), free_port()
    (home / "settings.json").write_text(json.dumps({
        "host": "127.0.0.1", "http_port": http, "grpc_port": grpc_port,
        "metrics_port": metrics, "parallel_workers": workers, "debug": False}))
    (home / "mlp" / "model-settings.json").write_text(json.dumps({
        "name": "mlp", "implementation": "mxnet_runtime.MXNetRuntime",
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}],
        "parameters": {"uri": str(export)}}))
    return Server("mlserver", f"MLServer 1.7.1 ({workers} parallel workers)",
                  [str(VENV / "bin" / "mlserver"), "start", str(home)], http,
                  env={"PYTHONPATH": str(HERE / "mlserver_runtime")}, cwd=home,
                  ready_path="/v2/models/mlp/ready", log_path=tmp / "mlserver.log",
                  grpc_port=grpc_port)


def answer(url: str, x: np.ndarray) -> np.ndarray:
    """One ModelInfer; the first output as FP32 (raw or typed contents)."""
    with grpc.insecure_channel(url) as ch:
        raw = ch.unary_unary(METHOD)(infer_request("mlp", "data", x, "FP32")
                                     .SerializeToString(), timeout=30)
    r = pb.ModelInferResponse.FromString(raw)
    o = r.outputs[0]
    flat = (np.frombuffer(r.raw_output_contents[0], np.float32) if r.raw_output_contents
            else np.asarray(o.contents.fp32_contents, np.float32))
    return flat.reshape(tuple(o.shape))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--mlserver-workers", type=int, default=1,
                    help="MLServer's parallel_workers (its default: 1; 0: in the server)")
    a = ap.parse_args()
    if not (VENV / "bin" / "mlserver").exists():
        print("no .venv-mlserver: run `bash bench/grpc/setup_mlserver.sh`", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="hs-mlserver-bench-"))
    export_models(tmp, VENV / "bin" / "python", only="mlp")
    shutil.copytree(tmp / "export" / "mlp", tmp / "store" / "mlp" / "1")
    shutil.copy(ROOT / "model_store" / "mlp" / "config.json", tmp / "store" / "mlp")
    servers = {"hybridserve": hybridserve("hs", 1, tmp / "store", tmp, {}),
               "MLServer 1.7.1": mlserver(tmp, tmp / "store" / "mlp" / "1",
                                          a.mlserver_workers)}
    got: dict[str, list[float]] = {k: [] for k in servers}
    cpu: dict[str, list[float]] = {k: [] for k in servers}
    x = np.random.default_rng(0).standard_normal((1, 512)).astype(np.float32)
    try:
        for s in servers.values():
            s.start()
        for s in servers.values():
            s.wait_ready(300)
        urls = {k: f"127.0.0.1:{s.grpc_port}" for k, s in servers.items()}
        ours, theirs = (answer(u, x) for u in urls.values())
        if ours.shape != theirs.shape or not np.allclose(ours, theirs, rtol=1e-4, atol=1e-5):
            raise RuntimeError(f"the servers disagree: {ours} vs {theirs}")
        load0 = loadavg()
        for _ in range(a.rounds):
            for k, url in urls.items():
                pids = servers[k].pids()
                c0 = cpu_ticks(pids)
                r = asyncio.run(load(url, "mlp", "data", x, "FP32", a.concurrency, a.seconds,
                                     None, False))
                if r["errors"]:
                    raise RuntimeError(f"{k}: {r['errors'][:2]}")
                got[k].append(r["rps"])
                cpu[k].append((cpu_ticks(pids) - c0) * TICK_US / max(r["requests"], 1))
        load1 = loadavg()
    except Exception:
        for s in servers.values():
            print(f"--- {s.label} log tail:\n{s.tail_log(2000)}", file=sys.stderr)
        raise
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    hs, ml = (statistics.median(v) for v in got.values())
    print(f"MLP (raw FP32 1x512) over gRPC ModelInfer, bench/grpc/oip_load.py c="
          f"{a.concurrency}, {a.rounds} rounds x {a.seconds:.0f} s, median; outputs agree; "
          f"load average {load0:.1f} -> {load1:.1f}\n")
    print("| server | req/s | rounds | server CPU µs/request |\n|---|---:|---|---:|")
    for k, v in got.items():
        print(f"| {servers[k].label} | {statistics.median(v):.0f} | {[round(r) for r in v]} | "
              f"{statistics.median(cpu[k]):.0f} |")
    print(f"\nhybridserve / MLServer: {hs / ml:.2f}x (target >= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
