"""docker-compose.yml for real: three replicas on one store volume, nginx (deploy/nginx.conf) in
front, Prometheus (deploy/prometheus.yml) scraping. nginx and Prometheus are stand-ins built
from Debian's packages under the compose file's tags (tests/container/standins). Published on
127.0.0.1 only (a compose override: the file itself publishes nginx on every address; the
override also checks health every 2 s, not 10 s, so that the waits are short).

One stack, in order: it comes up healthy; nginx spreads inference over every replica;
Prometheus scrapes every replica; a replica killed during a bounded load through nginx loses
no request; a rolling restart (`docker restart` of each replica in turn: SIGTERM, grace
period, start, wait until healthy) under load through nginx loses none either."""
from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import httpx
import numpy as np
import pytest

from docker_engine import ROOT, Engine

pytestmark = pytest.mark.timeout(900)

STANDINS = Path(__file__).parent / "standins"
REPLICAS = ("hybridserve-1", "hybridserve-2", "hybridserve-3")
# published on loopback only; health checked every 2 s instead of 10 s (the waits below)
OVERRIDE = """\
x-fast-health: &fast-health
  healthcheck:
    interval: 2s
services:
  hybridserve-1: *fast-health
  hybridserve-2: *fast-health
  hybridserve-3: *fast-health
  nginx:
    ports: !override
      - "127.0.0.1::8080"
  prometheus:
    ports: !override
      - "127.0.0.1::9090"
"""


def _standin_tags() -> dict[str, str]:
    import yaml
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    return {"nginx": services["nginx"]["image"], "prometheus": services["prometheus"]["image"]}


class Stack:
    def __init__(self, engine: Engine, tmp: Path):
        self.e = engine
        self.project = f"hstest{uuid.uuid4().hex[:8]}"
        override = tmp / "override.yml"
        override.write_text(OVERRIDE)
        self.args = ["-p", self.project, "-f", str(ROOT / "docker-compose.yml"), "-f", str(override)]

    def compose(self, *args: str, **kw):
        return self.e.compose(*self.args, *args, **kw)

    def container(self, service: str) -> str:
        return self.compose("ps", "-aq", service).stdout.split()[0]

    def port(self, service: str, port: int) -> int:
        return int(self.compose("port", service, str(port)).stdout.strip().rpartition(":")[2])

    def logs(self) -> str:
        return self.compose("logs", "--tail", "30", "--no-color", check=False).stdout[-8000:]


@pytest.fixture(scope="module")
def stack(engine, image, tmp_path_factory):
    for name, tag in _standin_tags().items():
        engine.docker("build", "-q", "-t", tag, "-f", str(STANDINS / f"{name}.Dockerfile"),
                      str(STANDINS), timeout=900, env={"DOCKER_BUILDKIT": "1"})
    s = Stack(engine, tmp_path_factory.mktemp("compose"))
    try:
        s.compose("up", "-d", "--no-build", "--wait", "--wait-timeout", "240", timeout=300)
        yield s
    except Exception:
        print(s.logs())
        raise
    finally:
        s.compose("down", "-v", "--remove-orphans", "-t", "5", check=False, timeout=180)


def _replica_metric(stack: Stack, service: str, model: str) -> float:
    code = ("import urllib.request;print(urllib.request.urlopen("
            "'http://127.0.0.1:8000/metrics',timeout=5).read().decode())")
    text = stack.e.docker("exec", stack.container(service), "python", "-c", code).stdout
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
               if l.startswith("hybridserve_inference_requests_total{") and f'model="{model}"' in l)


def _mlp_body(seed: int) -> dict:
    x = np.random.default_rng(seed).standard_normal((1, 512)).astype(np.float32)
    return {"inputs": [{"name": "data", "shape": [1, 512], "datatype": "FP32", "data": x.ravel().tolist()}]}


class Load:
    """CONCURRENCY clients sending inferences through nginx until stopped (or MAX_S / MAX_N):
    every answer that is not a 200 with an output, and every transport error, is a loss."""
    CONCURRENCY, MAX_S, MAX_N = 4, 240.0, 20000

    def __init__(self, url: str):
        self.url, self.ok, self.failures = url, 0, []
        self.stop_evt, self.lock = threading.Event(), threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(k,)) for k in range(self.CONCURRENCY)]

    def _run(self, k: int) -> None:
        body, end = _mlp_body(k), time.monotonic() + self.MAX_S
        with httpx.Client(base_url=self.url, timeout=60) as http:
            while not self.stop_evt.is_set() and time.monotonic() < end:
                with self.lock:
                    if self.ok + len(self.failures) >= self.MAX_N:
                        return
                try:
                    r = http.post("/v2/models/mlp/infer", json=body)
                    good = r.status_code == 200 and r.json()["outputs"][0]["shape"] == [1, 2]
                    outcome = None if good else f"{r.status_code} {r.text[:200]}"
                except httpx.HTTPError as e:
                    outcome = repr(e)
                with self.lock:
                    if outcome is None:
                        self.ok += 1
                    else:
                        self.failures.append(outcome)

    def __enter__(self) -> "Load":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_evt.set()
        for t in self.threads:
            t.join(90)

    def wait_for(self, n: int, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while self.ok < n and time.monotonic() < end:
            time.sleep(0.05)


def test_stack_comes_up_and_balances(stack):
    for svc in REPLICAS:
        assert stack.e.inspect(stack.container(svc), "{{.State.Health.Status}}") == "healthy"
    url = f"http://127.0.0.1:{stack.port('nginx', 8080)}"
    before = {svc: _replica_metric(stack, svc, "mlp") for svc in REPLICAS}
    with httpx.Client(base_url=url, timeout=60) as http:
        for i in range(30):
            r = http.post("/v2/models/mlp/infer", json=_mlp_body(i))
            assert r.status_code == 200, r.text
    served = {svc: _replica_metric(stack, svc, "mlp") - before[svc] for svc in REPLICAS}
    assert sum(served.values()) == 30 and all(v > 0 for v in served.values()), served


def test_prometheus_scrapes_every_replica(stack):
    url = f"http://127.0.0.1:{stack.port('prometheus', 9090)}/api/v1/targets"
    end, health = time.monotonic() + 90, {}
    while time.monotonic() < end:     # the first scrape comes within one interval (15 s)
        doc = json.load(urllib.request.urlopen(url, timeout=10))
        health = {t["labels"]["instance"]: t["health"] for t in doc["data"]["activeTargets"]}
        if health and all(h == "up" for h in health.values()):
            break
        time.sleep(1)
    assert health == {f"{svc}:8000": "up" for svc in REPLICAS}, health


def test_killed_replica_loses_no_request(stack):
    victim = stack.container("hybridserve-2")
    with Load(f"http://127.0.0.1:{stack.port('nginx', 8080)}") as load:
        load.wait_for(100)
        # frozen first, so that requests pile up in flight on it and none is killed halfway
        # through writing its answer (which no balancer can repair), then killed
        stack.e.docker("pause", victim)
        time.sleep(1.0)
        stack.e.docker("kill", victim)
        n = load.ok
        load.wait_for(n + 150)
    assert load.ok >= 250 and load.failures == [], (load.ok, load.failures[:5])
    if stack.e.inspect(victim, "{{.State.Status}}") != "running":
        stack.e.docker("start", victim)
    stack.e.wait_healthy(victim, 180)


def test_rolling_restart_loses_no_request(stack):
    with Load(f"http://127.0.0.1:{stack.port('nginx', 8080)}") as load:
        load.wait_for(50)
        for svc in REPLICAS:
            c = stack.container(svc)
            started = stack.e.inspect(c, "{{.State.StartedAt}}")
            # SIGTERM, then the compose file's stop_grace_period before a SIGKILL
            stack.e.docker("restart", c, timeout=120)
            assert stack.e.inspect(c, "{{.State.StartedAt}}") != started
            stack.e.wait_healthy(c, 180)
            n = load.ok
            load.wait_for(n + 30)
    assert load.failures == [], (load.ok, load.failures[:5])
    assert load.ok >= 140
