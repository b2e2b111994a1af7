"""Triton's statistics extension: `GET /v2/models[/{name}[/versions/{v}]]/stats`."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...errors import NotFound
from ...protocol.schemas import ERRORS, StatsResponse
from ._common import core_of, json_response, require_reader, versioned

router = APIRouter(tags=["statistics"], dependencies=[Depends(require_reader)])


@router.get("/v2/models/stats", response_model=StatsResponse)
async def all_stats(request: Request):
    reg = core_of(request).registry
    docs = [mv.stats.doc() for _, e in sorted(reg.models.items())
            for _, mv in sorted(e.items(), key=lambda kv: int(kv[0])) if mv.stats is not None]
    return json_response({"model_stats": docs})


async def model_stats(request: Request, name: str, version: str | None = None):
    reg = core_of(request).registry
    if version is not None:
        docs = [reg.get(name, version).stats.doc()]
    else:
        entries = reg.models.get(name)
        if not entries:
            reg.get(name)                          # raises the right 404/503
            raise NotFound(f"model '{name}' has no statistics")
        docs = [mv.stats.doc() for _, mv in sorted(entries.items(), key=lambda kv: int(kv[0]))
                if mv.stats is not None]
    return json_response({"model_stats": docs})


versioned(router, "/stats", model_stats, ["GET"], response_model=StatsResponse, responses=ERRORS)
