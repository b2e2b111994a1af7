"""`create_app(settings)`: the FastAPI application (routers, lifespan, error handlers)."""
from __future__ import annotations

import inspect as _pyinspect
import logging
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from framework.base import MXNetError

from .. import __version__, logs
from ..core import archives
from ..core.server import Core
from ..errors import ServiceError
from ..settings import Settings
from . import fastpath, openapi
from .grpc import server as grpc_server
from .middleware import LimitsMiddleware
from .routers import (health, inference, inspect, metadata, metrics, models, repository, stats,
                      summary)
from .routers import graph, ui                     # web console (issue 8)
from .rules import error_json, failure

log = logging.getLogger("hybridserve.app")


def _error(status: int, message: str, headers: dict | None = None) -> Response:
    return Response(error_json(message), status_code=status, media_type="application/json",
                    headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Every failure is `{"error": ...}`; client mistakes are 4xx, never 500."""

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, e: RequestValidationError):
        msgs = "; ".join(f"{'.'.join(str(p) for p in x.get('loc', ()))}: {x.get('msg')}"
                         for x in e.errors()[:5])
        return _error(400, f"invalid request: {msgs}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, e: StarletteHTTPException):
        return _error(e.status_code, str(e.detail), getattr(e, "headers", None))

    async def _failure(request: Request, e: Exception):
        return _error(*failure(e, f"{request.method} {request.url.path}"))

    # client errors get their own entries: Starlette re-raises what only the `Exception`
    # handler catches (to log it as a server error) after answering
    for cls in (ServiceError, MXNetError, Exception):
        app.add_exception_handler(cls, _failure)


class HybridServeApp(FastAPI):
    """FastAPI with the infer hot path answered before routing and its middleware (see
    fastpath.py); it counts its own responses as the middleware counts the others."""

    async def __call__(self, scope, receive, send) -> None:
        m = fastpath.match(scope)
        if m is None:
            return await super().__call__(scope, receive, send)
        core = self.state.core
        status = await fastpath.handle(core, *m, scope, receive, send)
        if status is not None:
            core.metrics.http_class(status).inc()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    settings.check()
    logs.configure(settings.log_level, settings.log_json)
    core = Core(settings)
    core.before_poll.append(archives.import_dropped)     # MMS .mar files dropped in the store

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        grpc = grpc_server.GrpcServer(core) if settings.grpc_port else None
        await core.start()
        log.info("serving %d model(s) from %s", len(core.registry.models), core.store.location)
        try:
            if grpc is not None:
                await grpc.start()
            yield
        finally:
            if grpc is not None:            # drain gRPC calls before the core goes away
                await grpc.stop()
            await core.stop()

    extra = {}
    if "telemetry" in _pyinspect.signature(FastAPI.__init__).parameters:
        # FastAPI's native OpenTelemetry wraps every request; we export Prometheus ourselves
        extra["telemetry"] = {"tracing": False, "metrics": False, "logs": False,
                              "operation_spans": False}
    # no path answers with a redirect (a trailing slash is not the protocol's path)
    app = HybridServeApp(title="hybridserve", version=__version__, lifespan=lifespan,
                  redirect_slashes=False,
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
    app.add_middleware(LimitsMiddleware, settings=settings, metrics=core.metrics)
    return app


def create_app_from_env() -> FastAPI:
    """uvicorn factory for multi-worker runs: settings come from HYBRIDSERVE_* variables."""
    return create_app(Settings())
