"""`POST /v2/models/{name}[/versions/{v}]/infer`: JSON or binary tensors in and out."""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...protocol.codec import parse_request
from ...protocol.schemas import ERRORS, InferenceRequest, InferenceResponse
from ._common import check_token, core_of, inline_schema, read_body, versioned

router = APIRouter(tags=["inference"])

_BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": inline_schema(InferenceRequest)}}}}


async def infer(request: Request, name: str, version: str | None = None) -> Response:
    # the body is read raw (never through a pydantic model): it may carry a binary tail
    core = core_of(request)
    if core.settings.auth_inference:
        check_token(request)
    body = await read_body(request)
    req = parse_request(body, request.headers.get("inference-header-content-length"),
                        core.settings.max_tensor_elements, core.settings.max_json_depth)
    content, headers, media = await core.infer(name, version, req)
    return Response(content, media_type=media, headers=headers)


versioned(router, "/infer", infer, ["POST"], response_model=InferenceResponse,
          responses=ERRORS, openapi_extra=_BODY_DOC)
