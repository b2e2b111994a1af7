"""schemathesis against the live server's OpenAPI schema: across every operation, no 5xx, and
every response matches the schema (status documented, content type, body schema).

Each operation gets schema-valid (positive) and schema-violating (negative) generated requests;
two thirds of them address a real model (mlp, lenet), so bodies reach validation and the models
themselves. Bounded: SCHEMATHESIS_EXAMPLES per operation and mode (default 4 in the default
run; the slow run uses 40). The server runs in-process on a loopback port, on a temp copy of
the demo store. (schemathesis' own pytest plugin is not used: it breaks on pytest >= 9.2.)
"""
from __future__ import annotations

import os

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="pip install -e '.[reliability]'")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import (content_type_conformance, not_a_server_error,  # noqa: E402
                                 response_schema_conformance, status_code_conformance)

from .relutil import inproc_server, make_store, record  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
FAST, SLOW = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "4")), 40
_REAL = ("mlp", "lenet", None)       # None: whatever schemathesis generated
_seen: dict[str, int] = {}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("st") / "store")
    with inproc_server(store, max_upload_bytes=4 << 20, inspect_max_values=1000) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(live):
    return schemathesis.openapi.from_url(live.url + "/openapi.json")


def _call(case, live) -> None:
    key = f"{case.operation.method.upper()} {case.operation.path}"
    n = _seen.get(key, 0)
    _seen[key] = n + 1
    params = case.path_parameters or {}
    # never delete/unload a real model: the other operations test against them
    if "name" in params and case.method != "DELETE" and not case.path.endswith("/unload"):
        real = _REAL[n % 3]
        if real is not None:
            params["name"] = real
            if "version" in params:
                params["version"] = "1"
    resp = case.call_and_validate(base_url=live.url, checks=CHECKS, timeout=30)
    assert resp.status_code < 500


def _exercise(api, live, examples: int, derandomize: bool) -> None:
    failures = []
    before = sum(_seen.values())
    ops = [r.ok() for r in api.get_all_operations()]
    assert len(ops) >= 25
    for op in ops:
        # schema-violating cases need something besides string path parameters to violate
        negatable = bool(op.get_request_payload_content_types()) or any(
            p.location.value != "path" for p in op.iter_parameters())
        modes = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if negatable else [])
        for mode in modes:
            @settings(max_examples=examples, deadline=None, derandomize=derandomize,
                      database=None, suppress_health_check=list(HealthCheck))
            @given(op.as_strategy(generation_mode=mode))
            def run(case):
                _call(case, live)
            try:
                run()
            except Unsatisfiable:
                pass                            # every generated case was filtered out
            except Exception as e:  # noqa: BLE001 - collect every operation's failure
                failures.append(f"{op.label} ({mode.value}): {str(e)[:1500]}")
    assert not failures, "\n\n".join(failures)
    record("schemathesis", f"{examples} cases per operation and mode", operations=len(ops),
           requests=sum(_seen.values()) - before, server_errors=0, schema_violations=0)


def test_api_fast(api, live):
    _exercise(api, live, FAST, derandomize=True)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_api_slow(api, live):
    _exercise(api, live, SLOW, derandomize=False)
