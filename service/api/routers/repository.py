"""Triton's model-repository extension (index/load/unload) plus multipart upload."""
from __future__ import annotations

import io
from pathlib import PurePosixPath

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException

from ...core import management
from ...errors import BadRequest, PayloadTooLarge
from ...protocol.schemas import ERRORS, IndexEntry, IndexRequest, LoadRequest, UploadResponse
from ._common import core_of, inline_schema, json_response, read_json, require_admin
from .upload_files import FIELDS, check_upload

router = APIRouter(tags=["repository"], dependencies=[Depends(require_admin)])

_UPLOAD_DOC = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object",
    "properties": {
        "archive": {"type": "string", "format": "binary", "description": "an MXNet Model "
                    "Server .mar archive (instead of symbol/params/config): its model files, "
                    "signature and synset.txt are served; its handler code is never run"},
        "symbol": {"type": "string", "format": "binary", "description": "<prefix>-symbol.json"},
        "params": {"type": "string", "format": "binary", "description": "<prefix>-NNNN.params"},
        "config": {"type": "string", "format": "binary", "description": "config.json (ours or "
                   "Triton's JSON model config)"},
        "version": {"type": "string", "description": "version number (default: next)"}}}}}}}


def _body_doc(model) -> dict:
    return {"requestBody": {"required": False, "content": {"application/json": {
        "schema": inline_schema(model)}}}}


@router.post("/v2/repository/index", response_model=list[IndexEntry], responses=ERRORS,
             openapi_extra=_body_doc(IndexRequest))
async def index(request: Request):
    doc = await read_json(request)
    ready = doc.get("ready")                 # null (as the schema allows) = absent
    if ready is None:
        ready = False
    elif not isinstance(ready, bool):
        raise BadRequest("'ready' must be a boolean")
    return json_response(core_of(request).registry.index(ready_only=ready))


def _parameters(doc: dict) -> dict:
    p = doc.get("parameters")
    if p is None:
        return {}
    if not isinstance(p, dict):
        raise BadRequest("'parameters' must be an object")
    return p


@router.post("/v2/repository/models/{name}/load", responses=ERRORS,
             openapi_extra=_body_doc(LoadRequest))
async def load(request: Request, name: str):
    params = _parameters(await read_json(request))
    await management.load(core_of(request), name, params)
    return json_response({"name": name, "load": True})


@router.post("/v2/repository/models/{name}/unload", responses=ERRORS,
             openapi_extra=_body_doc(LoadRequest))
async def unload(request: Request, name: str):
    params = _parameters(await read_json(request))
    if not isinstance(params.get("unload_dependents", False), bool):
        raise BadRequest("'unload_dependents' must be a boolean")
    await management.unload(core_of(request), name)
    return json_response({"name": name, "unload": True})


def _as_file(v) -> io.IOBase | None:
    if v is None:
        return None
    if isinstance(v, UploadFile):
        return v.file
    return io.BytesIO(v.encode("utf-8"))


@router.post("/v2/repository/models/{name}/upload", status_code=201,
             response_model=UploadResponse, responses=ERRORS, openapi_extra=_UPLOAD_DOC)
async def upload(request: Request, name: str):
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise BadRequest("upload must be multipart/form-data with fields 'symbol', 'params' "
                         "and optional 'config', or one 'archive' (.mar)")
    try:
        form = await request.form(max_files=3, max_fields=8)
    except (MultiPartException, HTTPException, ValueError) as e:   # python-multipart's: ValueError
        raise BadRequest(f"malformed multipart body: {getattr(e, 'detail', e)}") from None
    try:
        extra = set(form.keys()) - set(FIELDS)
        if extra:
            raise BadRequest(f"unexpected upload fields {sorted(extra)}; the fields are "
                             "'symbol' (<prefix>-symbol.json), 'params' (<prefix>-NNNN.params), "
                             "optional 'config' (config.json) and 'version', or 'archive' "
                             "(an MMS .mar) and 'version'")
        version = form.get("version") or request.query_params.get("version")
        if version is not None and not isinstance(version, str):
            raise BadRequest("'version' must be a text field")
        if form.get("archive") is not None:
            out = await _upload_archive(request, name, form, version)
            return json_response(out, status=201)
        if form.get("symbol") is None:
            raise BadRequest("upload needs a 'symbol' file (<prefix>-symbol.json)")
        for field in ("symbol", "params"):
            await check_upload(field, form.get(field))
        cfg = form.get("config")
        limit = core_of(request).settings.max_config_bytes
        if isinstance(cfg, UploadFile) and cfg.size is not None and cfg.size > limit:
            raise PayloadTooLarge(f"uploaded config is {cfg.size} bytes, over the limit of "
                                  f"{limit}")
        cfg_bytes = (await cfg.read(limit + 1)) if isinstance(cfg, UploadFile) else (
            cfg.encode() if cfg else None)
        out = await management.upload(core_of(request), name, _as_file(form.get("symbol")),
                                      _as_file(form.get("params")), cfg_bytes, version)
    finally:
        await form.close()
    return json_response(out, status=201)


async def _upload_archive(request: Request, name: str, form, version: str | None) -> dict:
    """The `archive` field: one MMS `.mar`, alone (its files and config come from it)."""
    mixed = sorted({"symbol", "params", "config"} & set(form.keys()))
    if mixed:
        raise BadRequest(f"an 'archive' upload carries its own model files and config: drop "
                         f"the fields {mixed}")
    arc = form.get("archive")
    if not isinstance(arc, UploadFile):
        raise BadRequest("field 'archive' must be a file (an MMS .mar)")
    label = PurePosixPath((arc.filename or "").replace("\\", "/")).name[:128] or "archive.mar"
    return await management.upload_archive(core_of(request), name, arc.file, label, version)
