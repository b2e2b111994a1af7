"""Inference over raw HTTP (httpx): JSON and binary tensors, requested outputs, 4xx errors."""
from __future__ import annotations

import gzip
import json

import numpy as np
import orjson

from serverproc import infer_json
from service.api import fastpath


def _x(n: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 512)).astype(np.float32)


def test_json_infer(http, mlp_ref):
    x = _x()
    r = http.post("/v2/models/mlp/infer", json=infer_json("mlp", x, id="req-1"))
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["model_name"] == "mlp" and doc["model_version"] == "1" and doc["id"] == "req-1"
    (out,) = doc["outputs"]
    assert out["name"] == "output" and out["datatype"] == "FP32" and out["shape"] == [3, 2]
    np.testing.assert_allclose(np.array(out["data"]).reshape(3, 2), mlp_ref(x), rtol=1e-5,
                               atol=1e-6)


def test_json_nested_data_and_version(http, mlp_ref):
    x = _x(2, 1)
    body = {"inputs": [{"name": "data", "shape": [2, 512], "datatype": "FP32",
                        "data": x.tolist()}]}
    r = http.post("/v2/models/mlp/versions/1/infer", json=body)
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(np.array(r.json()["outputs"][0]["data"]).reshape(2, 2),
                               mlp_ref(x), rtol=1e-5, atol=1e-6)


def _binary_request(x: np.ndarray, binary_out: bool = True, outputs=None) -> tuple[bytes, dict]:
    head = {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "parameters": {"binary_data_size": x.nbytes}}],
            "parameters": {"binary_data_output": binary_out}}
    if outputs is not None:
        head["outputs"] = outputs
    h = json.dumps(head).encode()
    return h + x.tobytes(), {"Inference-Header-Content-Length": str(len(h))}


def test_binary_both_directions(http, mlp_ref):
    x = _x(4, 2)
    body, headers = _binary_request(x)
    r = http.post("/v2/models/mlp/infer", content=body, headers=headers)
    assert r.status_code == 200, r.text
    n = int(r.headers["inference-header-content-length"])
    head = json.loads(r.content[:n])
    out = head["outputs"][0]
    assert out["parameters"]["binary_data_size"] == 4 * 2 * 4 and "data" not in out
    got = np.frombuffer(r.content[n:], dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(got, mlp_ref(x), rtol=1e-5, atol=1e-6)


def test_binary_in_json_out_and_requested_outputs(http, mlp_ref):
    x = _x(1, 3)
    body, headers = _binary_request(x, binary_out=True,
                                    outputs=[{"name": "output", "parameters": {"binary_data": False}}])
    r = http.post("/v2/models/mlp/infer", content=body, headers=headers)
    assert r.status_code == 200 and "inference-header-content-length" not in r.headers
    np.testing.assert_allclose(np.array(r.json()["outputs"][0]["data"]), mlp_ref(x).ravel(),
                               rtol=1e-5, atol=1e-6)
    r = http.post("/v2/models/mlp/infer",
                  json=infer_json("mlp", x, outputs=[{"name": "nope"}]))
    assert r.status_code == 400 and "nope" in r.json()["error"]


def test_classification_extension(http, mlp_ref):
    x = _x(2, 4)
    r = http.post("/v2/models/mlp/infer", json=infer_json(
        "mlp", x, outputs=[{"name": "output", "parameters": {"classification": 1}}]))
    out = r.json()["outputs"][0]
    assert out["datatype"] == "BYTES" and out["shape"] == [2, 1]
    assert [int(s.split(":")[1]) for s in out["data"]] == list(mlp_ref(x).argmax(1))


def test_gzip_body(http):
    body = gzip.compress(orjson.dumps(infer_json("mlp", _x(1))))
    r = http.post("/v2/models/mlp/infer", content=body, headers={"Content-Encoding": "gzip"})
    assert r.status_code == 200, r.text


def _err(r, code=400) -> str:
    assert r.status_code == code, (r.status_code, r.text)
    return r.json()["error"]


def test_client_mistakes_are_400(http):
    x = _x(1)
    assert "shape" in _err(http.post("/v2/models/mlp/infer", json=infer_json("mlp", x[:, :500])))
    assert "FP32" in _err(http.post("/v2/models/mlp/infer",
                                    json=infer_json("mlp", x.astype(np.float64))))
    bad = infer_json("mlp", x)
    bad["inputs"][0]["data"] = bad["inputs"][0]["data"][:-1]
    assert "512" in _err(http.post("/v2/models/mlp/infer", json=bad))
    assert "other" in _err(http.post("/v2/models/mlp/infer",
                                     json=infer_json("mlp", x, input_name="other")))
    assert "JSON" in _err(http.post("/v2/models/mlp/infer", content=b"{not json"))
    assert _err(http.post("/v2/models/mlp/infer", content=b"[1, 2]"))
    assert _err(http.post("/v2/models/mlp/infer", json={"inputs": "x"}))
    bad = infer_json("mlp", x)
    bad["inputs"][0]["datatype"] = "FP99"
    assert "FP99" in _err(http.post("/v2/models/mlp/infer", json=bad))
    bad["inputs"][0].update(datatype="FP32", data=["a"] * 512)
    assert _err(http.post("/v2/models/mlp/infer", json=bad))
    r = http.post("/v2/models/mlp/infer", json=infer_json("mlp", np.zeros((65, 512), np.float32)))
    assert "batch" in _err(r)


def test_bad_binary_framing_is_400(http):
    x = _x(1)
    body, headers = _binary_request(x)
    for hv in ("abc", "-1", str(len(body) + 1)):
        assert _err(http.post("/v2/models/mlp/infer", content=body,
                              headers={"Inference-Header-Content-Length": hv}))
    # binary part too short / too long / wrong size for the shape
    assert _err(http.post("/v2/models/mlp/infer", content=body[:-4], headers=headers))
    assert "additional" in _err(http.post("/v2/models/mlp/infer", content=body + b"\0" * 4,
                                          headers=headers))
    n = int(headers["Inference-Header-Content-Length"])
    head = json.loads(body[:n])
    head["inputs"][0]["parameters"]["binary_data_size"] = x.nbytes - 4
    h = json.dumps(head).encode()
    assert _err(http.post("/v2/models/mlp/infer", content=h + x.tobytes()[:-4],
                          headers={"Inference-Header-Content-Length": str(len(h))}))
    assert _err(http.post("/v2/models/mlp/infer", content=b"\x1f\x8b garbage",
                          headers={"Content-Encoding": "gzip"}))


def test_lenet_binary(http):
    x = np.random.default_rng(5).standard_normal((2, 1, 28, 28)).astype(np.float32)
    head = json.dumps({"inputs": [{"name": "data", "shape": [2, 1, 28, 28], "datatype": "FP32",
                                   "parameters": {"binary_data_size": x.nbytes}}]}).encode()
    r = http.post("/v2/models/lenet/infer", content=head + x.tobytes(),
                  headers={"Inference-Header-Content-Length": str(len(head))})
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    assert out["shape"] == [2, 10] and np.isfinite(out["data"]).all()


def test_routed_infer_answers_as_the_fast_path(http, monkeypatch):
    """One inference path: with the fast path switched off, the FastAPI route answers every
    kind of request (JSON, binary, gzip, a client mistake, an unknown model) byte for byte as
    the fast path does."""
    x = _x(2, 7)
    binary, bheaders = _binary_request(x)
    cases = [(infer_json("mlp", x), {}), (binary, bheaders),
             (gzip.compress(orjson.dumps(infer_json("mlp", x))), {"Content-Encoding": "gzip"}),
             (infer_json("mlp", x[:, :500]), {}), (b"{not json", {})]

    def answers(path: str = "/v2/models/mlp/infer") -> list[tuple]:
        out = []
        for body, headers in cases:
            kw = {"json": body} if isinstance(body, dict) else {"content": body}
            r = http.post(path, headers=headers, **kw)
            out.append((r.status_code, r.headers["content-type"],
                        r.headers.get("inference-header-content-length"), r.content))
        return out

    fast, fast_missing = answers(), answers("/v2/models/nope/infer")
    assert [a[0] for a in fast] == [200, 200, 200, 400, 400]
    monkeypatch.setattr(fastpath, "match", lambda scope: None)
    assert answers() == fast and answers("/v2/models/nope/infer") == fast_missing
