"""Protobuf tensors ↔ NumPy: `ModelInferRequest` → the data plane's typed request, output
tensors → `ModelInferResponse`.

Raw contents (`raw_input_contents`) become zero-copy views through the same binary decoder
as HTTP's binary tensor extension (same checks, same messages); typed `contents` go through
one `np.asarray` per tensor. Every declared shape is checked against the element limit
before anything is allocated.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ...errors import BadRequest
from ...protocol.types import (InferInput, InferRequest, InferResponse, OutputTensor,
                               RequestedOutput)
from ...protocol.datatypes import numpy_dtype
from ...protocol.tensors import check_shape, decode_binary, encode_binary
from .pb import grpc_service_pb2 as pb

# datatype → the InferTensorContents field that carries it typed (FP16/BF16: raw only)
CONTENTS_FIELD = {
    "BOOL": "bool_contents",
    "INT8": "int_contents", "INT16": "int_contents", "INT32": "int_contents",
    "INT64": "int64_contents",
    "UINT8": "uint_contents", "UINT16": "uint_contents", "UINT32": "uint_contents",
    "UINT64": "uint64_contents",
    "FP32": "fp32_contents", "FP64": "fp64_contents",
    "BYTES": "bytes_contents",
}


def param_value(p) -> Any:
    """An InferParameter / ModelRepositoryParameter → its Python value (None when unset)."""
    kind = p.WhichOneof("parameter_choice")
    return getattr(p, kind) if kind is not None else None


def params_dict(params) -> dict[str, Any]:
    return {k: param_value(v) for k, v in params.items()}


def set_param(p, value: Any) -> None:
    if isinstance(value, bool):
        p.bool_param = value
    elif isinstance(value, int):
        p.int64_param = value
    elif isinstance(value, float):
        p.double_param = value
    else:
        p.string_param = str(value)


def _typed(name: str, datatype: str, shape: tuple[int, ...], contents) -> np.ndarray:
    field = CONTENTS_FIELD.get(datatype)
    if field is None:
        numpy_dtype(datatype, f"input '{name}'")        # unknown datatype: its own message
        raise BadRequest(f"input '{name}': {datatype} has no typed 'contents' field; send it in "
                         "raw_input_contents")
    values = getattr(contents, field)
    count = math.prod(shape)
    if len(values) != count:
        raise BadRequest(f"unexpected number of elements for input '{name}': shape "
                         f"{list(shape)} needs {count}, '{field}' holds {len(values)}")
    if datatype == "BYTES":
        arr = np.empty(count, dtype=object)
        arr[:] = list(values)
        return arr.reshape(shape)
    dt = numpy_dtype(datatype)
    try:
        return np.asarray(values, dtype=dt).reshape(shape)
    except OverflowError:
        raise BadRequest(f"input '{name}': a value does not fit {datatype}") from None


def decode_request(msg: pb.ModelInferRequest, max_elements: int) -> InferRequest:
    """ModelInferRequest → InferRequest (inputs as arrays, requested outputs, parameters).

    Per request on the event loop: each protobuf field read builds a wrapper, so every field
    is read once and empty maps are skipped by their length."""
    tensors = msg.inputs
    if not tensors:
        raise BadRequest("request must have at least one input")
    raw = msg.raw_input_contents
    if raw and len(raw) != len(tensors):
        raise BadRequest(f"raw_input_contents holds {len(raw)} buffers for {len(tensors)} "
                         "inputs: send every input raw, or none")
    inputs: list[InferInput] = []
    seen: set[str] | None = set() if len(tensors) > 1 else None
    for k, t in enumerate(tensors):
        name = t.name
        if seen is not None:
            if name in seen:
                raise BadRequest(f"input '{name}' appears more than once")
            seen.add(name)
        shape = check_shape(name, list(t.shape), max_elements)
        params = t.parameters
        if params and "shared_memory_region" in params:
            raise BadRequest("shared-memory inputs are not supported by this server")
        if raw:
            if t.HasField("contents"):
                raise BadRequest(f"input '{name}' has both 'contents' and raw_input_contents")
            arr = decode_binary(name, t.datatype, shape, memoryview(raw[k]))
        else:
            arr = _typed(name, t.datatype, shape, t.contents)
        inputs.append(InferInput(name, t.datatype, shape, arr))
    outputs = None
    if msg.outputs:
        outputs = []
        for o in msg.outputs:
            p = params_dict(o.parameters)
            if "shared_memory_region" in p:
                raise BadRequest("shared-memory outputs are not supported by this server")
            cls = p.get("classification", 0)
            if not isinstance(cls, int) or isinstance(cls, bool) or cls < 0:
                raise BadRequest(f"output '{o.name}': classification must be a non-negative "
                                 "integer")
            outputs.append(RequestedOutput(o.name, None, cls))
    params = msg.parameters
    return InferRequest(msg.id or None, inputs, outputs, params_dict(params) if params else {})


def _untyped(outputs: Iterable[OutputTensor]) -> bool:
    return any(o.datatype not in CONTENTS_FIELD for o in outputs)


def wants_raw(msg: pb.ModelInferRequest, outputs: Iterable[OutputTensor]) -> bool:
    """Raw outputs when the client sent raw inputs, or when an output has no typed form."""
    return bool(msg.raw_input_contents) or _untyped(outputs)


def encode_raw(r: InferResponse) -> pb.ModelInferResponse:
    """The answer to raw inputs: raw outputs."""
    return encode_response(r, True)


def encode_typed(r: InferResponse) -> pb.ModelInferResponse:
    """The answer to typed inputs: typed outputs, unless an output has no typed form."""
    return encode_response(r, _untyped(r.outputs))


def encode_response(r: InferResponse, raw: bool) -> pb.ModelInferResponse:
    """The data plane's typed response as a ModelInferResponse: raw_output_contents when `raw`,
    typed contents otherwise."""
    resp = pb.ModelInferResponse(model_name=r.model_name, model_version=r.model_version,
                                 id=r.id or "")
    for k, v in r.parameters.items():
        set_param(resp.parameters[k], v)
    for o in r.outputs:
        t = resp.outputs.add(name=o.name, datatype=o.datatype, shape=o.array.shape)
        if raw:
            resp.raw_output_contents.append(bytes(encode_binary(o.array, o.datatype)))
            continue
        flat = o.array.reshape(-1)
        if o.datatype == "BYTES":
            t.contents.bytes_contents.extend(
                v if isinstance(v, bytes) else str(v).encode("utf-8") for v in flat)
        else:
            getattr(t.contents, CONTENTS_FIELD[o.datatype]).extend(flat.tolist())
    return resp
