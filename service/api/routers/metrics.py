"""Prometheus text exposition at `/metrics`."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from ._common import core_of, require_reader

router = APIRouter(tags=["metrics"], dependencies=[Depends(require_reader)])


@router.get("/metrics", response_class=Response)
async def metrics(request: Request):
    core = core_of(request)
    for entries in core.registry.models.values():      # queue depth is read at scrape time
        for mv in entries.values():
            if mv.batcher is not None:
                core.metrics.queue_depth.labels(mv.name, mv.version).set(mv.batcher.queued)
    return Response(core.metrics.render(), media_type=CONTENT_TYPE_LATEST)
