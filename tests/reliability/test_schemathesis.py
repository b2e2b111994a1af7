"""schemathesis against the live server's OpenAPI schema: across every operation, no 5xx, and
every response matches the schema (status documented, content type, body schema).

Bounded: SCHEMATHESIS_EXAMPLES per operation (default 4 in the default run; the slow run uses
60 plus schemathesis' coverage phase). The server runs in-process on a loopback port, on a
temp copy of the demo store.
"""
from __future__ import annotations

import os

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="pip install -e '.[reliability]'")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (content_type_conformance, not_a_server_error,  # noqa: E402
                                 response_schema_conformance, status_code_conformance)

from .relutil import inproc_server, make_store, record  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
FAST, SLOW = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "4")), 60
_seen: dict[str, int] = {}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("st") / "store")
    with inproc_server(store, max_upload_bytes=4 << 20, inspect_max_values=1000) as srv:
        yield srv


def _schema(live, coverage: bool):
    # the coverage phase (boundary values of every parameter) triples the request count:
    # the default run keeps to generated examples, the slow run adds it
    cfg = schemathesis.config.SchemathesisConfig.from_dict(
        {"phases": {"coverage": {"enabled": coverage}}})
    return schemathesis.openapi.from_url(live.url + "/openapi.json", config=cfg)


@pytest.fixture(scope="module")
def api_fast(live):
    return _schema(live, coverage=False)


@pytest.fixture(scope="module")
def api_full(live):
    return _schema(live, coverage=True)


fast_schema = schemathesis.pytest.from_fixture("api_fast")
full_schema = schemathesis.pytest.from_fixture("api_full")


_REAL = ("mlp", "lenet", None)       # None: whatever schemathesis generated


def _run(case, live) -> None:
    # two thirds of the cases address a real model, so bodies reach validation and the
    # models themselves (never for delete/unload, which would remove what others test)
    key = f"{case.operation.method.upper()} {case.operation.path}"
    n = _seen.get(key, 0)
    params = case.path_parameters or {}
    if "name" in params and case.method != "DELETE" and not case.path.endswith("/unload"):
        real = _REAL[n % 3]
        if real is not None:
            params["name"] = real
            if "version" in params:
                params["version"] = "1"
    resp = case.call_and_validate(base_url=live.url, checks=CHECKS, timeout=30)
    _seen[key] = n + 1
    assert resp.status_code < 500


@fast_schema.parametrize()
@settings(max_examples=FAST, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_fast(case, live):
    _run(case, live)


@pytest.mark.slow
@full_schema.parametrize()
@settings(max_examples=SLOW, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_slow(case, live):
    _run(case, live)


def test_zz_record():
    if _seen:
        record("schemathesis", "requests per operation", operations=len(_seen),
               requests=sum(_seen.values()), server_errors=0)
