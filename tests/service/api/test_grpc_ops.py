"""Operating the gRPC port: bearer token from call metadata under HTTP's rules (probes stay
open), TLS, the message-size limit following the body limit, a busy port, graceful drain."""
from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
from types import SimpleNamespace

import grpc
import numpy as np
import pytest
import tritonclient.grpc as tg
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tritonclient.utils import InferenceServerException

from serverproc import copy_store, free_port, inproc_server
from service.api.grpc import server as grpc_server
from service.api.grpc.pb import grpc_service_pb2 as pb
from service.api.grpc.pb import grpc_service_pb2_grpc as pb_grpc
from service.cli.main import main as cli_main
from service.settings import Settings

TOKEN = "s3cret-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}


def self_signed(d) -> tuple:
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl (Debian's openssl package) is needed to make a test certificate")
    d = tmp_path_factory.mktemp("guarded")
    cert, key = self_signed(d)
    with inproc_server(copy_store(d / "store", ("mlp",)), auth_token=TOKEN, auth_inference=True,
                       max_body_bytes=64 * 1024, grpc_tls_cert=cert,
                       grpc_tls_key=key) as info:
        info.cert = cert
        with tg.InferenceServerClient(info.grpc, ssl=True, root_certificates=str(cert)) as c:
            info.client = c
            yield info


def test_probes_are_open_everything_else_needs_the_token(guarded):
    c = guarded.client
    assert c.is_server_live() and c.is_server_ready()           # Kubernetes sends no headers
    with grpc.secure_channel(guarded.grpc, grpc.ssl_channel_credentials(
            guarded.cert.read_bytes())) as ch:
        h = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest())
        assert h.status == health_pb2.HealthCheckResponse.SERVING
    for call in (lambda **kw: c.get_model_metadata("mlp", **kw),
                 lambda **kw: c.is_model_ready("mlp", **kw),
                 lambda **kw: c.get_model_repository_index(**kw)):
        with pytest.raises(InferenceServerException) as e:
            call(headers={"authorization": "Bearer wrong"})
        # HTTP answers 401 with the same message
        assert (e.value.status(), e.value.message()) == ("StatusCode.UNAUTHENTICATED",
                                                         "missing or invalid bearer token")
        assert call(headers=AUTH)
    x = np.zeros((1, 512), np.float32)
    i = tg.InferInput("data", [1, 512], "FP32")
    i.set_data_from_numpy(x)
    with pytest.raises(InferenceServerException) as e:
        c.infer("mlp", [i])
    assert e.value.status() == "StatusCode.UNAUTHENTICATED"
    assert c.infer("mlp", [i], headers=AUTH).as_numpy("output").shape == (1, 2)


def test_plaintext_client_cannot_talk_to_the_tls_port(guarded):
    with tg.InferenceServerClient(guarded.grpc) as plain:
        with pytest.raises(InferenceServerException) as e:
            plain.is_server_live(client_timeout=5)
    assert e.value.status() in ("StatusCode.UNAVAILABLE", "StatusCode.DEADLINE_EXCEEDED")


def test_messages_past_the_body_limit_are_refused(guarded):
    c = guarded.client
    big = np.zeros((64, 512), np.float32)                        # 128 KiB > the 64 KiB limit
    i = tg.InferInput("data", list(big.shape), "FP32")
    i.set_data_from_numpy(big)
    with pytest.raises(InferenceServerException) as e:
        c.infer("mlp", [i], headers=AUTH)
    assert e.value.status() == "StatusCode.RESOURCE_EXHAUSTED"
    small = tg.InferInput("data", [2, 512], "FP32")               # and the next call is served
    small.set_data_from_numpy(big[:2])
    assert c.infer("mlp", [small], headers=AUTH).as_numpy("output").shape == (2, 2)


def test_busy_grpc_port_is_a_clear_startup_error(tmp_path, capsys):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        busy = held.getsockname()[1]
        rc = cli_main(["serve", "--model-store", str(tmp_path), "--port", str(free_port()),
                       "--grpc-port", str(busy)])
        assert rc == 1
        err = capsys.readouterr().err
        assert f"port {busy} on 127.0.0.1 is already in use" in err and "--grpc-port" in err
        # the lifespan's own bind (e.g. a race after the CLI's check) fails as clearly
        s = Settings(model_store=tmp_path, port=free_port(), grpc_port=busy)
        srv = grpc_server.GrpcServer(SimpleNamespace(settings=s))
        with pytest.raises(grpc_server.GrpcStartupError, match="--grpc-port"):
            asyncio.run(srv.start())


def test_shutdown_drains_in_flight_calls(tmp_path, monkeypatch):
    """stop() refuses new calls and lets a running one finish."""
    started = asyncio.Event

    async def slow_infer(core, msg):
        core.started.set()
        await asyncio.sleep(0.5)
        return pb.ModelInferResponse(model_name=msg.model_name, id="done")
    monkeypatch.setattr("service.api.grpc.servicer.infer", slow_infer)

    async def run():
        port = free_port()
        core = SimpleNamespace(settings=Settings(model_store=tmp_path, grpc_port=port,
                                                 graceful_timeout_s=10), started=started())
        srv = grpc_server.GrpcServer(core)
        await srv.start()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pb_grpc.GRPCInferenceServiceStub(ch)
            call = asyncio.ensure_future(stub.ModelInfer(pb.ModelInferRequest(model_name="m")))
            await core.started.wait()
            stopping = asyncio.ensure_future(srv.stop())
            await asyncio.sleep(0.1)
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.ModelInfer(pb.ModelInferRequest(model_name="late"), timeout=2)
            assert (await call).id == "done"
            await stopping
    asyncio.run(run())


def test_stream_needs_the_token_too(guarded):
    import queue
    c = guarded.client
    x = tg.InferInput("data", [1, 512], "FP32")
    x.set_data_from_numpy(np.zeros((1, 512), np.float32))
    for headers, ok in ((None, False), (AUTH, True)):
        got: queue.Queue = queue.Queue()
        c.start_stream(callback=lambda result, error: got.put((result, error)), headers=headers)
        try:
            try:
                c.async_stream_infer("mlp", [x])
            except InferenceServerException:
                assert not ok          # refused: the stream may end before the request goes
            result, error = got.get(timeout=30)
        finally:
            c.stop_stream()
        if ok:
            assert error is None and result.as_numpy("output").shape == (1, 2)
        else:
            assert result is None and "missing or invalid bearer token" in error.message()
