"""The gRPC tensor codec without a server: every datatype typed and raw, BYTES framing,
requested outputs and parameters, and the bad inputs it must refuse before allocating."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from service.api.grpc import codec
from service.api.grpc.pb import grpc_service_pb2 as pb
from service.errors import BadRequest
from service.protocol.types import InferResponse, OutputTensor
from service.protocol.datatypes import V2_TO_NUMPY

LIMIT = 1 << 20


def sample(datatype: str, shape=(2, 3)) -> np.ndarray:
    dt = V2_TO_NUMPY[datatype]
    if datatype == "BOOL":
        return (np.arange(6) % 2 == 0).reshape(shape)
    if datatype == "BYTES":
        return np.array([b"a", b"", b"\x00\xff", "é".encode(), b"xyz" * 50, b"q"],
                        dtype=object).reshape(shape)
    info = np.iinfo(dt) if dt.kind in "iu" else np.finfo(dt)
    return np.array([info.min, info.max, 0, 1, 2, 3], dtype=dt).reshape(shape)


def request(arr: np.ndarray, datatype: str, raw: bool) -> pb.ModelInferRequest:
    msg = pb.ModelInferRequest(model_name="m")
    t = msg.inputs.add(name="x", datatype=datatype, shape=arr.shape)
    if raw:
        if datatype == "BYTES":
            msg.raw_input_contents.append(b"".join(struct.pack("<I", len(v)) + v
                                                   for v in arr.reshape(-1)))
        else:
            msg.raw_input_contents.append(np.ascontiguousarray(arr).tobytes())
    else:
        getattr(t.contents, codec.CONTENTS_FIELD[datatype]).extend(
            list(arr.reshape(-1)) if datatype == "BYTES" else arr.reshape(-1).tolist())
    return msg


# FP16 has no typed contents field in the protocol: raw only
@pytest.mark.parametrize("datatype, raw", [(d, True) for d in V2_TO_NUMPY]
                         + [(d, False) for d in codec.CONTENTS_FIELD])
def test_every_datatype_round_trips(datatype, raw):
    arr = sample(datatype)
    req = codec.decode_request(request(arr, datatype, raw), LIMIT)
    (x,) = req.inputs
    assert x.shape == (2, 3) and x.datatype == datatype
    np.testing.assert_array_equal(x.array, arr)
    assert x.array.dtype == V2_TO_NUMPY[datatype]
    out = OutputTensor("y", datatype, x.array, True)
    resp = codec.encode_response(InferResponse("m", "1", "id7", [out], {"p": 2}), raw)
    assert resp.parameters["p"].int64_param == 2
    assert resp.id == "id7" and resp.model_version == "1"
    t = resp.outputs[0]
    assert list(t.shape) == [2, 3] and t.datatype == datatype
    if raw:
        assert len(resp.raw_output_contents) == 1
        back = codec.decode_request(_as_request(resp), LIMIT).inputs[0].array
    else:
        assert not resp.raw_output_contents
        back = np.array(list(getattr(t.contents, codec.CONTENTS_FIELD[datatype])),
                        dtype=V2_TO_NUMPY[datatype]).reshape(2, 3)
    np.testing.assert_array_equal(back, arr)


def _as_request(resp: pb.ModelInferResponse) -> pb.ModelInferRequest:
    msg = pb.ModelInferRequest()
    for o in resp.outputs:
        msg.inputs.add(name=o.name, datatype=o.datatype, shape=o.shape)
    msg.raw_input_contents.extend(resp.raw_output_contents)
    return msg


def test_fp16_outputs_go_raw_even_for_a_typed_request():
    msg = request(sample("FP32"), "FP32", raw=False)
    half = OutputTensor("y", "FP16", np.ones((2, 2), np.float16), True)
    assert codec.wants_raw(msg, [half])
    assert not codec.wants_raw(msg, [OutputTensor("y", "FP32", np.ones(2, np.float32), True)])


def test_requested_outputs_and_parameters():
    msg = request(sample("FP32"), "FP32", raw=True)
    msg.id = "42"
    msg.parameters["flag"].bool_param = True
    msg.parameters["n"].int64_param = 3
    msg.parameters["s"].string_param = "v"
    o = msg.outputs.add(name="probabilities")
    o.parameters["classification"].int64_param = 5
    msg.outputs.add(name="other")
    req = codec.decode_request(msg, LIMIT)
    assert req.id == "42" and req.parameters == {"flag": True, "n": 3, "s": "v"}
    assert [(r.name, r.classification) for r in req.outputs] == [("probabilities", 5),
                                                                  ("other", 0)]


@pytest.mark.parametrize("mutate, message", [
    (lambda m: m.raw_input_contents.__setitem__(0, b"\x00" * 7), "unexpected size for input 'x'"),
    (lambda m: m.raw_input_contents.append(b""), "raw_input_contents holds 2 buffers for 1"),
    (lambda m: m.inputs[0].shape.__setitem__(0, 1 << 40), "exceed the limit"),
    (lambda m: m.inputs[0].shape.__setitem__(0, -1), "non-negative integers"),
    (lambda m: setattr(m.inputs[0], "datatype", "FP8"), "unsupported datatype 'FP8'"),
    (lambda m: (m.inputs.add(name="x", datatype="FP32", shape=[1]),
                m.raw_input_contents.append(b"\x00" * 4)), "appears more than once"),
])
def test_bad_raw_requests(mutate, message):
    msg = request(sample("FP32"), "FP32", raw=True)
    mutate(msg)
    with pytest.raises(BadRequest, match=message):
        codec.decode_request(msg, LIMIT)


def test_bad_typed_requests():
    msg = request(sample("INT32"), "INT32", raw=False)
    msg.inputs[0].contents.int_contents.append(1)
    with pytest.raises(BadRequest, match="shape \\[2, 3\\] needs 6, 'int_contents' holds 7"):
        codec.decode_request(msg, LIMIT)
    half = pb.ModelInferRequest(model_name="m")
    half.inputs.add(name="h", datatype="FP16", shape=[1])
    with pytest.raises(BadRequest, match="FP16 has no typed 'contents' field"):
        codec.decode_request(half, LIMIT)
    empty = pb.ModelInferRequest(model_name="m")
    with pytest.raises(BadRequest, match="at least one input"):
        codec.decode_request(empty, LIMIT)
    small = pb.ModelInferRequest(model_name="m")
    small.inputs.add(name="u", datatype="UINT8", shape=[1]).contents.uint_contents.append(300)
    with pytest.raises(BadRequest, match="does not fit UINT8"):
        codec.decode_request(small, LIMIT)


def test_bytes_framing_is_checked():
    msg = request(sample("BYTES"), "BYTES", raw=True)
    msg.raw_input_contents[0] = msg.raw_input_contents[0][:-1]
    with pytest.raises(BadRequest, match="BYTES"):
        codec.decode_request(msg, LIMIT)
    # a huge declared BYTES shape over a tiny buffer is refused before allocating elements
    big = pb.ModelInferRequest(model_name="m")
    big.inputs.add(name="b", datatype="BYTES", shape=[LIMIT])
    big.raw_input_contents.append(b"\x00" * 8)
    with pytest.raises(BadRequest, match="needs at least"):
        codec.decode_request(big, LIMIT)
