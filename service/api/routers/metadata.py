"""Server metadata, model metadata and model configuration."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ... import __version__
from ...protocol.schemas import ERRORS, ModelMetadata, ServerMetadata
from ._common import core_of, json_response, require_reader, versioned

router = APIRouter(tags=["metadata"], dependencies=[Depends(require_reader)])

EXTENSIONS = ["binary_tensor_data", "model_repository", "statistics", "model_configuration",
              "classification", "parameters", "model_summary", "model_inspection",
              "model_upload"]


@router.get("/v2", response_model=ServerMetadata)
@router.get("/v2/", include_in_schema=False)        # answered, not redirected
async def server_metadata(request: Request):
    s = core_of(request).settings
    doc = {"name": s.server_name, "version": __version__, "extensions": EXTENSIONS}
    if s.grpc_port:             # where the same API is served over gRPC
        doc["grpc"] = {"port": s.grpc_port, "tls": s.grpc_tls_cert is not None}
    return json_response(doc)


async def model_metadata(request: Request, name: str, version: str | None = None):
    reg = core_of(request).registry
    mv = reg.get(name, version)
    return json_response(mv.runner.metadata(reg.ready_versions(name)))


async def model_config(request: Request, name: str, version: str | None = None):
    mv = core_of(request).registry.get(name, version)
    return json_response(mv.runner.triton_config())


versioned(router, "", model_metadata, ["GET"], response_model=ModelMetadata, responses=ERRORS)
versioned(router, "/config", model_config, ["GET"], responses=ERRORS)
