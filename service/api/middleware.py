"""Pure-ASGI middleware: body-size limits (before anything is parsed) and HTTP status counts."""
from __future__ import annotations

import orjson

from ..errors import PayloadTooLarge
from ..runtime.metrics import Metrics

_UPLOAD_SUFFIXES = ("/upload", "/load")


class BodyTooLarge(PayloadTooLarge):
    """Raised from `receive` once a streamed body passes the limit (no Content-Length)."""


class LimitsMiddleware:
    def __init__(self, app, max_body: int, max_upload: int, metrics: Metrics):
        self.app, self.max_body, self.max_upload = app, max_body, max_upload
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.max_upload if scope["path"].endswith(_UPLOAD_SUFFIXES) else self.max_body
        for k, v in scope["headers"]:
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    return await _reject(send, 400, "invalid Content-Length")
                if n > limit:
                    return await _reject(send, 413, f"request body of {n} bytes exceeds the "
                                                    f"limit of {limit} bytes")
                break
        seen = 0

        async def limited_receive():
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(f"request body exceeds the limit of {limit} bytes")
            return msg

        started = False

        async def counting_send(msg):
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
                self.metrics.http_class(msg["status"]).inc()
            await send(msg)

        try:
            await self.app(scope, limited_receive, counting_send)
        except BodyTooLarge as e:
            if not started:
                await _reject(send, 413, str(e))


async def _reject(send, status: int, message: str) -> None:
    body = orjson.dumps({"error": message})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
