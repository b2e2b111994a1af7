"""schemathesis against the live server's OpenAPI schema: across every operation, no 5xx, and
every response matches the schema (status documented, content type, body schema).

Bounded: SCHEMATHESIS_EXAMPLES per operation (default 6 in the default run; the slow run uses
60). The server runs in-process on a loopback port, on a temp copy of the demo store.
"""
from __future__ import annotations

import os

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="pip install -e '.[reliability]'")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (content_type_conformance, not_a_server_error,  # noqa: E402
                                 response_schema_conformance, status_code_conformance)

from relutil import inproc_server, make_store, record  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
FAST, SLOW = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "6")), 60
_seen: dict[str, int] = {}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("st") / "store")
    with inproc_server(store, max_upload_bytes=4 << 20, inspect_max_values=1000) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(live):
    return schemathesis.openapi.from_url(live.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api")


def _run(case, live) -> None:
    resp = case.call_and_validate(base_url=live.url, checks=CHECKS, timeout=30)
    key = f"{case.method} {case.path}"
    _seen[key] = _seen.get(key, 0) + 1
    assert resp.status_code < 500


@schema.parametrize()
@settings(max_examples=FAST, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_fast(case, live):
    _run(case, live)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=SLOW, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_slow(case, live):
    _run(case, live)


def test_zz_record():
    if _seen:
        record("schemathesis", "requests per operation", operations=len(_seen),
               requests=sum(_seen.values()), server_errors=0)
