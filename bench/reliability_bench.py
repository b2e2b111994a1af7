"""Issue 26 reliability bench: hostile bodies, memory given back, slow clients, inspection cap.

Each case runs against a real `python -m service` process on a temp copy of the demo store (plus
a randomly initialised ResNet-18 for the inspection case), on 127.0.0.1 and a free port, while a
prober asks `/v2/health/live` back to back and a sampler reads the server's resident memory and
open file descriptors every 50 ms. Per case: status codes, the longest liveness answer during
it (the stall), RSS before / peak / 20 s after, fds before / peak / after.

    python bench/reliability_bench.py                   # this checkout, every case
    python bench/reliability_bench.py --repo /work/main --cases many_inputs,slow_clients
    python bench/reliability_bench.py --json out.json   # rows as JSON too

`--repo` serves another checkout (its .venv when it has one): the same bench before a change.
Bounded: each request has a 120 s timeout, the slow-client case lasts at most 60 s.
"""
from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MiB = 1 << 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    return 0


def rss(pid: int) -> int:
    return _status(pid, "VmRSS:")


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Server:
    def __init__(self, repo: Path, store: Path, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        py = repo / ".venv" / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRIDSERVE_")}
        env.update(PYTHONPATH=str(repo), HYBRIDSERVE_INFERENCE_THREADS="1")
        self.proc = subprocess.Popen(
            [str(py if py.exists() else sys.executable), "-m", "service", "--model-store",
             str(store), "--host", "127.0.0.1", "--port", str(self.port), "--log-level",
             "warning"], cwd=repo, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        end = time.monotonic() + 180
        while time.monotonic() < end:
            try:
                if httpx.get(self.url + "/v2/health/ready", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"server not ready: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def _probe(url: str, stop, worst) -> None:
    """Ask /v2/health/live back to back until `stop`; the longest answer into `worst`. A
    process of its own: the bench's own work (building and sending 50 MiB bodies) would
    otherwise hold the prober's GIL and show up as the server's stall."""
    with httpx.Client(base_url=url, timeout=120) as c:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                c.get("/v2/health/live")
            except httpx.HTTPError:
                pass
            worst.value = max(worst.value, time.perf_counter() - t)
            time.sleep(0.02)


class Watch:
    """Liveness prober (a process) + RSS/fd sampler (a thread) while a case runs."""

    def __init__(self, srv: Server):
        ctx = mp.get_context("spawn")
        self.srv, self.stop_ev, self.stop_probe = srv, threading.Event(), ctx.Event()
        self.worst = ctx.Value("d", 0.0)
        self.rss_peak = self.fds_peak = 0
        self.prober = ctx.Process(target=_probe, args=(srv.url, self.stop_probe, self.worst),
                                  daemon=True)
        self.sampler = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "Watch":
        self.prober.start()
        self.sampler.start()
        time.sleep(1.0)                      # the prober is up and asking
        return self

    def __exit__(self, *exc) -> None:
        self.stop_ev.set()
        self.stop_probe.set()
        self.sampler.join(10)
        self.prober.join(130)

    @property
    def live_max(self) -> float:
        return self.worst.value

    def _sample(self) -> None:
        pid = self.srv.proc.pid
        while not self.stop_ev.is_set():
            self.rss_peak = max(self.rss_peak, rss(pid))
            self.fds_peak = max(self.fds_peak, fds(pid))
            time.sleep(0.05)


def mlp_body(n: int, rows_of: bytes = b"0") -> bytes:
    return (b'{"inputs":[{"name":"data","shape":[%d,512],"datatype":"FP32","data":[' % n
            + b",".join([rows_of] * (n * 512)) + b"]}]}")


def many_inputs_body(n: int = 800_000) -> bytes:
    one = b'{"name":"i%d","shape":[1],"datatype":"FP32","data":[1]}'
    return b'{"inputs":[' + b",".join(one % i for i in range(n)) + b"]}"


def post(url: str, body: bytes, **headers) -> tuple[int, float]:
    t = time.perf_counter()
    r = httpx.post(url, content=body, timeout=120,
                   headers={"content-type": "application/json", **headers})
    return r.status_code, time.perf_counter() - t


def case(srv: Server, name: str, run, settle_s: float = 20.0) -> dict:
    pid = srv.proc.pid
    time.sleep(1.0)
    rss0, fds0 = rss(pid), fds(pid)
    with Watch(srv) as w:
        figures = run()
    time.sleep(settle_s)
    row = {"case": name, **figures,
           "live_max_s": round(w.live_max, 3),
           "rss_before_mib": round(rss0 / MiB, 1), "rss_peak_mib": round(w.rss_peak / MiB, 1),
           "rss_after_mib": round(rss(pid) / MiB, 1), "after_s": settle_s,
           "fds_before": fds0, "fds_peak": w.fds_peak, "fds_after": fds(pid)}
    print(json.dumps(row), flush=True)
    return row


def run_hostile_bodies(srv: Server) -> list[dict]:
    url = srv.url + "/v2/models/mlp/infer"
    many = many_inputs_body()
    over = mlp_body(60_000)
    rows = [case(srv, "baseline: 5 s without requests (this machine's noise)",
                 lambda: (time.sleep(5), {"status": "-"})[1], settle_s=0.0),
            case(srv, f"800 000 one-element inputs ({len(many) / MiB:.0f} MiB)",
                 lambda: dict(zip(("status", "seconds"), post(url, many)))),
            case(srv, f"the same gzipped ({len(gzip.compress(many, 6)) / MiB:.1f} MiB)",
                 lambda: dict(zip(("status", "seconds"),
                                  post(url, gzip.compress(many, 6), **{"content-encoding": "gzip"})))),
            case(srv, f"60000x512 FP32 over max batch 64 ({len(over) / MiB:.0f} MiB)",
                 lambda: dict(zip(("status", "seconds"), post(url, over))))]
    del many, over

    big, bad = mlp_body(64, b"0.123456789"), mlp_body(30_000, b"0.5")

    def burst() -> dict:
        codes = [post(url, big)[0] for _ in range(40)]
        codes += [post(url, bad)[0] for _ in range(5)]
        return {"status": f"{codes.count(200)}x200, {codes.count(400)}x400"}
    rows.append(case(srv, "burst: 40 valid 64x512 (0.7 MiB) + 5 refused 30000x512 (44 MiB)",
                     burst))
    return rows


def run_inspection(srv: Server, has_resnet: bool) -> list[dict]:
    if not has_resnet:
        return []
    import numpy as np
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    body = json.dumps({"inputs": [{"name": "data", "shape": [1, 3, 224, 224],
                                   "datatype": "FP32", "data": x.ravel().tolist()}],
                       "parameters": {"include_values": True, "max_values": 100_000}}).encode()
    url = srv.url + "/v2/models/resnet18/inspect"

    def one() -> dict:
        t = time.perf_counter()
        r = httpx.post(url, content=body, timeout=120,
                       headers={"content-type": "application/json"})
        return {"status": r.status_code, "seconds": round(time.perf_counter() - t, 2),
                "response_mib": round(len(r.content) / MiB, 1)}
    return [case(srv, "ResNet-18 inspection, include_values, max_values 100000", one)]


def run_slow_clients(srv: Server, n_header: int = 2000, n_body: int = 50) -> list[dict]:
    def run() -> dict:
        base = fds(srv.proc.pid) + 10          # "near baseline"
        socks = []
        for k in range(n_header + n_body):
            try:
                s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            except OSError:
                break
            if k < n_header:
                s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Ty")
            else:
                s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Type: "
                          b"application/json\r\nContent-Length: 60000000\r\n\r\n{\"inputs\":[")
            socks.append(s)
        opened = len(socks)
        body = mlp_body(1, b"0.5")
        t0, codes, slowest = time.monotonic(), [], 0.0
        while time.monotonic() - t0 < 5:                 # normal clients meanwhile
            code, dt = post(srv.url + "/v2/models/mlp/infer", body)
            codes.append(code)
            slowest = max(slowest, dt)
        end = time.monotonic() + 55
        while time.monotonic() < end and fds(srv.proc.pid) > base:
            time.sleep(0.5)
        back = round(time.monotonic() - t0, 1)
        held = fds(srv.proc.pid)                         # before the bench lets go
        for s in socks:
            s.close()
        return {"status": f"normal clients {codes.count(200)}/{len(codes)} x200, slowest "
                          f"{slowest:.2f} s; fds held at the end: {held}", "seconds": back,
                "stalled_opened": opened}
    return [case(srv, f"{n_header} half headers + {n_body} stalled 60 MB bodies", run,
                 settle_s=2.0)]


def resnet_into(store: Path) -> bool:
    """A randomly initialised ResNet-18 export (this checkout's framework) in the store."""
    try:
        sys.path.insert(0, str(ROOT))
        from framework import np
        from framework.gluon.model_zoo.vision import resnet18_v1
    except ImportError:
        return False
    d = store / "resnet18" / "1"
    d.mkdir(parents=True)
    net = resnet18_v1()
    net.initialize()
    net.hybridize()
    net(np.zeros((1, 3, 224, 224)))
    net.export(str(d / "resnet18"))
    (store / "resnet18" / "config.json").write_text(json.dumps(
        {"name": "resnet18", "max_batch_size": 8,
         "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 224, 224]}]}))
    return True


def table(rows: list[dict]) -> str:
    keys = ["case", "status", "seconds", "live_max_s", "rss_before_mib", "rss_peak_mib",
            "rss_after_mib", "after_s", "fds_before", "fds_peak", "fds_after"]
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=ROOT)
    ap.add_argument("--cases", default="bodies,inspection,slow_clients")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    wanted = set(args.cases.split(","))
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="relbench-") as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(ROOT / "model_store", store, ignore=shutil.ignore_patterns(".*"))
        has_resnet = "inspection" in wanted and resnet_into(store)
        srv = Server(args.repo.resolve(), store, Path(tmp) / "server.log")
        try:
            if "bodies" in wanted:
                rows += run_hostile_bodies(srv)
            if "inspection" in wanted:
                rows += run_inspection(srv, has_resnet)
            if "slow_clients" in wanted:
                rows += run_slow_clients(srv)
        finally:
            srv.stop()
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
