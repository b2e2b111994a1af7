"""Replicas agree (issue 6): two real server processes share one store; every change made
through one replica — upload, re-version, concurrent uploads, unload, load, config change,
delete — becomes so on the other within a bound; a restarting replica spares the other's
upload in progress. Loopback only, bounded waits. Run: pytest -m slow tests/cluster
"""
from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from serverproc import ROOT, ServerProc, copy_store, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
MX1 = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
BOUND_S = 20.0          # a change must reach the other replica within this


def files(name: str = "fc_flatten") -> dict:
    return {"symbol": (f"{name}-symbol.json", (MX1 / f"{name}-symbol.json").read_bytes()),
            "params": (f"{name}-0000.params", (MX1 / f"{name}-0000.params").read_bytes())}


@pytest.fixture
def pair(tmp_path):
    store = copy_store(tmp_path / "store", ("mlp",))
    reps = [ServerProc(store, tmp_path / f"r{i}.log", env={"HYBRIDSERVE_STORE_POLL_S": "0.25"})
            for i in range(2)]
    try:
        for r in reps:
            r.start()
        yield reps
    finally:
        for r in reps:
            r.stop()


def versions_on(rep: ServerProc, model: str) -> list[str]:
    r = httpx.get(f"{rep.url}/v2/models/{model}", timeout=5)
    return r.json()["versions"] if r.status_code == 200 else []


def status(rep: ServerProc, path: str) -> int:
    return httpx.get(rep.url + path, timeout=5).status_code


def test_every_change_reaches_the_other_replica(pair):
    a, b = pair
    io = np.load(MX1 / "fc_flatten-io.npz")
    body = {"inputs": [{"name": "data", "shape": list(io["data"].shape), "datatype": "FP32",
                        "data": io["data"].ravel().tolist()}]}
    # upload through A: B loads and warms it, then serves MXNet 1.9.1's recorded output
    r = httpx.post(f"{a.url}/v2/repository/models/fc/upload", files=files(), timeout=60)
    assert r.status_code == 201 and r.json()["version"] == "1", r.text
    wait_for(lambda: status(b, "/v2/models/fc/ready") == 200, BOUND_S, "upload reaches B")
    out = httpx.post(f"{b.url}/v2/models/fc/infer", json=body, timeout=30).json()["outputs"][0]
    np.testing.assert_allclose(np.asarray(out["data"], np.float32).reshape(out["shape"]),
                               io["output"], rtol=1e-4, atol=1e-5)
    # re-version through B
    r = httpx.post(f"{b.url}/v2/repository/models/fc/upload", files=files(), timeout=60)
    assert r.status_code == 201 and r.json()["version"] == "2", r.text
    wait_for(lambda: versions_on(a, "fc") == ["2"], BOUND_S, "version 2 reaches A (latest 1)")

    # unload through A: B unloads too (files stay); load through B: both serve again
    assert httpx.post(f"{a.url}/v2/repository/models/fc/unload", timeout=30).status_code == 200
    wait_for(lambda: status(b, "/v2/models/fc/ready") != 200, BOUND_S, "unload reaches B")
    assert (a.store / "fc" / "2").is_dir()
    assert httpx.post(f"{b.url}/v2/repository/models/fc/load", timeout=60).status_code == 200
    wait_for(lambda: status(a, "/v2/models/fc/ready") == 200, BOUND_S, "load reaches A")

    # config change through A (Triton load with config): B reloads under it
    cfg = {"max_batch_size": 8, "description": "changed through replica A",
           "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 4, 4]}]}
    r = httpx.post(f"{a.url}/v2/repository/models/fc/load",
                   json={"parameters": {"config": json.dumps(cfg)}}, timeout=60)
    assert r.status_code == 200, r.text
    wait_for(lambda: httpx.get(f"{b.url}/v2/models/fc/config", timeout=5).json()
             .get("description") == cfg["description"], BOUND_S, "config reaches B")

    # delete a version through B, then the model through A
    assert httpx.delete(f"{b.url}/v2/models/fc/versions/1", timeout=30).status_code == 200
    wait_for(lambda: versions_on(a, "fc") == ["2"], BOUND_S, "version delete reaches A")
    assert httpx.delete(f"{a.url}/v2/models/fc", timeout=30).status_code == 200
    wait_for(lambda: status(b, "/v2/models/fc") == 404, BOUND_S, "model delete reaches B")
    # the manifest agrees with the directories
    man = json.loads((a.store / ".manifest.json").read_text())
    assert set(man["models"]) == {"mlp"} and man["generation"] >= 7


def test_concurrent_uploads_get_distinct_versions(pair):
    """Both replicas upload the same model at once: the store lock numbers them apart."""
    start = threading.Barrier(6)

    def up(rep: ServerProc) -> httpx.Response:
        start.wait(30)
        return httpx.post(f"{rep.url}/v2/repository/models/race/upload", files=files(),
                          timeout=120)

    with ThreadPoolExecutor(6) as pool:
        res = list(pool.map(up, [pair[0], pair[1]] * 3))
    assert all(r.status_code == 201 for r in res), [r.text for r in res]
    got = sorted(int(r.json()["version"]) for r in res)
    assert got == [1, 2, 3, 4, 5, 6]
    want = [str(v) for v in got]
    for rep in pair:
        wait_for(lambda: versions_on(rep, "race") == want, BOUND_S, f"all versions on {rep.url}")


def test_restart_spares_the_other_replicas_upload(pair, tmp_path):
    """A replica's startup recovery removes its own and dead owners' debris, never a live
    replica's staging directory."""
    a, b = pair
    from service.repository.owner import owner_prefix
    staging = a.store / ".staging"
    staging.mkdir(exist_ok=True)
    prefix = owner_prefix()                            # this test process: alive, same host
    live = staging / (prefix.replace(f"-{os.getpid()}-", f"-{a.pid}-") + "inflight")
    dead = staging / (prefix.replace(f"-{os.getpid()}-", "-999999999-") + "crashed")
    for d in (live, dead):
        d.mkdir()
        (d / "x-symbol.json").write_text("{}")
    b.kill9()
    b.start()
    assert live.is_dir(), "B's startup removed A's upload in progress"
    assert not dead.exists(), "B's startup left a dead process's staging debris"
    assert status(b, "/v2/models/mlp/ready") == 200
