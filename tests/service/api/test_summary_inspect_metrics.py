"""Model summary (JSON + MXNet text), op-hook inspection, Prometheus metrics, statistics."""
from __future__ import annotations

import numpy as np

from serverproc import infer_json
from service.runtime.inspection import _matcher


def test_summary_json(http):
    s = http.get("/v2/models/mlp/summary").json()
    assert s["name"] == "mlp" and s["batch_size"] == 1
    fcs = [row for row in s["layers"] if row["op"] == "FullyConnected"]
    assert [r["output_shape"] for r in fcs] == [[1, 256], [1, 128], [1, 2]]
    assert [r["params"] for r in fcs] == [512 * 256 + 256, 256 * 128 + 128, 128 * 2 + 2]
    assert s["total_params"] == 164482 == s["unique_params"]
    assert [r["flops"] for r in fcs] == [2 * 512 * 256, 2 * 256 * 128, 2 * 128 * 2]
    assert s["flops"] == sum(r["flops"] or 0 for r in s["layers"]) and s["flops_complete"]
    assert s["signature"]["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}]
    s4 = http.get("/v2/models/mlp/versions/1/summary", params={"batch_size": 4}).json()
    assert s4["flops"] == 4 * s["flops"] and s4["layers"][0]["output_shape"] == [4, 256]
    lenet = http.get("/v2/models/lenet/summary").json()
    conv = [r for r in lenet["layers"] if r["op"] == "Convolution"]
    assert conv[0]["output_shape"] == [1, 6, 28, 28] and conv[0]["params"] == 6 * 25 + 6
    assert lenet["total_params"] == 61706


def test_summary_text(http):
    r = http.get("/v2/models/mlp/summary", params={"format": "text"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    lines = r.text.splitlines()
    # MXNet's columns, the first widened to "dense0(FullyConnected)" (22 characters)
    assert lines[0] == "-" * 82 and lines[2] == "=" * 82
    assert lines[1] == "{:>22}  {:>42} {:>15}".format("Layer (type)", "Output Shape", "Param #")
    assert lines[3] == "{:>22}  {:>42} {:>15}".format("Input", "(1, 512)", 0)
    assert "   Total params: 164482" in lines
    assert http.get("/v2/models/mlp/summary", params={"format": "xml"}).status_code == 400


def test_inspect(http, mlp_ref):
    x = np.random.default_rng(3).standard_normal((2, 512)).astype(np.float32)
    r = http.post("/v2/models/mlp/inspect", json=infer_json("mlp", x))
    assert r.status_code == 200, r.text
    doc = r.json()
    ops = [rec["op"] for rec in doc["records"]]
    assert ops.count("FullyConnected") == 3 and "Activation" in ops
    last = [rec for rec in doc["records"] if rec["op"] == "FullyConnected"][-1]
    ref = mlp_ref(x)
    assert last["shape"] == [2, 2] and last["dtype"] == "float32"
    assert np.isclose(last["min"], ref.min(), rtol=1e-5) and np.isclose(last["max"], ref.max(), rtol=1e-5)
    assert np.isclose(last["mean"], ref.mean(), rtol=1e-4, atol=1e-6)
    assert np.isclose(last["std"], ref.std(), rtol=1e-4, atol=1e-6)
    assert last["nan_count"] == 0 and last["inf_count"] == 0 and "values" not in last
    assert doc["outputs"][0]["name"] == "output"


def test_inspect_filter_values_monitor_all(http, mlp_ref):
    x = np.random.default_rng(4).standard_normal((1, 512)).astype(np.float32)
    body = infer_json("mlp", x, parameters={"filter": "Activation", "include_values": True,
                                            "max_values": 5})
    doc = http.post("/v2/models/mlp/inspect", json=body).json()
    assert [rec["op"] for rec in doc["records"]] == ["Activation", "Activation"]
    assert all(len(rec["values"]) == 5 and rec["values_truncated"] for rec in doc["records"])
    assert all(rec["min"] >= 0 for rec in doc["records"])          # ReLU outputs
    body = infer_json("mlp", x, parameters={"filter": "^dense0", "regex": True,
                                            "monitor_all": True})
    doc = http.post("/v2/models/mlp/inspect", json=body).json()
    names = [rec["name"] for rec in doc["records"]]
    assert any(n.endswith("_weight") for n in names) and any(n.endswith("_data") for n in names)
    data_rec = next(rec for rec in doc["records"] if rec["name"].endswith("_data"))
    assert data_rec["shape"] == [1, 512] and np.isclose(data_rec["max"], x.max())
    bad = infer_json("mlp", x, parameters={"filter": "(", "regex": True})
    assert http.post("/v2/models/mlp/inspect", json=bad).status_code == 400
    bad = infer_json("mlp", x, parameters={"max_values": "lots"})
    assert http.post("/v2/models/mlp/inspect", json=bad).status_code == 400
    # inspection did not disturb the warm loop that serves requests
    r = http.post("/v2/models/mlp/infer", json=infer_json("mlp", x))
    np.testing.assert_allclose(np.array(r.json()["outputs"][0]["data"]), mlp_ref(x).ravel(),
                               rtol=1e-5, atol=1e-6)


def test_inspect_filter_ignores_case(http):
    """The filter (substring or regex) matches node names and ops whatever their case."""
    assert _matcher("fullyconnected", False)("node_1", "FullyConnected")
    assert _matcher("NODE_1", False)("node_1", "FullyConnected")
    assert _matcher("^Fully.*ED$", True)("node_1", "FullyConnected")
    assert not _matcher("conv", False)("node_1", "FullyConnected")
    x = np.ones((1, 512), np.float32)

    def records(**params):
        doc = http.post("/v2/models/mlp/inspect", json=infer_json("mlp", x, parameters=params))
        assert doc.status_code == 200, doc.text
        return [(rec["name"], rec["op"]) for rec in doc.json()["records"]]

    exact = records(filter="Activation")
    assert [op for _, op in exact] == ["Activation", "Activation"]
    assert records(filter="activation") == records(filter="ACTIVATION") == exact
    assert records(filter="^ACTIV", regex=True) == exact


def test_metrics(http):
    http.post("/v2/models/mlp/infer", json=infer_json("mlp", np.zeros((1, 512), np.float32)))
    http.post("/v2/models/mlp/infer", json=infer_json("mlp", np.zeros((1, 3), np.float32)))
    r = http.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    for name in ("hybridserve_inference_requests_total", "hybridserve_inference_failures_total",
                 "hybridserve_inference_latency_seconds_bucket",
                 "hybridserve_queue_time_seconds", "hybridserve_batch_size_bucket",
                 "hybridserve_models_loaded", "hybridserve_model_load_seconds_bucket",
                 "hybridserve_http_responses_total"):
        assert name in text, name
    assert 'hybridserve_inference_failures_total{code="400",model="mlp",version="1"}' in text
    loaded = [ln for ln in text.splitlines() if ln.startswith("hybridserve_models_loaded ")]
    assert float(loaded[0].split()[1]) >= 2


def test_stats_http(http):
    http.post("/v2/models/lenet/infer",
              json=infer_json("lenet", np.zeros((3, 1, 28, 28), np.float32)))
    doc = http.get("/v2/models/lenet/versions/1/stats").json()
    (m,) = doc["model_stats"]
    assert m["inference_count"] >= 3 and m["execution_count"] >= 1
    assert any(b["batch_size"] == 3 for b in m["batch_stats"])
    assert m["last_inference"] > 0
    assert http.get("/v2/models/nope/stats").status_code == 404
