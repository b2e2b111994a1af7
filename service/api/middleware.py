"""Pure-ASGI middleware: body-size limits (before anything is parsed) and HTTP status counts
for every routed request (the infer fast path counts its own)."""
from __future__ import annotations

from ..errors import PayloadTooLarge, ServiceError
from ..runtime.metrics import Metrics
from ..settings import Settings
from .rules import body_limit, check_content_length, error_json, send_response, too_large


class BodyTooLarge(PayloadTooLarge):
    """Raised from `receive` once a streamed body passes the limit (no Content-Length)."""


class LimitsMiddleware:
    def __init__(self, app, settings: Settings, metrics: Metrics):
        self.app, self.settings, self.metrics = app, settings, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = body_limit(self.settings, scope["path"])
        for k, v in scope["headers"]:
            if k == b"content-length":
                try:
                    check_content_length(v, limit)
                except ServiceError as e:
                    return await send_response(send, e.status, error_json(e.message), close=True)
                break
        seen = 0

        async def limited_receive():
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(too_large(limit).message)
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
                await send_response(send, e.status, error_json(e.message), close=True)
