"""Inference request/response framing: plain JSON or JSON + Triton binary tensor tail.

Parsing is hand-written (no pydantic on the hot path); every malformed piece raises
`BadRequest` with a message naming the offending field.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import orjson

from ..errors import BadRequest, PayloadTooLarge
from ..limits import check_tree_depth
from .tensors import check_shape, decode_binary, decode_json, encode_binary, encode_json
from .types import InferInput, InferRequest, InferResponse, RequestedOutput

_JSON_OPTS = orjson.OPT_SERIALIZE_NUMPY
_SKIP_DATA = frozenset(("data",))


def decompress(body: bytes, encoding: str | None, limit: int) -> bytes:
    """Undo Content-Encoding gzip/deflate, refusing bodies that inflate past `limit`."""
    if not encoding or encoding == "identity":
        return body
    enc = encoding.strip().lower()
    if enc not in ("gzip", "deflate"):
        raise BadRequest(f"unsupported Content-Encoding {encoding!r}")
    d = zlib.decompressobj(wbits=31 if enc == "gzip" else 15)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error as e:
        raise BadRequest(f"cannot decompress {enc} body: {e}") from None
    if len(out) > limit or d.unconsumed_tail:
        raise PayloadTooLarge(f"decompressed body exceeds {limit} bytes")
    return out


def split_body(body: bytes, header_length: str | None) -> tuple[bytes | memoryview, memoryview]:
    """Split at Inference-Header-Content-Length: (JSON part, binary tail)."""
    view = memoryview(body)
    if header_length is None:
        return body, view[len(body):]
    try:
        n = int(header_length)
    except ValueError:
        raise BadRequest(f"Inference-Header-Content-Length must be an integer, got "
                         f"{header_length!r}"[:200]) from None
    if n < 0 or n > len(body):
        raise BadRequest(f"Inference-Header-Content-Length {n} is outside the body of "
                         f"{len(body)} bytes")
    if n == 0:
        raise BadRequest("raw binary requests (Inference-Header-Content-Length: 0) are not "
                         "supported; send a JSON header")
    return view[:n], view[n:]


def load_json(raw: bytes | memoryview) -> dict:
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise BadRequest(f"malformed JSON in request: {e}"[:300]) from None
    if not isinstance(doc, dict):
        raise BadRequest("request body must be a JSON object")
    return doc


def _params(obj: Any, where: str) -> dict:
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise BadRequest(f"{where} 'parameters' must be an object")
    return obj


def request_inputs(doc: dict, max_depth: int) -> list:
    """The document's `inputs` list (non-empty), after the depth check of everything but
    tensor `data` (NumPy refuses > 64 dims by itself, and orjson anything past 1024 levels)."""
    raw_inputs = doc.get("inputs")
    if not isinstance(raw_inputs, list) or not raw_inputs:
        raise BadRequest("request must have a non-empty 'inputs' list")
    check_tree_depth(doc, max_depth, "request body", _SKIP_DATA)
    return raw_inputs


def input_header(k: int, ri: Any, seen: set[str], max_elements: int
                 ) -> tuple[str, str, tuple[int, ...], dict]:
    """(name, datatype, shape, parameters) of `inputs[k]`, checked; `seen` collects names."""
    if not isinstance(ri, dict):
        raise BadRequest(f"inputs[{k}] must be an object")
    name = ri.get("name")
    if not isinstance(name, str):
        raise BadRequest(f"inputs[{k}] needs a string 'name'")
    if name in seen:
        raise BadRequest(f"input '{name}' appears more than once")
    seen.add(name)
    datatype = ri.get("datatype")
    if not isinstance(datatype, str):
        raise BadRequest(f"input '{name}' needs a string 'datatype'")
    shape = check_shape(name, ri.get("shape"), max_elements)
    ip = _params(ri.get("parameters"), f"input '{name}'")
    if "shared_memory_region" in ip:
        raise BadRequest("shared-memory inputs are not supported by this server")
    return name, datatype, shape, ip


def parse_request(body: bytes, header_length: str | None, max_elements: int,
                  max_depth: int = 64) -> InferRequest:
    """Parse an infer (or inspect) request body into arrays."""
    head, tail = split_body(body, header_length)
    doc = load_json(head)
    raw_inputs = request_inputs(doc, max_depth)
    params = _params(doc.get("parameters"), "request")
    inputs: list[InferInput] = []
    pos = 0
    seen: set[str] = set()
    for k, ri in enumerate(raw_inputs):
        name, datatype, shape, ip = input_header(k, ri, seen, max_elements)
        size = ip.get("binary_data_size")
        if size is not None:
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise BadRequest(f"input '{name}': binary_data_size must be a non-negative integer")
            if "data" in ri:
                raise BadRequest(f"input '{name}' has both 'data' and binary_data_size")
            if pos + size > len(tail):
                raise BadRequest(f"unexpected size for input '{name}', expecting {size} additional "
                                 f"bytes but only {len(tail) - pos} remain")
            arr = decode_binary(name, datatype, shape, tail[pos:pos + size])
            pos += size
        else:
            if "data" not in ri:
                raise BadRequest(f"input '{name}' has neither 'data' nor binary_data_size")
            arr = decode_json(name, datatype, shape, ri["data"])
        inputs.append(InferInput(name, datatype, shape, arr))
    if pos != len(tail):
        raise BadRequest(f"unexpected additional input data: {len(tail) - pos} bytes after the "
                         "last binary input")
    outputs = _parse_outputs(doc.get("outputs"))
    rid = doc.get("id")
    bo = params.get("binary_data_output", False)
    if not isinstance(bo, bool):
        raise BadRequest("parameter 'binary_data_output' must be a boolean")
    return InferRequest(None if rid is None else str(rid), inputs, outputs, params, bo)


def _parse_outputs(raw: Any) -> list[RequestedOutput] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise BadRequest("'outputs' must be a list")
    outs = []
    for k, ro in enumerate(raw):
        if not isinstance(ro, dict) or not isinstance(ro.get("name"), str):
            raise BadRequest(f"outputs[{k}] must be an object with a string 'name'")
        p = _params(ro.get("parameters"), f"output '{ro['name']}'")
        if "shared_memory_region" in p:
            raise BadRequest("shared-memory outputs are not supported by this server")
        binary = p.get("binary_data")
        if binary is not None and not isinstance(binary, bool):
            raise BadRequest(f"output '{ro['name']}': binary_data must be a boolean")
        cls = p.get("classification", 0)
        if not isinstance(cls, int) or isinstance(cls, bool) or cls < 0:
            raise BadRequest(f"output '{ro['name']}': classification must be a non-negative integer")
        outs.append(RequestedOutput(ro["name"], binary, cls))
    return outs


def encode_response(resp: InferResponse) -> tuple[bytes, dict[str, str], str]:
    """Response JSON (+ binary tail): (body, extra headers, media type)."""
    blobs: list = []
    out_docs = []
    for o in resp.outputs:
        d: dict[str, Any] = {"name": o.name, "datatype": o.datatype, "shape": list(o.array.shape)}
        if o.binary:
            blob = encode_binary(o.array, o.datatype)
            d["parameters"] = {"binary_data_size": len(blob) if isinstance(blob, bytes)
                               else blob.nbytes}
            blobs.append(blob)
        else:
            d["data"] = encode_json(o.array, o.datatype)
        out_docs.append(d)
    doc: dict[str, Any] = {"model_name": resp.model_name, "model_version": resp.model_version}
    if resp.id is not None:
        doc["id"] = resp.id
    if resp.parameters:
        doc["parameters"] = resp.parameters
    doc["outputs"] = out_docs
    try:
        head = orjson.dumps(doc, option=_JSON_OPTS)
    except TypeError:               # e.g. a non-native dtype orjson cannot take directly
        for d in out_docs:
            if "data" in d and isinstance(d["data"], np.ndarray):
                d["data"] = d["data"].tolist()
        head = orjson.dumps(doc)
    if not blobs:
        return head, {}, "application/json"
    body = b"".join([head, *blobs])
    return body, {"Inference-Header-Content-Length": str(len(head))}, "application/octet-stream"
