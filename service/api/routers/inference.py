"""`POST /v2/models/{name}[/versions/{v}]/infer`: JSON or binary tensors in and out.

The app answers these requests in fastpath.py before routing; this route describes the endpoint
in the OpenAPI document and, mounted without the fast path, answers through the same handler.
"""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...protocol.schemas import ERRORS, InferenceRequest, InferenceResponse
from .. import fastpath
from ..raw import IMAGE_TYPES
from ._common import core_of, inline_schema, versioned

router = APIRouter(tags=["inference"])

_IMAGE = {"schema": {"type": "string", "format": "binary"}}
_BODY_DOC = {
    "requestBody": {"required": True, "content": {
        "application/json": {"schema": inline_schema(InferenceRequest)},
        # a model with an image input (config `preprocess`) also takes one encoded image as
        # the whole body (api/raw.py); `?classification=K` gives each output's top K
        **{t: _IMAGE for t in IMAGE_TYPES}}},
    "parameters": [{"name": "classification", "in": "query", "required": False,
                    "schema": {"type": "integer", "minimum": 1},
                    "description": "raw bodies (an image, or Inference-Header-Content-Length: "
                                   "0): every output as its top-K classes"}]}


class _FastPath(Response):
    """Hands the untouched request (the body is read raw: it may carry a binary tail) to the
    fast path's handler."""

    def __init__(self, request: Request, name: str, version: str | None):
        super().__init__()
        self.request, self.name, self.version = request, name, version

    async def __call__(self, scope, receive, send) -> None:
        await fastpath.handle(core_of(self.request), self.name, self.version, scope, receive, send)


async def infer(request: Request, name: str, version: str | None = None) -> Response:
    return _FastPath(request, name, version)


versioned(router, "/infer", infer, ["POST"], response_model=InferenceResponse,
          responses=ERRORS, openapi_extra=_BODY_DOC)
