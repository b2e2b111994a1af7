"""The inference hot path as plain ASGI, ahead of Starlette routing and FastAPI dependencies.

`POST /v2/models/{name}[/versions/{v}]/infer` is most of the traffic, and for small models the
framework layers (route matching over every route, dependency solving, Request objects,
middleware stack) cost several times the model itself. This handler reads the body, calls the
same core as the FastAPI route (which stays registered, for /docs), and answers with the same
`{"error": ...}` bodies, limits and auth rules.
"""
from __future__ import annotations

import hmac
import logging
import re

import orjson

from framework.base import MXNetError

from ..core.dataplane import Core
from ..errors import PayloadTooLarge, ServiceError, Unauthorized
from ..protocol.codec import decompress, parse_request

log = logging.getLogger("hybridserve.fastpath")
_INFER = re.compile(r"^/v2/models/([^/]+)(?:/versions/([^/]+))?/infer$")
_JSON = b"application/json"


def match(scope) -> re.Match | None:
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path = scope["path"]
    return _INFER.match(path) if path.endswith("/infer") else None


async def _read(receive, limit: int) -> bytes:
    chunks, size = [], 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise ConnectionResetError("client disconnected")
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
        if not msg.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def handle(core: Core, m: re.Match, scope, receive, send) -> None:
    s = core.settings
    hlen = enc = auth = None
    clen = -1
    for k, v in scope["headers"]:
        if k == b"inference-header-content-length":
            hlen = v.decode("latin-1")
        elif k == b"content-length":
            clen = int(v) if v.isdigit() else -1
        elif k == b"content-encoding":
            enc = v.decode("latin-1")
        elif k == b"authorization":
            auth = v
    extra: list = []
    try:
        if s.auth_inference and s.auth_token is not None:
            want = b"Bearer " + s.auth_token.get_secret_value().encode()
            if auth is None or not hmac.compare_digest(auth, want):
                raise Unauthorized("missing or invalid bearer token")
        if clen > s.max_body_bytes:
            raise PayloadTooLarge(f"request body of {clen} bytes exceeds the limit of "
                                  f"{s.max_body_bytes} bytes")
        body = await _read(receive, s.max_body_bytes)
        if enc:
            body = decompress(body, enc, s.max_body_bytes)
        req = parse_request(body, hlen, s.max_tensor_elements, s.max_json_depth)
        content, headers, media = await core.infer(m[1], m[2], req)
        status = 200
        for k, v in headers.items():
            extra.append((k.lower().encode(), v.encode()))
        ctype = media.encode()
    except ConnectionResetError:
        return
    except ServiceError as e:
        status, content, ctype = e.status, orjson.dumps({"error": e.message}), _JSON
        extra = [(k.lower().encode(), v.encode()) for k, v in e.headers.items()]
    except Exception as e:  # noqa: BLE001 - same mapping as the app's handlers
        if isinstance(e, MXNetError):
            status, msg = 400, str(e)[:2000]
        else:
            log.exception("unhandled error in infer")
            status, msg = 500, f"internal server error: {type(e).__name__}: {e}"[:2000]
        content, ctype = orjson.dumps({"error": msg}), _JSON
    core.metrics.http_class(status).inc()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype),
                            (b"content-length", str(len(content)).encode()), *extra]})
    await send({"type": "http.response.body", "body": content})
