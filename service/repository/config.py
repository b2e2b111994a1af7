"""Per-model configuration (`<store>/<model>/config.json`), ours or Triton's JSON form.

Our form lists full shapes (batch dim included, -1 = free); Triton's (`input`/`output` with
`data_type` and `dims` that omit the batch dim when `max_batch_size > 0`) is accepted too, since
`tritonclient.load_model(config=...)` sends it.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

import orjson
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from ..errors import BadRequest
from ..protocol.datatypes import V2_TO_NUMPY, from_triton_type, triton_type


class ImagePreprocess(BaseModel):
    """How encoded images sent for an input become its tensor (runtime/images.py):
    decode → `color` → resize (`shorter`: shorter side to `shorter_side`, then centre crop to
    `size`; `exact`: straight to `size`) → × `scale` → − `mean` → ÷ `std` (per channel, in
    `color` order) → `layout`, cast to the input's datatype."""
    model_config = ConfigDict(extra="forbid")
    type: Literal["image"]
    color: Literal["RGB", "BGR", "GREY"] = "RGB"
    resize: Literal["shorter", "exact"] = "shorter"
    shorter_side: Optional[int] = Field(default=None, ge=1, le=16384)   # default: max(size)
    size: Optional[list[int]] = None          # [height, width]; default: the input's shape
    # opencv_cubic: cv::resize INTER_CUBIC, as MXNet Model Server resized (runtime/cvresize.py)
    resample: Literal["nearest", "bilinear", "bicubic", "opencv_cubic"] = "bilinear"
    scale: float = 1.0 / 255.0
    mean: list[float] = Field(default_factory=list, max_length=3)
    std: list[float] = Field(default_factory=list, max_length=3)
    layout: Literal["NCHW", "NHWC"] = "NCHW"

    @field_validator("size")
    @classmethod
    def _size(cls, v):
        if v is not None and (len(v) != 2 or any(d < 1 or d > 16384 for d in v)):
            raise ValueError("size must be [height, width], each 1..16384")
        return v

    @field_validator("std")
    @classmethod
    def _std(cls, v):
        if any(x == 0 for x in v):
            raise ValueError("std values must be non-zero")
        return v


class TensorSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=256)
    datatype: str = "FP32"
    # None = unknown rank (accept any shape); -1 = free dim
    shape: Optional[list[int]] = None
    preprocess: Optional[ImagePreprocess] = None      # inputs: encoded images accepted
    # outputs: a text file (one label per line) in the version or model directory, as
    # Triton's; classification results then read `score:index:label`
    label_filename: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,128}$")

    def extras(self) -> dict:
        """The serving declarations beyond name/datatype/shape (kept in the effective config)."""
        return {k: getattr(self, k) for k in ("preprocess", "label_filename")
                if getattr(self, k) is not None}

    @field_validator("datatype")
    @classmethod
    def _dt(cls, v: str) -> str:
        if v not in V2_TO_NUMPY:
            raise ValueError(f"unknown datatype {v!r}")
        return v

    @field_validator("shape")
    @classmethod
    def _shape(cls, v):
        if v is not None and (len(v) > 32 or any(d < -1 for d in v)):
            raise ValueError("shape dims must be >= -1 (at most 32 dims)")
        return v


class DynamicBatching(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_queue_delay_microseconds: int = Field(default=500, ge=0, le=10_000_000)
    preferred_batch_size: list[int] = Field(default_factory=list)
    max_queue_size: Optional[int] = Field(default=None, ge=1)


class LatestPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    num_versions: int = Field(default=1, ge=1, le=1_000_000)


class SpecificPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Triton's protobuf JSON writes int64 as strings: both spellings are accepted
    versions: list[int] = Field(min_length=1, max_length=100_000)

    @field_validator("versions", mode="before")
    @classmethod
    def _ints(cls, v):
        if isinstance(v, list):
            return [int(x) if isinstance(x, str) and x.isdigit() else x for x in v]
        return v


class VersionPolicy(BaseModel):
    """Which of a model's versions are served (Triton's `version_policy`): the `latest`
    N (default 1), `all`, or `specific` ones. The others stay in the store, unloaded."""
    model_config = ConfigDict(extra="forbid")
    latest: Optional[LatestPolicy] = None
    all: Optional[dict] = None
    specific: Optional[SpecificPolicy] = None

    @model_validator(mode="after")
    def _one(self) -> "VersionPolicy":
        chosen = [k for k in ("latest", "all", "specific") if getattr(self, k) is not None]
        if len(chosen) > 1:
            raise ValueError(f"give one of latest, all, specific (got {chosen})")
        if self.all:
            raise ValueError("'all' takes no fields")
        return self

    def select(self, versions: list[str]) -> list[str]:
        """The versions (numeric strings) this policy serves, ascending."""
        ordered = sorted(versions, key=int)
        if self.all is not None:
            return ordered
        if self.specific is not None:
            wanted = set(self.specific.versions)
            return [v for v in ordered if int(v) in wanted]
        n = self.latest.num_versions if self.latest is not None else 1
        return ordered[-n:]

    def describe(self) -> str:
        if self.all is not None:
            return "all"
        if self.specific is not None:
            return f"specific {self.specific.versions}"
        return f"latest {self.latest.num_versions if self.latest is not None else 1}"


class QuantizeConfig(BaseModel):
    """Serve the model INT8: quantized at load by `contrib.quantization.quantize_net` with
    the calibration inputs of `calib_file` (an `.npz` in the version or model directory: one
    array per data input, named as the input or in input order, first axis = examples)."""
    model_config = ConfigDict(extra="forbid")
    dtype: Literal["auto", "int8", "uint8"] = "auto"
    calib_mode: Literal["naive", "entropy", "none"] = "naive"
    calib_file: str = Field(default="calib.npz", pattern=r"^[A-Za-z0-9_.-]{1,128}\.npz$")
    num_calib_examples: Optional[int] = Field(default=None, ge=1, le=1_000_000)
    exclude_layers: list[str] = Field(default_factory=list, max_length=10_000)


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Optional[str] = None
    platform: str = "mxnet_mxnet"
    description: str = ""
    inputs: list[TensorSpec] = Field(default_factory=list)
    outputs: list[TensorSpec] = Field(default_factory=list)
    max_batch_size: int = Field(default=0, ge=0, le=1_000_000)
    dynamic_batching: Optional[DynamicBatching] = None
    version_policy: VersionPolicy = Field(default_factory=VersionPolicy)
    parameters: dict[str, Any] = Field(default_factory=dict)
    quantize: Optional[QuantizeConfig] = None          # ours: INT8 serving (runtime/int8.py)
    # ours: the engine serving this model (None: the server's setting) and its precision
    # ("bf16": OpenVINO's precision hint, so it implies "openvino"); docs/engines.md
    engine: Optional[Literal["onnxruntime", "openvino", "numpy"]] = None
    precision: Optional[Literal["f32", "bf16"]] = None

    def to_json_bytes(self) -> bytes:
        return orjson.dumps(self.model_dump(exclude_none=True), option=orjson.OPT_INDENT_2)

    def to_triton(self) -> dict:
        """Triton's model-config JSON (what `get_model_config` returns)."""
        batched = self.max_batch_size > 0

        def spec(t: TensorSpec) -> dict:
            dims = list(t.shape) if t.shape is not None else [-1]
            if batched and dims:
                dims = dims[1:]
            doc = {"name": t.name, "data_type": triton_type(t.datatype), "dims": dims}
            if t.label_filename:
                doc["label_filename"] = t.label_filename
            if t.preprocess is not None:       # ours: Triton has no such field
                doc["preprocess"] = t.preprocess.model_dump()
            return doc

        doc: dict[str, Any] = {"name": self.name, "platform": self.platform,
                               "backend": "hybridserve", "max_batch_size": self.max_batch_size,
                               "input": [spec(t) for t in self.inputs],
                               "output": [spec(t) for t in self.outputs],
                               "description": self.description}
        if self.dynamic_batching is not None:
            doc["dynamic_batching"] = self.dynamic_batching.model_dump(exclude_none=True)
        doc["version_policy"] = self.version_policy.model_dump(exclude_none=True) or {
            "latest": {"num_versions": 1}}
        if self.parameters:        # Triton's spelling: name → {"string_value": ...}
            doc["parameters"] = {k: {"string_value": v if isinstance(v, str) else
                                     orjson.dumps(v).decode()}
                                 for k, v in self.parameters.items()}
        return doc


def _from_triton(doc: dict) -> dict:
    mbs = int(doc.get("max_batch_size", 0) or 0)

    def spec(t: dict) -> dict:
        if not isinstance(t, dict) or "name" not in t:
            raise BadRequest("config: each input/output needs a 'name'")
        dims = [int(d) for d in t.get("dims", [])] if "dims" in t else None
        if dims is not None and mbs > 0:
            dims = [-1] + dims
        out = {"name": t["name"], "datatype": from_triton_type(t.get("data_type", "TYPE_FP32")),
               "shape": dims}
        return out | {k: t[k] for k in ("label_filename", "preprocess") if k in t}

    out: dict[str, Any] = {"name": doc.get("name"), "max_batch_size": mbs,
                           "inputs": [spec(t) for t in doc.get("input", [])],
                           "outputs": [spec(t) for t in doc.get("output", [])]}
    if "description" in doc:
        out["description"] = str(doc["description"])
    if "version_policy" in doc:
        out["version_policy"] = doc["version_policy"]
    db = doc.get("dynamic_batching")
    if isinstance(db, dict):
        out["dynamic_batching"] = {k: v for k, v in db.items()
                                   if k in DynamicBatching.model_fields}
    return out


def parse_config(raw: bytes | str | dict, what: str = "config") -> ModelConfig:
    """Validate a config document (ours or Triton's); BadRequest on any problem."""
    if isinstance(raw, (bytes, str)):
        try:
            doc = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError as e:
            raise BadRequest(f"{what} is not valid JSON: {e}") from None
    else:
        doc = raw
    if not isinstance(doc, dict):
        raise BadRequest(f"{what} must be a JSON object")
    if "input" in doc or "output" in doc or "backend" in doc or "instance_group" in doc:
        doc = _from_triton(doc)
    try:
        cfg = ModelConfig.model_validate(doc)
    except ValidationError as e:
        msgs = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()[:5])
        raise BadRequest(f"invalid {what}: {msgs}") from None
    names = [t.name for t in cfg.inputs]
    if len(set(names)) != len(names):
        raise BadRequest(f"invalid {what}: duplicate input names {names}")
    if any(t.label_filename for t in cfg.inputs) or any(t.preprocess for t in cfg.outputs):
        raise BadRequest(f"invalid {what}: label_filename belongs to outputs, preprocess to inputs")
    db = cfg.dynamic_batching
    if db is not None and cfg.max_batch_size == 0:
        raise BadRequest(f"invalid {what}: dynamic_batching needs max_batch_size > 0")
    if db is not None and any(p < 1 or p > cfg.max_batch_size for p in db.preferred_batch_size):
        raise BadRequest(f"invalid {what}: preferred_batch_size must be within 1..max_batch_size")
    return cfg
