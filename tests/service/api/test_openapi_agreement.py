"""The served OpenAPI document and the behaviour agree (issue 26, defect 11): what the schema
accepts is accepted, what it refuses is refused, every status is documented, and the
protocol's paths answer without redirects."""
from __future__ import annotations

import numpy as np
import pytest

from serverproc import infer_json


@pytest.fixture(scope="module")
def spec(http):
    return http.get("/openapi.json").json()


def test_load_parameters_must_be_an_object(http, spec):
    body = spec["paths"]["/v2/repository/models/{name}/load"]["post"]["requestBody"]
    schema = body["content"]["application/json"]["schema"]["properties"]["parameters"]
    assert "object" in str(schema)
    for bad in (0.0, 0, "", [], False):
        r = http.post("/v2/repository/models/mlp/load", json={"parameters": bad})
        assert r.status_code == 400 and "'parameters' must be an object" in r.text, (bad, r.text)
    assert http.post("/v2/repository/models/mlp/load", json={"parameters": None}).status_code == 200


def test_index_ready_null_is_absent(http):
    every = http.post("/v2/repository/index", json={}).json()
    assert http.post("/v2/repository/index", json={"ready": None}).json() == every
    assert http.post("/v2/repository/index", json={"ready": "yes"}).status_code == 400


def test_infer_needs_an_input_as_the_schema_says(http, spec):
    for path in ("/v2/models/{name}/infer", "/v2/models/{name}/inspect"):
        body = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        assert body["schema"]["properties"]["inputs"].get("minItems") == 1, path
    r = http.post("/v2/models/mlp/infer", json={"inputs": []})
    assert r.status_code == 400
    x = np.zeros((1, 512), np.float32)
    assert http.post("/v2/models/mlp/infer", json=infer_json("mlp", x)).status_code == 200


def test_summary_takes_every_documented_batch_size(http, spec):
    params = spec["paths"]["/v2/models/{name}/summary"]["get"]["parameters"]
    top = next(p for p in params if p["name"] == "batch_size")["schema"]["maximum"]
    r = http.get("/v2/models/mlp/summary", params={"batch_size": top})   # mlp serves <= 64
    assert r.status_code == 200 and r.json()["batch_size"] == top
    assert http.get("/v2/models/mlp/summary", params={"batch_size": top + 1}).status_code == 400


def test_delete_stats_is_405_and_documented(http, spec):
    r = http.delete("/v2/models/stats")
    assert r.status_code == 405 and r.headers["Allow"] == "GET", r.text
    assert "405" in spec["paths"]["/v2/models/{name}"]["delete"]["responses"]
    assert http.get("/v2/models/stats").status_code == 200


@pytest.mark.parametrize("path", ["/v2", "/v2/", "/v2/health/live", "/v2/health/ready",
                                  "/v2/models/mlp", "/v2/models/mlp/ready",
                                  "/v2/models/mlp/versions/1", "/v2/models/mlp/versions/1/ready"])
def test_protocol_paths_answer_without_redirects(http, path):
    r = http.get(path)                         # httpx does not follow redirects by default
    assert r.status_code == 200, (path, r.status_code, r.headers.get("location"))


def test_no_path_redirects(http):
    for path in ("/v2/models/mlp/", "/v2/health/live/", "/v2/repository/index/"):
        assert http.get(path).status_code not in (301, 302, 307, 308), path
