"""The decoded inference request and the typed response: what every transport builds from its
wire format (REST JSON + binary tail, raw bodies, gRPC protobuf, CLI files) and what the data
plane (service/core/dataplane.py) returns for each transport to encode.

Tensors are NumPy arrays in row-major order: numeric datatypes as their dtype (a transport may
hand read-only views of its request buffer: nothing writes into inputs), BYTES as an object
array whose elements are `bytes`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(slots=True)
class InferInput:
    name: str
    datatype: str                   # v2 datatype name: "FP32", "INT64", "BYTES", ...
    shape: tuple[int, ...]
    array: np.ndarray               # of `shape`; BYTES: dtype object, elements bytes


@dataclass(slots=True)
class RequestedOutput:
    name: str
    binary: bool | None = None      # REST binary extension; None: the request's default
    classification: int = 0         # > 0: the output as its top-K classes (BYTES)


@dataclass(slots=True)
class InferRequest:
    id: str | None
    inputs: list[InferInput]
    outputs: list[RequestedOutput] | None = None   # None: every output of the model
    parameters: dict[str, Any] = field(default_factory=dict)
    binary_output: bool = False     # REST: outputs not named in `outputs` go binary
    decode_ns: int = 0              # time spent decoding the wire (Triton's compute_input)


@dataclass(slots=True)
class OutputTensor:
    name: str
    datatype: str
    array: np.ndarray
    binary: bool = False            # REST: send in the binary tail (gRPC ignores it)


@dataclass(slots=True)
class InferResponse:
    model_name: str
    model_version: str
    id: str | None
    outputs: list[OutputTensor]
    parameters: dict[str, Any] = field(default_factory=dict)
