"""`create_app(settings)`: the FastAPI application (routers, lifespan, error handlers)."""
from __future__ import annotations

import inspect as _pyinspect
import logging
from contextlib import asynccontextmanager

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from framework.base import MXNetError

from .. import __version__, logs
from ..core.dataplane import Core
from ..errors import ServiceError
from ..settings import Settings
from . import fastpath, openapi
from .middleware import LimitsMiddleware
from .routers import (health, inference, inspect, metadata, metrics, models, repository, stats,
                      summary)
from .routers import graph, ui                     # web console (issue 8)

log = logging.getLogger("hybridserve.app")


def _error(status: int, message: str, headers: dict | None = None) -> Response:
    return Response(orjson.dumps({"error": message}), status_code=status,
                    media_type="application/json", headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Every failure is `{"error": ...}`; client mistakes are 4xx, never 500."""

    @app.exception_handler(ServiceError)
    async def _service(_: Request, e: ServiceError):
        return _error(e.status, e.message, e.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, e: RequestValidationError):
        msgs = "; ".join(f"{'.'.join(str(p) for p in x.get('loc', ()))}: {x.get('msg')}"
                         for x in e.errors()[:5])
        return _error(400, f"invalid request: {msgs}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, e: StarletteHTTPException):
        return _error(e.status_code, str(e.detail), getattr(e, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, e: Exception):
        if isinstance(e, MXNetError):
            return _error(400, str(e)[:2000])
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(500, f"internal server error: {type(e).__name__}: {e}"[:2000])


class HybridServeApp(FastAPI):
    """FastAPI with the infer hot path answered before routing (see fastpath.py)."""

    async def __call__(self, scope, receive, send) -> None:
        m = fastpath.match(scope)
        if m is not None:
            return await fastpath.handle(self.state.core, m, scope, receive, send)
        return await super().__call__(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    settings.check()
    logs.configure(settings.log_level, settings.log_json)
    core = Core(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await core.start()
        log.info("serving %d model(s) from %s", len(core.registry.models), core.store.root)
        try:
            yield
        finally:
            await core.stop()

    extra = {}
    if "telemetry" in _pyinspect.signature(FastAPI.__init__).parameters:
        # FastAPI's native OpenTelemetry wraps every request; we export Prometheus ourselves
        extra["telemetry"] = {"tracing": False, "metrics": False, "logs": False,
                              "operation_spans": False}
    app = HybridServeApp(title="hybridserve", version=__version__, lifespan=lifespan,
                  description="MXNet models on NumPy, served over the Open Inference Protocol "
                              "v2 (KServe/Triton) with Triton's binary tensor and repository "
                              "extensions.", **extra)
    app.state.core = core
    install_error_handlers(app)
    openapi.install(app)
    # stats before metadata: /v2/models/stats must not match /v2/models/{name}
    for r in (health, stats, metadata, inference, repository, models, summary, inspect, metrics):
        app.include_router(r.router)
    app.include_router(graph.router)                # console: graph for drawing
    app.include_router(ui.router)                   # console: /ui and its assets
    app.add_middleware(LimitsMiddleware, max_body=settings.max_body_bytes,
                       max_upload=settings.max_upload_bytes, metrics=core.metrics)
    return app


def create_app_from_env() -> FastAPI:
    """uvicorn factory for multi-worker runs: settings come from HYBRIDSERVE_* variables."""
    return create_app(Settings())
