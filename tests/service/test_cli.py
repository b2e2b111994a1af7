"""`python -m service` in a subprocess (flags, env, graceful shutdown) and offline subcommands."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import numpy as np

from conftest import ROOT, free_port, infer_json, make_store


def test_python_m_service_graceful_shutdown(tmp_path):
    store = make_store(tmp_path / "store")
    cfg = json.loads((store / "mlp" / "config.json").read_text())
    cfg["dynamic_batching"]["max_queue_delay_microseconds"] = 600_000   # a slow in-flight request
    cfg["dynamic_batching"]["preferred_batch_size"] = [64]
    (store / "mlp" / "config.json").write_text(json.dumps(cfg))
    port = free_port()
    env = {**os.environ, "HYBRIDSERVE_LOG_LEVEL": "info", "HYBRIDSERVE_INFERENCE_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "service", "--model-store", str(store),
                             "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        end = time.time() + 60
        while True:
            try:
                if httpx.get(url + "/v2/health/ready", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.time() < end, proc.stderr.read().decode()[-2000:]
            time.sleep(0.1)
        result = {}

        def slow():
            result["r"] = httpx.post(url + "/v2/models/mlp/infer", timeout=30,
                                     json=infer_json("mlp", np.ones((1, 512), np.float32)))

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.25)
        proc.send_signal(signal.SIGTERM)            # in-flight request must still complete
        t.join(20)
        assert result["r"].status_code == 200, result["r"].text
        assert proc.wait(20) in (0, -signal.SIGTERM)    # new uvicorn re-raises the signal
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    logs = proc.stderr.read().decode().splitlines()
    docs = [json.loads(ln) for ln in logs if ln.startswith("{")]
    assert any(d.get("logger") == "hybridserve.registry" and "loaded mlp/1" in d["msg"] for d in docs)
    assert any("shutdown complete" in d["msg"] for d in docs)


def test_offline_commands(capsys):
    from service.cli import main
    store = str(ROOT / "model_store")
    assert main(["summary", "mlp", "--model-store", store]) == 0
    out = capsys.readouterr().out
    assert "Total params: 164482" in out and out.startswith("-" * 80)
    assert main(["validate", "lenet", "--model-store", store]) == 0
    assert json.loads(capsys.readouterr().out)["warm"] is True
    fx = ROOT / "tests/fixtures/mxnet-1.9.1"
    assert main(["validate", "--symbol", str(fx / "fc_flatten-symbol.json"),
                 "--params", str(fx / "activations-0000.params")]) == 1


def test_offline_predict(tmp_path, capsys):
    from service.cli import main
    fx = ROOT / "tests/fixtures/mxnet-2.0.0b1"
    io = np.load(fx / "mlp_hybrid-io.npz")
    np.save(tmp_path / "x.npy", io["data"])
    assert main(["predict", "--symbol", str(fx / "mlp_hybrid-symbol.json"), "--params",
                 str(fx / "mlp_hybrid-0000.params"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npz")]) == 0
    y = np.load(tmp_path / "y.npz")
    np.testing.assert_allclose(y[y.files[0]], io["output"], rtol=1e-4, atol=1e-5)


def test_offline_convert_1x_to_2x(tmp_path, capsys):
    from service.cli import main
    fx = ROOT / "tests/fixtures/mxnet-1.9.1"
    io = np.load(fx / "fc_flatten-io.npz")
    assert main(["convert", "--symbol", str(fx / "fc_flatten-symbol.json"), "--params",
                 str(fx / "fc_flatten-0000.params"), "--out", str(tmp_path / "fc2")]) == 0
    capsys.readouterr()
    assert (tmp_path / "fc2-0000.params").read_bytes()[:2] == b"PK"      # 2.x npz
    np.save(tmp_path / "x.npy", io["data"])
    assert main(["predict", "--symbol", str(tmp_path / "fc2-symbol.json"), "--params",
                 str(tmp_path / "fc2-0000.params"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npz")]) == 0
    y = np.load(tmp_path / "y.npz")
    np.testing.assert_allclose(y[y.files[0]], io["output"], rtol=1e-4, atol=1e-5)
