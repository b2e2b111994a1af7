"""Dynamic batching: merged execution, per-request results and errors, bounded queue."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from serverproc import STORE, infer_json
from service.runtime.batching import Batcher
from service.errors import Unavailable


def test_concurrent_requests_are_merged(server, http, mlp_ref):
    before = {b["batch_size"]: b["compute_infer"]["count"] for b in
              http.get("/v2/models/mlp/stats").json()["model_stats"][0]["batch_stats"]}
    xs = [np.random.default_rng(100 + i).standard_normal((1 + i % 3, 512)).astype(np.float32)
          for i in range(48)]

    async def go():
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
            return await asyncio.gather(*(c.post("/v2/models/mlp/infer", json=infer_json("mlp", x))
                                          for x in xs))

    rs = asyncio.run(go())
    for x, r in zip(xs, rs):
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        assert out["shape"] == [len(x), 2]
        np.testing.assert_allclose(np.array(out["data"]).reshape(len(x), 2), mlp_ref(x),
                                   rtol=1e-5, atol=1e-6)
    stats = http.get("/v2/models/mlp/stats").json()["model_stats"][0]
    grown = {b["batch_size"]: b["compute_infer"]["count"] - before.get(b["batch_size"], 0)
             for b in stats["batch_stats"]}
    assert any(size > 3 and n > 0 for size, n in grown.items()), grown
    assert sum(size * n for size, n in grown.items()) == sum(len(x) for x in xs)
    text = http.get("/metrics").text
    buckets = {ln.split('le="')[1].split('"')[0]: float(ln.split()[-1]) for ln in text.splitlines()
               if ln.startswith("hybridserve_batch_size_bucket") and 'model="mlp"' in ln}
    assert buckets["+Inf"] > buckets["2.0"]          # some executions ran more than 2 items
    assert 'hybridserve_queue_time_seconds_count{model="mlp",version="1"}' in text


def test_queue_full_is_503(server, http):
    files = {"symbol": ("s", (STORE / "mlp/1/mlp-symbol.json").read_bytes()),
             "params": ("p", (STORE / "mlp/1/mlp-0000.params").read_bytes()),
             "config": ("c", json.dumps({
                 "inputs": [{"name": "data", "shape": [-1, 512]}], "max_batch_size": 8,
                 "dynamic_batching": {"max_queue_delay_microseconds": 400_000,
                                      "max_queue_size": 1}}))}
    assert http.post("/v2/repository/models/mlp_q/upload", files=files).status_code == 201
    batcher = server.core.registry.get("mlp_q").batcher
    run = batcher._run
    batcher._run = lambda arrays: (time.sleep(0.3), run(arrays))[1]    # a slow model
    batcher._inline = lambda n: False                                  # ... run in a thread
    batcher._outstanding = None        # the collector keeps gathering: the queue itself fills
    body = infer_json("mlp_q", np.zeros((1, 512), np.float32))
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(http.post, "/v2/models/mlp_q/infer", json=body)    # runs (0.3 s)
        time.sleep(0.1)
        second = pool.submit(http.post, "/v2/models/mlp_q/infer", json=body)   # queued
        time.sleep(0.1)
        third = http.post("/v2/models/mlp_q/infer", json=body)                 # queue full
        assert first.result().status_code == 200 and second.result().status_code == 200
    assert third.status_code == 503
    assert "queue" in third.json()["error"] and third.headers["retry-after"] == "1"


def _closed_loop_client(server, transport: str, model: str, body: dict, n: int) -> None:
    if transport == "http":
        with httpx.Client(base_url=server.url, timeout=30) as c:
            for _ in range(n):
                assert c.post(f"/v2/models/{model}/infer", json=body).status_code == 200
        return
    import tritonclient.grpc as tg
    with tg.InferenceServerClient(server.grpc) as c:
        i = tg.InferInput("data", [1, 512], "FP32")
        i.set_data_from_numpy(np.zeros((1, 512), np.float32))
        for _ in range(n):
            c.infer(model, [i])


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_closed_loop_clients_are_not_kept_waiting_for_company(server, http, transport):
    """Two clients that each wait for their answer before sending again: once both requests
    are queued no third can come, so a batch runs at once instead of gathering for the whole
    max delay (300 ms here) -- the queue time stays far below it. The data plane counts the
    requests it holds, so gRPC callers get the same rule as HTTP's."""
    files = {"symbol": ("s", (STORE / "mlp/1/mlp-symbol.json").read_bytes()),
             "params": ("p", (STORE / "mlp/1/mlp-0000.params").read_bytes()),
             "config": ("c", json.dumps({
                 "inputs": [{"name": "data", "shape": [-1, 512]}], "max_batch_size": 8,
                 "dynamic_batching": {"max_queue_delay_microseconds": 300_000,
                                      "preferred_batch_size": [8]}}))}
    assert http.post("/v2/repository/models/mlp_cl/upload", files=files).status_code == 201
    batcher = server.core.registry.get("mlp_cl").batcher
    run = batcher._run
    batcher._run = lambda arrays: (time.sleep(0.05), run(arrays))[1]   # 50 ms, in a thread:
    batcher._inline = lambda n: False              # the other client's request comes meanwhile
    body = infer_json("mlp_cl", np.zeros((1, 512), np.float32))

    try:
        with ThreadPoolExecutor(2) as pool:
            for f in [pool.submit(_closed_loop_client, server, transport, "mlp_cl", body, 6)
                      for _ in range(2)]:
                f.result()
        st = http.get("/v2/models/mlp_cl/stats").json()["model_stats"][0]["inference_stats"]
        assert st["success"]["count"] == 12
        assert st["queue"]["ns"] / st["queue"]["count"] < 100e6, st["queue"]   # ≪ 300 ms
    finally:
        http.delete("/v2/models/mlp_cl")


def _run(arrays):
    x = arrays[0]
    if np.isnan(x).any():
        raise ValueError("NaN input")
    return [x * 2, x.sum(axis=1)]


def test_batcher_isolates_errors_and_splits_rows():
    calls = []

    async def go():
        pool = ThreadPoolExecutor(1)
        b = Batcher(_run, pool, max_batch_size=16, max_delay_us=50_000, preferred=[],
                    max_queue=64, concurrency=1,
                    on_execution=lambda size, ns, n: calls.append((size, n)))
        b.start()
        xs = [np.full((i + 1, 3), float(i), np.float32) for i in range(4)]
        xs[2][0, 0] = np.nan
        res = await asyncio.gather(*(b.submit([x], len(x)) for x in xs), return_exceptions=True)
        await b.stop()
        pool.shutdown()
        return xs, res

    xs, res = asyncio.run(go())
    assert isinstance(res[2], ValueError)
    for i in (0, 1, 3):
        rows, queue_ns, size = res[i]
        np.testing.assert_array_equal(rows[0], xs[i] * 2)
        np.testing.assert_array_equal(rows[1], xs[i].sum(axis=1))
        assert queue_ns >= 0
    # the merged run of 10 rows failed, then each request ran alone
    assert sorted(calls) == [(1, 1), (2, 1), (4, 1)]


def test_batcher_bounded_queue_and_shape_groups():
    async def go():
        pool = ThreadPoolExecutor(1)
        seen = []
        b = Batcher(lambda a: (time.sleep(0.05), [a[0] + 0])[1], pool, max_batch_size=8,
                    max_delay_us=30_000, preferred=[4], max_queue=3, concurrency=1,
                    on_execution=lambda size, ns, n: seen.append(size))
        b.start()
        # the first runs at once (idle model); the other three queue behind it
        tasks = [asyncio.create_task(b.submit([np.zeros((1, 2 + (i == 1)))], 1)) for i in range(4)]
        await asyncio.sleep(0.01)
        with pytest.raises(Unavailable):
            await b.submit([np.zeros((1, 2))], 1)
        res = await asyncio.gather(*tasks)
        await b.stop()
        pool.shutdown()
        return res, seen

    res, seen = asyncio.run(go())
    assert [r[0][0].shape for r in res] == [(1, 2), (1, 3), (1, 2), (1, 2)]
    assert seen == [1, 1, 2]       # queued (·,2) requests merged; (·,3) ran on its own


def test_concurrent_unbatched_requests_get_their_own_results(server, http):
    """lenet has no dynamic batching: requests run concurrently on the inference threads,
    sharing one warm cached op; every client must still get exactly its own result."""
    xs = [np.random.default_rng(200 + i).standard_normal((2 + i % 3, 1, 28, 28)).astype(np.float32)
          for i in range(24)]
    serial = []
    for x in xs:
        r = http.post("/v2/models/lenet/infer", json=infer_json("lenet", x))
        serial.append(np.array(r.json()["outputs"][0]["data"]).reshape(len(x), 10))

    async def go():
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
            return await asyncio.gather(*(c.post("/v2/models/lenet/infer",
                                                 json=infer_json("lenet", x)) for x in xs))

    for ref, r in zip(serial, asyncio.run(go())):
        assert r.status_code == 200
        np.testing.assert_array_equal(np.array(r.json()["outputs"][0]["data"]).reshape(ref.shape), ref)


@pytest.mark.parametrize("inline", [False, True])
def test_batcher_shares_ready_rows_among_idle_inference_threads(inline):
    """Eight rows queue while one slot of three is busy: a model that runs on the inference
    threads gets two batches of four on the two idle slots (both cores busy) instead of one
    batch of eight; a model cheap enough to run inline keeps the single batch."""
    seen = []
    gate = threading.Event()

    def run(a):
        if a[0].shape[1] == 3:         # the lone first request holds its slot until released
            gate.wait(5)
        time.sleep(0.02)
        return [a[0] * 2]

    async def go():
        pool = ThreadPoolExecutor(3)
        b = Batcher(run, pool, max_batch_size=8, max_delay_us=200_000, preferred=[],
                    max_queue=64, concurrency=3,
                    on_execution=lambda size, ns, n: seen.append(size),
                    inline=lambda n: inline and n > 1)
        b.start()
        first = asyncio.create_task(b.submit([np.zeros((1, 3), np.float32)], 1))
        await asyncio.sleep(0.02)
        xs = [np.full((1, 2), i, np.float32) for i in range(8)]
        rest = [asyncio.create_task(b.submit([x], 1)) for x in xs]
        res = await asyncio.gather(*rest)
        gate.set()
        await first
        await b.stop()
        pool.shutdown()
        return xs, res

    xs, res = asyncio.run(go())
    for x, (rows, _, _) in zip(xs, res):
        np.testing.assert_array_equal(rows[0], x * 2)
    assert sorted(seen) == ([1, 8] if inline else [1, 4, 4])
