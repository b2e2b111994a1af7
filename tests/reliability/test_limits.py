"""Every limit is configurable and enforced with the right status: request body (413, with and
without Content-Length), tensor elements (400), JSON nesting depth (400), inference time
(504), queue length per model (503 + Retry-After, batched and unbatched), declared parameter
bytes refused before allocation (tracemalloc), and the safe defaults themselves."""
from __future__ import annotations

import asyncio
import struct
import time
import tracemalloc

import httpx
import numpy as np
import pytest

from .hostile import legacy_one, zip_bomb
from .relutil import inproc_server, make_store, mlp_body, record


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("lim") / "store")
    with inproc_server(store, max_body_bytes=64 << 10, max_tensor_elements=100_000,
                       max_json_depth=8, inference_timeout_s=0.5, default_max_queue_size=2,
                       inference_threads=1, inline_max_flops=0) as srv:
        yield srv


def lenet_body(n: int = 1) -> dict:
    x = np.zeros((n, 1, 28, 28), np.float32)
    return {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.ravel().tolist()}]}


def test_defaults_are_safe():
    from service.settings import Settings
    s = Settings(_env_file=None)
    assert s.host == "127.0.0.1" and s.auth_token is None and not s.auth_inference
    assert s.max_body_bytes == 64 << 20 and s.max_upload_bytes == 1 << 30
    assert s.max_tensor_elements == 64 << 20 and s.max_graph_nodes == 100_000
    assert s.max_params_bytes == 2 << 30 and s.max_json_depth == 64
    assert 0 < s.inference_timeout_s <= 60 and 0 < s.default_max_queue_size <= 1024
    assert s.max_symbol_bytes == 64 << 20 and s.max_config_bytes == 1 << 20


def test_body_limit(tight):
    big = b'{"inputs": [' + b" " * (100 << 10) + b"]}"
    with httpx.Client(base_url=tight.url, timeout=30) as c:
        r = c.post("/v2/models/mlp/infer", content=big)
        assert r.status_code == 413 and "limit" in r.json()["error"]
        r = c.post("/v2/models/mlp/infer", content=iter([big[:40_000], big[40_000:]]))  # chunked
        assert r.status_code == 413
        r = c.post("/v2/repository/index", content=iter([big]))
        assert r.status_code == 413
        assert c.post("/v2/models/mlp/infer", json=mlp_body()).status_code == 200


def test_tensor_element_and_depth_limits(tight):
    with httpx.Client(base_url=tight.url, timeout=30) as c:
        body = {"inputs": [{"name": "data", "shape": [1000, 512], "datatype": "FP32",
                            "parameters": {"binary_data_size": 2048000}}]}
        r = c.post("/v2/models/mlp/infer", json=body)
        assert r.status_code == 400 and "limit of 100000" in r.json()["error"]
        nested = mlp_body()
        nested["parameters"] = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}
        r = c.post("/v2/models/mlp/infer", json=nested)
        assert r.status_code == 400 and "nests" in r.json()["error"]
        ok = mlp_body()
        ok["parameters"] = {"a": {"b": 1}}
        assert c.post("/v2/models/mlp/infer", json=ok).status_code == 200


def _slow(seconds: float):
    def run(arrays):
        time.sleep(seconds)
        return [np.zeros((arrays[0].shape[0], 10), np.float32)]
    return run


def test_inference_timeout(tight):
    mv = tight.core.registry.get("lenet")
    orig = mv.runner.run
    mv.runner.run = _slow(1.5)
    try:
        t0 = time.perf_counter()
        r = httpx.post(f"{tight.url}/v2/models/lenet/infer", json=lenet_body(), timeout=30)
        assert r.status_code == 504 and "0.5" in r.json()["error"]
        assert time.perf_counter() - t0 < 1.4
        time.sleep(1.3)                       # the abandoned run finishes in its thread
    finally:
        mv.runner.run = orig
    assert mv.inflight == 0


async def _burst(url: str, path: str, body: dict, n: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as c:
        return await asyncio.gather(*(c.post(path, json=body) for _ in range(n)))


@pytest.mark.parametrize("model", ["lenet", "mlp"])      # unbatched, dynamic batching
def test_queue_limit_503_retry_after(tight, model):
    mv = tight.core.registry.get(model)
    if model == "lenet":
        orig, mv.runner.run = mv.runner.run, _slow(0.3)
        body = lenet_body()
    else:
        orig, mv.batcher._run = mv.batcher._run, (lambda a: (time.sleep(0.3), [
            np.zeros((a[0].shape[0], 2), np.float32)])[1])
        body = mlp_body()
    try:
        rs = asyncio.run(_burst(tight.url, f"/v2/models/{model}/infer", body, 12))
    finally:
        if model == "lenet":
            mv.runner.run = orig
        else:
            mv.batcher._run = orig
    codes = sorted(r.status_code for r in rs)
    full = [r for r in rs if r.status_code == 503]
    assert full and all(int(r.headers["retry-after"]) >= 1 for r in full), codes
    assert all(c in (200, 503, 504) for c in codes), codes
    assert "retry" in full[0].json()["error"]
    time.sleep(1.0)
    assert httpx.post(f"{tight.url}/v2/models/{model}/infer", json=body, timeout=30
                      ).status_code == 200
    record("limits", f"queue bound ({model})", burst=12, accepted=codes.count(200),
           refused_503=len(full))


def test_declared_params_bytes_checked_before_allocation():
    """A 124-byte legacy file declaring a 4 TiB array, and a 200 MB zip bomb: refused while
    allocating next to nothing."""
    from framework.io import ParamsFormatError, load_params
    for data in (legacy_one((1 << 20, 1 << 20), b"\0" * 64), zip_bomb(),
                 struct.pack("<QQQ", 0x112, 0, 1 << 40)):
        tracemalloc.start()
        try:
            with pytest.raises(ParamsFormatError):
                load_params(data, max_bytes=16 << 20)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 * len(data) + (2 << 20), peak
