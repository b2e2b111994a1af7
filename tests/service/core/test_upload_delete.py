"""Upload (multipart), atomic versions, delete; a real MXNet 1.9.1 export round-trip over HTTP."""
from __future__ import annotations

import json
import os

import numpy as np

from fixture_util import FIXTURES
from serverproc import infer_json

MX1 = FIXTURES / "mxnet-1.9.1"


def _files(name: str, d=MX1) -> dict:
    return {"symbol": (f"{name}-symbol.json", (d / f"{name}-symbol.json").read_bytes()),
            "params": (f"{name}-0000.params", (d / f"{name}-0000.params").read_bytes())}


def _snapshot(root) -> dict:
    out = {}
    for dp, dns, fns in os.walk(root):
        dns[:] = [d for d in dns if not d.startswith(".")]
        for f in fns:
            p = os.path.join(dp, f)
            out[os.path.relpath(p, root)] = os.path.getsize(p)
    return out


def test_upload_mxnet_191_export_exact_output(http, server):
    io = np.load(MX1 / "fc_flatten-io.npz")
    x, ref = io["data"], io["output"]
    cfg = {"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, *x.shape[1:]]}],
           "max_batch_size": 16, "description": "real MXNet 1.9.1 export"}
    r = http.post("/v2/repository/models/fc_flatten/upload",
                  files={**_files("fc_flatten"), "config": ("config.json", json.dumps(cfg))})
    assert r.status_code == 201, r.text
    assert r.json() == {"name": "fc_flatten", "version": "1", "state": "READY"}
    assert (server.store / "fc_flatten" / "1" / "fc_flatten-0000.params").is_file()
    assert json.loads((server.store / "fc_flatten" / "config.json").read_text())["max_batch_size"] == 16
    r = http.post("/v2/models/fc_flatten/infer", json=infer_json("fc_flatten", x))
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(out["shape"]), ref,
                               rtol=1e-4, atol=1e-5)
    # a second upload becomes version 2, the one served (default version policy: latest 1)
    r = http.post("/v2/repository/models/fc_flatten/upload", files=_files("fc_flatten"))
    assert r.status_code == 201 and r.json()["version"] == "2"
    assert http.get("/v2/models/fc_flatten").json()["versions"] == ["2"]


def test_upload_without_config_infers_signature(http):
    io = np.load(MX1 / "fc_flatten-io.npz")
    r = http.post("/v2/repository/models/fc_noconf/upload", files=_files("fc_flatten"))
    assert r.status_code == 201, r.text
    md = http.get("/v2/models/fc_noconf").json()
    assert md["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 48]}]
    # FullyConnected(flatten=True) takes any shape with 48 values per row, as in MXNet
    r = http.post("/v2/models/fc_noconf/infer", json=infer_json("fc_noconf", io["data"]))
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(np.array(r.json()["outputs"][0]["data"]).reshape(2, 4),
                               io["output"], rtol=1e-4, atol=1e-5)


def test_failed_upload_leaves_store_unchanged(http, server):
    before = _snapshot(server.store)
    files = _files("fc_flatten")
    good = files["params"][1]
    corrupt = good[:40] + b"\xff" * 16 + good[56:200]
    for bad in ({"params": ("x-0000.params", corrupt)},
                {"symbol": ("x-symbol.json", b"{\"nodes\": [")},
                {"config": ("config.json", b"{\"max_batch_size\": -3}")},
                {"config": ("config.json", json.dumps(
                    {"inputs": [{"name": "data", "shape": [-1, 7]}]}))}):
        r = http.post("/v2/repository/models/broken/upload", files={**files, **bad})
        assert r.status_code == 400, r.text
        assert "error" in r.json()
        r = http.post("/v2/repository/models/mlp/upload", files={**files, **bad})
        assert r.status_code == 400, r.text
    assert _snapshot(server.store) == before
    assert not (server.store / "broken").exists()
    assert not any((server.store / ".staging").glob("*"))
    assert http.get("/v2/models/broken").status_code == 404
    assert http.get("/v2/models/mlp").json()["versions"] == ["1"]


def test_upload_rejects_bad_names_and_requests(http, server):
    files = _files("fc_flatten")
    for name in ("..", ".hidden", "a%2Fb", "stats", "-x"):
        r = http.post(f"/v2/repository/models/{name}/upload", files=files)
        assert r.status_code in (400, 404), (name, r.status_code)
    r = http.post("/v2/repository/models/ok/upload", files={"params": files["params"]})
    assert r.status_code == 400 and "symbol" in r.json()["error"]
    r = http.post("/v2/repository/models/ok/upload", content=b"{}")
    assert r.status_code == 400
    r = http.post("/v2/repository/models/ok/upload", files=files, data={"version": "../1"})
    assert r.status_code == 400
    assert not (server.store / "ok").exists()


def test_delete_version_and_model(http, server):
    for _ in range(2):
        assert http.post("/v2/repository/models/to_delete/upload",
                         files=_files("fc_flatten")).status_code == 201
    assert http.get("/v2/models/to_delete").json()["versions"] == ["2"]
    r = http.delete("/v2/models/to_delete/versions/2")
    assert r.status_code == 200, r.text
    assert not (server.store / "to_delete" / "2").exists()
    assert http.get("/v2/models/to_delete/versions/2").status_code == 404
    # the newest version gone, the policy (latest 1) serves version 1 again
    assert http.get("/v2/models/to_delete").json()["versions"] == ["1"]
    assert http.delete("/v2/models/to_delete/versions/5").status_code == 404
    assert http.delete("/v2/models/to_delete").status_code == 200
    assert not (server.store / "to_delete").exists()
    assert http.get("/v2/models/to_delete").status_code == 404
    assert http.delete("/v2/models/to_delete").status_code == 404
    idx = http.post("/v2/repository/index").json()
    assert all(r["name"] != "to_delete" for r in idx)
