"""The fast path: REST infer requests answered as plain ASGI, ahead of Starlette routing and
FastAPI dependencies. ("Fast path" in this project means this and nothing else.)

`POST /v2/models/{name}[/versions/{v}]/infer` is most of the traffic, and for small models the
framework layers (route matching over every route, dependency solving, Request objects,
middleware stack) cost several times the model itself. `HybridServeApp` hands those requests
to `handle` before routing; the FastAPI route (routers/inference.py) documents the endpoint
and, should a request reach it, answers through the same `handle`. It is the REST adapter of
the data plane: decode (JSON + binary tail, or a raw body) → `core.infer` → `encode_response`.
Auth, body limits and error bodies are the shared rules of rules.py.
"""
from __future__ import annotations

import re
import time

from ..core.server import Core
from ..protocol.codec import encode_response
from ..runtime.trimmer import TRIMMER
from .bodies import inflate, infer_request
from .raw import is_raw, raw_request
from .rules import (JSON, authorize, check_content_length, error_json, failure, raw_headers,
                    read_body, send_response)

_INFER = re.compile(r"^/v2/models/([^/]+)(?:/versions/([^/]+))?/infer$")
_WANTED = (b"authorization", b"content-length", b"content-encoding",
           b"inference-header-content-length", b"content-type")


def match(scope) -> tuple[str, str | None] | None:
    """(model, version or None) when `scope` is an infer request, else None."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path = scope["path"]
    m = _INFER.match(path) if path.endswith("/infer") else None
    return (m[1], m[2]) if m else None


async def _infer(core: Core, name: str, version: str | None, scope, receive, moved: list[int]
                 ) -> tuple[bytes, bytes, list]:
    s = core.settings
    h = {k: v for k, v in scope["headers"] if k in _WANTED}
    authorize(s, h.get(b"authorization"), inference=True)
    if b"content-length" in h:
        check_content_length(h[b"content-length"], s.max_body_bytes)
    body = await read_body(receive, s.max_body_bytes)
    moved.append(len(body))
    enc = h.get(b"content-encoding")
    body = await inflate(body, enc.decode("latin-1") if enc else None, s.max_body_bytes)
    moved.append(len(body))
    hlen = h.get(b"inference-header-content-length")
    if is_raw(hlen, h.get(b"content-type")):
        t0 = time.perf_counter_ns()
        req = raw_request(core.registry.get(name, version).runner, body, hlen,
                          h.get(b"content-type"), scope.get("query_string", b""))
        req.decode_ns = time.perf_counter_ns() - t0
    else:
        req = await infer_request(core, name, version, body,
                                  hlen.decode("latin-1") if hlen is not None else None)
    content, headers, media = await core.infer(name, version, req, encode_response)
    moved.append(len(content))
    return content, media.encode(), raw_headers(headers)


async def handle(core: Core, name: str, version: str | None, scope, receive, send
                 ) -> int | None:
    """Answer one infer request; returns the status sent (None: the client went away)."""
    moved: list[int] = []
    try:
        content, ctype, extra = await _infer(core, name, version, scope, receive, moved)
        status = 200
    except ConnectionResetError:
        return None
    except Exception as e:  # noqa: BLE001 - the transport's boundary: every failure is answered
        status, message, headers = failure(e, f"POST {scope['path']}")
        content, ctype, extra = error_json(message), JSON, raw_headers(headers)
    finally:
        if moved:
            TRIMMER.note(max(moved))          # a large request: give its memory back soon
    await send_response(send, status, content, ctype, extra)
    return status
