"""Issue 26, requests that used to stall the server or keep its memory: large infer bodies are
refused from their headers before any data is parsed (plain, gzipped, over the batch size,
too many inputs, wrong element count), valid large ones still answer correctly; the heap is
trimmed after large requests; an inspection whose response would pass the cap is refused
before it is built. (Stall seconds and memory figures: bench/reliability_bench.py.)"""
from __future__ import annotations

import asyncio
import gzip
import threading
import zlib

import httpx
import numpy as np
import orjson
import pytest

import service.api.bodies as bodies
from service.runtime.trimmer import TRIMMER, HeapTrimmer
from serverproc import wait_for

from .relutil import inproc_server, make_store, record


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("hostile") / "store")
    with inproc_server(store, inspect_max_response_bytes=100_000) as s:
        yield s


@pytest.fixture
def parses(monkeypatch):
    """The full parses the server runs (the pre-scan must refuse before any)."""
    seen: list[int] = []
    real = bodies.parse_request

    def counting(body, *a, **kw):
        seen.append(len(body))
        return real(body, *a, **kw)
    monkeypatch.setattr(bodies, "parse_request", counting)
    return seen


def _mlp(n: int, elements: int | None = None) -> bytes:
    count = n * 512 if elements is None else elements
    return b'{"inputs":[{"name":"data","shape":[%d,512],"datatype":"FP32","data":[%s]}]}' % (
        n, b",".join([b"0.12345678"] * count))


def _post(srv, body: bytes, **headers) -> httpx.Response:
    return httpx.post(f"{srv.url}/v2/models/mlp/infer", content=body, timeout=60,
                      headers={"content-type": "application/json", **headers})


def test_many_inputs_refused_before_parsing(srv, parses):
    one = b'{"name":"i%d","shape":[1],"datatype":"FP32","data":[1]}'
    body = b'{"inputs":[' + b",".join(one % i for i in range(100_000)) + b"]}"
    r = _post(srv, body)
    assert r.status_code == 400, r.text
    assert "outside the inputs' 'data' arrays" in r.json()["error"]
    assert "model 'mlp' takes 1 input(s): ['data']" in r.json()["error"]
    assert parses == []
    record("hostile", "100 000 one-element inputs", body_mib=round(len(body) / 2**20, 1),
           status=r.status_code, full_parses=len(parses))


def test_batch_over_the_maximum_refused_before_parsing_also_gzipped(srv, parses):
    body = _mlp(1000)                       # 2 MB: mlp's max_batch_size is 64
    for enc, wire in ((None, body), ("gzip", gzip.compress(body)),
                      ("deflate", zlib.compress(body))):
        r = _post(srv, wire, **({"content-encoding": enc} if enc else {}))
        assert r.status_code == 400, (enc, r.text)
        assert "batch-size must be in 1..64 for 'mlp', got 1000" in r.json()["error"]
    assert parses == []


def test_wrong_element_count_refused_before_parsing(srv, parses):
    r = _post(srv, _mlp(64, elements=64 * 512 + 1))
    assert r.status_code == 400 and "needs 32768 elements, got 32769" in r.json()["error"]
    assert parses == []


def test_gzip_bomb_bounded_by_the_body_limit(srv):
    bomb = gzip.compress(b" " * (srv.settings.max_body_bytes + 1024))
    r = _post(srv, bomb, **{"content-encoding": "gzip"})
    assert r.status_code == 413 and "decompressed body exceeds" in r.json()["error"]


def test_valid_large_request_answers_as_a_small_one(srv, parses):
    x = np.random.default_rng(1).standard_normal((64, 512)).astype(np.float32)
    body = orjson.dumps({"inputs": [{"name": "data", "shape": [64, 512], "datatype": "FP32",
                                     "data": x.tolist()}]})
    assert len(body) >= bodies.PRESCAN_MIN_BYTES      # pre-scanned, parsed in a thread
    big = _post(srv, body)
    assert big.status_code == 200, big.text[:300]
    assert parses == [len(body)]
    small = [_post(srv, orjson.dumps({"inputs": [{"name": "data", "shape": [1, 512],
                                                  "datatype": "FP32", "data": row.tolist()}]}))
             for row in x[:3]]
    got = np.array(big.json()["outputs"][0]["data"], np.float32).reshape(64, -1)
    for k, r in enumerate(small):
        assert np.allclose(got[k], r.json()["outputs"][0]["data"], atol=1e-5)
    gz = _post(srv, gzip.compress(body), **{"content-encoding": "gzip"})
    assert gz.status_code == 200 and gz.json()["outputs"] == big.json()["outputs"]


def test_large_bodies_parsed_off_the_event_loop(srv, monkeypatch):
    threads: dict[int, int] = {}
    real = bodies.parse_request

    def where(body, *a, **kw):
        threads[len(body)] = threading.get_ident()
        return real(body, *a, **kw)
    monkeypatch.setattr(bodies, "parse_request", where)
    small = orjson.dumps({"inputs": [{"name": "data", "shape": [1, 512], "datatype": "FP32",
                                      "data": [0.0] * 512}]})
    large = _mlp(64)
    assert _post(srv, small).status_code == 200 and _post(srv, large).status_code == 200
    loop_thread = threads[len(small)]            # small bodies: parsed inline, on the loop
    assert threads[len(large)] != loop_thread


def test_heap_trimmed_after_large_requests_only(srv):
    before = TRIMMER.trims
    for _ in range(3):
        _post(srv, orjson.dumps({"inputs": [{"name": "data", "shape": [1, 512],
                                             "datatype": "FP32", "data": [0.0] * 512}]}))
    assert TRIMMER.trims == before and TRIMMER._pending is None
    _post(srv, _mlp(1000))                    # 2 MB, refused: its memory is still given back
    wait_for(lambda: TRIMMER.trims > before, 10, "trim after a large request")


def test_trims_are_rate_limited():
    t = HeapTrimmer(delay_s=0.05, interval_s=0.4)

    async def burst():
        for _ in range(20):                   # 20 large requests within 0.6 s
            t.note(8 << 20)
            await asyncio.sleep(0.03)
        await asyncio.sleep(0.6)              # the trailing trim after the burst
    asyncio.run(burst())
    assert 2 <= t.trims <= 3, t.trims


def _lenet_inspect(params: dict) -> dict:
    return {"inputs": [{"name": "data", "shape": [1, 1, 28, 28], "datatype": "FP32",
                        "data": [0.25] * 784}], "parameters": params}


def test_inspection_over_the_cap_refused_naming_how_to_narrow(srv):
    url = f"{srv.url}/v2/models/lenet/inspect"
    r = httpx.post(url, json=_lenet_inspect({"include_values": True, "max_values": 100_000}),
                   timeout=60)
    assert r.status_code == 400, r.text[:300]
    msg = r.json()["error"]
    assert "100000 bytes" in msg and "inspect_max_response_bytes" in msg
    assert "'filter'" in msg and "'max_values'" in msg
    ok = httpx.post(url, json=_lenet_inspect({"include_values": True, "max_values": 100}),
                    timeout=60)
    assert ok.status_code == 200, ok.text[:300]
    narrowed = httpx.post(url, json=_lenet_inspect({"include_values": True, "max_values": 100_000,
                                                    "filter": "fullyconnected"}), timeout=60)
    assert narrowed.status_code == 200 and narrowed.json()["records"], narrowed.text[:300]
    assert len(narrowed.content) <= 100_000 and len(ok.content) <= 100_000


def test_inspection_estimate_is_close_to_the_response():
    from service.runtime.inspection import ResponseBudget, tensor_stats
    rng = np.random.default_rng(2)
    for a in (rng.standard_normal((4, 1000)).astype(np.float32),
              rng.integers(-1000, 1000, (3000,)), rng.random(2000) > 0.5):
        b = ResponseBudget(0, "m", 10_000)
        b.charge("node_output", a, True)
        real = len(orjson.dumps(tensor_stats("node_output", "Op", a, True, 10_000)))
        assert 0.7 * real <= b.total <= 2.0 * real, (a.dtype, b.total, real)


def test_defaults_documented_and_bounded():
    from service.settings import Settings
    s = Settings(_env_file=None)
    assert 0 < s.inspect_max_response_bytes <= 64 << 20
    assert 0 < s.max_json_header_bytes <= s.max_body_bytes
