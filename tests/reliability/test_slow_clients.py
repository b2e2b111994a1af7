"""Issue 26, slow clients (service/api/connguard.py), over both of uvicorn's HTTP parsers:
a header that never completes and a body that stops arriving get 408 and a closed connection;
a silent connection is closed too; a body that keeps arriving slowly is served; at the
connection cap the longest-waiting stalled connections make room for normal clients.
(2 000 stalled connections with fds and memory: bench/reliability_bench.py.)"""
from __future__ import annotations

import socket
import time

import httpx
import pytest

from service.api.connguard import CLOSED, GuardedH11, GuardedProtocol

from .relutil import inproc_server, make_store, mlp_body, record

HEADER_S, BODY_S = 0.6, 0.6


@pytest.fixture(scope="module", params=[GuardedProtocol, GuardedH11],
                ids=["httptools", "h11"])
def srv(request, tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("slow") / "store", ("mlp",))
    with inproc_server(store, protocol=request.param, header_timeout_s=HEADER_S,
                       body_timeout_s=BODY_S, max_connections=24) as s:
        s.protocol = request.param.__name__
        yield s


def _connect(srv) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", srv.settings.port), timeout=10)
    s.settimeout(10)
    return s


def _read_all(s: socket.socket) -> bytes:
    """Everything the server sends until it closes (bounded by the socket timeout)."""
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


def test_half_a_header_gets_408_and_is_closed(srv):
    s = _connect(srv)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Ty")
    t0 = time.monotonic()
    got = _read_all(s)
    assert got.startswith(b"HTTP/1.1 408") and b"header_timeout_s" in got, got
    assert time.monotonic() - t0 < 9          # closed by the server, not our socket timeout
    s.close()


def test_silent_connection_is_closed(srv):
    s = _connect(srv)
    assert _read_all(s).startswith(b"HTTP/1.1 408")
    s.close()


def test_stalled_body_gets_408_and_the_app_sees_the_client_go(srv):
    s = _connect(srv)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Type: "
              b"application/json\r\nContent-Length: 60000000\r\n\r\n" + b'{"inputs": [' * 10)
    got = _read_all(s)
    assert got.startswith(b"HTTP/1.1 408") and b"body_timeout_s" in got, got
    s.close()
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        assert c.post("/v2/models/mlp/infer", json=mlp_body()).status_code == 200


def test_a_slow_but_moving_body_is_served(srv):
    body = httpx.Request("POST", "http://x", json=mlp_body()).content
    s = _connect(srv)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Type: "
              b"application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(body))
    step = len(body) // 4 + 1
    for k in range(0, len(body), step):          # pauses shorter than the body timeout
        time.sleep(BODY_S * 0.4)
        s.sendall(body[k:k + step])
    assert _read_all(s).startswith(b"HTTP/1.1 200")
    s.close()


def test_keep_alive_connection_survives_between_requests(srv):
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        for _ in range(3):
            assert c.post("/v2/models/mlp/infer", json=mlp_body()).status_code == 200
            time.sleep(HEADER_S * 1.3)     # idle longer than the header deadline: not a stall


def test_connection_cap_evicts_stalled_ones_for_normal_clients(srv):
    evicted0 = CLOSED["evicted"]
    stalled = []
    for _ in range(40):                      # cap 24
        s = _connect(srv)
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHo")
        stalled.append(s)
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        codes = [c.get("/v2/health/live").status_code for _ in range(5)]
    assert codes == [200] * 5
    assert CLOSED["evicted"] - evicted0 >= 40 - 24
    for s in stalled:                        # every one closed: evicted or timed out
        _read_all(s)
        s.close()
    record("slow clients", f"cap 24, 40 stalled ({srv.protocol})",
           evicted=CLOSED["evicted"] - evicted0, normal_ok=codes.count(200))


def test_settings_defaults():
    from service.settings import Settings
    s = Settings(_env_file=None)
    assert 0 < s.header_timeout_s <= 60 and 0 < s.body_timeout_s <= 120
    assert 0 < s.keepalive_timeout_s <= s.header_timeout_s and 0 < s.max_connections
