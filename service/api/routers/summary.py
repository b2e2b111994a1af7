"""`GET /v2/models/{name}[/versions/{v}]/summary[?format=text&batch_size=N&shape=data:1,3,224,224]`."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import PlainTextResponse

from ...protocol.schemas import ERRORS, ModelSummary
from ...runtime.summary import parse_shapes, render_text
from ._common import core_of, json_response, require_reader, versioned

router = APIRouter(tags=["summary"], dependencies=[Depends(require_reader)])


async def summary(request: Request, name: str, version: str | None = None,
                  format: str = Query("json", pattern="^(json|text)$"),
                  batch_size: int = Query(1, ge=1, le=65536, description=(
                      "the batch the shapes and FLOPs are computed for: shape arithmetic "
                      "only, so any size up to the maximum, also beyond the model's "
                      "max_batch_size (which bounds what it serves)")),
                  shape: list[str] = Query([], max_length=64, description=(
                      "an input's shape, `<input>:<d0>,<d1>,...` (the name may be left out "
                      "for a one-input model), repeatable; without it an input with free "
                      "dims beyond the batch stays unknown, and the summary says so in "
                      "`warnings`"))):
    mv = core_of(request).registry.get(name, version)
    r = mv.runner
    s = r.summary(batch_size, parse_shapes(shape, [i.name for i in r.inputs], name))
    if format == "text":
        return PlainTextResponse(render_text(s))
    return json_response(s)


versioned(router, "/summary", summary, ["GET"], response_model=ModelSummary, responses=ERRORS)
