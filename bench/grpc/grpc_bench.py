#!/usr/bin/env python
"""gRPC vs HTTP binary throughput of one hybridserve, side by side, same client.

    python bench/grpc/grpc_bench.py [--seconds 3] [--rounds 2] [--client perf_analyzer|python]
                                    [--only mlp|resnet18]

Serves the demo MLP (model_store/mlp: 512-256-128-2, dynamic batching) and ResNet-18 v1
(hybridserve's model zoo, seeded weights, FP32 1x3x224x224 tensors, no batching) from one
`python -m service` (1 worker) with gRPC on, and loads each model over gRPC (raw tensors) and
over HTTP (Triton's binary tensor extension), cases interleaved per round so drift of a shared
machine hits both alike:
- the MLP at concurrency 4 (issue 28's target: gRPC >= 1.0x HTTP binary);
- ResNet-18 at concurrency 2 (target: gRPC >= 1.0x HTTP binary).
The client is Triton's perf_analyzer (`-i grpc` / `-i http`, built by
bench/grpc/setup_perf_analyzer.sh into .venv-perf) when present, else a closed-loop Python
client of our own (tritonclient grpc/http, one thread per concurrent request). Prints a table
(median req/s per case, the ratio) and the load average; nothing is asserted.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "server"))

from servers import hybridserve, loadavg, stop_all             # noqa: E402

PERF = ROOT / "bench" / "grpc" / "perf_analyzer.sh"
CASES = [("mlp", (1, 512), 4), ("resnet18", (1, 3, 224, 224), 2)]


def build_store(root: Path, resnet: bool = True) -> Path:
    import framework as mx
    from framework.gluon.model_zoo.vision import resnet18_v1
    shutil.copytree(ROOT / "model_store" / "mlp", root / "mlp",
                    ignore=shutil.ignore_patterns(".*"))
    if not resnet:
        return root
    mx.random.seed(0)
    net = resnet18_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.np.zeros((1, 3, 224, 224)))
    (root / "resnet18" / "1").mkdir(parents=True)
    net.export(str(root / "resnet18" / "1" / "resnet18"))
    (root / "resnet18" / "config.json").write_text(
        '{"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 224, 224]}], '
        '"outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 1000]}], '
        '"max_batch_size": 1}')
    return root


def perf_analyzer(model: str, shape, conc: int, proto: str, url: str, seconds: float) -> float:
    cmd = ["bash", str(PERF), "-m", model, "-u", url, "-i", proto, "-b", "1",
           "--concurrency-range", str(conc), "-p", str(int(seconds * 1000)),
           "--max-trials", "5", "--stability-percentage", "999", "--shape", "data:" + ",".join(map(str, shape[1:]))]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30 + 10 * seconds)
    m = re.findall(r"Throughput: ([\d.]+) infer/sec", out.stdout)
    if out.returncode != 0 and not m:
        raise RuntimeError(f"perf_analyzer failed: {out.stdout[-1500:]}{out.stderr[-1500:]}")
    return float(m[-1])


def python_client(model: str, shape, conc: int, proto: str, url: str, seconds: float) -> float:
    """Closed loop: `conc` threads, each with its own client, for `seconds` after a warm-up."""
    if proto == "grpc":
        import tritonclient.grpc as tc
    else:
        import tritonclient.http as tc
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    counts = [0] * conc
    stop = threading.Event()
    go = threading.Barrier(conc + 1)

    def loop(k: int) -> None:
        c = tc.InferenceServerClient(url)
        i = tc.InferInput("data", list(shape), "FP32")
        i.set_data_from_numpy(x)
        outs = [tc.InferRequestedOutput("output")]
        for _ in range(3):
            c.infer(model, [i], outputs=outs)
        go.wait()
        while not stop.is_set():
            c.infer(model, [i], outputs=outs)
            counts[k] += 1
        c.close()
    threads = [threading.Thread(target=loop, args=(k,)) for k in range(conc)]
    for t in threads:
        t.start()
    go.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    n0 = sum(counts)
    stop.set()
    took = time.perf_counter() - t0
    for t in threads:
        t.join(30)
    return n0 / took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="measurement window per case")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", choices=[c[0] for c in CASES], help="one model (quicker)")
    ap.add_argument("--client", choices=("perf_analyzer", "python"),
                    default="perf_analyzer" if (ROOT / ".venv-perf" / "bin" / "perf_analyzer")
                    .exists() else "python")
    args = ap.parse_args()
    cases = [c for c in CASES if args.only in (None, c[0])]
    run = perf_analyzer if args.client == "perf_analyzer" else python_client
    tmp = Path(tempfile.mkdtemp(prefix="hs-grpc-bench-"))
    store = build_store(tmp / "store", resnet=any(c[0] == "resnet18" for c in cases))
    srv = hybridserve("hs", 1, store, tmp, {})
    results: dict[tuple, list[float]] = {}
    try:
        srv.start()
        srv.wait_ready(300)
        urls = {"grpc": f"127.0.0.1:{srv.grpc_port}", "http": f"127.0.0.1:{srv.port}"}
        load0 = loadavg()
        for _ in range(args.rounds):
            for model, shape, conc in cases:
                for proto in ("grpc", "http"):
                    rps = run(model, shape, conc, proto, urls[proto], args.seconds)
                    results.setdefault((model, conc, proto), []).append(rps)
        load1 = loadavg()
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    lines = ["| model | concurrency | gRPC req/s | HTTP binary req/s | gRPC / HTTP |",
             "|---|---|---|---|---|"]
    for model, _, conc in cases:
        g = statistics.median(results[(model, conc, "grpc")])
        h = statistics.median(results[(model, conc, "http")])
        lines.append(f"| {model} | {conc} | {g:.0f} | {h:.0f} | {g / h:.2f}x |")
    print(f"client: {args.client}; 1 worker; {args.rounds} rounds x {args.seconds:.0f} s per "
          f"case, median; load average {load0:.1f} -> {load1:.1f} (shared machine)\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
