"""Replicas converge by polling the shared store (in one process; tests/cluster runs real
replicas), a read-only store is served, LOAD_ON_STARTUP off loads only when asked."""
from __future__ import annotations

import json
import shutil
import time

import httpx
import pytest

from fixture_util import FIXTURES
from serverproc import copy_store, inproc_server
from service.repository.config import parse_config
from service.repository.store import ModelStore

MX1 = FIXTURES / "mxnet-1.9.1"


@pytest.fixture
def polled(tmp_path):
    with inproc_server(copy_store(tmp_path / "store", ("mlp",)), store_poll_s=0.1) as info:
        yield info


def _wait(pred, what: str, timeout: float = 15.0):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(what)


def test_polling_converges_to_changes_made_elsewhere(polled):
    """Another process's store (here: a second ModelStore object) changes state, config,
    versions; this server follows each within the poll bound."""
    other = ModelStore(polled.store)
    c = httpx.Client(base_url=polled.url, timeout=30)
    ready = lambda: c.get("/v2/models/mlp/ready").status_code == 200   # noqa: E731
    other.set_state("mlp", "unloaded")
    _wait(lambda: not ready(), "unload elsewhere not applied")
    other.set_state("mlp", "loaded", bump=True)
    _wait(ready, "load elsewhere not applied")
    cfg = json.loads((polled.store / "mlp" / "config.json").read_text())
    cfg["description"] = "changed elsewhere"
    other.write_config("mlp", parse_config(json.dumps(cfg)))
    _wait(lambda: c.get("/v2/models/mlp/config").json()["description"] == "changed elsewhere",
          "config change elsewhere not applied")
    # a version deleted and re-created under the same number is new content: reloaded
    mv1 = polled.core.registry.get("mlp", "1")
    staged = other.new_staging()
    for f in (polled.store / "mlp" / "1").iterdir():
        shutil.copy(f, staged / f.name)
    other.commit_version("mlp", staged, "1", replace=True)
    _wait(lambda: polled.core.registry.get("mlp", "1") is not mv1, "replaced version not reloaded")
    # the poll records the generation once every model of it is reconciled (just after the
    # reload above)
    _wait(lambda: polled.core.sync.generation == other.manifest().generation,
          "generation not recorded")
    c.close()


def test_read_only_store_serves_and_refuses_writes(tmp_path):
    store = copy_store(tmp_path / "ro", ("mlp",))
    files = {"symbol": ("s-symbol.json", (MX1 / "fc_flatten-symbol.json").read_bytes())}
    with inproc_server(store, store_read_only=True) as info, \
            httpx.Client(base_url=info.url, timeout=30) as c:
        assert c.get("/v2/models/mlp/ready").status_code == 200
        for r in (c.post("/v2/repository/models/x/upload", files=files),
                  c.delete("/v2/models/mlp"), c.delete("/v2/models/mlp/versions/1"),
                  c.post("/v2/repository/models/mlp/load",
                         json={"parameters": {"config": "{}"}})):
            assert r.status_code == 403 and "read-only" in r.json()["error"], r.text
        assert c.post("/v2/repository/models/mlp/unload").status_code == 200   # this replica
        assert c.post("/v2/repository/models/mlp/load").status_code == 200
        assert c.get("/v2/models/mlp/ready").status_code == 200
    assert sorted(p.name for p in store.iterdir()) == ["mlp"]            # nothing written


def test_load_on_startup_off_loads_only_when_asked(tmp_path):
    store = copy_store(tmp_path / "store", ("mlp",))
    with inproc_server(store, store_poll_s=0.1, load_on_startup=False) as info, \
            httpx.Client(base_url=info.url, timeout=30) as c:
        time.sleep(0.5)                                   # several polls: still not loaded
        assert c.get("/v2/models/mlp/ready").status_code != 200
        assert c.post("/v2/repository/models/mlp/load").status_code == 200
        assert c.get("/v2/models/mlp/ready").status_code == 200
