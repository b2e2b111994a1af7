"""Liveness, readiness, model readiness (the status code is the answer)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ..errors import BadRequest
from ._common import core_of, json_response, require_reader, versioned

router = APIRouter(tags=["health"], dependencies=[Depends(require_reader)])


@router.get("/v2/health/live")
async def live():
    return json_response({"live": True})


@router.get("/v2/health/ready")
async def ready(request: Request):
    if not core_of(request).registry.all_ready():
        raise BadRequest("server is not ready: some models are still loading")
    return json_response({"ready": True})


async def model_ready(request: Request, name: str, version: str | None = None):
    mv = core_of(request).registry.get(name, version)
    return json_response({"name": name, "version": mv.version, "ready": True})


versioned(router, "/ready", model_ready, ["GET"])
