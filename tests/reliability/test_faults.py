"""Faults: the server is SIGKILLed at every step of an upload, a replace and a delete
(`HYBRIDSERVE_CRASH_AT`, see service/repository/faults.py), at random moments of large uploads, and in
the middle of inference under load; after a restart the store is consistent (no debris, every
version complete and loadable, manifest agreeing), nothing committed is lost, and it serves.
A model whose forward raises affects no other model.

Default run: one crash point and the forward-raises check; `-m slow`: all of it."""
from __future__ import annotations

import asyncio
import base64
import random
import shutil
import threading
import time

import httpx
import numpy as np
import pytest

from serverproc import ServerProc
from service.repository.recovery import recover
from service.repository.store import ModelStore

from .relutil import (MX1, check_consistent, fixture_files, inproc_server, make_store,
                      mlp_body, record)

FC = ("fc_flatten-symbol.json", "fc_flatten-0000.params")
# point → (operation, fc versions that must exist after the restart)
POINTS = {"upload.received": ("upload", ["1"]), "upload.validated": ("upload", ["1"]),
          "commit.renamed": ("upload", ["1", "2"]), "commit.config": ("upload", ["1", "2"]),
          "manifest.tmp_written": ("upload", ["1", "2"]),
          "commit.replaced": ("replace", ["1"]), "delete.trashed": ("delete", [])}


def seeded_store(tmp_path):
    """mlp + fc (version 1, a real MXNet 1.9.1 export), with its manifest written."""
    store = make_store(tmp_path / "store", ("mlp",))
    (store / "fc" / "1").mkdir(parents=True)
    for f in FC:
        shutil.copy(MX1 / f, store / "fc" / "1" / f)
    recover(ModelStore(store))                 # publishes the first manifest
    return store


def operate(srv: ServerProc, op: str) -> None:
    """Start `op`; the server dies in the middle of it, so no answer is expected."""
    try:
        if op == "upload":
            cfg = {"description": "v2", "inputs": [{"name": "data", "shape": [-1, 3, 4, 4]}]}
            import json
            files = {**fixture_files(), "config": ("config.json", json.dumps(cfg))}
            httpx.post(f"{srv.url}/v2/repository/models/fc/upload", files=files, timeout=60)
        elif op == "replace":
            params = {f"file:1/{f}": base64.b64encode((MX1 / f).read_bytes()).decode()
                      for f in FC}
            httpx.post(f"{srv.url}/v2/repository/models/fc/load",
                       json={"parameters": params}, timeout=60)
        else:
            httpx.delete(f"{srv.url}/v2/models/fc", timeout=60)
    except httpx.HTTPError:
        pass


def restart_and_check(srv: ServerProc, in_process: bool = False) -> dict[str, list[str]]:
    """Restart on the same store (recovery runs at startup: as a new process, or — quicker,
    for the default run — as an in-process server), then check store and serving."""
    if in_process:
        with inproc_server(srv.store) as s:
            return _check(s.url, srv.store)
    srv.start()
    return _check(srv.url, srv.store)


def _check(url: str, store) -> dict[str, list[str]]:
    models = check_consistent(store)
    with httpx.Client(base_url=url, timeout=30) as c:
        assert c.post("/v2/models/mlp/infer", json=mlp_body()).status_code == 200
        for m, vs in models.items():
            for v in vs:        # the default version policy serves the latest version only
                ready = c.get(f"/v2/models/{m}/versions/{v}/ready").status_code == 200
                assert ready == (v == max(vs, key=int)), (m, v)
    return models


def crash_at(tmp_path, point: str, in_process: bool = False) -> None:
    op, want = POINTS[point]
    store = seeded_store(tmp_path)
    srv = ServerProc(store, tmp_path / "server.log")
    srv.start(HYBRIDSERVE_CRASH_AT=point)
    operate(srv, op)
    assert srv.proc.wait(30) == -9, f"no crash at {point}\n{srv.tail()}"
    try:
        models = restart_and_check(srv, in_process)
    finally:
        srv.stop()
    assert models.get("fc", []) == want, (point, models)
    assert models["mlp"] == ["1"]
    record("faults", f"kill -9 at {point}", restarted=True, consistent=True,
           fc_versions=",".join(want) or "none")


def test_crash_in_upload_commit(tmp_path):
    crash_at(tmp_path, "commit.renamed", in_process=True)


@pytest.mark.slow
@pytest.mark.parametrize("point", [p for p in POINTS if p != "commit.renamed"])
def test_crash_at_every_point(tmp_path, point):
    crash_at(tmp_path, point)


def big_model(d) -> dict:
    """A 2048x4096 dense layer (32 MiB of params): an upload long enough to be killed in."""
    import framework as mx
    from framework.gluon import nn
    net = nn.Dense(2048, in_units=4096)
    net.initialize()
    net.hybridize()
    net(mx.np.zeros((1, 4096), dtype="float32"))
    net.export(str(d / "big"), epoch=0)
    return {"symbol": ("big-symbol.json", (d / "big-symbol.json").read_bytes()),
            "params": ("big-0000.params", (d / "big-0000.params").read_bytes())}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_kill_at_random_moments_of_uploads(tmp_path):
    """One upload is timed (T); then uploads are killed at 0.1 T ... 1.1 T (plus jitter):
    while streaming, validating, committing, and just after."""
    files = big_model(tmp_path)
    store = seeded_store(tmp_path)
    srv = ServerProc(store, tmp_path / "server.log")
    rng = random.Random(7)
    outcomes = []
    try:
        srv.start()
        t0 = time.perf_counter()
        r = httpx.post(f"{srv.url}/v2/repository/models/big/upload", files=files, timeout=120)
        took = time.perf_counter() - t0
        assert r.status_code == 201, r.text
        for frac in (0.1, 0.3, 0.5, 0.7, 0.9, 1.1):
            before = len(check_consistent(store).get("big", []))
            t = threading.Thread(target=lambda: _post_quietly(srv, files))
            t.start()
            time.sleep(took * frac * rng.uniform(0.9, 1.1))
            srv.kill9()
            t.join(60)
            models = restart_and_check(srv)
            outcomes.append(len(models.get("big", [])) - before)
            assert outcomes[-1] in (0, 1)
    finally:
        srv.stop()
    record("faults", "kill -9 at 0.1-1.1 x the time of a 32 MiB upload",
           upload_seconds=round(took, 2), kills=len(outcomes), landed=sum(outcomes),
           absent=len(outcomes) - sum(outcomes), consistent_after_each=True)


def _post_quietly(srv: ServerProc, files: dict) -> None:
    try:
        httpx.post(f"{srv.url}/v2/repository/models/big/upload", files=files, timeout=60)
    except httpx.HTTPError:
        pass


async def _hammer(url: str, seconds: float, concurrency: int = 8) -> list:
    """Inference from `concurrency` clients for `seconds` (or until the server is gone)."""
    out: list = []
    end = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=url, timeout=30) as c:
        async def worker():
            while time.perf_counter() < end:
                try:
                    out.append((await c.post("/v2/models/mlp/infer", json=mlp_body())
                                ).status_code)
                except httpx.HTTPError as e:
                    out.append(type(e).__name__)
                    return
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


@pytest.mark.slow
def test_kill_during_inference(tmp_path):
    store = seeded_store(tmp_path)
    srv = ServerProc(store, tmp_path / "server.log")
    srv.start()
    try:
        killer = threading.Timer(1.0, srv.kill9)
        killer.start()
        got = asyncio.run(_hammer(srv.url, 3.0))
        killer.join()
        assert not srv.alive()
        models = restart_and_check(srv)
        again = asyncio.run(_hammer(srv.url, 2.0))
    finally:
        srv.stop()
    assert models == {"fc": ["1"], "mlp": ["1"]}
    assert got.count(200) > 0 and again and set(again) == {200}, (got[-10:], again[-10:])
    record("faults", "kill -9 during inference (8 clients)", answered_before_kill=got.count(200),
           cut_by_the_kill=len(got) - got.count(200),
           served_after_restart=f"{again.count(200)}/{len(again)}")


def test_forward_raising_model_is_isolated(tmp_path):
    """`bad` (a copy of the MLP whose forward raises) fails alone: concurrent requests to the
    other models all succeed, and `bad`'s own batcher keeps answering (with errors)."""
    store = make_store(tmp_path / "store")
    shutil.copytree(store / "mlp", store / "bad")
    with inproc_server(store, inline_max_flops=0) as srv:
        mv = srv.core.registry.get("bad")

        def boom(arrays):
            raise RuntimeError("forward exploded")
        mv.batcher._run = boom
        mv.runner.run = boom

        async def mixed():
            async with httpx.AsyncClient(base_url=srv.url, timeout=30) as c:
                x = np.zeros((1, 1, 28, 28), np.float32)
                lenet = {"inputs": [{"name": "data", "shape": [1, 1, 28, 28],
                                     "datatype": "FP32", "data": x.ravel().tolist()}]}
                reqs = [c.post(f"/v2/models/{m}/infer", json=lenet if m == "lenet"
                               else mlp_body()) for m in ["bad", "mlp", "lenet"] * 40]
                return await asyncio.gather(*reqs)
        rs = asyncio.run(mixed())
        by = {m: [r.status_code for r in rs[k::3]] for k, m in enumerate(["bad", "mlp", "lenet"])}
        assert by["mlp"] == [200] * 40 and by["lenet"] == [200] * 40, by
        assert set(by["bad"]) == {500}, by
        assert "forward exploded" in rs[0].json()["error"]
        assert httpx.get(f"{srv.url}/v2/health/ready").status_code == 200
    record("faults", "a model whose forward raises", its_requests_failed=40,
           other_models_ok="80/80")
