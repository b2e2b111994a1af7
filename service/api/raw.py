"""Infer requests without a JSON header: a raw tensor or one encoded image as the whole body.

Two conventions, for a model with one input:
- `Inference-Header-Content-Length: 0` (Triton's raw binary request): the body is the bytes of
  that input at batch 1 — its tensor (the declared shape may have one free dim besides the batch,
  sized from the byte count), or an encoded image when the input declares `preprocess`. All
  outputs come back binary, as Triton answers.
- `Content-Type: image/jpeg|png|webp|bmp`: the body is one encoded image for the model's image
  input; outputs come back as JSON.
Either takes the query parameter `classification=K`: every output as its top-K classes
(`score:index[:label]`).
"""
from __future__ import annotations

import math
from urllib.parse import parse_qs

import numpy as np

from ..errors import BadRequest
from ..protocol.types import InferInput, InferRequest, RequestedOutput
from ..protocol.tensors import decode_binary
from ..runtime.runner import Runner

IMAGE_TYPES = ("image/jpeg", "image/png", "image/webp", "image/bmp")


def is_raw(header_length: bytes | None, content_type: bytes | None) -> bool:
    if header_length is not None:
        return header_length.strip() == b"0"
    return content_type is not None and content_type.split(b";")[0].strip().lower().startswith(
        b"image/")


def raw_request(runner: Runner, body: bytes, header_length: bytes | None,
                content_type: bytes | None, query: bytes) -> InferRequest:
    binary = header_length is not None
    if not body:
        raise BadRequest("empty request body")
    image_input = runner.transforms.image_input()
    if not binary:
        ctype = content_type.split(b";")[0].strip().lower().decode("latin-1")
        if ctype not in IMAGE_TYPES:
            raise BadRequest(f"unsupported Content-Type {ctype!r} for a raw image body; "
                             f"accepted: {', '.join(IMAGE_TYPES)}")
        if image_input is None:
            raise BadRequest(f"model '{runner.name}' declares no image input (config: an "
                             f"input with \"preprocess\": {{\"type\": \"image\", ...}})")
    elif len(runner.inputs) != 1:
        raise BadRequest(f"a raw binary request (Inference-Header-Content-Length: 0) needs a "
                         f"model with one input; '{runner.name}' has "
                         f"{[s.name for s in runner.inputs]}")
    if image_input is not None and (not binary or image_input == runner.inputs[0].name):
        arr = np.empty(1, dtype=object)
        arr[0] = body
        inp = InferInput(image_input, "BYTES", (1,), arr)
    else:
        inp = _raw_tensor(runner, body)
    outputs = _classification_outputs(runner, query, binary)
    return InferRequest(None, [inp], outputs, {}, binary)


def _raw_tensor(runner: Runner, body: bytes) -> InferInput:
    spec = runner.inputs[0]
    if spec.shape is None:
        raise BadRequest(f"model '{runner.name}' input '{spec.name}' has no declared shape: "
                         "send a JSON header with the shape")
    shape = [1 if (k == 0 and d == -1 and runner.max_batch_size > 0) else d
             for k, d in enumerate(spec.shape)]
    free = [k for k, d in enumerate(shape) if d == -1]
    if len(free) > 1:
        raise BadRequest(f"input '{spec.name}' of shape {list(spec.shape)} has more than one "
                         "free dim: a raw binary request cannot tell its shape")
    if free:
        rest = math.prod(d for d in shape if d != -1) * spec.dtype.itemsize
        if rest == 0 or len(body) % rest:
            raise BadRequest(f"raw body of {len(body)} bytes is not a whole number of "
                             f"{spec.datatype} rows of shape {list(spec.shape)}")
        shape[free[0]] = len(body) // rest
    return InferInput(spec.name, spec.datatype, tuple(shape),
                      decode_binary(spec.name, spec.datatype, tuple(shape), memoryview(body)))


def _classification_outputs(runner: Runner, query: bytes, binary: bool
                            ) -> list[RequestedOutput] | None:
    vals = parse_qs(query.decode("latin-1")).get("classification")
    if not vals:
        return None
    try:
        k = int(vals[-1])
    except ValueError:
        k = -1
    if k < 1:
        raise BadRequest(f"query parameter classification must be a positive integer, got "
                         f"{vals[-1]!r}"[:200])
    return [RequestedOutput(s.name, binary, k) for s in runner.outputs]
