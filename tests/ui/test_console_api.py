"""The console's server side, without a browser: /ui and its assets, the overview and the
graph endpoint, and access control. Runs everywhere (no Chromium needed)."""
from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from serverproc import ROOT, copy_store, inproc_server

from .uihelpers import FIXTURES

STATIC = ROOT / "service" / "api" / "static"


@pytest.fixture(scope="module")
def http(ui_server):
    with httpx.Client(base_url=ui_server.url, timeout=30) as c:
        yield c


def test_ui_is_served_with_a_strict_policy(http):
    r = http.get("/ui", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "ui/"
    r = http.get("/ui/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="static/js/main.js">' in r.text
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "connect-src 'self'" in csp
    assert http.head("/ui/").status_code == 200


@pytest.mark.parametrize("path,ctype", [("js/main.js", "text/javascript"),
                                        ("console.css", "text/css"),
                                        ("favicon.svg", "image/svg+xml")])
def test_assets_have_the_right_types(http, path, ctype):
    r = http.get("/ui/static/" + path)
    assert r.status_code == 200 and r.headers["content-type"].startswith(ctype)
    assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path", ["../app.py", "..%2f..%2fapp.py", "%2e%2e/%2e%2e/service/app.py",
                                  "js/../../routers/ui.py", "nope.js", ".hidden", "js"])
def test_assets_stay_inside_the_static_folder(http, path):
    r = http.get("/ui/static/" + path)
    assert r.status_code == 404
    assert "error" in r.json()


def _static_files() -> list[Path]:
    return [p for p in STATIC.rglob("*") if p.is_file()]


def test_every_module_import_resolves():
    """A typo in an import path breaks a page only at run time: check them all statically."""
    pat = re.compile(r"""(?:import\s[^'"]*?from\s*|import\s*\(\s*|import\s+)"""
                     r"""["'](\.{1,2}/[^"']+)["']""")
    seen = 0
    for js in STATIC.rglob("*.js"):
        for spec in pat.findall(js.read_text()):
            target = (js.parent / spec).resolve()
            assert target.is_file(), f"{js.relative_to(ROOT)} imports missing {spec}"
            seen += 1
    assert seen > 20


def test_nothing_is_loaded_from_outside():
    """No CDN, no web fonts, no absolute URLs: the console works on a closed network."""
    allowed = {"http://www.w3.org/2000/svg"}
    for f in _static_files():
        text = f.read_text(errors="replace")
        for url in re.findall(r"https?://[^\s\"'<>)]+", text):
            assert url in allowed, f"{f.relative_to(ROOT)} refers to {url}"
        assert "@import" not in text and "fonts.googleapis" not in text


def test_overview_has_what_the_models_page_needs(http):
    doc = http.get("/ui/api/overview").json()
    assert doc["auth"] == {"admin": False, "inference": False}
    models = {m["name"]: m for m in doc["models"]}
    mlp = models["mlp"]["versions"][0]
    assert mlp["state"] == "READY" and mlp["load_seconds"] > 0 and mlp["warm"] is True
    assert mlp["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}]
    summary = http.get("/v2/models/mlp/summary").json()
    assert mlp["total_params"] == summary["total_params"]
    assert mlp["op_count"] == len(summary["layers"])
    assert mlp["dynamic_batching"] is not None and mlp["max_batch_size"] > 0
    # memory: what the version holds (at least its parameters) within the budget
    params_bytes = 4 * summary["total_params"]
    mem = doc["memory"]
    assert params_bytes <= mlp["memory_bytes"] <= mem["held_bytes"] < mem["resident_bytes"]
    assert mem["budget_bytes"] > mem["held_bytes"]


def test_graph_matches_the_summary(http):
    g = http.get("/v2/models/lenet/graph").json()
    s = http.get("/v2/models/lenet/summary").json()
    ops = [n for n in g["nodes"] if n["kind"] == "op"]
    assert [n["name"] for n in ops] == [r["name"] for r in s["layers"]]
    assert [n["op"] for n in ops] == [r["op"] for r in s["layers"]]
    assert [n["params"] for n in ops] == [r["params"] for r in s["layers"]]
    assert g["total_params"] == s["total_params"] and g["op_count"] == len(ops)
    for n, r in zip(ops, s["layers"]):
        # the summary is at batch 1; the graph keeps the free batch dim as -1
        assert n["output_shapes"][0] == [-1] + r["output_shape"][1:], n["name"]
        assert n["flops"] == r["flops"]
        assert all(src < n["id"] for src, _ in n["inputs"])            # topological
    (inp,) = [n for n in g["nodes"] if n["kind"] == "input"]
    assert inp["name"] == "data" and inp["output_shapes"] == [[-1, 1, 28, 28]]
    (head,) = g["heads"]
    assert g["nodes"][head["node"]]["kind"] == "op" and head["shape"] == [-1, 10]
    conv = next(n for n in ops if n["op"] == "Convolution")
    assert conv["attrs"]["kernel"] and conv["param_tensors"][0]["slot"] == "weight"
    assert sum(p["size"] for p in conv["param_tensors"]) == conv["params"]
    assert http.get("/v2/models/lenet/versions/1/graph").json() == g


def test_graph_of_an_mxnet_export_with_free_spatial_dims(http):
    files = {"symbol": ("s.json", (FIXTURES / "mini_inception-symbol.json").read_bytes()),
             "params": ("p.params", (FIXTURES / "mini_inception-0000.params").read_bytes())}
    r = http.post("/v2/repository/models/graph_inception/upload", files=files)
    assert r.status_code == 201, r.text
    g = http.get("/v2/models/graph_inception/graph").json()
    ops = [n for n in g["nodes"] if n["kind"] == "op"]
    assert len(ops) == 61
    assert sum(n["op"] == "Concat" for n in ops) >= 2
    # free H, W stay free (-1) while channels are concrete, and nothing is left unknown
    conv = next(n for n in ops if n["op"] == "Convolution")
    shp = conv["output_shapes"][0]
    assert shp[0] == -1 and shp[1] > 0 and shp[2:] == [-1, -1]
    assert all(n["output_shapes"][0] is not None for n in ops)
    # every record name of an inspection maps to a node's output name
    import numpy as np
    x = np.load(FIXTURES / "mini_inception-io.npz")["data"]
    body = {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.ravel().tolist()}]}
    recs = http.post("/v2/models/graph_inception/inspect", json=body).json()["records"]
    outputs = {o for n in g["nodes"] for o in n["outputs"]}
    assert recs and all(rec["name"] in outputs for rec in recs)


def test_unknown_model_graph_is_404(http):
    r = http.get("/v2/models/nope/graph")
    assert r.status_code == 404 and "nope" in r.json()["error"]
    assert http.get("/v2/models/lenet/versions/9/graph").status_code == 404


def test_token_guards_the_api_but_not_the_page(tmp_path):
    store = copy_store(tmp_path / "store", ("mlp",))
    with inproc_server(store, auth_token="s3cret", auth_inference=True) as info, \
            httpx.Client(base_url=info.url, timeout=30) as c:
        assert c.get("/ui/").status_code == 200                      # the page itself is public
        assert c.get("/ui/static/js/api.js").status_code == 200
        assert c.get("/ui/api/overview").status_code == 401
        assert c.get("/v2/models/mlp/graph").status_code == 401
        auth = {"Authorization": "Bearer s3cret"}
        doc = c.get("/ui/api/overview", headers=auth).json()
        assert doc["auth"] == {"admin": True, "inference": True}
        assert c.get("/v2/models/mlp/graph", headers=auth).status_code == 200
        wrong = {"Authorization": "Bearer nope"}
        assert c.get("/v2/models/mlp/graph", headers=wrong).status_code == 401


def test_missing_assets_are_a_clear_404(monkeypatch, http, tmp_path):
    from service.api.routers import ui
    monkeypatch.setattr(ui, "STATIC", tmp_path)
    r = http.get("/ui/")
    assert r.status_code == 404 and "not part of this install" in r.json()["error"]
    assert http.get("/ui/static/js/main.js").status_code == 404


def test_graph_reports_the_served_version(http):
    """An uploaded model's graph names the version it is served as."""
    files = {"symbol": ("s.json", (FIXTURES / "mini_vgg_alexnet-symbol.json").read_bytes()),
             "params": ("p.params", (FIXTURES / "mini_vgg_alexnet-0000.params").read_bytes())}
    r = http.post("/v2/repository/models/graph_version/upload", files=files)
    assert r.status_code == 201, r.text
    v = r.json()["version"]
    assert http.get("/v2/models/graph_version/graph").json()["version"] == v
    assert http.get(f"/v2/models/graph_version/versions/{v}/graph").json()["version"] == v
