"""`POST /v2/models/{name}[/versions/{v}]/inspect`: per-op tensor records via op hooks."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...runtime.trimmer import TRIMMER
from ..bodies import infer_request
from ...protocol.schemas import ERRORS, InferenceRequest, InspectResponse
from ._common import core_of, inline_schema, json_response, read_body, require_admin, versioned

router = APIRouter(tags=["inspection"], dependencies=[Depends(require_admin)])

_BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": inline_schema(InferenceRequest)}}},
    "description": "An infer-style body; `parameters` may hold filter (case-insensitive "
                   "substring of node name or op), regex (bool: filter is a regex), monitor_all "
                   "(bool: op inputs too), "
                   "include_values (bool), max_values (int cap per tensor)."}


async def inspect(request: Request, name: str, version: str | None = None):
    core = core_of(request)
    body = await read_body(request)
    moved = len(body)
    try:
        req = await infer_request(core, name, version, body,
                                  request.headers.get("inference-header-content-length"))
        resp = json_response(await core.inspect(name, version, req))
        moved = max(moved, len(resp.body))
        return resp
    finally:
        TRIMMER.note(moved)                  # a large one (or a refused one): memory back soon


versioned(router, "/inspect", inspect, ["POST"], response_model=InspectResponse,
          responses=ERRORS, openapi_extra=_BODY_DOC)
