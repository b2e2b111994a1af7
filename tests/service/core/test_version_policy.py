"""Triton's version policy (latest N / all / specific): which versions are served, what a
request to a version outside it gets, and how changes (upload, load with a config, a config
change picked up by polling, delete) load and unload to match."""
from __future__ import annotations

import json
import threading

import httpx
import numpy as np
import pytest

from fixture_util import FIXTURES
from serverproc import inproc_server, infer_json, wait_for
from service.repository.config import parse_config
from service.repository.store import ModelStore

MX1 = FIXTURES / "mxnet-1.9.1"
X = np.load(MX1 / "fc_flatten-io.npz")["data"]


def _upload(c: httpx.Client, name: str, config: dict | None = None) -> str:
    files = {"symbol": ("fc-symbol.json", (MX1 / "fc_flatten-symbol.json").read_bytes()),
             "params": ("fc-0000.params", (MX1 / "fc_flatten-0000.params").read_bytes())}
    if config is not None:
        files["config"] = ("config.json", json.dumps(config))
    r = c.post(f"/v2/repository/models/{name}/upload", files=files)
    assert r.status_code == 201, r.text
    return r.json()["version"]


def _states(c: httpx.Client, name: str) -> dict[str, str]:
    return {r["version"]: r["state"] for r in c.post("/v2/repository/index").json()
            if r["name"] == name}


def _answers(c: httpx.Client, name: str, version: str | None = None) -> httpx.Response:
    path = f"/v2/models/{name}" + (f"/versions/{version}" if version else "") + "/infer"
    return c.post(path, json=infer_json(name, X))


@pytest.fixture
def srv(tmp_path):
    (tmp_path / "store").mkdir()
    with inproc_server(tmp_path / "store", store_poll_s=0.1) as info, \
            httpx.Client(base_url=info.url, timeout=60) as c:
        yield info, c


def test_policy_forms_parse_and_select():
    pick = lambda doc: parse_config(doc).version_policy.select(["1", "2", "3", "10"])  # noqa: E731
    assert pick({}) == ["10"]                                           # default: latest 1
    assert pick({"version_policy": {"latest": {"num_versions": 2}}}) == ["3", "10"]
    assert pick({"version_policy": {"all": {}}}) == ["1", "2", "3", "10"]
    assert pick({"version_policy": {"specific": {"versions": [1, 3, 7]}}}) == ["1", "3"]
    # Triton's JSON form (int64 written as strings) is accepted, and written back
    triton = parse_config({"name": "m", "input": [], "version_policy":
                           {"specific": {"versions": ["2", "3"]}}})
    assert triton.version_policy.select(["1", "2", "3"]) == ["2", "3"]
    assert triton.to_triton()["version_policy"] == {"specific": {"versions": [2, 3]}}
    for bad in ({"latest": {"num_versions": 0}}, {"latest": {}, "all": {}},
                {"specific": {"versions": []}}, {"newest": {}}):
        with pytest.raises(Exception, match="version_policy"):
            parse_config({"version_policy": bad})


def test_default_policy_serves_only_the_latest(srv):
    info, c = srv
    assert [_upload(c, "fc") for _ in range(3)] == ["1", "2", "3"]
    assert _states(c, "fc") == {"1": "UNAVAILABLE", "2": "UNAVAILABLE", "3": "READY"}
    rows = [r for r in c.post("/v2/repository/index").json() if r["name"] == "fc"]
    assert "version policy (latest 1)" in rows[0]["reason"]
    assert _answers(c, "fc").json()["model_version"] == "3"
    r = _answers(c, "fc", "1")                  # Triton's error for a version it does not serve
    assert r.status_code == 503 and "Retry-After" not in r.headers
    assert r.json()["error"].startswith("Request for unknown model: 'fc' version 1 is not at "
                                        "ready state")
    assert c.get("/v2/models/fc/versions/1/ready").status_code != 200
    # the unloaded versions hold nothing
    entries = info.core.registry.models["fc"]
    assert [v for v, mv in entries.items() if mv.runner is not None] == ["3"]
    # the newest deleted: latest 1 is version 2 now, loaded again
    assert c.delete("/v2/models/fc/versions/3").status_code == 200
    assert _answers(c, "fc").json()["model_version"] == "2"
    assert _states(c, "fc") == {"1": "UNAVAILABLE", "2": "READY"}


def test_policy_changes_by_load_and_by_polling(srv):
    info, c = srv
    for _ in range(3):
        _upload(c, "fc")
    ready = {"1": "READY", "2": "READY", "3": "READY"}

    def load(policy: dict) -> None:
        r = c.post("/v2/repository/models/fc/load",
                   json={"parameters": {"config": json.dumps({"version_policy": policy})}})
        assert r.status_code == 200, r.text

    load({"all": {}})
    assert _states(c, "fc") == ready
    assert {_answers(c, "fc", v).json()["model_version"] for v in "123"} == set("123")
    load({"specific": {"versions": [1, 3]}})
    assert _states(c, "fc") == {**ready, "2": "UNAVAILABLE"}
    load({"latest": {"num_versions": 2}})
    assert _states(c, "fc") == {**ready, "1": "UNAVAILABLE"}
    # a policy that selects nothing is refused; what was served stays served
    r = c.post("/v2/repository/models/fc/load", json={"parameters": {"config": json.dumps(
        {"version_policy": {"specific": {"versions": [9]}}})}})
    assert r.status_code == 400 and "selects none" in r.json()["error"]
    assert _states(c, "fc") == {**ready, "1": "UNAVAILABLE"}
    # a persistent config change made elsewhere is picked up by polling
    ModelStore(info.store).write_config("fc", parse_config({"version_policy": {"all": {}}}))
    wait_for(lambda: _states(c, "fc") == ready, 15, "policy change by polling")


def test_changing_the_policy_never_leaves_the_latest_unavailable(srv):
    """While `latest 1` becomes `all` and back, requests to the model never fail."""
    info, c = srv
    for _ in range(2):
        _upload(c, "fc")
    errors, seen = [], set()
    stop = threading.Event()

    def hammer():
        with httpx.Client(base_url=info.url, timeout=60) as h:
            while not stop.is_set():
                r = _answers(h, "fc")
                (seen.add(r.json()["model_version"]) if r.status_code == 200
                 else errors.append(r.text))
    th = threading.Thread(target=hammer)
    th.start()
    try:
        for policy in ({"all": {}}, {"latest": {"num_versions": 1}}, {"all": {}}, {}):
            r = c.post("/v2/repository/models/fc/load", json={"parameters": {
                "config": json.dumps({"version_policy": policy})}})
            assert r.status_code == 200, r.text
        _upload(c, "fc")
    finally:
        stop.set()
        th.join(30)
    assert errors == [] and seen == {"2", "3"}
