"""`.mar` files dropped into the model store are imported like uploads: at startup and on a
poll, named by their manifest, once per archive content; a refused one is recorded, not retried."""
from __future__ import annotations

import json
import shutil
import time

import httpx
import numpy as np

from fixture_util import FIXTURES
from serverproc import infer_json, inproc_server
from service.core.archives import RECORD

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
    shutil.copy(MAR / "mlp.mar", store / "anything.mar")      # the manifest names it: mlp
    with inproc_server(store, store_poll_s=0.2) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as http:
        r = http.post("/v2/models/mlp/infer", json=infer_json("mlp", REF["mlp_input"]))
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
        assert record["anything.mar"]["model"] == "mlp" and record["anything.mar"]["version"] == "1"
        assert "not a zip file" in record["broken.mar"]["error"]
        time.sleep(0.6)                            # polls go on: nothing imported twice
        assert [p.name for p in (store / "mlp").iterdir() if p.name.isdigit()] == ["1"]
        assert not (store / "broken").exists()
        assert (store / "anything.mar").is_file()          # the dropped file stays
