"""A model converted to bfloat16 by MXNet 1.9.1's `contrib.amp` (tests/fixtures/mxnet-1.9.1-bf16/:
amp_cast nodes, parameters stored as bfloat16) is served: by the default engine (its casts lower
to ONNX Cast through BFLOAT16) and with a config's `"precision": "bf16"` (OpenVINO's hint; on a
CPU without native bf16 it runs f32 and the metadata says why). Outputs stay within the bf16
bound max|Δ| ≤ 1e-2·max(1, max|ref|) of MXNet's float32 network."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from framework.onnx import openvino as ov_engine
from service.repository.config import ModelConfig, TensorSpec
from service.repository.store import ModelFiles
from service.runtime.runner import Runner

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "mxnet-1.9.1-bf16"
NAME = "convnet_bf16_castparams"


def _load(**config) -> Runner:
    cfg = ModelConfig(inputs=[TensorSpec(name="data", shape=[-1, 3, 8, 8])], max_batch_size=4,
                      **config)
    files = ModelFiles(FIX / f"{NAME}-full-symbol.json", FIX / f"{NAME}-0000.params")
    return Runner.load("amp", "1", files, cfg)


def _check(r: Runner) -> None:
    io = np.load(FIX / f"{NAME}-io.npz")
    ref = io["float_output"]
    y = r.run([io["data"].astype(np.float32)])[0]
    assert np.abs(y - ref).max() <= 1e-2 * max(1.0, float(np.abs(ref).max()))


def test_amp_converted_model_is_served_by_the_default_engine():
    r = _load()
    meta = r.metadata(["1"])["parameters"]
    assert meta["engine"] == "onnxruntime", meta
    _check(r)


def test_amp_converted_model_with_precision_bf16_says_why_not_on_this_cpu():
    import openvino  # noqa: F401  (the test extra installs it; a broken install fails)
    r = _load(precision="bf16")
    meta = r.metadata(["1"])["parameters"]
    if ov_engine.bf16_support() is None:
        assert meta["precision"] == "bf16"
    else:
        assert meta["precision"] == "f32" and "no native bf16" in meta["engine_fallback_reason"]
    _check(r)


def test_config_less_bf16_model_reads_its_signature_through_the_casts():
    name = "resnet_bf16"
    files = ModelFiles(FIX / f"{name}-full-symbol.json", FIX / f"{name}-0000.params")
    r = Runner.load("amp", "1", files, ModelConfig())
    meta = r.metadata(["1"])
    assert meta["inputs"][0]["shape"] == [-1, 3, -1, -1]       # conv weight behind its amp_cast
    assert meta["parameters"]["engine"] == "onnxruntime"
    io = np.load(FIX / f"{name}-io.npz")
    y = r.run([io["data"].astype(np.float32)])[0]
    ref = io["float_output"]
    assert np.abs(y - ref).max() <= 1e-2 * max(1.0, float(np.abs(ref).max()))
