"""Access control (issue 7): with a token configured, management, upload, delete and
inspection need `Authorization: Bearer <token>` (compared in constant time); inference and
the read-only endpoints are open unless AUTH_INFERENCE closes them too; without configuration
the server binds to loopback; `AUTH_INFERENCE` without a token refuses to start."""
from __future__ import annotations

import hmac

import httpx
import pytest

from .relutil import fixture_files, inproc_server, make_store, mlp_body, record

TOKEN = "s3cret-token"
GOOD = {"Authorization": f"Bearer {TOKEN}"}
BAD = [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
       {"Authorization": f"Basic {TOKEN}"}, {"Authorization": f"Bearer {TOKEN}x"},
       {"Authorization": f"bearer{TOKEN}"}]
# (method, path, json body) that need the token whenever one is configured
ADMIN = [("POST", "/v2/repository/index", {}),
         ("POST", "/v2/repository/models/mlp/unload", {}),
         ("POST", "/v2/repository/models/mlp/load", {}),        # after unload: mlp serves
         ("POST", "/v2/repository/models/x/upload", None),
         ("DELETE", "/v2/models/nope", None),
         ("DELETE", "/v2/models/nope/versions/1", None),
         ("POST", "/v2/models/mlp/inspect", mlp_body()),
         ("POST", "/v2/models/mlp/versions/1/inspect", mlp_body())]
# open by default, closed by AUTH_INFERENCE
READER = [("POST", "/v2/models/mlp/infer", mlp_body()),
          ("POST", "/v2/models/mlp/versions/1/infer", mlp_body()),
          ("GET", "/v2/models/mlp", None), ("GET", "/v2/models/mlp/config", None),
          ("GET", "/v2/models/mlp/ready", None), ("GET", "/v2/models/mlp/summary", None),
          ("GET", "/v2/models/mlp/stats", None), ("GET", "/v2/models/stats", None),
          ("GET", "/v2/models", None), ("GET", "/v2", None), ("GET", "/metrics", None),
          ("GET", "/v2/health/ready", None), ("GET", "/v2/health/live", None)]


def call(c: httpx.Client, method: str, path: str, body, headers: dict) -> httpx.Response:
    if path.endswith("/upload"):
        return c.post(path, files=fixture_files(), headers=headers)
    return c.request(method, path, json=body, headers=headers)


@pytest.fixture(scope="module", params=[False, True], ids=["inference-open", "all-closed"])
def guarded(request, tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("auth") / "store", ("mlp",))
    with inproc_server(store, auth_token=TOKEN, auth_inference=request.param) as srv:
        yield srv, request.param


def test_admin_endpoints_need_the_token(guarded):
    srv, closed = guarded
    with httpx.Client(base_url=srv.url, timeout=60) as c:
        for method, path, body in ADMIN:
            for h in BAD:
                r = call(c, method, path, body, h)
                assert r.status_code == 401, (method, path, h, r.status_code, r.text)
                assert "token" in r.json()["error"]
            r = call(c, method, path, body, GOOD)
            assert r.status_code != 401, (method, path, r.text)
    assert (srv.store / "x" / "1").is_dir()          # the authorised upload went through
    record("access", "admin endpoints x bad credentials" + (" (inference closed too)"
                                                            if closed else ""),
           endpoints=len(ADMIN), tries=len(ADMIN) * len(BAD), let_in=0)


def test_inference_open_or_closed_separately(guarded):
    srv, closed = guarded
    with httpx.Client(base_url=srv.url, timeout=60) as c:
        for method, path, body in READER:
            r = call(c, method, path, body, {})
            if closed and not path.startswith("/v2/health"):
                assert r.status_code == 401, (path, r.status_code)
                r2 = call(c, method, path, body, {"Authorization": "Bearer nope"})
                assert r2.status_code == 401, path
            else:
                assert r.status_code == 200, (path, r.status_code, r.text)
            assert call(c, method, path, body, GOOD).status_code == 200, path


def test_token_compared_in_constant_time(guarded, monkeypatch):
    """Both auth paths (FastAPI dependency and the plain-ASGI infer path) use
    hmac.compare_digest, not ==."""
    srv, closed = guarded
    seen = []
    real = hmac.compare_digest

    def spy(a, b):
        seen.append((type(a), type(b)))
        return real(a, b)
    monkeypatch.setattr(hmac, "compare_digest", spy)
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        c.post("/v2/repository/index", headers={"Authorization": "Bearer x"})
        n_admin = len(seen)
        c.post("/v2/models/mlp/infer", json=mlp_body(), headers={"Authorization": "Bearer x"})
    assert n_admin >= 1
    assert (len(seen) > n_admin) == closed


def test_loopback_by_default_and_fail_closed():
    from service.api.app import create_app
    from service.cli.main import _loopback
    from service.settings import Settings
    assert Settings(_env_file=None).host == "127.0.0.1"
    assert _loopback("127.0.0.1") and _loopback("::1") and _loopback("localhost")
    assert not _loopback("0.0.0.0") and not _loopback("10.1.2.3")
    with pytest.raises(ValueError, match="AUTH_TOKEN"):
        create_app(Settings(_env_file=None, auth_inference=True))


def test_cli_refuses_open_inference_auth_without_token(monkeypatch, capsys):
    from service.cli.main import main
    monkeypatch.setenv("HYBRIDSERVE_AUTH_INFERENCE", "true")
    monkeypatch.delenv("HYBRIDSERVE_AUTH_TOKEN", raising=False)
    assert main(["serve", "--model-store", "model_store"]) == 2
    assert "AUTH_TOKEN" in capsys.readouterr().err
