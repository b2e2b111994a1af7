"""Liveness, readiness, model readiness (the status code is the answer)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...errors import BadRequest, Unavailable
from ._common import core_of, json_response, require_reader, versioned

# server liveness/readiness stay open even with AUTH_INFERENCE: probes (Docker HEALTHCHECK,
# Kubernetes) carry no token, and they reveal nothing; a model's readiness is guarded
router = APIRouter(tags=["health"])


@router.get("/v2/health/live")
async def live():
    return json_response({"live": True})


@router.get("/v2/health/ready")
async def ready(request: Request):
    if getattr(request.app.state, "draining", False):    # SIGTERM: service/cli/draining.py
        raise Unavailable("server is shutting down")
    core = core_of(request)
    if core.store_error is not None:       # loaded models keep serving meanwhile
        raise Unavailable(f"server is not ready: {core.store_error}")
    if not core.registry.all_ready():
        raise BadRequest("server is not ready: some models are still loading")
    return json_response({"ready": True})


async def model_ready(request: Request, name: str, version: str | None = None):
    mv = core_of(request).registry.get(name, version)
    return json_response({"name": name, "version": mv.version, "ready": True})


versioned(router, "/ready", model_ready, ["GET"], dependencies=[Depends(require_reader)])
