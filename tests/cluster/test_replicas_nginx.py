"""Two real server processes sharing one model store, behind a real nginx running deploy/nginx.conf.

- test_killed_replica_loses_no_request: inference through the balancer while one replica is
  SIGKILLed halfway with requests in flight on it; nginx's retry must hide the death (zero
  failed requests).
- test_upload_reaches_every_replica: an upload through the balancer lands on one replica; every
  replica must serve it within a bounded time (issue 6, "Replicas agree"), then the same kill.

Loopback only, bounded loops. Skipped when nginx is not installed
(scripts/install_system_deps.sh installs it). Run: pytest -m slow tests/cluster
"""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest

from nginx_util import NGINX, SKIP_REASON, nginx_cmd, site_for, write_main_conf
from serverproc import ROOT, ServerProc, copy_store, free_port, infer_json

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(NGINX is None, reason=SKIP_REASON)]

MX1 = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
N_REQUESTS = 200           # per kill test; the replica dies at request N_REQUESTS // 2
CONCURRENCY = 4            # so that some requests are in flight on the replica when it dies
AGREE_WITHIN_S = 20.0      # bound for an upload to become READY on every replica


class ReplicasDisagree(AssertionError):
    """A model change made through one replica did not reach every replica in time."""


def wait_http(url: str, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"{url}: process exited {proc.returncode}\n{tail(log)}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} not ready within {timeout}s\n{tail(log)}")


def tail(p: Path, n: int = 3000) -> str:
    return p.read_text(errors="replace")[-n:] if p.exists() else "(no log)"


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class Cluster:
    def __init__(self, tmp: Path, n: int = 2):
        self.tmp, self.n = tmp, n
        self.replicas: list[ServerProc] = []
        self.nginx: subprocess.Popen | None = None

    def start(self) -> None:
        tmp, n = self.tmp, self.n
        # one shared copy of the shipped store (without dot-dirs: staging/trash debris)
        self.store = copy_store(tmp / "store")
        # started together, then waited for (ServerProc keeps the caller's HYBRIDSERVE_* out)
        self.replicas = [ServerProc(self.store, tmp / f"replica{i}.log") for i in range(n)]
        self.ports = [r.port for r in self.replicas]
        for r in self.replicas:
            r.start(wait=0)
        self.nginx_port = free_port()
        conf = write_main_conf(tmp / "nginx", site_for(
            [f"127.0.0.1:{p}" for p in self.ports], f"127.0.0.1:{self.nginx_port}"))
        self.nginx_log = tmp / "nginx" / "error.log"
        for r in self.replicas:
            r.wait_ready(90)
        self.nginx = subprocess.Popen(nginx_cmd(conf, "-g", "daemon off;"),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.nginx_port}"
        wait_http(f"{self.url}/v2/health/live", 15, self.nginx, self.nginx_log)

    def replica_url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def kill(self, i: int) -> None:
        self.replicas[i].kill9()                     # no graceful shutdown: a crash

    def logs_text(self) -> str:
        return "\n".join([*(f"--- {r.log.name}\n{r.tail(3000)}" for r in self.replicas),
                          f"--- {self.nginx_log.name}\n{tail(self.nginx_log)}"])

    def close(self) -> None:
        if self.nginx is not None:
            stop(self.nginx)
        for r in self.replicas:
            r.stop()


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        c.start()   # inside the try: a replica that fails to start must not leak the others
        yield c
    finally:
        c.close()


def requests_served(url: str, model: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("hybridserve_inference_requests_total{")
               and f'model="{model}"' in line)


def infer_while_killing(cluster: Cluster, model: str, x: np.ndarray, victim: int) -> list:
    """N_REQUESTS inferences through nginx, CONCURRENCY at a time; replica `victim` is
    SIGKILLed halfway with requests in flight on it. Returns (status, body) per request.

    A proxy can retry a request only until the first byte of the answer has reached it: a
    replica killed between writing its response headers and its body cuts that response, and
    no balancer can replay it. So that the kill lands on requests that are in flight but not
    yet answered (the case nginx must cover), the victim is frozen (SIGSTOP) once the first
    half is fully answered, requests pile up on it, and then it is killed."""
    body = infer_json(model, x)
    lock, in_flight = threading.Lock(), [0]

    def one(i: int):
        with lock:
            in_flight[0] += 1
        try:
            r = client.post(f"/v2/models/{model}/infer", json=body)
            return r.status_code, r.json() if r.status_code == 200 else r.text
        except httpx.HTTPError as e:  # a request the balancer lost
            return -1, repr(e)
        finally:
            with lock:
                in_flight[0] -= 1

    half = N_REQUESTS // 2
    with httpx.Client(base_url=cluster.url, timeout=60) as client, \
            ThreadPoolExecutor(CONCURRENCY) as pool:
        results = list(pool.map(one, range(half)))
        cluster.replicas[victim].proc.send_signal(signal.SIGSTOP)      # idle now: every answer so far delivered
        rest = [pool.submit(one, i) for i in range(half, N_REQUESTS)]
        # round-robin sends every other request to the frozen replica: wait (bounded) until
        # every worker is stuck on it, i.e. nothing completes any more
        end, done = time.monotonic() + 10, -1
        while time.monotonic() < end:
            time.sleep(0.3)
            now = sum(f.done() for f in rest)
            if now == done:
                break
            done = now
        with lock:
            stuck = in_flight[0]
        cluster.kill(victim)
        results += [f.result(timeout=120) for f in rest]
    assert stuck >= 1, "no request was in flight on the replica when it was killed"
    return results


def outputs(results: list) -> np.ndarray:
    return np.stack([np.asarray(b["outputs"][0]["data"], np.float32)
                     .reshape(b["outputs"][0]["shape"]) for _, b in results])


def assert_none_failed(results: list, cluster: Cluster) -> None:
    failed = [(i, s, b) for i, (s, b) in enumerate(results) if s != 200]
    assert not failed, (f"{len(failed)}/{len(results)} requests failed, first: {failed[:3]}\n"
                        f"{cluster.logs_text()}")


def test_killed_replica_loses_no_request(cluster):
    x = np.random.default_rng(0).standard_normal((1, 512), dtype=np.float32)
    # warm-up through the balancer: both replicas must be taking traffic before the kill
    with httpx.Client(base_url=cluster.url, timeout=30) as c:
        for _ in range(10):
            assert c.post("/v2/models/mlp/infer", json=infer_json("mlp", x)).status_code == 200
    served = [requests_served(cluster.replica_url(i), "mlp") for i in range(2)]
    assert all(n > 0 for n in served), f"round-robin did not reach every replica: {served}"

    results = infer_while_killing(cluster, "mlp", x, victim=0)
    assert_none_failed(results, cluster)
    outs = outputs(results)
    np.testing.assert_allclose(outs, np.broadcast_to(outs[0], outs.shape), rtol=1e-5, atol=1e-6)
    # the survivor took over
    assert requests_served(cluster.replica_url(1), "mlp") > served[1] + N_REQUESTS // 4


def wait_ready_everywhere(cluster: Cluster, model: str) -> None:
    end = time.monotonic() + AGREE_WITHIN_S
    states = {}
    while time.monotonic() < end:
        states = {}
        for i in range(len(cluster.ports)):
            try:
                states[i] = httpx.get(f"{cluster.replica_url(i)}/v2/models/{model}/ready",
                                      timeout=5).status_code
            except httpx.HTTPError as e:
                states[i] = repr(e)
        if all(s == 200 for s in states.values()):
            return
        time.sleep(0.25)
    raise ReplicasDisagree(f"model '{model}' uploaded through the balancer is not READY on "
                           f"every replica within {AGREE_WITHIN_S}s: {states}")


def test_upload_reaches_every_replica(cluster):
    io = np.load(MX1 / "fc_flatten-io.npz")
    x, ref = io["data"], io["output"]
    files = {"symbol": ("fc_flatten-symbol.json", (MX1 / "fc_flatten-symbol.json").read_bytes()),
             "params": ("fc_flatten-0000.params", (MX1 / "fc_flatten-0000.params").read_bytes())}
    r = httpx.post(f"{cluster.url}/v2/repository/models/fc_flatten/upload", files=files,
                   timeout=60)
    assert r.status_code == 201, r.text
    assert r.json()["version"] == "1"

    wait_ready_everywhere(cluster, "fc_flatten")

    # every replica answers directly with MXNet 1.9.1's recorded output
    for i in range(len(cluster.ports)):
        r = httpx.post(f"{cluster.replica_url(i)}/v2/models/fc_flatten/infer",
                       json=infer_json("fc_flatten", x), timeout=30)
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        np.testing.assert_allclose(np.asarray(out["data"], np.float32).reshape(out["shape"]),
                                   ref, rtol=1e-4, atol=1e-5)
    # and through the balancer, with one replica killed halfway
    results = infer_while_killing(cluster, "fc_flatten", x, victim=0)
    assert_none_failed(results, cluster)
    np.testing.assert_allclose(outputs(results), np.broadcast_to(ref, (N_REQUESTS, *ref.shape)),
                               rtol=1e-4, atol=1e-5)
