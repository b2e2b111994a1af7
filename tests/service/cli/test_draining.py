"""Graceful shutdown (service/cli/draining.py): at SIGTERM readiness turns 503 first while the
server still serves for --drain-s; then it stops accepting and exits; an in-flight request
started before the signal finishes."""
from __future__ import annotations

import signal
import time

import httpx
import numpy as np

from serverproc import ServerProc, copy_store, infer_json


def test_sigterm_turns_readiness_off_then_drains_and_exits(tmp_path):
    srv = ServerProc(copy_store(tmp_path / "store", ("mlp",)), tmp_path / "server.log",
                     env={"HYBRIDSERVE_DRAIN_S": "3"})
    srv.start()
    try:
        body = infer_json("mlp", np.ones((1, 512), np.float32))
        with httpx.Client(base_url=srv.url, timeout=10) as http:
            assert http.get("/v2/health/ready").status_code == 200
            t0 = time.monotonic()
            srv.proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            # draining: not ready, but alive and still serving (new connections too)
            r = httpx.get(srv.url + "/v2/health/ready", timeout=5)
            assert r.status_code == 503 and "shutting down" in r.text, r.text
            assert httpx.get(srv.url + "/v2/health/live", timeout=5).status_code == 200
            assert http.post("/v2/models/mlp/infer", json=body).status_code == 200
            srv.proc.wait(30)
            elapsed = time.monotonic() - t0
        # uvicorn re-raises the signal it caught once it is done: a clean exit by SIGTERM
        assert srv.proc.returncode in (0, -signal.SIGTERM), srv.tail()
        assert elapsed >= 2.5, elapsed            # it waited for the drain period first
        try:
            httpx.get(srv.url + "/v2/health/live", timeout=2)
            raise AssertionError("still accepting after shutdown")
        except httpx.ConnectError:
            pass
    finally:
        srv.stop()
