"""The wire format without a server: tensor codecs, request framing, body decompression."""
from __future__ import annotations

import json

import numpy as np
import orjson
import pytest

from service.errors import BadRequest, PayloadTooLarge
from service.protocol.codec import decompress, encode_response, parse_request
from service.protocol.types import InferResponse, OutputTensor
from service.protocol.datatypes import V2_TO_NUMPY

NUMERIC = [k for k in V2_TO_NUMPY if k != "BYTES"]


def _sample(dt: str) -> np.ndarray:
    if dt == "BOOL":
        return np.array([[True, False, True], [False, False, True]])
    return (np.arange(6).reshape(2, 3) * 3).astype(V2_TO_NUMPY[dt])


@pytest.mark.parametrize("dt", NUMERIC)
def test_json_round_trip_every_datatype(dt):
    x = _sample(dt)
    body = orjson.dumps({"inputs": [{"name": "x", "shape": [2, 3], "datatype": dt,
                                     "data": x.ravel().tolist()}]})
    (inp,) = parse_request(body, None, 1 << 20).inputs
    assert inp.array.dtype == x.dtype
    np.testing.assert_array_equal(inp.array, x)
    resp, headers, media = encode_response(
        InferResponse("m", "1", None, [OutputTensor("y", dt, x, False)]))
    assert media == "application/json" and not headers
    out = json.loads(resp)["outputs"][0]
    assert out["datatype"] == dt and out["shape"] == [2, 3]
    np.testing.assert_array_equal(np.array(out["data"], dtype=x.dtype).reshape(2, 3), x)


@pytest.mark.parametrize("dt", NUMERIC)
def test_binary_round_trip_every_datatype(dt):
    x = _sample(dt)
    head = orjson.dumps({"inputs": [{"name": "x", "shape": [2, 3], "datatype": dt,
                                     "parameters": {"binary_data_size": x.nbytes}}]})
    (inp,) = parse_request(head + x.tobytes(), str(len(head)), 1 << 20).inputs
    np.testing.assert_array_equal(inp.array, x)
    resp, headers, _ = encode_response(
        InferResponse("m", "1", "id", [OutputTensor("y", dt, x, True)]))
    n = int(headers["Inference-Header-Content-Length"])
    doc = json.loads(resp[:n])
    assert doc["outputs"][0]["parameters"]["binary_data_size"] == x.nbytes
    np.testing.assert_array_equal(np.frombuffer(resp[n:], x.dtype).reshape(2, 3), x)


def test_bytes_both_encodings():
    vals = [b"hello", b"", "héllo".encode()]
    blob = b"".join(len(v).to_bytes(4, "little") + v for v in vals)
    head = orjson.dumps({"inputs": [
        {"name": "b", "shape": [3], "datatype": "BYTES", "parameters": {"binary_data_size": len(blob)}},
        {"name": "j", "shape": [1, 2], "datatype": "BYTES", "data": ["a", "bc"]}]})
    b, j = parse_request(head + blob, str(len(head)), 100).inputs
    assert list(b.array) == vals and j.array.tolist() == [[b"a", b"bc"]]
    resp, headers, _ = encode_response(
        InferResponse("m", "1", None, [OutputTensor("o", "BYTES", b.array, True)]))
    assert resp[int(headers["Inference-Header-Content-Length"]):] == blob
    with pytest.raises(BadRequest):
        parse_request(head + blob[:-1], str(len(head)), 100)


def test_nested_and_mismatched_json():
    ok = orjson.dumps({"inputs": [{"name": "x", "shape": [2, 2], "datatype": "INT32",
                                   "data": [[1, 2], [3, 4]]}]})
    assert parse_request(ok, None, 100).inputs[0].array.tolist() == [[1, 2], [3, 4]]
    for bad in ({"name": "x", "shape": [2, 2], "datatype": "INT32", "data": [1, 2, 3]},
                {"name": "x", "shape": [-2], "datatype": "INT32", "data": []},
                {"name": "x", "shape": [2], "datatype": "UINT8", "data": [1, 300]},
                {"name": "x", "shape": [1], "datatype": "BOOL", "data": [2]},
                {"name": "x", "shape": [1], "datatype": "FP32"},
                {"name": 3, "shape": [1], "datatype": "FP32", "data": [1]}):
        with pytest.raises(BadRequest):
            parse_request(orjson.dumps({"inputs": [bad]}), None, 100)
    with pytest.raises(BadRequest, match="limit"):
        parse_request(orjson.dumps({"inputs": [{"name": "x", "shape": [10, 20], "datatype": "FP32",
                                                "data": [0] * 200}]}), None, 100)


def test_decompress_limits():
    import gzip
    import zlib
    assert decompress(gzip.compress(b"abc"), "gzip", 10) == b"abc"
    assert decompress(zlib.compress(b"abc"), "deflate", 10) == b"abc"
    with pytest.raises(PayloadTooLarge):
        decompress(gzip.compress(b"\0" * 100_000), "gzip", 1000)     # zip bomb
    with pytest.raises(BadRequest):
        decompress(b"abc", "br", 10)

