"""`python -m service` in a subprocess (flags, env, graceful shutdown) and offline subcommands."""
from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import numpy as np
import onnxruntime as ort
import pytest

from serverproc import ROOT, copy_store, free_port, infer_json
from service.cli import main


def test_python_m_service_graceful_shutdown(tmp_path):
    store = copy_store(tmp_path / "store")
    cfg = json.loads((store / "mlp" / "config.json").read_text())
    cfg["dynamic_batching"]["max_queue_delay_microseconds"] = 600_000   # a slow in-flight request
    cfg["dynamic_batching"]["preferred_batch_size"] = [64]
    (store / "mlp" / "config.json").write_text(json.dumps(cfg))
    port = free_port()
    env = {**os.environ, "HYBRIDSERVE_LOG_LEVEL": "info", "HYBRIDSERVE_INFERENCE_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "service", "--model-store", str(store),
                             "--port", str(port), "--grpc-port", str(free_port())],
                            cwd=ROOT, env=env,
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
    store = str(ROOT / "model_store")
    assert main(["summary", "mlp", "--model-store", store]) == 0
    out = capsys.readouterr().out
    assert "Total params: 164482" in out and out.startswith("-" * 80)
    assert main(["validate", "lenet", "--model-store", store]) == 0
    assert json.loads(capsys.readouterr().out)["warm"] is True
    fx = ROOT / "tests/fixtures/mxnet-1.9.1"
    assert main(["validate", "--symbol", str(fx / "fc_flatten-symbol.json"),
                 "--params", str(fx / "activations-0000.params")]) == 1


def _predict_npz(tmp_path, symbol, params, x: np.ndarray) -> np.ndarray:
    """`hybridserve predict --symbol --params --input x.npy --output y.npz`: its first output."""
    np.save(tmp_path / "x.npy", x)
    assert main(["predict", "--symbol", str(symbol), "--params", str(params),
                 "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npz")]) == 0
    y = np.load(tmp_path / "y.npz")
    return y[y.files[0]]


def test_offline_predict(tmp_path, capsys):
    fx = ROOT / "tests/fixtures/mxnet-2.0.0b1"
    io = np.load(fx / "mlp_hybrid-io.npz")
    y = _predict_npz(tmp_path, fx / "mlp_hybrid-symbol.json", fx / "mlp_hybrid-0000.params",
                     io["data"])
    np.testing.assert_allclose(y, io["output"], rtol=1e-4, atol=1e-5)


def test_offline_convert_1x_to_2x(tmp_path, capsys):
    fx = ROOT / "tests/fixtures/mxnet-1.9.1"
    io = np.load(fx / "fc_flatten-io.npz")
    assert main(["convert", "--symbol", str(fx / "fc_flatten-symbol.json"), "--params",
                 str(fx / "fc_flatten-0000.params"), "--out", str(tmp_path / "fc2")]) == 0
    capsys.readouterr()
    assert (tmp_path / "fc2-0000.params").read_bytes()[:2] == b"PK"      # 2.x npz
    y = _predict_npz(tmp_path, tmp_path / "fc2-symbol.json", tmp_path / "fc2-0000.params",
                     io["data"])
    np.testing.assert_allclose(y, io["output"], rtol=1e-4, atol=1e-5)


def test_offline_convert_to_onnx_runs_in_stock_onnxruntime(tmp_path, capsys):
    """`convert --to onnx` of a real MXNet 1.x export: one checked .onnx file whose outputs in
    plain onnxruntime equal MXNet's recorded ones, at the exported and at another batch size.
    The file takes the input as the loaded model serves it (a flattening FullyConnected: N×48)."""
    fx = ROOT / "tests/fixtures/mxnet-1.9.1"
    io = np.load(fx / "fc_flatten-io.npz")
    assert main(["convert", "--symbol", str(fx / "fc_flatten-symbol.json"), "--params",
                 str(fx / "fc_flatten-0000.params"), "--to", "onnx", "-q",
                 "--out", str(tmp_path / "fc")]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written == {"format": "onnx", "onnx": str(tmp_path / "fc.onnx")}
    sess = ort.InferenceSession(written["onnx"], providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["data"]
    assert sess.get_inputs()[0].shape[1:] == [48]
    x = io["data"].reshape(len(io["data"]), -1)
    np.testing.assert_allclose(sess.run(None, {"data": x})[0], io["output"], rtol=1e-4, atol=1e-5)
    two = np.concatenate([x, x])
    np.testing.assert_allclose(sess.run(None, {"data": two})[0][len(x):], io["output"],
                               rtol=1e-4, atol=1e-5)


MX1 = ROOT / "tests/fixtures/mxnet-1.9.1"
MXNET_191 = ROOT / ".mxnet-venvs/mxnet-1.9.1/bin/python"


def _fx(name: str) -> list[str]:
    return ["--symbol", str(MX1 / f"{name}-symbol.json"), "--params",
            str(MX1 / f"{name}-0000.params")]


def test_offline_on_a_1x_fixture(tmp_path, capsys):
    """summary/validate/predict/inspect on a real MXNet 1.9.1 export, exact recorded output."""
    io = np.load(MX1 / "mini_resnet_v1-io.npz")
    np.save(tmp_path / "x.npy", io["data"])
    assert main(["summary", *_fx("mini_resnet_v1"), "--json", "-q"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["total_params"] > 0 and s["layers"][0]["op"] == "Convolution"
    assert main(["validate", *_fx("mini_resnet_v1"), "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True
    assert main(["predict", *_fx("mini_resnet_v1"), "--input", str(tmp_path / "x.npy"), "-q"]) == 0
    out = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(np.asarray(next(iter(out.values())), np.float32), io["output"],
                               rtol=1e-4, atol=1e-5)
    assert main(["inspect", *_fx("mini_resnet_v1"), "--input", str(tmp_path / "x.npy"),
                 "--filter", "Convolution", "-q"]) == 0
    recs = json.loads(capsys.readouterr().out)["records"]
    assert recs and all(r["op"] == "Convolution" for r in recs)
    # the filter ignores case, as over HTTP (one matcher)
    assert main(["inspect", *_fx("mini_resnet_v1"), "--input", str(tmp_path / "x.npy"),
                 "--filter", "convOLUTION", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == recs


def test_offline_json_inputs_and_demo_models(tmp_path, capsys):
    store = str(ROOT / "model_store")
    (tmp_path / "named.json").write_text(json.dumps({"data": [[0.5] * 512]}))
    (tmp_path / "bare.json").write_text(json.dumps([[[[0.5] * 28] * 28]]))
    (tmp_path / "oip.json").write_text(json.dumps(infer_json("mlp", np.full((1, 512), 0.5,
                                                                              np.float32))))
    outs = []
    for f in ("named.json", "oip.json"):
        assert main(["predict", "mlp", "--model-store", store, "-q",
                     "--input", str(tmp_path / f)]) == 0
        outs.append(json.loads(capsys.readouterr().out)["output"])
    assert outs[0] == outs[1] and np.asarray(outs[0]).shape == (1, 2)
    assert main(["predict", "lenet", "--model-store", store, "-q",
                 "--input", str(tmp_path / "bare.json")]) == 0
    assert np.asarray(json.loads(capsys.readouterr().out)["output"]).shape == (1, 10)
    assert main(["summary", "lenet", "--model-store", store, "--batch-size", "4", "-q"]) == 0
    assert "Estimated FLOPs (batch 4)" in capsys.readouterr().out


def test_offline_errors_are_one_line(tmp_path, capsys):
    store = str(ROOT / "model_store")
    np.save(tmp_path / "bad.npy", np.zeros((1, 7), np.float32))
    assert main(["predict", "mlp", "--model-store", store, "-q",
                 "--input", str(tmp_path / "bad.npy")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "expected [-1, 512]" in err[0].lower(), err
    assert main(["summary", "nope", "--model-store", store, "-q"]) == 1
    assert main(["predict", *_fx("fc_flatten"), "-q"]) == 1           # no --input
    assert "Traceback" not in capsys.readouterr().err


def test_progress_on_stderr(capsys):
    assert main(["validate", "mlp", "--model-store", str(ROOT / "model_store")]) == 0
    err = capsys.readouterr().err
    for stage in ("parsing graph", "reading parameters", "warming shape 1/4", "warming shape 4/4",
                  "loaded in"):
        assert stage in err, err


def test_convert_2x_to_1x_and_back(tmp_path, capsys):
    """The demo MLP (2.x: npz) → 1.x (legacy NDArray list) → 2.x: same predictions."""
    store = str(ROOT / "model_store")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((3, 512),
                                                                          dtype=np.float32))
    assert main(["convert", "mlp", "--model-store", store, "--format", "1.x", "-q",
                 "--out", str(tmp_path / "mlp1")]) == 0
    capsys.readouterr()
    assert (tmp_path / "mlp1-0000.params").read_bytes()[:8] == (0x112).to_bytes(8, "little")
    assert main(["convert", "--symbol", str(tmp_path / "mlp1-symbol.json"), "--params",
                 str(tmp_path / "mlp1-0000.params"), "--out", str(tmp_path / "mlp2"), "-q"]) == 0
    capsys.readouterr()
    preds = []
    for args in (["mlp", "--model-store", store],
                 ["--symbol", str(tmp_path / "mlp1-symbol.json"), "--params",
                  str(tmp_path / "mlp1-0000.params")],
                 ["--symbol", str(tmp_path / "mlp2-symbol.json"), "--params",
                  str(tmp_path / "mlp2-0000.params")]):
        assert main(["predict", *args, "--input", str(tmp_path / "x.npy"), "-q"]) == 0
        preds.append(np.asarray(next(iter(json.loads(capsys.readouterr().out).values()))))
    np.testing.assert_allclose(preds[1], preds[0], rtol=1e-6)
    np.testing.assert_allclose(preds[2], preds[0], rtol=1e-6)


@pytest.mark.interop
@pytest.mark.skipif(not MXNET_191.exists(), reason="needs the MXNet 1.9.1 venv "
                                                   "(tests/interop/setup_mxnet_venv.sh)")
def test_converted_1x_loads_in_real_mxnet_191(tmp_path, capsys):
    store = str(ROOT / "model_store")
    assert main(["convert", "mlp", "--model-store", store, "--format", "1.x", "-q",
                 "--out", str(tmp_path / "mlp1")]) == 0
    np.save(tmp_path / "x.npy", np.ones((1, 512), np.float32))
    assert main(["predict", "mlp", "--model-store", store, "-q",
                 "--input", str(tmp_path / "x.npy")]) == 0
    ours = np.asarray(json.loads(capsys.readouterr().out.splitlines()[-1])["output"])
    code = ("import mxnet as mx, numpy as np, sys\n"
            "net = mx.gluon.SymbolBlock.imports(sys.argv[1] + '-symbol.json', ['data'], "
            "sys.argv[1] + '-0000.params')\n"
            "print(net(mx.nd.ones((1, 512))).asnumpy().tolist())\n")
    out = subprocess.run([str(MXNET_191), "-c", code, str(tmp_path / "mlp1")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    theirs = np.asarray(json.loads(out.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)


def test_serve_memory_budget_flag_and_env(tmp_path, monkeypatch):
    """`serve --memory-budget 3GiB` and HYBRIDSERVE_MEMORY_BUDGET reach the registry."""
    cli = importlib.import_module("service.cli.main")     # the module (the package exports main())
    seen = []
    monkeypatch.setattr(cli, "create_app", lambda s: seen.append(s))
    monkeypatch.setattr(cli.uvicorn, "run", lambda *a, **k: None)
    monkeypatch.setattr(cli.draining, "run", lambda *a, **k: None)
    monkeypatch.setenv("HYBRIDSERVE_GRPC_PORT", "0")      # 8001 may be anyone's on this host
    assert cli.main(["serve", "--model-store", str(tmp_path), "--memory-budget", "3GiB"]) == 0
    monkeypatch.setenv("HYBRIDSERVE_MEMORY_BUDGET", "200MB")
    assert cli.main(["serve", "--model-store", str(tmp_path)]) == 0
    assert [s.memory_budget for s in seen] == [3 << 30, 200_000_000]


def test_convert_from_mar_into_a_store(tmp_path, capsys):
    """`convert --from-mar X.mar --to STORE`: a normal model directory + config, served with
    MMS's outputs; the custom handler is named as ignored; a second run is the next version."""
    mar_dir = ROOT / "tests/fixtures/mar"
    ref = np.load(mar_dir / "reference.npz")
    store = tmp_path / "store"
    assert main(["convert", "--from-mar", str(mar_dir / "custom.mar"), "--to", str(store),
                 "-q"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert (doc["model"], doc["version"]) == ("custom", "1")
    assert "custom MMS handler 'my_service:handle' ignored" in err
    assert sorted(p.name for p in (store / "custom" / "1").iterdir()) == [
        "custom-0000.params", "custom-symbol.json"]
    cfg = json.loads((store / "custom" / "config.json").read_text())
    assert cfg["inputs"][0]["shape"] == [-1, 16]
    x = tmp_path / "x.npy"
    np.save(x, ref["mlp_input"])
    assert main(["predict", "custom", "--model-store", str(store), "--input", str(x), "-q"]) == 0
    y = np.array(json.loads(capsys.readouterr().out)["prob"], np.float32)
    np.testing.assert_allclose(y, ref["mlp_output"], rtol=1e-4, atol=1e-5)
    assert main(["convert", "--from-mar", str(mar_dir / "custom.mar"), "--to", str(store),
                 "mine", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "mine"


def test_convert_from_mar_refused_leaves_store_empty(tmp_path, capsys):
    bad = tmp_path / "bad.mar"
    bad.write_bytes(b"PK\x03\x04 truncated")
    store = tmp_path / "store"
    assert main(["convert", "--from-mar", str(bad), "--to", str(store), "-q"]) == 1
    assert "MAR archive 'bad.mar': not a zip file" in capsys.readouterr().err
    assert [p.name for p in store.iterdir() if not p.name.startswith(".")] == []
    assert not any((store / ".staging").iterdir())
