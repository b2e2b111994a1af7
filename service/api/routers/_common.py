"""Shared router helpers: the core, JSON responses, bodies, auth, versioned paths."""
from __future__ import annotations

import hmac
from typing import Any, Callable

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...core.dataplane import Core
from ...errors import BadRequest, Unauthorized
from ...limits import check_json_depth
from ...protocol.codec import decompress


def core_of(request: Request) -> Core:
    return request.app.state.core


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status,
                    media_type="application/json")


async def read_body(request: Request, limit: int | None = None) -> bytes:
    core = core_of(request)
    body = await request.body()
    enc = request.headers.get("content-encoding")
    if enc:
        body = decompress(body, enc, limit or core.settings.max_body_bytes)
    return body


async def read_json(request: Request, allow_empty: bool = True) -> dict:
    body = await read_body(request)
    if not body.strip():
        if allow_empty:
            return {}
        raise BadRequest("request body is empty")
    check_json_depth(body, core_of(request).settings.max_json_depth, "request body")
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise BadRequest(f"malformed JSON: {e}") from None
    if not isinstance(doc, dict):
        raise BadRequest("request body must be a JSON object")
    return doc


def check_token(request: Request) -> None:
    token = core_of(request).settings.auth_token
    if token is None:
        return
    got = request.headers.get("authorization", "")
    want = "Bearer " + token.get_secret_value()
    if not hmac.compare_digest(got.encode(), want.encode()):
        raise Unauthorized("missing or invalid bearer token")


def require_admin(request: Request) -> None:
    """Dependency: management, upload, delete and inspection need the token when one is set."""
    check_token(request)


def require_reader(request: Request) -> None:
    """Dependency: inference/metadata need the token only with auth_inference."""
    if core_of(request).settings.auth_inference:
        check_token(request)


def versioned(router: APIRouter, suffix: str, endpoint: Callable, methods: list[str],
              **kw: Any) -> None:
    """Register `/v2/models/{name}{suffix}` and `/v2/models/{name}/versions/{version}{suffix}`."""
    router.add_api_route("/v2/models/{name}" + suffix, endpoint, methods=methods, **kw)
    router.add_api_route("/v2/models/{name}/versions/{version}" + suffix, endpoint,
                         methods=methods, **kw)


def inline_schema(model) -> dict:
    """A pydantic model's JSON schema with `$defs` inlined (for `openapi_extra` bodies)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref[len("#/$defs/"):]])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return walk(schema)
