"""`.mar` files dropped into the model store are imported like uploads: at startup and on a
poll, named by their manifest, once per archive content; a refused one is recorded, not retried."""
from __future__ import annotations

import json
import logging
import shutil
import time
import zipfile

import httpx
import numpy as np

from fixture_util import FIXTURES
from mgmt_fixtures import archive_named
from serverproc import copy_store, infer_json, inproc_server
from service.repository.drops import RECORD

MAR = FIXTURES / "mar"
REF = np.load(MAR / "reference.npz")


def _wait(pred, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


def test_dropped_archives_imported_at_startup_and_on_poll(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(MAR / "mms_mlp.mar", store / "anything.mar")  # the manifest names it: mms_mlp
    with inproc_server(store, store_poll_s=0.2) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as http:
        r = http.post("/v2/models/mms_mlp/infer", json=infer_json("mms_mlp", REF["mlp_input"]))
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(out["shape"]),
                                   REF["mlp_output"], rtol=1e-4, atol=1e-5)
        (store / "broken.mar").write_bytes(b"PK not really")
        shutil.copy(MAR / "custom.mar", store / "custom.mar")
        assert _wait(lambda: http.get("/v2/models/custom/ready").status_code == 200)
        assert _wait(lambda: (json.loads((store / RECORD).read_text()).get("broken.mar") or {})
                     .get("state") == "refused")
        record = json.loads((store / RECORD).read_text())
        assert record["anything.mar"]["model"] == "mms_mlp" and record["anything.mar"]["version"] == "1"
        assert "not a zip file" in record["broken.mar"]["error"]
        time.sleep(0.6)                            # polls go on: nothing imported twice
        assert [p.name for p in (store / "mms_mlp").iterdir() if p.name.isdigit()] == ["1"]
        assert not (store / "broken").exists()
        assert (store / "anything.mar").is_file()          # the dropped file stays


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_dropped_archive_never_rewrites_a_served_model(tmp_path):
    """Issue 26, defect 9: `mlp.mar` became mlp/2 and rewrote the demo's config.json."""
    store = copy_store(tmp_path / "store", ("mlp",))
    config = (store / "mlp" / "config.json").read_bytes()
    with inproc_server(store, store_poll_s=0.1) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as http:
        seen = _Records()
        logging.getLogger("hybridserve.archives").addHandler(seen)
        (store / "mlp.mar").write_bytes(archive_named("mlp"))      # another signature: refused
        assert _wait(lambda: (store / RECORD).is_file() and (
            json.loads((store / RECORD).read_text()).get("mlp.mar") or {}).get("state") == "refused")
        record = json.loads((store / RECORD).read_text())["mlp.mar"]
        assert "different signature" in record["error"] and "data FP32 [-1,16]" in record["error"]
        assert (store / "mlp" / "config.json").read_bytes() == config
        assert sorted(p.name for p in (store / "mlp").iterdir() if p.is_dir()) == ["1"]
        rows = http.post("/v2/repository/index", json={}).json()
        row = next(r for r in rows if r["name"] == "mlp")
        assert row["state"] == "READY" and "different signature" in row["reason"]
        logging.getLogger("hybridserve.archives").removeHandler(seen)
        assert any(r.levelno == logging.WARNING and "mlp.mar" in r.getMessage()
                   for r in seen.records)
        x = np.zeros((1, 512), np.float32)
        assert http.post("/v2/models/mlp/infer", json=infer_json("mlp", x)).status_code == 200

        # the same signature: the model's next version, under the model's own config
        shutil.copy(MAR / "mms_mlp.mar", store / "first.mar")
        assert _wait(lambda: http.get("/v2/models/mms_mlp/ready").status_code == 200)
        own = (store / "mms_mlp" / "config.json").read_bytes()
        cfg = json.loads(own)
        cfg["description"] = "edited by the operator"
        r = http.post("/v2/repository/models/mms_mlp/load",
                      json={"parameters": {"config": json.dumps(cfg), "persist_config": True}})
        assert r.status_code == 200, r.text
        own = (store / "mms_mlp" / "config.json").read_bytes()
        shutil.copy(MAR / "mms_mlp.mar", store / "again.mar")
        assert _wait(lambda: "2" in srv.core.registry.ready_versions("mms_mlp"))
        assert (store / "mms_mlp" / "config.json").read_bytes() == own
        assert http.get("/v2/models/mms_mlp/config").json()["description"] == "edited by the operator"


def test_no_shipped_archive_shares_a_demo_models_name():
    from serverproc import STORE
    demos = {p.name for p in STORE.iterdir() if p.is_dir()}
    for archive in MAR.glob("*.mar"):
        with zipfile.ZipFile(archive) as zf:
            name = json.loads(zf.read("MAR-INF/MANIFEST.json"))["model"]["modelName"]
        assert name not in demos and archive.stem not in demos, archive.name
