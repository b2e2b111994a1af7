"""Shared router helpers: the core, JSON responses, bodies and auth (the rules of
../rules.py as FastAPI dependencies), versioned paths."""
from __future__ import annotations

from typing import Any, Callable

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...core.server import Core
from ...errors import BadRequest
from ...limits import check_json_depth
from ..bodies import inflate
from ..rules import authorize, body_limit


def core_of(request: Request) -> Core:
    return request.app.state.core


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status,
                    media_type="application/json")


async def read_body(request: Request) -> bytes:
    """The (inflated) body; its raw size was bounded by the middleware already."""
    limit = body_limit(core_of(request).settings, request.url.path)
    return await inflate(await request.body(), request.headers.get("content-encoding"), limit)


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


def _authorization(request: Request) -> bytes | None:
    got = request.headers.get("authorization")
    return got.encode("latin-1") if got is not None else None


def require_admin(request: Request) -> None:
    """Dependency: management, upload, delete and inspection (rules.authorize)."""
    authorize(core_of(request).settings, _authorization(request), inference=False)


def require_reader(request: Request) -> None:
    """Dependency: metadata, stats, summary and the like: as inference (rules.authorize)."""
    authorize(core_of(request).settings, _authorization(request), inference=True)


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
