"""KServe's SDK gRPC client (`kserve.InferenceGRPCClient`) against our gRPC port. KServe pins
a protobuf the server's stubs cannot share, so it runs from its own venv (.venv-clients, made
by tests/clients/setup.sh) in a subprocess; without that venv the test skips and says so."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
PY = ROOT / ".venv-clients" / "bin" / "python"


@pytest.mark.skipif(not PY.exists(), reason="no .venv-clients: run tests/clients/setup.sh "
                                            "(KServe's SDK needs its own protobuf)")
def test_kserve_grpc_client(server, mlp_ref, tmp_path):
    x = np.random.default_rng(5).standard_normal((3, 512)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = subprocess.run([str(PY), str(ROOT / "tests/clients/kserve_grpc.py"), server.grpc,
                        str(tmp_path / "x.npy")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert doc["live"] and doc["ready"] and doc["model_ready"]
    for kind in ("raw", "typed"):
        np.testing.assert_allclose(np.array(doc[f"output_{kind}"], np.float32), mlp_ref(x),
                                   rtol=1e-5, atol=1e-6)
    assert doc["id_raw"] == "kTrue" and doc["id_typed"] == "kFalse"
    assert doc["error"] == ["NOT_FOUND", "Model with name 'nope' does not exist."]
