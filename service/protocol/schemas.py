"""Pydantic models of the protocol's JSON documents (for OpenAPI at /docs and for tests).

The infer hot path does not validate through these (see codec.py); they describe the wire format.
"""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, Field

Scalar = Union[str, int, float, bool]


class ErrorResponse(BaseModel):
    error: str


class ServerMetadata(BaseModel):
    name: str
    version: str
    extensions: list[str]


class TensorMetadata(BaseModel):
    name: str
    datatype: str
    shape: list[int]


class ModelMetadata(BaseModel):
    name: str
    versions: list[str] = Field(default_factory=list)
    platform: str
    inputs: list[TensorMetadata]
    outputs: list[TensorMetadata]
    # the protocol's optional $parameters; here `engine` ("onnxruntime" | "numpy") and why
    parameters: Optional[dict[str, Scalar]] = None


class RequestInput(BaseModel):
    name: str
    shape: list[int]
    datatype: str
    parameters: Optional[dict[str, Scalar]] = None
    data: Optional[Any] = Field(default=None, description="row-major flat or nested list; "
                                "omitted when sent as binary (binary_data_size)")


class RequestOutput(BaseModel):
    name: str
    parameters: Optional[dict[str, Scalar]] = None


class InferenceRequest(BaseModel):
    id: Optional[str] = None
    parameters: Optional[dict[str, Scalar]] = Field(
        default=None, description="binary_data_output (bool); for /inspect also filter (case-insensitive "
        "substring of node name or op), regex, monitor_all, include_values, max_values")
    inputs: list[RequestInput] = Field(min_length=1)      # a request with none is a 400
    outputs: Optional[list[RequestOutput]] = None


class ResponseOutput(BaseModel):
    name: str
    shape: list[int]
    datatype: str
    parameters: Optional[dict[str, Scalar]] = None
    data: Optional[list[Any]] = None


class InferenceResponse(BaseModel):
    model_name: str
    model_version: Optional[str] = None
    id: Optional[str] = None
    parameters: Optional[dict[str, Scalar]] = None
    outputs: list[ResponseOutput]


class IndexEntry(BaseModel):
    name: str
    version: Optional[str] = None
    state: Literal["READY", "LOADING", "UNLOADING", "UNAVAILABLE", "FAILED", "UNKNOWN"]
    reason: str = ""
    memory_bytes: Optional[int] = Field(
        default=None, description="bytes the loaded version holds (measured at load); "
        "absent when not loaded")


class IndexRequest(BaseModel):
    ready: Optional[bool] = None


class LoadRequest(BaseModel):
    parameters: Optional[dict[str, Any]] = Field(
        default=None, description="'config': model config JSON string; "
        "'file:<version>/<filename>': base64 file content")


class UploadResponse(BaseModel):
    name: str
    version: str
    state: str


class ModelListEntry(BaseModel):
    name: str
    versions: list[IndexEntry]
    description: str = ""


class InspectRecord(BaseModel):
    name: str
    op: str
    shape: list[int]
    dtype: str
    size: int
    min: Optional[float] = None
    max: Optional[float] = None
    mean: Optional[float] = None
    std: Optional[float] = None
    nan_count: int = 0
    inf_count: int = 0
    values: Optional[list[Any]] = None
    values_truncated: Optional[bool] = None


class InspectResponse(BaseModel):
    model_name: str
    model_version: str
    monitor_all: bool
    filter: Optional[str] = None
    records: list[InspectRecord]
    records_truncated: bool
    records_skipped: int
    outputs: list[InspectRecord]


class SummaryLayer(BaseModel):
    name: str
    op: str
    output_shape: Optional[list[Any]] = None
    params: int
    flops: Optional[int] = None


class ModelSummary(BaseModel):
    name: str
    version: str
    batch_size: int
    inputs: list[dict[str, Any]]
    outputs: list[TensorMetadata]
    layers: list[SummaryLayer]
    total_params: int
    trainable_params: int
    non_trainable_params: int
    shared_params: int
    unique_params: int
    flops: int
    flops_complete: bool
    # inputs whose shape is unknown (free dims, none given): what depends on them is None
    warnings: list[str] = []


class StatsResponse(BaseModel):
    model_stats: list[dict[str, Any]]


ERRORS = {400: {"model": ErrorResponse}, 404: {"model": ErrorResponse}}
