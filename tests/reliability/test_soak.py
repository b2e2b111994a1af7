"""Model churn under load (issue 20): while a load generator sends the inference mix at
concurrency 32, a second client uploads 46 new versions of the MLP, each with its own weights,
and after every upload checks that the new version answers correctly, reads its summary and
inspects it. Under the default version policy (latest 1) each upload unloads the previous
version once the new one serves, so: no error and no 5xx anywhere, the latest version right
after every upload, and the server's resident memory after the 46 uploads within 10 % of what
it was with one version loaded.

    pytest -m slow tests/reliability/test_soak.py        # ~3-5 min on 2 cores

Loopback only, bounded: 46 uploads, load in 10-s rounds (wrk where installed, else the asyncio
client process), stopped after the last upload (at most 60 rounds).
"""
from __future__ import annotations

import os
import threading

import httpx
import numpy as np
import pytest

from framework.io import load_params, write_npz
from serverproc import ServerProc

from .loadgen import WRK, run
from .relutil import make_store, mlp_body, record

UPLOADS = 46
CONCURRENCY = 32
ROUND_S = 10
MAX_GROWTH = 0.10


class Load:
    """The load generator, in rounds on a thread until stopped; their summaries summed."""

    def __init__(self, url: str):
        self.url, self.rounds, self.failure = url, [], None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            for _ in range(60):
                self.rounds.append(run(self.url, ROUND_S, CONCURRENCY, WRK is not None))
                if self._stop.is_set():
                    return
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.failure = e

    def __enter__(self) -> "Load":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(ROUND_S + 150)

    def total(self) -> dict:
        n = sum(r["requests"] for r in self.rounds)
        secs = sum(r["requests"] / r["rps"] for r in self.rounds if r["rps"])
        return {"tool": self.rounds[0]["tool"] if self.rounds else None, "rounds": len(self.rounds),
                "requests": n, "errors": sum(r["errors"] for r in self.rounds),
                "rps": round(n / secs, 1) if secs else 0.0,
                "p99_ms_max": max((r["p99_ms"] for r in self.rounds), default=0.0)}


def _version_files(base: dict[str, np.ndarray], k: int, symbol: bytes) -> tuple[dict, float]:
    """Version k: the MLP with its output bias shifted by k (so each version's answer is
    its own)."""
    params = dict(base)
    params["arg:2.bias"] = base["arg:2.bias"] + np.float32(k)
    return {"symbol": ("mlp-symbol.json", symbol),
            "params": ("mlp-0000.params", write_npz(params))}, float(k)


def _upload_and_check(c: httpx.Client, files: dict, want_version: str, ref: np.ndarray,
                      x: np.ndarray, statuses: dict[int, int]) -> None:
    def call(method: str, path: str, **kw) -> httpx.Response:
        r = c.request(method, path, **kw)
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code < 300, (path, r.status_code, r.text[:500])
        return r
    r = call("POST", "/v2/repository/models/mlp/upload", files=files)
    assert r.json()["version"] == want_version
    out = call("POST", "/v2/models/mlp/infer", json=mlp_body(x)).json()
    assert out["model_version"] == want_version
    got = np.asarray(out["outputs"][0]["data"], np.float32).reshape(out["outputs"][0]["shape"])
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    call("GET", "/v2/models/mlp/summary")
    call("POST", "/v2/models/mlp/inspect", json=mlp_body(x))
    ready = [row["version"] for row in call("POST", "/v2/repository/index").json()
             if row["name"] == "mlp" and row["state"] == "READY"]
    assert ready == [want_version], ready


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_46_uploads_under_load_hold_one_version(tmp_path):
    store = make_store(tmp_path / "store")
    symbol = (store / "mlp" / "1" / "mlp-symbol.json").read_bytes()
    base = load_params((store / "mlp" / "1" / "mlp-0000.params").read_bytes())
    x = np.random.default_rng(0).standard_normal((1, 512)).astype(np.float32)
    srv = ServerProc(store, tmp_path / "server.log",
                     env={"HYBRIDSERVE_INFERENCE_THREADS": str(os.cpu_count() or 2)})
    srv.start()
    statuses: dict[int, int] = {}
    try:
        with httpx.Client(base_url=srv.url, timeout=120) as c:
            base_out = np.asarray(c.post("/v2/models/mlp/infer", json=mlp_body(x))
                                  .json()["outputs"][0]["data"], np.float32).reshape(1, 2)
            warm = run(srv.url, ROUND_S, CONCURRENCY, WRK is not None)   # one version loaded
            rss_one = srv.rss_bytes()
            with Load(srv.url) as load:
                for k in range(2, UPLOADS + 2):
                    files, shift = _version_files(base, k, symbol)
                    _upload_and_check(c, files, str(k), base_out + shift, x, statuses)
            rss_after = srv.rss_bytes()            # idle again, as rss_one was
            held = c.get("/ui/api/overview").json()["memory"]
        assert srv.alive(), srv.tail()
    finally:
        srv.stop()
    tot = load.total()
    growth = (rss_after - rss_one) / rss_one
    fig = dict(uploads=UPLOADS, load_tool=tot["tool"], load_rounds=tot["rounds"],
               load_requests=tot["requests"], load_errors=tot["errors"], load_rps=tot["rps"],
               load_p99_ms_max=tot["p99_ms_max"],
               client_requests=sum(statuses.values()),
               client_5xx=sum(n for s, n in statuses.items() if s >= 500),
               rss_one_version_mb=round(rss_one / 2**20, 1),
               rss_after_mb=round(rss_after / 2**20, 1), rss_growth_pct=round(100 * growth, 2),
               models_held_mb=round(held["held_bytes"] / 2**20, 2))
    record("soak", f"{UPLOADS} uploads under load at c={CONCURRENCY}", **fig)
    assert load.failure is None, load.failure
    assert warm["errors"] == 0 and tot["errors"] == 0 and tot["requests"] > 0, (warm, tot)
    assert fig["client_5xx"] == 0
    assert growth <= MAX_GROWTH, fig
