"""The engine a model is served by, over HTTP: model metadata `parameters`, the Triton config's
`parameters` and the console overview; a server without onnxruntime starts and serves on NumPy,
saying why."""
from __future__ import annotations

import sys

import httpx
import numpy as np
import pytest

from serverproc import copy_store, inproc_server


def _infer(c: httpx.Client, x: np.ndarray) -> np.ndarray:
    body = {"inputs": [{"name": "data", "datatype": "FP32", "shape": list(x.shape),
                        "data": x.ravel().tolist()}]}
    r = c.post("/v2/models/lenet/infer", json=body)
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    return np.asarray(out["data"], np.float32).reshape(out["shape"])


def _engine(c: httpx.Client) -> dict:
    meta = c.get("/v2/models/lenet").json()["parameters"]
    cfg = c.get("/v2/models/lenet/config").json()["parameters"]
    assert cfg == {k: {"string_value": str(v)} for k, v in meta.items()}
    ov = c.get("/ui/api/overview").json()
    (v,) = [v for m in ov["models"] if m["name"] == "lenet" for v in m["versions"]]
    assert v["engine"] == meta
    return meta


def test_served_by_onnxruntime_and_answers_as_numpy(http, server):
    meta = _engine(http)
    assert meta["engine"] == "onnxruntime" and meta["onnxruntime_nodes"] > 0
    runner = server.core.registry.get("lenet", None).runner
    x = np.random.default_rng(0).random((1, 1, 28, 28), np.float32)
    ref = runner.run_hooked([x], lambda *_: None)[0]          # the traced NumPy graph
    y = _infer(http, x)
    assert np.abs(y - ref).max() <= 1e-4 * max(1.0, np.abs(ref).max())


def test_without_onnxruntime_the_server_starts_on_numpy(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)      # import fails
    with inproc_server(copy_store(tmp_path / "store", ("lenet",))) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as c:
        meta = _engine(c)
        assert meta["engine"] == "numpy"
        assert "'onnxruntime' package" in meta["engine_fallback_reason"]
        x = np.random.default_rng(0).random((1, 1, 28, 28), np.float32)
        ref = srv.core.registry.get("lenet", None).runner.run_hooked([x], lambda *_: None)[0]
        np.testing.assert_allclose(_infer(c, x), ref, rtol=1e-4, atol=1e-5)


def test_engine_numpy_setting(tmp_path):
    with inproc_server(copy_store(tmp_path / "store", ("lenet",)), engine="numpy") as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as c:
        assert _engine(c) == {"engine": "numpy", "engine_graph": "optimized"}
