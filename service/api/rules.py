"""The HTTP rules every path shares, each written once: who may call (bearer token), how big
a body may be and how it is read, and how a failure becomes a `{"error": ...}` response.

Used by the plain-ASGI infer path (fastpath.py), the body-limit middleware, the FastAPI
routers' dependencies and the app's exception handlers, so the fast path and the routed
endpoints cannot drift apart.
"""
from __future__ import annotations

import hmac

import orjson

from ..errors import BadRequest, PayloadTooLarge, Unauthorized, to_service_error
from ..settings import Settings

JSON = b"application/json"
_UPLOAD_SUFFIXES = ("/upload", "/load")


# -- who may call -------------------------------------------------------------------------------
def authorize(settings: Settings, authorization: bytes | None, *, inference: bool) -> None:
    """Management, upload, delete and inspection (`inference=False`) need the token whenever
    one is set; inference, metadata and the like need it only with `auth_inference`. The
    comparison takes constant time."""
    token = settings.auth_token
    if token is None or (inference and not settings.auth_inference):
        return
    want = b"Bearer " + token.get_secret_value().encode()
    if authorization is None or not hmac.compare_digest(authorization, want):
        raise Unauthorized("missing or invalid bearer token")


# -- bodies ---------------------------------------------------------------------------------------
def body_limit(settings: Settings, path: str) -> int:
    """Uploads (and loads carrying files) may be larger than any other body."""
    return settings.max_upload_bytes if path.endswith(_UPLOAD_SUFFIXES) else settings.max_body_bytes


def check_content_length(value: bytes, limit: int) -> None:
    """Refuse by the declared length before a byte of the body is read."""
    try:
        n = int(value)
    except ValueError:
        raise BadRequest("invalid Content-Length") from None
    if n > limit:
        raise PayloadTooLarge(f"request body of {n} bytes exceeds the limit of {limit} bytes")


def too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")


async def read_body(receive, limit: int) -> bytes:
    """The whole body of an ASGI request, refused once it streams past `limit`;
    `ConnectionResetError` when the client went away."""
    chunks, size = [], 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise ConnectionResetError("client disconnected")
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
        if not msg.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# -- failures -------------------------------------------------------------------------------------
def error_json(message: str) -> bytes:
    return orjson.dumps({"error": message})


def failure(e: Exception, where: str) -> tuple[int, str, dict[str, str]]:
    """(status, message, headers) of an exception, by the one table (errors.to_service_error:
    a framework error is the client's model or data, 400; an unknown one ours, 500, logged)."""
    err = to_service_error(e, where=where)
    return err.status, err.message, err.headers


def raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in headers.items()]


async def send_response(send, status: int, content: bytes, content_type: bytes = JSON,
                        headers: list[tuple[bytes, bytes]] = (), close: bool = False) -> None:
    """One complete ASGI response; `close` when the request body was left unread."""
    extra = [*headers, (b"connection", b"close")] if close else headers
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type),
                            (b"content-length", str(len(content)).encode()), *extra]})
    await send({"type": "http.response.body", "body": content})
