"""The `grpc.aio` server that runs beside uvicorn, in the same event loop (started and drained
by the app's lifespan): the inference service, `grpc.health.v1.Health` for Kubernetes gRPC
probes, and optional reflection."""
from __future__ import annotations

import logging

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio

from ...core import Core
from ...settings import Settings
from .pb import _pool
from .pb import grpc_service_pb2 as pb
from .servicer import InferenceServicer

log = logging.getLogger("hybridserve.server")
SERVICE = "inference.GRPCInferenceService"


class GrpcStartupError(RuntimeError):
    """The gRPC port cannot be served (busy, unresolvable, bad TLS files)."""


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def options(settings: Settings) -> list[tuple[str, int]]:
    return [("grpc.max_receive_message_length", settings.max_body_bytes),
            ("grpc.max_send_message_length", -1),
            # one worker: a busy port must fail, not be shared silently with whoever holds it;
            # several workers share the port as uvicorn's workers share HTTP's
            ("grpc.so_reuseport", 1 if settings.workers > 1 else 0),
            # channelz keeps per-call counters and traces no one here reads
            ("grpc.enable_channelz", 0)]


def _credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if settings.grpc_tls_cert is None:
        return None
    try:
        cert = settings.grpc_tls_cert.read_bytes()
        key = settings.grpc_tls_key.read_bytes()
    except OSError as e:
        raise GrpcStartupError(f"cannot read gRPC TLS files: {e}") from None
    return grpc.ssl_server_credentials([(key, cert)])


def _unary(method, cls):
    parse = cls.FromString

    async def handler(raw: bytes, context):
        try:
            msg = parse(raw)
        except DecodeError as e:
            await _malformed(cls, e, context)
        return await method(msg, context)
    return handler


def _stream(method, cls):
    async def requests(it, context):
        async for raw in it:
            yield await _parse(cls, raw, context)

    async def handler(it, context):       # grpcio wants an async generator function here
        async for response in method(requests(it, context), context):
            yield response
    return handler


async def _parse(cls, raw: bytes, context):
    try:
        return cls.FromString(raw)
    except DecodeError as e:
        await _malformed(cls, e, context)


async def _malformed(cls, e: DecodeError, context):
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"malformed {cls.DESCRIPTOR.name} protobuf: {e}")


def method_handlers(servicer: InferenceServicer) -> dict[str, grpc.RpcMethodHandler]:
    """The service's RPCs with requests parsed by us, not by grpcio: a malformed protobuf is
    INVALID_ARGUMENT with a message (grpcio's own parse failure is a bare INTERNAL)."""
    handlers = {}
    for m in pb.DESCRIPTOR.services_by_name["GRPCInferenceService"].methods:
        req, resp = getattr(pb, m.input_type.name), getattr(pb, m.output_type.name)
        method = getattr(servicer, m.name)
        if m.client_streaming:
            handlers[m.name] = grpc.stream_stream_rpc_method_handler(
                _stream(method, req), response_serializer=resp.SerializeToString)
        else:
            handlers[m.name] = grpc.unary_unary_rpc_method_handler(
                _unary(method, req), response_serializer=resp.SerializeToString)
    return handlers


class GrpcServer:
    def __init__(self, core: Core):
        self.core = core
        self.settings = core.settings
        self.server: grpc.aio.Server | None = None
        self.health = health_aio.HealthServicer()
        self.port = 0

    async def start(self) -> None:
        s = self.settings
        server = grpc.aio.server(options=options(s))
        handlers = method_handlers(InferenceServicer(self.core))
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
        # as grpcio's generated code does: the core matches these paths itself, ahead of the
        # generic handlers' per-call lookup in Python
        server.add_registered_method_handlers(SERVICE, handlers)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        if s.grpc_reflection:
            from grpc_reflection.v1alpha import reflection
            reflection.enable_server_reflection(
                (SERVICE, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                 reflection.SERVICE_NAME), server, pool=_pool.POOL)
        addr = _address(s.host, s.grpc_port)
        creds = _credentials(s)
        try:
            port = (server.add_secure_port(addr, creds) if creds is not None
                    else server.add_insecure_port(addr))
        except RuntimeError as e:        # grpcio raises when the address cannot be bound
            raise GrpcStartupError(_busy(s)) from e
        if not port:
            raise GrpcStartupError(_busy(s))
        await server.start()
        self.server, self.port = server, port
        for name in ("", SERVICE):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("gRPC (%s) on %s", "TLS" if creds is not None else "plaintext", addr)

    async def stop(self) -> None:
        """Refuse new calls, let in-flight ones finish (up to the graceful timeout)."""
        if self.server is None:
            return
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace=self.settings.graceful_timeout_s)
        self.server = None


def _busy(s: Settings) -> str:
    return (f"cannot serve gRPC on {s.host}:{s.grpc_port}: the port is in use (another "
            "hybridserve?) or the address is not ours: choose another --grpc-port, or "
            "--grpc-port 0 to turn gRPC off")
