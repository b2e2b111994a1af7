"""Bearer-token access control and store polling (what keeps several workers in step)."""
from __future__ import annotations

import shutil
import time

import httpx
import pytest

from serverproc import copy_store, inproc_server


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    store = copy_store(tmp_path_factory.mktemp("guarded") / "store", ("mlp",))
    with inproc_server(store, auth_token="s3cret", poll_interval_s=0.1) as info:
        yield info


def test_token_required_for_management_only(guarded):
    with httpx.Client(base_url=guarded.url) as c:
        assert c.get("/v2/models/mlp").status_code == 200           # inference side is open
        assert c.get("/v2/health/ready").status_code == 200
        r = c.post("/v2/repository/index")
        assert r.status_code == 401 and "token" in r.json()["error"]
        assert c.post("/v2/repository/index",
                      headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.delete("/v2/models/mlp").status_code == 401
        assert c.post("/v2/models/mlp/inspect", json={"inputs": []}).status_code == 401
        ok = c.post("/v2/repository/index", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()[0]["name"] == "mlp"


def test_poll_picks_up_store_changes(guarded):
    with httpx.Client(base_url=guarded.url) as c:
        shutil.copytree(guarded.store / "mlp", guarded.store / ".tmp_copy")
        (guarded.store / ".tmp_copy").rename(guarded.store / "mlp2")   # atomic appearance
        end = time.time() + 10
        while c.get("/v2/models/mlp2/ready").status_code != 200:
            assert time.time() < end, "polling did not load mlp2"
            time.sleep(0.05)
        shutil.rmtree(guarded.store / "mlp2")
        while c.get("/v2/models/mlp2/ready").status_code != 404:
            assert time.time() < end, "polling did not drop mlp2"
            time.sleep(0.05)
