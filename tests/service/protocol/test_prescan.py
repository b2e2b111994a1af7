"""The pre-scan of large infer bodies (service/protocol/prescan.py): it reads the same headers
as the full parse — names, datatypes, shapes, and each `data` array's element count — from
bodies of every shape the protocol allows (nested or flat data, strings holding brackets,
commas and escaped quotes, `data` before `shape`, binary inputs, a key named `data` elsewhere),
and refuses what cannot fit the model from the headers alone."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import orjson
import pytest

from service.errors import BadRequest
from service.protocol.codec import parse_request
from service.protocol.prescan import check_body, scan

LIMITS = dict(max_header=1 << 20, max_spans=32, max_elements=1 << 26, max_depth=64)


def _scan(body: bytes):
    return scan(body, **LIMITS)


def _heads_of_parse(body: bytes):
    req = parse_request(body, None, 1 << 26)
    return [(i.name, i.datatype, i.shape, i.array.size) for i in req.inputs]


BODIES = [
    {"inputs": [{"name": "data", "shape": [2, 3], "datatype": "FP32",
                 "data": [[1, 2.5, -3e-2], [4, 5, 6]]}]},
    {"inputs": [{"data": [1, 2, 3, 4], "name": "x", "datatype": "INT64", "shape": [2, 2]}]},
    {"inputs": [{"name": "s", "shape": [3], "datatype": "BYTES",
                 "data": ["a]\"b", "c,d", "[{}]"]}], "id": "data"},
    {"inputs": [{"name": "b", "shape": [1, 2], "datatype": "BOOL", "data": [[True, False]]},
                {"name": "e", "shape": [0, 4], "datatype": "FP32", "data": []}],
     "parameters": {"data": [1, 2, 3], "note": "\"data\": [9, 9]"},
     "outputs": [{"name": "data"}]},
    {"inputs": [{"name": "data", "shape": [1], "datatype": "FP32", "data": 7}]},
    {"inputs": [{"name": "n", "shape": [2, 2, 1], "datatype": "FP16",
                 "data": [[[1], [2]], [[3], [4]]]}]},
]


@pytest.mark.parametrize("doc", BODIES)
@pytest.mark.parametrize("indent", [False, True])
def test_scan_reads_what_the_parse_reads(doc, indent):
    body = orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)
    heads = _scan(body)
    parsed = _heads_of_parse(body)
    assert [(h.name, h.datatype, h.shape) for h in heads] == [p[:3] for p in parsed]
    for h, p in zip(heads, parsed):
        assert h.elements in (None, p[3])          # None: a bare scalar, left to the parse
    assert heads[0].elements is not None or doc["inputs"][0]["data"] == 7


def test_scan_counts_random_nested_arrays():
    rng = np.random.default_rng(0)
    for _ in range(30):
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rng.integers(1, 4)))
        x = rng.standard_normal(shape).astype(np.float32)
        data = x.tolist() if rng.random() < 0.5 else x.ravel().tolist()
        body = orjson.dumps({"inputs": [{"name": "d", "datatype": "FP32", "shape": list(shape),
                                         "data": data}]})
        assert _scan(body)[0].elements == math.prod(shape)


def test_scan_refuses_a_large_header_without_parsing_it():
    one = b'{"name":"i%d","shape":[1],"datatype":"FP32","data":[1]}'
    body = b'{"inputs":[' + b",".join(one % i for i in range(40_000)) + b"]}"
    with pytest.raises(BadRequest, match="outside the inputs' 'data' arrays.*limit of 1048576"):
        _scan(body)
    many_outputs = orjson.dumps({"inputs": [{"name": "d", "shape": [1], "datatype": "FP32",
                                             "data": [1]}],
                                 "outputs": [{"name": f"o{i}"} for i in range(60_000)]})
    with pytest.raises(BadRequest, match="outside the inputs"):
        _scan(many_outputs)


def test_scan_refuses_objects_in_data_and_unclosed_arrays():
    with pytest.raises(BadRequest, match="numbers, booleans or strings"):
        _scan(b'{"inputs":[{"name":"d","shape":[2],"datatype":"BYTES","data":["a",{"x":1}]}]}')
    with pytest.raises(BadRequest):
        _scan(b'{"inputs":[{"name":"d","shape":[2],"datatype":"FP32","data":[1, "a"')


def _runner(max_batch=64, images=()):
    from service.runtime.runner import Runner
    spec = SimpleNamespace(name="data", datatype="FP32", shape=(-1, 4), flatten_units=None)
    r = SimpleNamespace(name="m", inputs=[spec], input_index={"data": 0},
                        max_batch_size=max_batch,
                        transforms=SimpleNamespace(images=dict.fromkeys(images)))
    r.validate = lambda inputs: Runner.validate(r, inputs)
    r._shape_ok = Runner._shape_ok
    return r


def _body(n, cols=4, name="data", elements=None, datatype="FP32"):
    data = [0.5] * (elements if elements is not None else n * cols)
    return orjson.dumps({"inputs": [{"name": name, "shape": [n, cols], "datatype": datatype,
                                     "data": data}]})


@pytest.mark.parametrize("body, message", [
    (_body(65), r"batch-size must be in 1\.\.64 for 'm', got 65"),
    (_body(2, elements=9), r"shape \[2, 4\] needs 8 elements, got 9"),
    (_body(2, cols=5), "unexpected shape for input 'data'"),
    (_body(2, name="other"), "unexpected inference input 'other'"),
    (_body(2, datatype="FP64"), "data-type is 'FP64'"),
    (orjson.dumps({"inputs": [{"name": f"i{k}", "shape": [1], "datatype": "FP32",
                               "data": [1]} for k in range(30_000)]}),
     r"over the limit of 1048576 bytes \(model 'm' takes 1 input\(s\): \['data'\]\)"),
])
def test_check_body_refuses_from_headers(body, message):
    with pytest.raises(BadRequest, match=message):
        check_body(_runner(), body, 1 << 20, 1 << 26, 64)


def test_check_body_passes_a_fitting_body_and_names_only_for_image_models():
    check_body(_runner(), _body(64), 1 << 20, 1 << 26, 64)
    image = orjson.dumps({"inputs": [{"name": "data", "shape": [1], "datatype": "BYTES",
                                      "data": ["aGVsbG8="]}]})
    check_body(_runner(images=("data",)), image, 1 << 20, 1 << 26, 64)
    with pytest.raises(BadRequest, match="unexpected inference input 'x'"):
        check_body(_runner(images=("data",)), image.replace(b'"data"', b'"x"', 1),
                   1 << 20, 1 << 26, 64)
