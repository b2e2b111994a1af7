"""MXNet Model Server archives (`.mar`, made by `model-archiver` 1.0.x) → a model version.

A `.mar` is a zip: `MAR-INF/MANIFEST.json` (model name, version, handler), the MXNet
`<prefix>-symbol.json` / `<prefix>-NNNN.params` pair, usually `signature.json` (input names and
shapes, 0 = any), often `synset.txt` (one label per line) and the handler's Python code. Only the
model files, signature and labels are extracted — handler code is never written out, let alone
run. Every member is checked before a byte is inflated: paths that would escape (absolute, `..`,
backslashes, drive letters), symlinks, duplicates, too many members, members or totals over the
limits and compression ratios that betray a bomb are refused with a BadRequest naming the
member; inflated bytes are counted too, so a lying header cannot get past the declared sizes.

What the archive says becomes a config: signature inputs → declared inputs; `synset.txt` → the
first output's `label_filename`; MMS's stock vision handler (`mxnet_vision_service`, from its
model-service template) → the image preprocessing it performed (decode RGB, resize straight to
the signature's H×W with `imresize(interp=2)` — OpenCV's INTER_CUBIC, whatever MXNet's docs
say —, no crop, scaling or normalisation, NCHW float32). Any other handler is custom: it is reported as ignored, with what was inferred.
"""
from __future__ import annotations

import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

import orjson

from ..errors import BadRequest
from ..limits import check_json_depth
from ..settings import Settings
from .config import ModelConfig, parse_config

MANIFEST = "MAR-INF/MANIFEST.json"
SIGNATURE, SYNSET, LABELS = "signature.json", "synset.txt", "labels.txt"
VISION_HANDLERS = {"mxnet_vision_service"}
# MMS's model-service template modules: stock behaviour, nothing custom to report
STOCK_HANDLERS = VISION_HANDLERS | {"mxnet_model_service"}
_PARAMS_RE = re.compile(r"^(?P<prefix>[A-Za-z0-9_.\-]+)-(?P<epoch>[0-9]{4,})\.params$")
_DTYPES = {"float32": "FP32", "float16": "FP16", "float64": "FP64", "int32": "INT32",
           "int64": "INT64", "int8": "INT8", "uint8": "UINT8"}
_CHUNK = 1 << 20


@dataclass(frozen=True)
class MarLimits:
    """Caps on what an archive may hold (whole archive, one member, inflation ratio)."""
    max_total_bytes: int = 2 << 30
    max_member_bytes: int = 2 << 30
    max_members: int = 10_000
    max_ratio: float = 200.0          # inflated ÷ compressed, for members over 1 MiB
    max_text_bytes: int = 1 << 20     # manifest, signature, synset

    @classmethod
    def of(cls, settings: Settings) -> "MarLimits":
        """The server's own caps: the upload size, a params file's size, a config's size."""
        return cls(max_total_bytes=settings.max_upload_bytes,
                   max_member_bytes=settings.max_params_bytes,
                   max_text_bytes=settings.max_config_bytes)


@dataclass
class MarModel:
    """What an unpacked archive holds and what was made of it."""
    name: str | None
    version: str | None              # a positive integer, or None (the next free one)
    config: ModelConfig
    handler: str | None
    notes: list[str] = field(default_factory=list)   # what was ignored / inferred, for logs


def _refuse(archive: str, why: str) -> BadRequest:
    return BadRequest(f"MAR archive '{archive}': {why}"[:500])


def _check_members(zf: zipfile.ZipFile, archive: str, lim: MarLimits) -> dict[str, zipfile.ZipInfo]:
    """Every member's name, type and sizes, before anything is inflated."""
    infos = zf.infolist()
    if len(infos) > lim.max_members:
        raise _refuse(archive, f"{len(infos)} members, over the limit of {lim.max_members}")
    seen: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name).parts
        if (name.startswith(("/", "\\")) or "\\" in name or ".." in parts or "\x00" in name
                or re.match(r"^[A-Za-z]:", name)):
            raise _refuse(archive, f"member '{name}' would be written outside the model")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise _refuse(archive, f"member '{name}' is a symbolic link")
        key = name.rstrip("/")
        if key in seen:
            raise _refuse(archive, f"member '{name}' appears twice")
        seen[key] = info
        if info.is_dir():
            continue
        if info.file_size > lim.max_member_bytes:
            raise _refuse(archive, f"member '{name}' inflates to {info.file_size} bytes, over "
                                   f"the limit of {lim.max_member_bytes}")
        total += info.file_size
        if total > lim.max_total_bytes:
            raise _refuse(archive, f"members inflate to over {lim.max_total_bytes} bytes")
        if info.file_size > (1 << 20) and info.file_size > lim.max_ratio * max(1, info.compress_size):
            raise _refuse(archive, f"member '{name}' inflates {info.file_size} bytes from "
                                   f"{info.compress_size} (a zip bomb?)")
    return seen


def _extract(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, archive: str) -> None:
    """Inflate one member, never past its declared size."""
    n = 0
    try:
        with zf.open(info) as src, open(dest, "wb") as out:
            while chunk := src.read(_CHUNK):
                n += len(chunk)
                if n > info.file_size:
                    raise _refuse(archive, f"member '{info.filename}' inflates past its "
                                           f"declared size {info.file_size}")
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise _refuse(archive, f"member '{info.filename}' is corrupt ({e})") from None


def _read_json(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive: str, lim: MarLimits):
    if info.file_size > lim.max_text_bytes:
        raise _refuse(archive, f"'{info.filename}' is over {lim.max_text_bytes} bytes")
    try:
        raw = zf.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise _refuse(archive, f"member '{info.filename}' is corrupt ({e})") from None
    check_json_depth(raw, 64, f"MAR archive '{archive}' {info.filename}")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise _refuse(archive, f"'{info.filename}' is not valid JSON: {e}") from None


def _model_files(members: dict[str, zipfile.ZipInfo], archive: str
                 ) -> tuple[zipfile.ZipInfo, zipfile.ZipInfo]:
    """The one `<prefix>-symbol.json` at the archive's top and its highest-epoch params."""
    top = {k: v for k, v in members.items() if "/" not in k and not v.is_dir()}
    syms = sorted(k for k in top if k.endswith("-symbol.json"))
    if len(syms) != 1:
        raise _refuse(archive, "no model files: a <prefix>-symbol.json is missing" if not syms
                      else f"several symbol files {syms}")
    prefix = syms[0][: -len("-symbol.json")]
    params = [(int(m["epoch"]), k) for k in top
              if (m := _PARAMS_RE.match(k)) and m["prefix"] == prefix]
    if not params:
        raise _refuse(archive, f"no model files: '{prefix}-NNNN.params' is missing")
    return top[syms[0]], top[max(params)[1]]


def _manifest(members, zf, archive: str, lim: MarLimits) -> dict:
    info = members.get(MANIFEST)
    if info is None:
        raise _refuse(archive, f"no {MANIFEST} (not a model-archiver 1.x archive)")
    doc = _read_json(zf, info, archive, lim)
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise _refuse(archive, f"{MANIFEST} has no 'model' object")
    return model


def _version(raw) -> str | None:
    """MMS versions are free text ("1.0"); an integral one becomes ours, else the next."""
    try:
        v = float(str(raw))
    except ValueError:
        return None
    return str(int(v)) if v.is_integer() and 1 <= v < 1e9 else None


def _tensor(entry: dict, what: str, archive: str) -> dict:
    if not isinstance(entry, dict) or not isinstance(entry.get("data_name"), str):
        raise _refuse(archive, f"signature.json {what} entry without a 'data_name'")
    shape = entry.get("data_shape")
    doc: dict = {"name": entry["data_name"]}
    if isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape):
        doc["shape"] = [-1 if d == 0 else d for d in shape]
        if doc["shape"]:
            doc["shape"][0] = -1          # MMS binds batch 1 but batches along axis 0
    dt = entry.get("data_type") or entry.get("dtype")
    if dt is not None:
        if str(dt) not in _DTYPES:
            raise _refuse(archive, f"signature.json {what} '{entry['data_name']}' has data "
                                   f"type {dt!r}; known: {sorted(_DTYPES)}")
        doc["datatype"] = _DTYPES[str(dt)]
    return doc


def _vision_preprocess() -> dict:
    """What MMS's `mxnet_vision_service` did to an image: RGB decode, straight resize to the
    signature's H×W (`imresize(interp=2)`: OpenCV's INTER_CUBIC), 0-255 floats, NCHW."""
    return {"type": "image", "color": "RGB", "resize": "exact", "resample": "opencv_cubic",
            "scale": 1.0, "layout": "NCHW"}


def _config(sig: dict | None, has_synset: bool, vision: bool, archive: str) -> dict:
    doc: dict = {"inputs": [], "outputs": []}
    if sig is not None:
        ins, outs = sig.get("inputs") or [], sig.get("outputs") or []
        if not isinstance(ins, list) or not isinstance(outs, list):
            raise _refuse(archive, "signature.json 'inputs'/'outputs' must be lists")
        doc["inputs"] = [_tensor(e, "input", archive) for e in ins]
        doc["outputs"] = [_tensor(e, "output", archive) for e in outs]
    if vision:
        for t in doc["inputs"]:
            if len(t.get("shape") or []) == 4:
                t["preprocess"] = _vision_preprocess()
    if has_synset:
        if not doc["outputs"]:
            doc["outputs"] = [{"name": "output"}]
        doc["outputs"][0]["label_filename"] = LABELS
    return doc


def manifest_name(src: str | Path | IO[bytes], archive: str, limits: MarLimits = MarLimits()) -> str | None:
    """The model name the archive's manifest gives (members checked first), if any."""
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise _refuse(archive, f"not a zip file ({e})") from None
    with zf:
        name = _manifest(_check_members(zf, archive, limits), zf, archive, limits).get("modelName")
    return name if isinstance(name, str) else None


def unpack(src: str | Path | IO[bytes], dest: Path, archive: str = "model.mar",
           limits: MarLimits = MarLimits()) -> MarModel:
    """Check `src` (a path or a seekable binary file) and write its model files, and
    `labels.txt` from `synset.txt`, into the empty directory `dest`. The caller stages `dest`
    and discards it on any error."""
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise _refuse(archive, f"not a zip file ({e})") from None
    with zf:
        members = _check_members(zf, archive, limits)
        model = _manifest(members, zf, archive, limits)
        sym, params = _model_files(members, archive)
        sig_info = members.get(SIGNATURE)
        sig = _read_json(zf, sig_info, archive, limits) if sig_info is not None else None
        if sig is not None and not isinstance(sig, dict):
            raise _refuse(archive, "signature.json must be a JSON object")
        handler = model.get("handler") if isinstance(model.get("handler"), str) else None
        module = PurePosixPath(handler.split(":", 1)[0]).stem if handler else None
        vision, stock = module in VISION_HANDLERS, module in STOCK_HANDLERS
        synset = members.get(SYNSET)
        if synset is not None and synset.file_size > limits.max_text_bytes * 16:
            raise _refuse(archive, f"synset.txt is over {limits.max_text_bytes * 16} bytes")
        _extract(zf, sym, dest / sym.filename, archive)
        _extract(zf, params, dest / params.filename, archive)
        if synset is not None:
            _extract(zf, synset, dest / LABELS, archive)
    return _described(model, None if stock else handler, vision, sig, synset is not None,
                      archive)


def _described(model: dict, custom: str | None, vision: bool, sig: dict | None,
               has_synset: bool, archive: str) -> MarModel:
    """The config and report; `custom` is the handler when it is not one of MMS's own."""
    handler = model.get("handler") if isinstance(model.get("handler"), str) else None
    doc = _config(sig, has_synset, vision, archive)
    notes, params = [], {"mms_archive": archive, "mms_handler": handler or ""}
    inferred = ("inputs from signature.json" if sig is not None else
                "inputs from the graph (no signature.json)")
    if vision:
        inferred += "; image preprocessing of MMS's mxnet_vision_service"
    if has_synset:
        inferred += "; labels from synset.txt"
    if custom:
        notes.append(f"custom MMS handler '{custom}' ignored (its code is never run); "
                     f"inferred instead: {inferred}")
        params["mms_handler_ignored"] = notes[-1]
    params["mms_inferred"] = inferred
    doc["parameters"] = params
    desc = model.get("description") if isinstance(model.get("description"), str) else ""
    doc["description"] = " ".join([desc[:1000], f"[from MMS archive '{archive}'"
                                   + (f"; {notes[0]}]" if notes else "]")]).strip()
    name = model.get("modelName") if isinstance(model.get("modelName"), str) else None
    cfg = parse_config(doc, f"config made from MAR archive '{archive}'")
    return MarModel(name, _version(model.get("modelVersion")), cfg, handler, notes)
