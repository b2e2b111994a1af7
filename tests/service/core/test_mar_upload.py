"""`.mar` uploads over HTTP (field `archive`): real model-archiver archives serve MMS's outputs,
images and labels as MMS's vision service; hostile or broken archives leave the store as it was."""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from fixture_util import FIXTURES
from serverproc import infer_json
from test_upload_delete import _snapshot

MAR = FIXTURES / "mar"
REF = np.load(MAR / "reference.npz")


def _upload(http, name: str, data: bytes, filename: str = "model.mar", **fields):
    return http.post(f"/v2/repository/models/{name}/upload",
                     files={"archive": (filename, data)}, data=fields)


def test_mlp_archive_upload_serves_mms_outputs(http, server):
    r = _upload(http, "mar_mlp", (MAR / "mms_mlp.mar").read_bytes(), "mms_mlp.mar")
    assert r.status_code == 201, r.text
    assert r.json() == {"name": "mar_mlp", "version": "1", "state": "READY"}
    md = http.get("/v2/models/mar_mlp").json()
    assert md["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 16]}]
    assert md["outputs"][0]["name"] == "prob"
    r = http.post("/v2/models/mar_mlp/infer", json=infer_json("mar_mlp", REF["mlp_input"]))
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(out["shape"]),
                               REF["mlp_output"], rtol=1e-4, atol=1e-5)
    assert sorted(p.name for p in (server.store / "mar_mlp" / "1").iterdir()) == [
        "mms_mlp-0000.params", "mms_mlp-symbol.json"]
    # the version field wins over the manifest (which names none: next would be 2)
    r = _upload(http, "mar_mlp", (MAR / "mms_mlp.mar").read_bytes(), version="7")
    assert r.status_code == 201 and r.json()["version"] == "7", r.text


def test_vision_archive_image_in_labels_out(http):
    r = _upload(http, "mar_vision", (MAR / "vision.mar").read_bytes(), "vision.mar")
    assert r.status_code == 201, r.text
    png = (MAR / "image.png").read_bytes()
    r = http.post("/v2/models/mar_vision/infer", content=png,
                  headers={"Content-Type": "image/png"})
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(out["shape"]),
                               REF["vision_output"], rtol=1e-4, atol=1e-5)
    r = http.post("/v2/models/mar_vision/infer?classification=2", content=png,
                  headers={"Content-Type": "image/png"})
    best = int(np.argmax(REF["vision_output"][0]))
    score, index, label = r.json()["outputs"][0]["data"][0].split(":")
    assert (int(index), label) == (best, f"n0000{best} class {best}")


def test_custom_handler_reported_in_config(http):
    r = _upload(http, "mar_custom", (MAR / "custom.mar").read_bytes(), "custom.mar")
    assert r.status_code == 201, r.text
    cfg = http.get("/v2/models/mar_custom/config").json()
    assert "custom MMS handler 'my_service:handle' ignored" in cfg["description"]
    assert "never run" in cfg["parameters"]["mms_handler_ignored"]["string_value"]
    meta = http.get("/v2/models/mar_custom").json()          # the model metadata says it too
    assert "never run" in meta["parameters"]["mms_handler_ignored"]
    r = http.post("/v2/models/mar_custom/infer", json=infer_json("mar_custom", REF["mlp_input"]))
    out = r.json()["outputs"][0]      # served on its tensors: the handler's doubling is not applied
    np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(out["shape"]),
                               REF["mlp_output"], rtol=1e-4, atol=1e-5)


def _escaping() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(MAR / "mms_mlp.mar") as src, zipfile.ZipFile(buf, "w") as zf:
        for n in src.namelist():
            zf.writestr(n, src.read(n))
        zf.writestr("../../escape.txt", b"x")
    return buf.getvalue()


@pytest.mark.parametrize("data, needle", [
    (_escaping(), "'../../escape.txt' would be written outside"),
    (b"not a zip", "not a zip file"),
])
def test_hostile_archive_upload_refused_store_unchanged(http, server, data, needle):
    before = _snapshot(server.store)
    r = _upload(http, "mar_bad", data, "bad.mar")
    assert r.status_code == 400 and needle in r.json()["error"], r.text
    assert "bad.mar" in r.json()["error"]
    assert _snapshot(server.store) == before
    assert not (server.store.parent / "escape.txt").exists()
    staging = server.store / ".staging"
    assert not staging.exists() or not any(p.name.endswith(".mar") for p in staging.rglob("*"))


def test_archive_with_symbol_field_refused(http):
    r = http.post("/v2/repository/models/mar_mixed/upload",
                  files={"archive": ("m.mar", (MAR / "mms_mlp.mar").read_bytes()),
                         "symbol": ("s.json", json.dumps({"nodes": []}))})
    assert r.status_code == 400 and "drop the fields ['symbol']" in r.json()["error"]
