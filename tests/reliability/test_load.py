"""Bounded load on loopback against a real server process: a mix of inference (MLP JSON, LeNet
binary), metadata and summaries. Zero errors; p50/p99 reported; the server's resident memory
after the run is within 10 % of what it was after the warm-up.

Default run: 1 s warm-up + 4 s at concurrency 16 (asyncio client). `-m slow`: 10 s warm-up +
60 s at concurrency 32 (wrk where installed, else the asyncio client).
"""
from __future__ import annotations

import os

import pytest

from serverproc import ServerProc

from .loadgen import WRK, run
from .relutil import make_store, record

MAX_GROWTH = 0.10


def _load(tmp_path, warm_s: float, run_s: float, concurrency: int, prefer_wrk: bool) -> dict:
    store = make_store(tmp_path / "store")
    # two inference threads on this 2-core machine (the server's default)
    srv = ServerProc(store, tmp_path / "server.log",
                     env={"HYBRIDSERVE_INFERENCE_THREADS": str(os.cpu_count() or 2)})
    srv.start()
    try:
        warm = run(srv.url, warm_s, concurrency, prefer_wrk)
        rss0 = srv.rss_bytes()
        res = run(srv.url, run_s, concurrency, prefer_wrk)
        rss1 = srv.rss_bytes()
        assert srv.alive(), srv.tail()
    finally:
        srv.stop()
    growth = (rss1 - rss0) / rss0
    fig = dict(tool=res["tool"], seconds=run_s, concurrency=concurrency,
               requests=res["requests"], errors=res["errors"], rps=res["rps"],
               p50_ms=res["p50_ms"], p99_ms=res["p99_ms"], max_ms=res["max_ms"],
               rss_after_warmup_mb=round(rss0 / 2**20, 1), rss_after_mb=round(rss1 / 2**20, 1),
               rss_growth_pct=round(100 * growth, 2))
    record("load", f"{run_s:g} s at c={concurrency}", **fig)
    assert warm["errors"] == 0, warm
    assert res["errors"] == 0, res
    assert res["requests"] > 0
    assert growth < MAX_GROWTH, fig
    return fig


def test_load_short(tmp_path):
    _load(tmp_path, warm_s=1, run_s=4, concurrency=16, prefer_wrk=False)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_load_60s_c32(tmp_path):
    _load(tmp_path, warm_s=10, run_s=60, concurrency=32, prefer_wrk=WRK is not None)
