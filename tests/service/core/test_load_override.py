"""`load` with `parameters.config` applies to that load only (Triton's model repository
extension): config.json is untouched and a later plain load serves it again, on this replica
and on any other that polls the store. `persist_config: true` is the explicit permanent
change."""
from __future__ import annotations

import json

import httpx
import pytest

from serverproc import copy_store, inproc_server, wait_for


def _description(c: httpx.Client) -> str:
    return c.get("/v2/models/mlp/config").json()["description"]


def _load(c: httpx.Client, **params) -> httpx.Response:
    return c.post("/v2/repository/models/mlp/load", json={"parameters": params} if params else {})


def test_config_override_is_for_that_load_only(tmp_path):
    store = copy_store(tmp_path / "store", ("mlp",))
    on_disk = (store / "mlp" / "config.json").read_bytes()
    original = json.loads(on_disk)["description"]
    cfg = {**json.loads(on_disk), "description": "this load only"}
    with inproc_server(store, store_poll_s=0.1) as a, inproc_server(store, store_poll_s=0.1) as b, \
            httpx.Client(base_url=a.url, timeout=60) as ca, \
            httpx.Client(base_url=b.url, timeout=60) as cb:
        assert _load(ca, config=json.dumps(cfg)).status_code == 200
        assert _description(ca) == "this load only"
        assert (store / "mlp" / "config.json").read_bytes() == on_disk
        wait_for(lambda: _description(cb) == "this load only", 15, "override reaches B")
        assert _load(ca).status_code == 200                  # a plain load: config.json again
        assert _description(ca) == original
        wait_for(lambda: _description(cb) == original, 15, "plain load reaches B")
        # explicitly permanent
        r = _load(ca, persist_config=True)
        assert r.status_code == 400 and "needs a 'config'" in r.json()["error"]
        assert _load(ca, config=json.dumps({**cfg, "description": "kept"}),
                     persist_config=True).status_code == 200
        assert json.loads((store / "mlp" / "config.json").read_text())["description"] == "kept"
        assert _load(ca).status_code == 200
        assert _description(ca) == "kept"
        wait_for(lambda: _description(cb) == "kept", 15, "persistent change reaches B")
        assert _load(ca, config="{}", persist_config="yes").status_code == 400


@pytest.mark.parametrize("with_config_json", [True, False])
def test_the_next_plain_load_ends_an_override(tmp_path, with_config_json):
    """Issue 26, defect 8: without config.json the override outlived plain load #1."""
    store = copy_store(tmp_path / "store", ("mlp",))
    if not with_config_json:
        (store / "mlp" / "config.json").unlink()
    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        before = c.get("/v2/models/mlp").json()["outputs"][0]["name"]
        override = {"name": "mlp", "description": "this load only",
                    "outputs": [{"name": "renamed", "datatype": "FP32", "shape": [-1, 2]}]}
        if with_config_json:
            override = {**json.loads((store / "mlp" / "config.json").read_text()), **override}
        assert _load(c, config=json.dumps(override)).status_code == 200
        assert c.get("/v2/models/mlp").json()["outputs"][0]["name"] == "renamed"
        assert _description(c) == "this load only"
        assert _load(c).status_code == 200                         # plain load #1
        assert c.get("/v2/models/mlp").json()["outputs"][0]["name"] == before != "renamed"
        assert _description(c) != "this load only"
        assert srv.core.store.override("mlp") is None
