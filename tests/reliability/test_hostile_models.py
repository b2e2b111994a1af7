"""Every file of the hostile corpus (hostile.py) is refused by the upload endpoint with a
clear 4xx naming the problem; the store is left exactly as it was, nothing was unpickled, and
the server keeps serving. Also hostile names, versions and file-override paths."""
from __future__ import annotations

import base64

import httpx
import pytest

from .hostile import FC_PARAMS, FC_SYM, corpus
from .relutil import debris, mlp_body, record, snapshot

@pytest.fixture(scope="module")
def marker(tmp_path_factory):
    return tmp_path_factory.mktemp("m") / "unpickled"


def test_hostile_uploads_refused(rserver, marker):
    before = snapshot(rserver.store)
    cases = corpus(marker)
    assert len(cases) >= 30
    problems = []
    with httpx.Client(base_url=rserver.url, timeout=120) as c:
        for h in cases:
            r = c.post("/v2/repository/models/hostile/upload", files=h.files)
            msg = r.json().get("error", "") if r.headers.get("content-type", "").startswith(
                "application/json") else r.text
            if r.status_code not in h.codes or h.why not in msg.lower():
                problems.append(f"{h.name}: {r.status_code} {msg[:300]!r}")
        assert c.post("/v2/models/mlp/infer", json=mlp_body()).status_code == 200
    assert not problems, "\n".join(problems)
    assert not marker.exists(), "an uploaded pickle was unpickled"
    assert snapshot(rserver.store) == before
    assert not debris(rserver.store)
    record("hostile", "hostile model files refused with 4xx", files=len(cases),
           accepted=0, store_changed=False)


@pytest.mark.parametrize("name", ["..", "...", ".hidden", "a%2Fb", "a%2F..%2F..%2Fetc", "stats",
                                  "-x", "x" * 200, "%00", "a b"])
def test_hostile_model_names(rserver, name):
    files = {"symbol": ("s-symbol.json", FC_SYM), "params": ("s-0000.params", FC_PARAMS)}
    r = httpx.post(f"{rserver.url}/v2/repository/models/{name}/upload", files=files, timeout=30)
    assert r.status_code in (400, 404), (name, r.status_code, r.text)
    assert not debris(rserver.store)


@pytest.mark.parametrize("version", ["0", "-1", "../1", "1/../../x", "1e3", "99999999999", " 1"])
def test_hostile_versions(rserver, version):
    files = {"symbol": ("s-symbol.json", FC_SYM), "params": ("s-0000.params", FC_PARAMS)}
    r = httpx.post(f"{rserver.url}/v2/repository/models/vtest/upload", files=files,
                   data={"version": version}, timeout=30)
    assert r.status_code == 400, (version, r.text)
    assert not (rserver.store / "vtest").exists()


@pytest.mark.parametrize("key", ["file:1/../../evil-symbol.json", "file:../1/x-symbol.json",
                                 "file:1/.hidden-symbol.json", "file:1/sub/x-symbol.json",
                                 "file:1/evil.sh", "file:0/x-symbol.json"])
def test_hostile_file_overrides(rserver, key):
    body = {"parameters": {key: base64.b64encode(FC_SYM).decode()}}
    r = httpx.post(f"{rserver.url}/v2/repository/models/ftest/load", json=body, timeout=30)
    assert r.status_code == 400, (key, r.text)
    assert not (rserver.store / "ftest").exists()
    assert not (rserver.store.parent / "evil-symbol.json").exists()


def test_deep_and_enormous_request_bodies(rserver):
    with httpx.Client(base_url=rserver.url, timeout=30) as c:
        deep = b'{"inputs": [{"name": "data", "parameters": ' + b'{"a": ' * 100 + b"1" + \
            b"}" * 100 + b', "shape": [1], "datatype": "FP32", "data": [1]}]}'
        r = c.post("/v2/models/mlp/infer", content=deep)
        assert r.status_code == 400 and "nest" in r.json()["error"]
        r = c.post("/v2/repository/index", content=b'{"ready": ' + b"[" * 5000 + b"]" * 5000 + b"}")
        assert r.status_code == 400 and "nest" in r.json()["error"]
        r = c.post("/v2/models/mlp/infer", content=b"[" * 100_000 + b"]" * 100_000)
        assert r.status_code == 400
        r = c.post("/v2/models/mlp/infer", content=b" " * (5 << 20))
        assert r.status_code == 413
        assert c.post("/v2/models/mlp/infer", json=mlp_body()).status_code == 200
