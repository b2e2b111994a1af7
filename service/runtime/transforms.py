"""A model's declared request transforms: image inputs (preprocess) and output labels.

Built once at load from the effective config; a request whose input declared `preprocess` may
send encoded images as a BYTES tensor (or as the raw body, see api/raw.py) instead of the
tensor itself — both reach `Runner.validate` as the same array.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadRequest
from ..protocol.types import InferInput
from ..protocol.datatypes import v2_datatype
from ..repository.config import ModelConfig
from ..repository.store import ModelFiles
from .images import ImagePipeline
from .signature import IOSpec

MAX_LABELS_BYTES = 4 << 20


@dataclass
class Transforms:
    images: dict[str, ImagePipeline] = field(default_factory=dict)   # input name → pipeline
    labels: dict[str, list[str]] = field(default_factory=dict)       # output name → labels

    @classmethod
    def build(cls, model: str, cfg: ModelConfig, inputs: list[IOSpec], files: ModelFiles
              ) -> "Transforms":
        specs = {s.name: s for s in inputs}
        images = {t.name: ImagePipeline(specs[t.name], t.preprocess, model)
                  for t in cfg.inputs if t.preprocess is not None and t.name in specs}
        labels = {t.name: read_labels(model, t.label_filename, files)
                  for t in cfg.outputs if t.label_filename}
        return cls(images, labels)

    def image_input(self) -> str | None:
        """The one input that takes images (None when none or several do)."""
        return next(iter(self.images)) if len(self.images) == 1 else None

    def apply(self, inputs: list[InferInput], max_pixels: int) -> list[InferInput]:
        """BYTES inputs of image-preprocessed inputs → their tensors; others unchanged."""
        out = []
        for inp in inputs:
            pipe = self.images.get(inp.name)
            if pipe is not None and inp.datatype == "BYTES":
                arr = pipe(inp.array, max_pixels)
                inp = InferInput(inp.name, v2_datatype(arr.dtype), arr.shape, arr)
            out.append(inp)
        return out


def beside(files, filename: str) -> Path | None:
    """A file shipped with the model: in the version directory, else the model directory."""
    vdir = Path(files.symbol).parent
    for d in (vdir, vdir.parent):
        if (d / filename).is_file():
            return d / filename
    return None


def read_labels(model: str, filename: str, files: ModelFiles) -> list[str]:
    """One label per line, from the version directory or else the model directory."""
    p = beside(files, filename)
    if p is None:
        raise BadRequest(f"model '{model}': label_filename '{filename}' is in neither the "
                         "version directory nor the model directory")
    size = p.stat().st_size
    if size > MAX_LABELS_BYTES:
        raise BadRequest(f"model '{model}': labels file '{filename}' is {size} bytes, "
                         f"over the limit of {MAX_LABELS_BYTES}")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRequest(f"model '{model}': labels file '{filename}' is not UTF-8 "
                         f"text: {e}") from None
    return [ln.strip() for ln in text.splitlines()]
