"""The image, built and run for real: both builders, its metadata and size, `pip freeze` equal
to requirements.lock, the server end to end in it (port published on 127.0.0.1 only), and a
`docker restart` that keeps uploaded models (named volume)."""
from __future__ import annotations

import json
import sys
import uuid

import httpx
import numpy as np
import pytest

from conftest import IMAGE, build
from docker_engine import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import lockfile  # noqa: E402

pytestmark = pytest.mark.timeout(900)

MAX_IMAGE_BYTES = 450 * 1000 * 1000
MX1 = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
TOKEN = "container-test-token"


def test_image_metadata_and_size(engine, image):
    cfg = json.loads(engine.inspect(image, "{{json .Config}}"))
    assert cfg["User"] == "10001:10001"
    assert set(cfg["ExposedPorts"]) == {"8000/tcp", "8001/tcp"}
    assert "/models" in cfg["Volumes"]
    assert "/v2/health/ready" in " ".join(cfg["Healthcheck"]["Test"])
    labels = cfg["Labels"]
    assert labels["org.opencontainers.image.title"] == "hybridserve"
    assert labels["org.opencontainers.image.version"] == "0.1.0"
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    size = int(engine.inspect(image, "{{.Size}}"))
    print(f"image size {size / 1e6:.0f} MB")
    assert size <= MAX_IMAGE_BYTES, f"{size / 1e6:.0f} MB > 450 MB"


def test_legacy_builder_builds_the_same_dockerfile(engine, image):
    tag = "hybridserve:legacy-build-test"
    build(engine, tag, False)
    try:
        assert engine.inspect(tag, "{{.Config.User}}") == "10001:10001"
        assert engine.inspect(tag, "{{json .Config.Cmd}}") == engine.inspect(image, "{{json .Config.Cmd}}")
    finally:
        engine.docker("rmi", tag, check=False)


def test_pip_freeze_equals_the_lock(engine, image):
    out = engine.docker("run", "--rm", "--network", "none", image, "pip", "freeze").stdout
    frozen = {}
    for line in out.splitlines():
        name, _, ver = line.partition("==") if "==" in line else line.partition(" @ ")
        frozen[lockfile.canonicalize_name(name)] = ver
    assert frozen.pop("hybridserve") == "file:///src"      # `pip install --no-deps .`
    assert frozen == lockfile.pins(lockfile.LOCKS[0])


def _files(stem: str) -> dict:
    return {"symbol": (f"{stem}-symbol.json", (MX1 / f"{stem}-symbol.json").read_bytes()),
            "params": (f"{stem}-0000.params", (MX1 / f"{stem}-0000.params").read_bytes())}


def _infer(http: httpx.Client, model: str, x: np.ndarray) -> np.ndarray:
    body = {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.ravel().tolist()}]}
    r = http.post(f"/v2/models/{model}/infer", json=body)
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    return np.asarray(out["data"], np.float32).reshape(out["shape"])


def test_server_in_the_container_end_to_end_and_restart_keeps_uploads(engine, image):
    name, volume = f"hs-e2e-{uuid.uuid4().hex[:8]}", f"hs-e2e-models-{uuid.uuid4().hex[:8]}"
    engine.docker("volume", "create", volume)
    engine.docker("run", "-d", "--name", name, "-p", "127.0.0.1::8000",
                  "-v", f"{volume}:/models", "-e", f"HYBRIDSERVE_AUTH_TOKEN={TOKEN}", image)
    try:
        engine.wait_healthy(name)
        port = engine.published(name, 8000)
        io = np.load(MX1 / "fc_flatten-io.npz")
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            # the demo store seeded into the empty named volume
            assert {m["name"] for m in http.post("/v2/repository/index").json()} >= {"mlp", "lenet"}
            # uploads need the token
            assert http.post("/v2/repository/models/fc/upload", files=_files("fc_flatten")).status_code == 401
            r = http.post("/v2/repository/models/fc/upload", files=_files("fc_flatten"), headers=auth)
            assert r.status_code == 201, r.text
            np.testing.assert_allclose(_infer(http, "fc", io["data"]), io["output"], rtol=1e-4, atol=1e-5)
            summary = http.get("/v2/models/fc/summary", params={"format": "text"}, headers=auth)
            assert summary.status_code == 200 and "FullyConnected" in summary.text, summary.text
            assert http.post("/v2/models/fc/inspect", json={"inputs": [
                {"name": "data", "shape": list(io["data"].shape), "datatype": "FP32",
                 "data": io["data"].ravel().tolist()}]}).status_code == 401
            doc = http.post("/v2/models/fc/inspect", headers=auth, json={"inputs": [
                {"name": "data", "shape": list(io["data"].shape), "datatype": "FP32",
                 "data": io["data"].ravel().tolist()}]}).json()
            assert "FullyConnected" in [rec["op"] for rec in doc["records"]]
            metrics = http.get("/metrics").text
            assert any(l.startswith("hybridserve_inference_requests_total{") and 'model="fc"' in l
                       for l in metrics.splitlines()), metrics[:2000]

        engine.docker("restart", name, timeout=120)
        engine.wait_healthy(name)
        port = engine.published(name, 8000)         # may change across a restart
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            assert http.get("/v2/models/fc/ready").status_code == 200
            np.testing.assert_allclose(_infer(http, "fc", io["data"]), io["output"], rtol=1e-4, atol=1e-5)
        # the container runs as the image's non-root user
        assert engine.docker("exec", name, "id", "-u").stdout.strip() == "10001"
    finally:
        engine.docker("rm", "-f", "-v", name, check=False)
        engine.docker("volume", "rm", "-f", volume, check=False)
