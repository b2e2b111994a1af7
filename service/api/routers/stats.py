"""Triton's statistics extension: `GET /v2/models[/{name}[/versions/{v}]]/stats`."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...protocol.schemas import ERRORS, StatsResponse
from ._common import core_of, json_response, require_reader, versioned

router = APIRouter(tags=["statistics"], dependencies=[Depends(require_reader)])


@router.get("/v2/models/stats", response_model=StatsResponse)
async def all_stats(request: Request):
    return json_response({"model_stats": core_of(request).registry.stats_docs()})


async def model_stats(request: Request, name: str, version: str | None = None):
    return json_response({"model_stats": core_of(request).registry.stats_docs(name, version)})


versioned(router, "/stats", model_stats, ["GET"], response_model=StatsResponse, responses=ERRORS)
