"""The OpenVINO engine in the server: a model config's `"engine": "openvino"` / `"precision":
"bf16"` is served by the `optimize_for(backend="openvino")` twin when it reproduces the NumPy
reference, metadata names engine and precision (and top-1 agreement), and what is missing — the
CPU's bf16, the openvino package — falls back with the reason. The fallback to ONNX Runtime
without openvino is simulated by blocking its import; the test extra installs the package."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import mini_resnet
from framework.onnx import openvino as ov_engine
from service.repository.config import ModelConfig, TensorSpec
from service.runtime import compiled
from service.runtime.runner import Runner


def _load(**config) -> Runner:
    cfg = ModelConfig(inputs=[TensorSpec(name="data", shape=[-1, 3, 16, 16])],
                      max_batch_size=4, **config)
    return Runner.load("mini", "1", mini_resnet.files(), cfg)


def _reference(r: Runner, x: np.ndarray) -> np.ndarray:
    return r.run_hooked([x], lambda *_: None)[0]        # the traced NumPy graph


def _needs_openvino():
    """The test extra installs openvino (optional for users): a broken install fails here."""
    import openvino  # noqa: F401


def test_config_engine_openvino_is_served_by_openvino():
    _needs_openvino()
    r = _load(engine="openvino")
    meta = r.metadata(["1"])["parameters"]
    assert meta["engine"] == "openvino" and meta["precision"] == "f32"
    assert meta["openvino_nodes"] == meta["graph_nodes"] > 30
    assert meta["execution_providers"] == "OpenVINOCPU:f32"
    assert meta["top1_agreement"] == "1/1" and "engine_fallback_reason" not in meta
    assert r.triton_config()["parameters"]["engine"] == {"string_value": "openvino"}
    x, mxnet_out = mini_resnet.io()
    for batch in (x, np.repeat(x, 3, 0)):
        y = r.run([batch])[0]
        assert compiled.within_bound([y], [_reference(r, batch)]) is None
    assert compiled.within_bound([r.run([x])[0]], [mxnet_out]) is None


def test_config_precision_bf16_without_native_bf16_runs_f32_and_says_why():
    _needs_openvino()
    if ov_engine.bf16_support() is None:
        pytest.skip("this CPU computes bf16 natively: no fallback to observe")
    r = _load(precision="bf16")          # bf16 alone asks for OpenVINO (its precision hint)
    meta = r.metadata(["1"])["parameters"]
    assert meta["engine"] == "openvino" and meta["precision"] == "f32"
    assert "bf16 not used" in meta["engine_fallback_reason"]
    assert "no native bf16" in meta["engine_fallback_reason"]
    x, _ = mini_resnet.io()
    assert compiled.within_bound([r.run([x])[0]], [_reference(r, x)]) is None


def test_config_precision_bf16_with_native_bf16_stays_within_its_bound():
    _needs_openvino()
    if ov_engine.bf16_support() is not None:
        pytest.skip(f"no native bf16 here: {ov_engine.bf16_support()}")
    r = _load(precision="bf16")
    meta = r.metadata(["1"])["parameters"]
    assert (meta["engine"], meta["precision"]) == ("openvino", "bf16")
    x, _ = mini_resnet.io()
    assert compiled.within_bound([r.run([x])[0]], [_reference(r, x)],
                                 compiled.BF16_BOUND) is None


def test_config_engine_openvino_without_the_package_falls_back_to_onnxruntime(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino", None)       # import fails
    ov_engine._core.cache_clear()             # no Core kept from an earlier test
    try:
        r = _load(engine="openvino", precision="bf16")
    finally:
        ov_engine._core.cache_clear()
    meta = r.metadata(["1"])["parameters"]
    assert meta["engine"] == "onnxruntime" and meta["precision"] == "f32"
    assert meta["engine_fallback_reason"].startswith("openvino not used: ")
    assert "'openvino' package" in meta["engine_fallback_reason"]
    x, mxnet_out = mini_resnet.io()
    assert compiled.within_bound([r.run([x])[0]], [mxnet_out]) is None


def test_bf16_on_the_onnxruntime_engine_says_it_runs_f32():
    r = _load(engine="onnxruntime", precision="bf16")
    meta = r.metadata(["1"])["parameters"]
    assert (meta["engine"], meta["precision"]) == ("onnxruntime", "f32")
    assert "bf16 not used" in meta["engine_fallback_reason"]


def test_a_config_with_an_unknown_engine_or_precision_is_refused():
    from pydantic import ValidationError
    with pytest.raises(ValidationError):
        ModelConfig(engine="tensorrt")
    with pytest.raises(ValidationError):
        ModelConfig(precision="fp8")


def test_the_engine_metric_follows_reloads_and_unloads():
    from service.runtime.metrics import Metrics
    m = Metrics()
    m.set_engine("a", "1", "openvino", "bf16")
    m.set_engine("a", "1", "onnxruntime", "f32")        # the version reloaded on another engine
    series = [ln for ln in m.render().decode().splitlines()
              if ln.startswith("hybridserve_model_engine{")]
    assert series == ['hybridserve_model_engine{engine="onnxruntime",model="a",precision="f32",'
                      'version="1"} 1.0']
    m.forget("a", "1")
    assert "hybridserve_model_engine{" not in m.render().decode()


def test_openvino_answers_concurrent_requests_each_with_its_own_output():
    _needs_openvino()
    import threading
    r = _load(engine="openvino")
    rng = np.random.default_rng(3)
    xs = [rng.random((1 + k % 2, 3, 16, 16), np.float32) for k in range(4)]
    want = [_reference(r, x) for x in xs]
    bad: list = []

    def worker(k: int) -> None:
        for _ in range(5):
            got = r.run([xs[k]])[0]
            if compiled.within_bound([got], [want[k]]) is not None:
                bad.append(k)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not bad and not any(t.is_alive() for t in threads)
