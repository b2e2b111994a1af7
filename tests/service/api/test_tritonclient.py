"""The stock `tritonclient.http` client against the server, unchanged."""
from __future__ import annotations

import json

import numpy as np
import pytest
import tritonclient.http as tc
from tritonclient.utils import InferenceServerException

from fixture_util import FIXTURES


def test_health_and_metadata(triton):
    assert triton.is_server_live() and triton.is_server_ready()
    assert triton.is_model_ready("mlp") and triton.is_model_ready("mlp", "1")
    assert not triton.is_model_ready("nope")
    assert triton.get_server_metadata()["name"] == "hybridserve"
    md = triton.get_model_metadata("mlp")
    assert md["inputs"][0]["shape"] == [-1, 512]
    cfg = triton.get_model_config("mlp")
    assert cfg["max_batch_size"] == 64


@pytest.mark.parametrize("binary_in,binary_out", [(True, True), (False, False), (True, False),
                                                  (False, True)])
def test_infer(triton, mlp_ref, binary_in, binary_out):
    x = np.random.default_rng(7).standard_normal((5, 512)).astype(np.float32)
    inp = tc.InferInput("data", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=binary_in)
    out = tc.InferRequestedOutput("output", binary_data=binary_out)
    res = triton.infer("mlp", [inp], outputs=[out], request_id="r7")
    np.testing.assert_allclose(res.as_numpy("output"), mlp_ref(x), rtol=1e-5, atol=1e-6)
    assert res.get_response()["id"] == "r7"


def test_infer_default_outputs_and_version(triton, mlp_ref):
    x = np.ones((1, 512), np.float32)
    inp = tc.InferInput("data", [1, 512], "FP32")
    inp.set_data_from_numpy(x)
    res = triton.infer("mlp", [inp], model_version="1")
    np.testing.assert_allclose(res.as_numpy("output"), mlp_ref(x), rtol=1e-5, atol=1e-6)


def test_async_infer(triton, mlp_ref):
    xs = [np.random.default_rng(i).standard_normal((2, 512)).astype(np.float32) for i in range(6)]
    handles = []
    for x in xs:
        inp = tc.InferInput("data", [2, 512], "FP32")
        inp.set_data_from_numpy(x)
        handles.append(triton.async_infer("mlp", [inp]))
    for x, h in zip(xs, handles):
        np.testing.assert_allclose(h.get_result().as_numpy("output"), mlp_ref(x), rtol=1e-5,
                                   atol=1e-6)


def test_errors_surface_as_exceptions(triton):
    inp = tc.InferInput("data", [1, 100], "FP32")
    inp.set_data_from_numpy(np.zeros((1, 100), np.float32))
    with pytest.raises(InferenceServerException) as e:
        triton.infer("mlp", [inp])
    assert e.value.status() == "400" and "shape" in e.value.message()
    with pytest.raises(InferenceServerException) as e:
        triton.get_model_metadata("nope")
    assert e.value.status() == "404"


def test_statistics(triton):
    inp = tc.InferInput("data", [1, 512], "FP32")
    inp.set_data_from_numpy(np.zeros((1, 512), np.float32))
    triton.infer("mlp", [inp])
    st = triton.get_inference_statistics("mlp")
    (m,) = st["model_stats"]
    assert m["name"] == "mlp" and m["version"] == "1"
    assert m["inference_count"] >= 1 and m["inference_stats"]["success"]["count"] >= 1
    assert {"success", "fail", "queue", "compute_infer"} <= set(m["inference_stats"])
    everything = triton.get_inference_statistics()
    assert {s["name"] for s in everything["model_stats"]} >= {"mlp", "lenet"}


def test_repository_index(triton):
    idx = triton.get_model_repository_index()
    rows = {(r["name"], r["version"]): r for r in idx}
    assert rows[("mlp", "1")]["state"] == "READY"


def test_unload_and_load(triton, server, http):
    import shutil
    shutil.copytree(server.store / "lenet", server.store / "lenet_tc")
    triton.load_model("lenet_tc")
    assert triton.is_model_ready("lenet_tc")
    triton.unload_model("lenet_tc")
    assert not triton.is_model_ready("lenet_tc")
    rows = {(r["name"], r["version"]): r for r in triton.get_model_repository_index()}
    assert rows[("lenet_tc", "1")]["state"] == "UNAVAILABLE"
    r = http.post("/v2/models/lenet_tc/infer", json={"inputs": []})
    assert r.status_code == 400 and "error" in r.json()
    triton.load_model("lenet_tc")
    assert triton.is_model_ready("lenet_tc")
    with pytest.raises(InferenceServerException):
        triton.load_model("does_not_exist")


def test_load_with_files(triton, server):
    """`load_model(name, config=..., files=...)` creates a model from the request alone."""
    d = FIXTURES / "mxnet-2.0.0b1"
    files = {"file:1/mlp3-symbol.json": (d / "mlp3_sequential-symbol.json").read_bytes(),
             "file:1/mlp3-0000.params": (d / "mlp3_sequential-0000.params").read_bytes()}
    io = np.load(d / "mlp3_sequential-io.npz")
    config = {"name": "mlp3_files", "max_batch_size": 8,
              "input": [{"name": "data", "data_type": "TYPE_FP32",
                         "dims": list(io["data"].shape[1:])}],
              "output": [{"name": "out", "data_type": "TYPE_FP32",
                          "dims": list(io["output"].shape[1:])}]}
    triton.load_model("mlp3_files", config=json.dumps(config), files=files)
    assert triton.is_model_ready("mlp3_files")
    assert (server.store / "mlp3_files" / "1" / "mlp3-symbol.json").is_file()
    x = io["data"]
    inp = tc.InferInput("data", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    res = triton.infer("mlp3_files", [inp])
    np.testing.assert_allclose(res.as_numpy("out"), io["output"], rtol=1e-4, atol=1e-5)
    # a bad file is refused and the model keeps serving its current version
    with pytest.raises(InferenceServerException) as e:
        triton.load_model("mlp3_files", config=json.dumps(config),
                          files={"file:1/mlp3-symbol.json": b"{broken",
                                 "file:1/mlp3-0000.params": files["file:1/mlp3-0000.params"]})
    assert e.value.status() == "400"
    assert triton.is_model_ready("mlp3_files")
    np.testing.assert_allclose(triton.infer("mlp3_files", [inp]).as_numpy("out"), io["output"],
                               rtol=1e-4, atol=1e-5)
