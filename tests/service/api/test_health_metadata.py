"""Health, server/model metadata, readiness, config, errors for unknown things."""
from __future__ import annotations


def test_live_ready(http):
    assert http.get("/v2/health/live").json() == {"live": True}
    assert http.get("/v2/health/ready").status_code == 200


def test_server_metadata(http):
    doc = http.get("/v2").json()
    assert doc["name"] == "hybridserve"
    assert {"binary_tensor_data", "model_repository", "statistics"} <= set(doc["extensions"])


def test_model_metadata(http):
    doc = http.get("/v2/models/mlp").json()
    assert doc["name"] == "mlp" and doc["platform"] == "mxnet_mxnet"
    assert doc["versions"] == ["1"]
    assert doc["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}]
    assert doc["outputs"] == [{"name": "output", "datatype": "FP32", "shape": [-1, 2]}]
    assert http.get("/v2/models/mlp/versions/1").json() == doc
    lenet = http.get("/v2/models/lenet").json()
    assert lenet["inputs"][0]["shape"] == [-1, 1, 28, 28]
    assert lenet["outputs"][0]["shape"] == [-1, 10]


def test_model_ready(http):
    r = http.get("/v2/models/mlp/ready")
    assert r.status_code == 200 and r.json()["ready"] is True
    assert http.get("/v2/models/mlp/versions/1/ready").status_code == 200
    r = http.get("/v2/models/mlp/versions/9/ready")
    assert r.status_code == 404 and "error" in r.json()
    assert http.get("/v2/models/nope/ready").status_code == 404


def test_model_config(http):
    doc = http.get("/v2/models/mlp/config").json()
    assert doc["max_batch_size"] == 64
    assert doc["input"] == [{"name": "data", "data_type": "TYPE_FP32", "dims": [512]}]
    assert doc["dynamic_batching"]["preferred_batch_size"] == [8, 16, 32]


def test_unknown_model_and_version_404(http):
    for path in ("/v2/models/nope", "/v2/models/nope/versions/1", "/v2/models/mlp/versions/7",
                 "/v2/models/mlp/versions/7/summary"):
        r = http.get(path)
        assert r.status_code == 404, path
        assert "error" in r.json()
    r = http.post("/v2/models/nope/infer", json={"inputs": []})
    assert r.status_code in (400, 404) and "error" in r.json()


def test_unknown_route_and_method(http):
    r = http.get("/v3/nothing")
    assert r.status_code == 404 and "error" in r.json()
    r = http.get("/v2/models/mlp/infer")
    assert r.status_code == 405 and r.json() == {"error": "Method Not Allowed"}


def test_openapi_docs(http):
    assert http.get("/docs").status_code == 200
    spec = http.get("/openapi.json").json()
    for p in ("/v2/models/{name}/infer", "/v2/repository/models/{name}/upload",
              "/v2/models/{name}/summary", "/v2/models/{name}/inspect", "/metrics"):
        assert p in spec["paths"], p


def test_model_list(http):
    rows = http.get("/v2/models").json()
    names = {r["name"]: r for r in rows}
    assert {"mlp", "lenet"} <= set(names)
    assert names["mlp"]["versions"][0]["state"] == "READY"
