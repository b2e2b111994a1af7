"""`GET /v2/models/{name}[/versions/{v}]/graph`: the symbol graph for drawing (built by
runtime/graphview.py from the model's graph facts, once per loaded version)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from ...protocol.schemas import ERRORS
from ...runtime.graphview import graph_view, graph_view_ready
from ._common import core_of, json_response, require_reader, versioned

router = APIRouter(tags=["graph"], dependencies=[Depends(require_reader)])


async def graph_doc(runner) -> dict:
    """The graph document, built off the event loop the first time."""
    doc = graph_view_ready(runner)
    return doc if doc is not None else await run_in_threadpool(graph_view, runner)


async def graph(request: Request, name: str, version: str | None = None):
    mv = core_of(request).registry.get(name, version)
    # the registry's version is the served one (a runner validated before its version number
    # was assigned may carry a placeholder)
    return json_response({**(await graph_doc(mv.runner)), "name": mv.name, "version": mv.version})


versioned(router, "/graph", graph, ["GET"], responses=ERRORS,
          summary="Model graph (nodes, edges, shapes, parameter counts) for drawing")
