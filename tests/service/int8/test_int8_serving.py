"""Served INT8: a model whose config asks `quantize` is quantized at load on the calibration set
shipped beside it, reports its agreement with float32 in its metadata and serves INT8 (over
HTTP and gRPC alike); a bad quantize config or calibration file fails that model's load with a
message naming it.
The network is tests/fixtures/quantization/res (random weights, exported by MXNet 1.9.1)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import httpx
import numpy as np
import pytest

from serverproc import inproc_server
from service.api.grpc.pb import grpc_service_pb2 as pb
from service.api.grpc.pb import grpc_service_pb2_grpc as pb_grpc

FIX = Path(__file__).parents[2] / "fixtures" / "quantization"
CFG = {"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 16, 16]}],
       "max_batch_size": 8}


def _model(store: Path, name: str, quantize: dict | None, calib: np.ndarray | None) -> None:
    v = store / name / "1"
    v.mkdir(parents=True)
    shutil.copy(FIX / "res-symbol.json", v / "res-symbol.json")
    shutil.copy(FIX / "res-0000.params", v / "res-0000.params")
    cfg = dict(CFG, **({"quantize": quantize} if quantize is not None else {}))
    (store / name / "config.json").write_text(json.dumps(cfg))
    if calib is not None:
        np.savez(store / name / "calib.npz", data=calib)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    store = tmp_path_factory.mktemp("int8") / "store"
    data = np.load(FIX / "res-calib.npz")
    _model(store, "resq", {"calib_mode": "naive"}, data["calib"])
    _model(store, "resq_missing", {"calib_file": "nowhere.npz"}, None)
    _model(store, "resq_badfile", {}, None)
    (store / "resq_badfile" / "calib.npz").write_bytes(b"not a zip")
    with inproc_server(store) as info, httpx.Client(base_url=info.url, timeout=60) as c:
        yield c, data, info.grpc


def test_metadata_reports_agreement(served):
    c, *_ = served
    r = c.get("/v2/models/resq")
    assert r.status_code == 200, r.text
    p = r.json()["parameters"]
    assert p["quantized"] == "auto" and p["quantize_calib_mode"] == "naive"
    assert p["engine"] == "onnxruntime"         # the INT8 operators lower: served by ORT
    assert p["quantize_calib_examples"] == 32
    assert p["quantize_top1_agreement"] >= 0.9
    assert 0 < p["quantize_max_abs_diff"] < 0.2
    cfg = c.get("/v2/models/resq/config").json()
    assert "quantize_top1_agreement" in cfg["parameters"]



def test_console_overview_shows_agreement(served):
    """The console's models page reads INT8 agreement and max|Δ| from its overview."""
    c, *_ = served
    ov = c.get("/ui/api/overview").json()
    versions = {m["name"]: m["versions"][0] for m in ov["models"]}
    q = versions["resq"]["quantization"]
    meta = c.get("/v2/models/resq").json()["parameters"]
    assert q["quantized"] == "auto"
    assert q["quantize_top1_agreement"] == meta["quantize_top1_agreement"]
    assert q["quantize_max_abs_diff"] == meta["quantize_max_abs_diff"]
    assert versions["resq_missing"].get("quantization") is None      # failed: nothing to show

def test_infer_runs_int8(served):
    c, data, _ = served
    x = data["test"]
    body = {"inputs": [{"name": "data", "datatype": "FP32", "shape": list(x.shape),
                        "data": x.ravel().tolist()}]}
    r = c.post("/v2/models/resq/infer", json=body)
    assert r.status_code == 200, r.text
    out = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(x.shape[0], -1)
    ref = data["float_out"]
    # INT8, not the float graph: close to float32 but not equal to it
    assert 0 < np.abs(out - ref).max() < 0.1 * np.abs(ref).max()
    # the same computation as quantizing in the framework
    assert (out.argmax(1) == ref.argmax(1)).mean() >= 0.75


@pytest.mark.parametrize("name,words", [("resq_missing", "nowhere.npz"),
                                        ("resq_badfile", "not a readable .npz")])
def test_bad_calibration_fails_that_model_only(served, name, words):
    c, *_ = served
    r = c.post(f"/v2/repository/models/{name}/load")
    assert 400 <= r.status_code < 500
    assert name in r.text and words in r.text
    assert c.get("/v2/models/resq/ready").status_code == 200


def test_bad_quantize_config_is_refused(served, tmp_path):
    from service.repository.config import parse_config
    from service.errors import BadRequest
    with pytest.raises(BadRequest, match="calib_mode"):
        parse_config({**CFG, "quantize": {"calib_mode": "kl"}})
    with pytest.raises(BadRequest, match="calib_file"):
        parse_config({**CFG, "quantize": {"calib_file": "../../etc/passwd.npz"}})


def test_grpc_infer_is_the_same_int8_as_http(served):
    """ModelInfer on the INT8 model: raw and typed inputs answer exactly HTTP's numbers (one
    data plane, one quantized graph), and those are INT8's, not float32's."""
    c, data, target = served
    x = data["test"].astype(np.float32)
    body = {"inputs": [{"name": "data", "datatype": "FP32", "shape": list(x.shape),
                        "data": x.ravel().tolist()}]}
    r = c.post("/v2/models/resq/infer", json=body)
    assert r.status_code == 200, r.text
    want = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(x.shape[0], -1)
    raw = pb.ModelInferRequest(model_name="resq", id="q1")
    raw.inputs.add(name="data", datatype="FP32", shape=x.shape)
    raw.raw_input_contents.append(x.tobytes())
    typed = pb.ModelInferRequest(model_name="resq")
    typed.inputs.add(name="data", datatype="FP32", shape=x.shape).contents.fp32_contents.extend(
        x.ravel().tolist())
    with grpc.insecure_channel(target) as ch:
        stub = pb_grpc.GRPCInferenceServiceStub(ch)
        a = stub.ModelInfer(raw, timeout=60)
        b = stub.ModelInfer(typed, timeout=60)
    assert (a.model_name, a.model_version, a.id) == ("resq", "1", "q1")
    assert [tuple(o.shape) for o in a.outputs] == [tuple(o.shape) for o in b.outputs] \
        == [want.shape]
    got_raw = np.frombuffer(a.raw_output_contents[0], np.float32).reshape(want.shape)
    got_typed = np.array(b.outputs[0].contents.fp32_contents, np.float32).reshape(want.shape)
    np.testing.assert_array_equal(got_raw, want)
    np.testing.assert_array_equal(got_typed, want)
    assert np.abs(got_raw - data["float_out"]).max() > 0           # INT8, not the float graph
