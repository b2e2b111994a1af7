"""An INT8 model quantized and exported by real MXNet 1.9.1 (`quantize_net`, oneDNN fused nodes),
uploaded through the repository endpoint, loads and serves on onnxruntime: the load-time check
against the NumPy INT8 reference passes (its bound allows a few quantization levels), and the
answers stay within the INT8 fixtures' bound of MXNet's own INT8 outputs."""
from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from serverproc import copy_store, inproc_server
from tests.int8.int8_fixtures import FIXTURES, output_bound


@pytest.mark.parametrize("name", ["resnet_naive_auto", "mlp_naive_auto"])
def test_uploaded_int8_export_serves_on_onnxruntime(tmp_path, name):
    io = np.load(FIXTURES / f"{name}-io.npz")
    x = io["data"][:1]
    files = {"symbol": (f"{name}-symbol.json", (FIXTURES / f"{name}-symbol.json").read_bytes()),
             "params": (f"{name}-0000.params", (FIXTURES / f"{name}-0000.params").read_bytes()),
             "config": ("config.json", json.dumps({"inputs": [
                 {"name": "data", "datatype": "FP32", "shape": [-1, *x.shape[1:]]}]}).encode())}
    with inproc_server(copy_store(tmp_path / "store", ())) as srv, \
            httpx.Client(base_url=srv.url, timeout=120) as c:
        r = c.post(f"/v2/repository/models/{name}/upload", files=files)
        assert r.status_code == 201, r.text
        meta = c.get(f"/v2/models/{name}").json()
        assert meta["parameters"]["engine"] == "onnxruntime", meta["parameters"]
        body = {"inputs": [{"name": meta["inputs"][0]["name"], "datatype": "FP32",
                            "shape": list(x.shape), "data": x.ravel().tolist()}]}
        r = c.post(f"/v2/models/{name}/infer", json=body)
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        y = np.asarray(out["data"], np.float32).reshape(out["shape"])
    np.testing.assert_allclose(y, io["output"][:1], rtol=0, atol=output_bound(name))
