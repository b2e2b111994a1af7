"""Real test servers on free loopback ports, the one place tests start them:

- `inproc_server`: uvicorn serving `create_app` in a thread of the test process (service, ui
  and reliability tests; the app and its core are reachable for white-box checks);
- `ServerProc`: a `python -m service` process (cluster and reliability tests): start, wait
  until ready, SIGKILL, restart on the same store, read its resident memory.

Also a temp copy of the shipped store, a v2 JSON request body, and a polling wait.
Import it as `from serverproc import ...` (pyproject's pytest `pythonpath` has tests/).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "model_store"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_store(dst: Path, models: tuple[str, ...] | None = None) -> Path:
    """A temp copy of the shipped model_store (without dot-files), optionally some models only."""
    if models is None:
        shutil.copytree(STORE, dst, ignore=shutil.ignore_patterns(".*"))
    else:
        dst.mkdir(parents=True)
        for m in models:
            shutil.copytree(STORE / m, dst / m, ignore=shutil.ignore_patterns(".*"))
    return dst


@contextmanager
def inproc_server(store: Path, protocol: type | None = None, **overrides
                  ) -> Iterator[SimpleNamespace]:
    """uvicorn serving `create_app(Settings(...))` in a thread (no signal handlers off the main
    thread); yields url, hostport, grpc (its gRPC host:port), store, app, core and settings.
    `overrides` are Settings fields (defaults here: warning log level, 2 inference threads,
    gRPC on a free port); `protocol` one of service/api/connguard's HTTP protocol classes
    (default: the one `serve` uses)."""
    import uvicorn

    from service.api.app import create_app
    from service.api.connguard import uvicorn_options
    from service.settings import Settings
    port = free_port()
    settings = Settings(**{"model_store": store, "port": port, "log_level": "warning",
                           "inference_threads": 2, "grpc_port": free_port(), **overrides})
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level=settings.log_level, access_log=False,
                                           lifespan="on", log_config=None,
                                           **uvicorn_options(settings, *([protocol] if protocol else []))))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    end = time.time() + 60
    while not server.started:
        if not th.is_alive() or time.time() > end:
            raise RuntimeError("server did not start")
        time.sleep(0.02)
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{port}", hostport=f"127.0.0.1:{port}",
                              grpc=f"127.0.0.1:{settings.grpc_port}",
                              store=store, app=app, core=app.state.core, settings=settings)
    finally:
        server.should_exit = True
        th.join(20)


class ServerProc:
    def __init__(self, store: Path, log: Path, env: dict[str, str] | None = None,
                 port: int | None = None):
        self.store, self.log = store, log
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # nothing from the caller's HYBRIDSERVE_* settings (e.g. a token) leaks in
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRIDSERVE_")}
        # gRPC off unless a test asks for it (its default port 8001 is one per host)
        self.env.update(HYBRIDSERVE_INFERENCE_THREADS="1", HYBRIDSERVE_GRPC_PORT="0",
                        PYTHONPATH=str(ROOT))
        self.env.update(env or {})
        self.proc: subprocess.Popen | None = None

    def start(self, wait: float = 90.0, **env: str) -> "ServerProc":
        e = {**self.env, **env}
        with open(self.log, "ab") as f:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "service", "--model-store", str(self.store),
                 "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
                cwd=ROOT, env=e, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if wait:
            self.wait_ready(wait)
        return self

    def wait_ready(self, timeout: float = 90.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited {self.proc.returncode}\n{self.tail()}")
            try:
                if httpx.get(self.url + "/v2/health/ready", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"server not ready within {timeout}s\n{self.tail()}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(15)

    def stop(self) -> None:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill9()

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else "(no log)"


def wait_for(pred, timeout: float, what: str, interval: float = 0.1):
    """Poll `pred()` until truthy (returned), else AssertionError naming `what`."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = pred()
            if last:
                return last
        except httpx.HTTPError as e:
            last = repr(e)
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout}s (last: {last!r})")


def infer_json(name: str, x: np.ndarray, input_name: str = "data", **extra) -> dict:
    """A v2 JSON inference request body with one input tensor (`name`, the model's, only names
    the target at the call site: it is not part of the body)."""
    from service.protocol.datatypes import v2_datatype
    body = {"inputs": [{"name": input_name, "shape": list(x.shape),
                        "datatype": v2_datatype(x.dtype), "data": x.ravel().tolist()}]}
    body.update(extra)
    return body
