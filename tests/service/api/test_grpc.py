"""The gRPC API against the shared test server: stock `tritonclient.grpc` (sync and asyncio)
and plain grpcio with our stubs. Every answer is checked against the same server's HTTP API:
same models, same numbers, same error messages."""
from __future__ import annotations

import asyncio
import json
import queue

import grpc
import numpy as np
import pytest
import tritonclient.grpc as tg
import tritonclient.grpc.aio as tga
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tritonclient.utils import InferenceServerException

from service.api.grpc.pb import grpc_service_pb2 as pb
from service.api.grpc.pb import grpc_service_pb2_grpc as pb_grpc
from service.cli.demo import COLORS
from test_images_http import image

LABELS = list(COLORS)


@pytest.fixture(scope="module")
def tgc(server):
    c = tg.InferenceServerClient(server.grpc)
    yield c
    c.close()


@pytest.fixture(scope="module")
def channel(server):
    with grpc.insecure_channel(server.grpc) as ch:
        yield ch


@pytest.fixture(scope="module")
def stub(channel):
    return pb_grpc.GRPCInferenceServiceStub(channel)


def mlp_input(x: np.ndarray) -> tg.InferInput:
    i = tg.InferInput("data", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    return i


def http_error(http, path: str, **kw) -> tuple[int, str]:
    r = http.post(path, **kw) if kw else http.get(path)
    return r.status_code, r.json()["error"]


def test_health_metadata_config_as_http(tgc, http):
    assert tgc.is_server_live() and tgc.is_server_ready()
    assert tgc.is_model_ready("mlp") and tgc.is_model_ready("mlp", "1")
    assert not tgc.is_model_ready("nope") and not tgc.is_model_ready("mlp", "99")
    meta = tgc.get_server_metadata(as_json=True)
    want = http.get("/v2").json()
    assert meta["name"] == want["name"] and meta["extensions"] == want["extensions"]
    for name in ("mlp", "colors"):
        md = tgc.get_model_metadata(name, as_json=True)
        ref = http.get(f"/v2/models/{name}").json()
        for k in ("name", "versions", "platform"):
            assert md[k] == ref[k]
        for side in ("inputs", "outputs"):
            assert [(t["name"], t["datatype"], [int(d) for d in t["shape"]]) for t in md[side]] \
                == [(t["name"], t["datatype"], t["shape"]) for t in ref[side]]
    cfg = tgc.get_model_config("mlp", as_json=True)["config"]
    ref = http.get("/v2/models/mlp/config").json()
    assert cfg["max_batch_size"] == ref["max_batch_size"] == 64
    assert [(i["name"], i["data_type"], [int(d) for d in i["dims"]]) for i in cfg["input"]] \
        == [(i["name"], i["data_type"], i["dims"]) for i in ref["input"]]
    assert cfg["dynamic_batching"]["preferred_batch_size"] == [8, 16, 32]
    assert "label_filename" not in cfg["output"][0]
    colors = tgc.get_model_config("colors", as_json=True)["config"]
    assert colors["output"][0]["label_filename"] == \
        http.get("/v2/models/colors/config").json()["output"][0]["label_filename"]


def test_infer_raw_matches_reference(tgc, mlp_ref):
    x = np.random.default_rng(3).standard_normal((5, 512)).astype(np.float32)
    res = tgc.infer("mlp", [mlp_input(x)], outputs=[tg.InferRequestedOutput("output")],
                    request_id="r9", model_version="1")
    np.testing.assert_allclose(res.as_numpy("output"), mlp_ref(x), rtol=1e-5, atol=1e-6)
    resp = res.get_response()
    assert resp.id == "r9" and resp.model_version == "1" and len(resp.raw_output_contents) == 1


def test_typed_contents_in_typed_out(stub, mlp_ref):
    x = np.random.default_rng(4).standard_normal((2, 512)).astype(np.float32)
    req = pb.ModelInferRequest(model_name="mlp")
    req.inputs.add(name="data", datatype="FP32", shape=[2, 512]).contents.fp32_contents.extend(
        x.reshape(-1).tolist())
    resp = stub.ModelInfer(req)
    assert not resp.raw_output_contents
    (out,) = resp.outputs
    got = np.array(out.contents.fp32_contents, np.float32).reshape(list(out.shape))
    np.testing.assert_allclose(got, mlp_ref(x), rtol=1e-5, atol=1e-6)


def test_asyncio_client(server, mlp_ref):
    xs = [np.random.default_rng(i).standard_normal((3, 512)).astype(np.float32) for i in range(4)]

    async def run():
        async with tga.InferenceServerClient(server.grpc) as c:
            assert await c.is_server_live()
            results = await asyncio.gather(*(c.infer("mlp", [mlp_input(x)]) for x in xs))
            return [r.as_numpy("output") for r in results]
    for x, y in zip(xs, asyncio.run(run())):
        np.testing.assert_allclose(y, mlp_ref(x), rtol=1e-5, atol=1e-6)


def test_errors_are_status_codes_with_http_messages(tgc, stub, http):
    def grpc_error(fn, *a, **kw):
        with pytest.raises(InferenceServerException) as e:
            fn(*a, **kw)
        return e.value.status(), e.value.message()
    # unknown model: 404 / NOT_FOUND, one message
    st, msg = http_error(http, "/v2/models/nope")
    assert (st, msg) == (404, "Model with name 'nope' does not exist.")
    assert grpc_error(tgc.get_model_metadata, "nope") == ("StatusCode.NOT_FOUND", msg)
    x = np.zeros((1, 100), np.float32)
    assert grpc_error(tgc.infer, "nope", [mlp_input(x)]) == ("StatusCode.NOT_FOUND", msg)
    # wrong shape: 400 / INVALID_ARGUMENT, one message
    st, msg = http_error(http, "/v2/models/mlp/infer", json={"inputs": [
        {"name": "data", "datatype": "FP32", "shape": [1, 100], "data": [0.0] * 100}]})
    assert st == 400 and "shape" in msg
    assert grpc_error(tgc.infer, "mlp", [mlp_input(x)]) == ("StatusCode.INVALID_ARGUMENT", msg)
    # unknown version, unknown output
    st, msg = http_error(http, "/v2/models/mlp/versions/99")
    assert grpc_error(tgc.get_model_metadata, "mlp", "99")[1] == msg
    ok = mlp_input(np.zeros((1, 512), np.float32))
    st, msg = http_error(http, "/v2/models/mlp/infer", json={
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [1, 512], "data": [0.0] * 512}],
        "outputs": [{"name": "nope"}]})
    assert grpc_error(tgc.infer, "mlp", [ok], outputs=[tg.InferRequestedOutput("nope")]) \
        == ("StatusCode.INVALID_ARGUMENT", msg)
    # wrong raw size, huge declared shape: refused, nothing allocated
    req = pb.ModelInferRequest(model_name="mlp", raw_input_contents=[b"\x00" * 12])
    req.inputs.add(name="data", datatype="FP32", shape=[1, 512])
    with pytest.raises(grpc.RpcError) as e:
        stub.ModelInfer(req)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "unexpected size for input 'data', expecting 2048" in e.value.details()
    req.inputs[0].shape[:] = [1 << 30, 1 << 30]
    with pytest.raises(grpc.RpcError) as e:
        stub.ModelInfer(req)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "exceed" in e.value.details()


def test_malformed_protobuf_is_invalid_argument(channel, tgc):
    call = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
    with pytest.raises(grpc.RpcError) as e:
        call(b"\x0a\xff\xff\xff\xff\x0f", timeout=10)     # a length past the end
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "malformed ModelInferRequest" in e.value.details()
    assert tgc.is_server_live()                            # and the server goes on


def test_unserved_rpc_is_unimplemented(channel):
    call = channel.unary_unary("/inference.GRPCInferenceService/SystemSharedMemoryStatus")
    with pytest.raises(grpc.RpcError) as e:
        call(b"", timeout=10)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_images_in_labels_out(tgc):
    blobs = np.array([image(COLORS["red"]), image(COLORS["blue"], "PNG")], dtype=object)
    i = tg.InferInput("data", [2], "BYTES")
    i.set_data_from_numpy(blobs)
    res = tgc.infer("colors", [i], outputs=[tg.InferRequestedOutput("probabilities",
                                                                    class_count=3)])
    top = res.as_numpy("probabilities")
    assert top.shape == (2, 3)
    rows = [[s.decode().split(":") for s in row] for row in top]
    assert rows[0][0][1:] == [str(LABELS.index("red")), "red"]
    assert rows[1][0][1:] == [str(LABELS.index("blue")), "blue"]


def test_statistics_and_metrics_count_grpc_requests(tgc, http):
    def success() -> int:
        (m,) = tgc.get_inference_statistics("lenet", as_json=True)["model_stats"]
        return int(m["inference_stats"]["success"].get("count", 0))
    shape = [int(d) for d in tgc.get_model_metadata("lenet", as_json=True)["inputs"][0]["shape"]]
    shape = [1 if d < 0 else d for d in shape]
    before = success()
    for _ in range(3):
        x = np.zeros(shape, np.float32)
        i = tg.InferInput("data", shape, "FP32")
        i.set_data_from_numpy(x)
        tgc.infer("lenet", [i])
    assert success() == before + 3
    everything = tgc.get_inference_statistics(as_json=True)["model_stats"]
    assert {"mlp", "lenet"} <= {m["name"] for m in everything}
    http_doc = http.get("/v2/models/lenet/stats").json()["model_stats"][0]
    assert http_doc["inference_stats"]["success"]["count"] == before + 3
    assert 'model="lenet"' in http.get("/metrics").text


def test_stream_infer_answers_each_request(tgc, mlp_ref):
    got: queue.Queue = queue.Queue()
    tgc.start_stream(callback=lambda result, error: got.put((result, error)))
    try:
        xs = [np.random.default_rng(10 + k).standard_normal((1, 512)).astype(np.float32)
              for k in range(2)]
        tgc.async_stream_infer("mlp", [mlp_input(xs[0])], request_id="a")
        tgc.async_stream_infer("mlp", [mlp_input(np.zeros((1, 7), np.float32))],
                               request_id="bad")
        tgc.async_stream_infer("mlp", [mlp_input(xs[1])], request_id="b")
        answers = [got.get(timeout=30) for _ in range(3)]
    finally:
        tgc.stop_stream()
    (r0, e0), (r1, e1), (r2, e2) = answers
    assert e0 is None and e2 is None and r1 is None
    assert "shape" in e1.message()
    assert r0.get_response().id == "a" and r2.get_response().id == "b"
    np.testing.assert_allclose(r0.as_numpy("output"), mlp_ref(xs[0]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r2.as_numpy("output"), mlp_ref(xs[1]), rtol=1e-5, atol=1e-6)


def test_health_service(channel):
    h = health_pb2_grpc.HealthStub(channel)
    for name in ("", "inference.GRPCInferenceService"):
        resp = h.Check(health_pb2.HealthCheckRequest(service=name))
        assert resp.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as e:
        h.Check(health_pb2.HealthCheckRequest(service="nope"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_http_metadata_names_the_grpc_port(http, server):
    assert http.get("/v2").json()["grpc"] == {"port": int(server.grpc.rsplit(":", 1)[1]),
                                              "tls": False}


def test_repository_over_grpc(tgc, server, http):
    import shutil
    shutil.copytree(server.store / "lenet", server.store / "lenet_grpc")
    tgc.load_model("lenet_grpc")
    assert tgc.is_model_ready("lenet_grpc")
    rows = {(r.name, r.version): r.state for r in tgc.get_model_repository_index().models}
    assert rows[("lenet_grpc", "1")] == "READY"
    # a config override for this load only, as over HTTP
    cfg = http.get("/v2/models/lenet_grpc/config").json()
    cfg["max_batch_size"] = 4
    tgc.load_model("lenet_grpc", config=json.dumps(cfg))
    assert tgc.get_model_config("lenet_grpc", as_json=True)["config"]["max_batch_size"] == 4
    tgc.unload_model("lenet_grpc")
    assert not tgc.is_model_ready("lenet_grpc")
    st, msg = http_error(http, "/v2/repository/models/does_not_exist/load", json={})
    with pytest.raises(InferenceServerException) as e:
        tgc.load_model("does_not_exist")
    assert e.value.message() == msg and st == 404 and e.value.status() == "StatusCode.NOT_FOUND"


def test_version_policy_as_http(tgc, server, http):
    """Two versions on disk, the policy serves the newest: the older one is not ready and
    refused with HTTP's message (UNAVAILABLE), unversioned calls get the newest."""
    import shutil
    d = server.store / "mlp_vp"
    shutil.copytree(server.store / "mlp", d)
    shutil.copytree(d / "1", d / "2")
    cfg = json.loads((d / "config.json").read_text())
    cfg["version_policy"] = {"latest": {"num_versions": 1}}
    (d / "config.json").write_text(json.dumps(cfg))
    tgc.load_model("mlp_vp")
    assert tgc.is_model_ready("mlp_vp", "2") and not tgc.is_model_ready("mlp_vp", "1")
    assert tgc.get_model_metadata("mlp_vp").versions == ["2"]
    x = np.zeros((1, 512), np.float32)
    assert tgc.infer("mlp_vp", [mlp_input(x)]).get_response().model_version == "2"
    r = http.post("/v2/models/mlp_vp/versions/1/infer", json={"inputs": [
        {"name": "data", "datatype": "FP32", "shape": [1, 512], "data": [0.0] * 512}]})
    with pytest.raises(InferenceServerException) as e:
        tgc.infer("mlp_vp", [mlp_input(x)], model_version="1")
    assert r.status_code == 503
    assert (e.value.status(), e.value.message()) == ("StatusCode.UNAVAILABLE", r.json()["error"])
    tgc.unload_model("mlp_vp")
