"""`inference.GRPCInferenceService`: each RPC parses its message, calls the core as the HTTP
routers do, and encodes the answer. Auth, messages and error categories are HTTP's (status.py).
"""
from __future__ import annotations

import base64
import time
from typing import AsyncIterator, Awaitable, Callable, TypeVar

import grpc
from google.protobuf import json_format

from ... import __version__
from ...core import management
from ...core import Core
from ...errors import BadRequest, ServiceError
from ..routers.metadata import EXTENSIONS
from . import codec
from .pb import grpc_service_pb2 as pb
from .pb import grpc_service_pb2_grpc as pb_grpc
from .status import check_token, status_of

T = TypeVar("T")


def _version(v: str) -> str | None:
    return v or None            # the protocol's "no version": the model's policy decides


def _parse(doc: dict, message: T) -> T:
    """A JSON document of ours (Triton-shaped) → its protobuf message; fields the .proto does
    not declare (our own extensions) stay HTTP-only."""
    return json_format.ParseDict(doc, message, ignore_unknown_fields=True)


class InferenceServicer(pb_grpc.GRPCInferenceServiceServicer):
    def __init__(self, core: Core):
        self.core = core

    # -- the shared frame of every unary call: auth, then errors as gRPC status -----------------
    async def _call(self, context, name: str, fn: Callable[[], Awaitable[T]], *,
                    inference: bool | None) -> T:
        try:
            if inference is not None:
                check_token(self.core.settings, context, inference=inference)
            return await fn()
        except Exception as e:  # noqa: BLE001 - every failure becomes a gRPC status
            await _abort(context, e, name)

    # -- health and metadata ------------------------------------------------------------------
    async def ServerLive(self, request, context):
        return pb.ServerLiveResponse(live=True)         # open, as GET /v2/health/live

    async def ServerReady(self, request, context):
        return pb.ServerReadyResponse(ready=self.core.registry.all_ready())

    async def ModelReady(self, request, context):
        async def run():
            try:
                self.core.registry.get(request.name, _version(request.version))
            except ServiceError as e:
                if e.status in (400, 404, 503):         # HTTP answers these with "not ready"
                    return pb.ModelReadyResponse(ready=False)
                raise
            return pb.ModelReadyResponse(ready=True)
        return await self._call(context, "ModelReady", run, inference=True)

    async def ServerMetadata(self, request, context):
        async def run():
            return pb.ServerMetadataResponse(name=self.core.settings.server_name,
                                             version=__version__, extensions=EXTENSIONS)
        return await self._call(context, "ServerMetadata", run, inference=True)

    async def ModelMetadata(self, request, context):
        async def run():
            reg = self.core.registry
            mv = reg.get(request.name, _version(request.version))
            return _parse(mv.runner.metadata(reg.ready_versions(request.name)),
                          pb.ModelMetadataResponse())
        return await self._call(context, "ModelMetadata", run, inference=True)

    async def ModelConfig(self, request, context):
        async def run():
            mv = self.core.registry.get(request.name, _version(request.version))
            resp = pb.ModelConfigResponse()
            _parse(mv.runner.triton_config(), resp.config)
            return resp
        return await self._call(context, "ModelConfig", run, inference=True)

    async def ModelStatistics(self, request, context):
        async def run():
            name = request.name or None             # none: every model, every version
            docs = self.core.registry.stats_docs(name, _version(request.version) if name else None)
            return _parse({"model_stats": docs}, pb.ModelStatisticsResponse())
        return await self._call(context, "ModelStatistics", run, inference=True)

    # -- repository ----------------------------------------------------------------------------
    async def RepositoryIndex(self, request, context):
        async def run():
            rows = self.core.registry.index(ready_only=request.ready)
            return _parse({"models": rows}, pb.RepositoryIndexResponse())
        return await self._call(context, "RepositoryIndex", run, inference=False)

    async def RepositoryModelLoad(self, request, context):
        async def run():
            await management.load(self.core, request.model_name,
                                  _load_params(request.parameters))
            return pb.RepositoryModelLoadResponse()
        return await self._call(context, "RepositoryModelLoad", run, inference=False)

    async def RepositoryModelUnload(self, request, context):
        async def run():
            p = codec.params_dict(request.parameters)
            if not isinstance(p.get("unload_dependents", False), bool):
                raise BadRequest("'unload_dependents' must be a boolean")
            await management.unload(self.core, request.model_name)
            return pb.RepositoryModelUnloadResponse()
        return await self._call(context, "RepositoryModelUnload", run, inference=False)

    # -- inference -----------------------------------------------------------------------------
    async def ModelInfer(self, request, context):
        # the frame of _call, inlined: the hottest RPC skips a closure and a coroutine
        try:
            check_token(self.core.settings, context, inference=True)
            return await infer(self.core, request)
        except Exception as e:  # noqa: BLE001 - every failure becomes a gRPC status
            await _abort(context, e, "ModelInfer")

    async def ModelStreamInfer(self, request_iterator, context
                               ) -> AsyncIterator[pb.ModelStreamInferResponse]:
        """One response per request, in order; a failed request answers with its message and
        the stream goes on (Triton's behaviour for non-decoupled models)."""
        await self._call(context, "ModelStreamInfer", _nothing, inference=True)   # the token
        async for request in request_iterator:
            try:
                yield pb.ModelStreamInferResponse(infer_response=await infer(self.core, request))
            except Exception as e:  # noqa: BLE001 - reported in-band, the stream goes on
                _, message, _ = status_of(e, "ModelStreamInfer")
                yield pb.ModelStreamInferResponse(
                    error_message=message,
                    infer_response=pb.ModelInferResponse(model_name=request.model_name,
                                                         model_version=request.model_version,
                                                         id=request.id))


async def _nothing() -> None:
    return None


async def _abort(context, e: Exception, where: str):
    code, message, headers = status_of(e, f"gRPC {where}")
    if headers:
        context.set_trailing_metadata(tuple((k.lower(), v) for k, v in headers.items()))
    await context.abort(code, message)


def _load_params(params) -> dict:
    """Load parameters in HTTP's form: `file:` overrides travel as bytes over gRPC, as base64
    strings over HTTP (management.load takes the latter)."""
    out = {}
    for k, v in codec.params_dict(params).items():
        if isinstance(v, bytes):
            if not k.startswith("file:"):
                raise BadRequest(f"parameter '{k}' must not be bytes"[:300])
            v = base64.b64encode(v).decode("ascii")
        out[k] = v
    return out


# -- the one data plane: decode, core.infer (which encodes inside its timing), answer --------
async def infer(core: Core, msg: pb.ModelInferRequest) -> pb.ModelInferResponse:
    t0 = time.perf_counter_ns()
    req = codec.decode_request(msg, core.settings.max_tensor_elements)
    req.decode_ns = time.perf_counter_ns() - t0
    raw = bool(msg.raw_input_contents)
    return await core.infer(msg.model_name, msg.model_version or None, req,
                            codec.encode_raw if raw else codec.encode_typed)
