"""A model uploaded without a config (input `[-1, 3, -1, -1]`) runs on ONNX Runtime at every
image size requests bring: each size gets a session specialized on it (the batch axis stays
free, so batching shares it), at most `ort_shape_cache` per region, other sizes on NumPy; the
model's memory figure counts the sessions built after its load."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import mini_resnet
import onnxruntime  # noqa: F401 - a hard dependency: a broken install fails here
from framework.onnx import runtime
from service.runtime import compiled
from service.runtime.registry import ModelVersion
from service.runtime.runner import Runner
from service.settings import Settings
from service.runtime.threads import ort_options



def _configless(**kw) -> Runner:
    return Runner.load(mini_resnet.NAME, "1", mini_resnet.files(), None, **kw)


def _regions(r: Runner) -> list:
    return r._served.regions          # the served CompiledModel's region engines


def _x(*shape, seed=0):
    return np.random.RandomState(seed).rand(*shape).astype(np.float32)


def _check(r: Runner, x: np.ndarray) -> None:
    want = r.run_hooked([x], lambda *_: None)[0]          # the traced NumPy graph
    assert compiled.within_bound([r.run([x])[0]], [want]) is None


def test_every_image_size_runs_on_onnxruntime_sessions_specialized_on_it():
    r = _configless()
    assert r.inputs[0].shape == (-1, 3, -1, -1) and r.engine.name == "onnxruntime"
    assert r.free == 1                  # global pooling: the warm-up runs 1×1 images
    for shape in [(1, 3, 16, 16), (4, 3, 16, 16), (2, 3, 24, 20), (1, 3, 24, 20)]:
        _check(r, _x(*shape))
    (region,) = _regions(r)
    keys = region.cache.keys()
    assert ((3, 16, 16),) in keys and ((3, 24, 20),) in keys
    assert region.fallback_calls == 0


def test_the_shape_cache_setting_bounds_the_sessions():
    opts = ort_options(Settings(ort_shape_cache=2, ort_intra_op_threads=1))
    assert opts.shape_cache == 2
    r = _configless(ort=opts)
    for k, size in enumerate([16, 20, 16, 20, 16, 20]):     # two hot sizes fill the cache
        _check(r, _x(1, 3, size, size, seed=k))
    (region,) = _regions(r)
    assert len(region.cache) == 2
    _check(r, _x(1, 3, 28, 28))                            # a one-off size: NumPy
    assert len(region.cache) == 2 and region.fallback_calls == 1


def test_memory_figure_counts_sessions_built_after_load(monkeypatch):
    r = _configless()
    mv = ModelVersion(r.name, r.version, runner=r, load_memory=1000)
    assert r.specialized_bytes() == 0 and mv.memory == 1000
    # each build measures its resident growth: make it 5 MiB
    clock = itertools.count()
    monkeypatch.setattr(runtime, "rss_bytes", lambda: next(clock) * (5 << 20))
    _check(r, _x(2, 3, 16, 16))         # the warm-up ran 1×1 images: a new size
    _check(r, _x(1, 3, 16, 16))         # the same size at another batch: no new session
    assert r.specialized_bytes() == 5 << 20
    _check(r, _x(1, 3, 32, 32))
    assert r.specialized_bytes() == 10 << 20 and mv.memory == 1000 + (10 << 20)


def _conv_flatten_dense(d, side: int) -> tuple:
    """Conv2D(4, 3) → Flatten → Dense(10), exported as Gluon does: the Dense's weight fixes the
    flattened size, so of all image sizes only `side`×`side` runs."""
    import framework as mx
    from framework.gluon import nn
    from service.repository.store import find_files
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3), nn.Flatten(), nn.Dense(10))
    net.initialize()
    net.hybridize()
    net(mx.np.zeros((1, 3, side, side)))
    net.export(str(d / "cfd"))
    return net, find_files(d)


def test_a_configless_conv_flatten_dense_upload_serves_on_onnxruntime(tmp_path):
    """The warm-up and the engine's check run at the one size the Dense accepts (found from
    the graph's shapes), not at 1×1, which no 3×3 convolution takes."""
    import framework as mx
    net, files = _conv_flatten_dense(tmp_path, 10)
    r = Runner.load("cfd", "1", files, None)
    meta = r.metadata(["1"])["parameters"]
    assert r.inputs[0].shape == (-1, 3, -1, -1) and r.free == 10 and r.warm
    assert meta["engine"] == "onnxruntime" and "engine_fallback_reason" not in meta
    assert meta["onnxruntime_nodes"] == meta["graph_nodes"]
    for batch in (1, 3):
        x = _x(batch, 3, 10, 10, seed=batch)
        _check(r, x)
        want = net(mx.np.array(x)).asnumpy()          # the Gluon block that was exported
        assert compiled.within_bound([r.run([x])[0]], [want]) is None
    (region,) = _regions(r)
    assert ((3, 10, 10),) in region.cache.keys() and region.fallback_calls == 0


def test_a_configless_conv_flatten_dense_upload_asking_bf16_runs_on_openvino(tmp_path):
    """A config that only asks for bf16 (no inputs) is just as config-less: OpenVINO (in bf16,
    or f32 where the CPU has none, with the reason), not NumPy."""
    pytest.importorskip("openvino")
    from service.repository.config import ModelConfig
    _, files = _conv_flatten_dense(tmp_path, 10)
    r = Runner.load("cfd", "1", files, ModelConfig(precision="bf16"))
    meta = r.metadata(["1"])["parameters"]
    assert r.free == 10 and meta["engine"] == "openvino"
    assert meta["openvino_nodes"] == meta["graph_nodes"]
    assert meta["precision"] == "bf16" or "bf16 not used" in meta["engine_fallback_reason"]
    x = _x(2, 3, 10, 10)
    want = r.run_hooked([x], lambda *_: None)[0]
    assert compiled.within_bound([r.run([x])[0]], [want], compiled.BF16_BOUND) is None
