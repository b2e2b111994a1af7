"""Model listing and deletion (a version or the whole model)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...core import management
from ...errors import MethodNotAllowed
from ...repository.store import RESERVED
from ...protocol.schemas import ERRORS, ModelListEntry
from ._common import core_of, json_response, require_admin, require_reader

router = APIRouter(tags=["models"])


@router.get("/v2/models", response_model=list[ModelListEntry],
            dependencies=[Depends(require_reader)])
async def list_models(request: Request):
    reg = core_of(request).registry
    by_name: dict[str, dict] = {}
    for row in reg.index():
        entry = by_name.setdefault(row["name"], {"name": row["name"], "versions": [],
                                                 "description": ""})
        entry["versions"].append(row)
        mv = reg.models.get(row["name"], {}).get(row["version"])
        if mv is not None and mv.runner is not None:
            entry["description"] = mv.runner.config.description
    return json_response(list(by_name.values()))


@router.delete("/v2/models/{name}", responses=ERRORS, dependencies=[Depends(require_admin)])
async def delete_model(request: Request, name: str):
    if name in RESERVED:      # /v2/models/stats is its own (GET only) route, not a model
        raise MethodNotAllowed(f"/v2/models/{name} only takes GET", headers={"Allow": "GET"})
    await management.delete(core_of(request), name)
    return json_response({"name": name, "deleted": True})


@router.delete("/v2/models/{name}/versions/{version}", responses=ERRORS,
               dependencies=[Depends(require_admin)])
async def delete_version(request: Request, name: str, version: str):
    await management.delete(core_of(request), name, version)
    return json_response({"name": name, "version": version, "deleted": True})
