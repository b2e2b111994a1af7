"""optimize_for(backend='openvino'): the ONNX Runtime backend's regions compiled by OpenVINO give
MXNet's recorded outputs (conv nets, the MLPs) within the deep-net bound; other batch sizes get
their own sessions; bf16 on a CPU without native bf16 runs f32 and says why. Skipped where the
optional `openvino` package (`pip install hybridserve[openvino]`) is not installed."""
import warnings

import numpy as np
import pytest

import framework as mx
from framework.base import MXNetError
from framework.gluon import nn
from framework.onnx import MissingDependencyError
from onnx_util import imports_fixture

# optional for users, but the test extra installs it: a broken install fails, not skips
import openvino  # noqa: F401
from framework.onnx import openvino as ov_engine

OP = "_sg_onnxruntime"       # the subgraph op; its engine attr says which engine runs it


def _within(got, want, bound=1e-4):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    limit = bound * max(1.0, float(np.max(np.abs(want))))
    assert float(np.max(np.abs(got - want))) <= limit


def _regions(block) -> list:
    return [n for n in block._cached_graph[1].topo() if not n.is_var and n.opname == OP]


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "mini_resnet_v1"),
                                          ("mxnet-1.9.1", "mini_mobilenet_v2"),
                                          ("mxnet-2.0.0b1", "mlp_hybrid"),
                                          ("mxnet-2.0.0b1", "mlp3_sequential")])
def test_fixture_through_openvino_matches_mxnet(version, name):
    blk, args, expected = imports_fixture(version, name)
    blk.optimize_for(*args, backend="openvino")
    regions = _regions(blk)
    assert regions and all(n.attrs["engine"] == "openvino" for n in regions)
    runner = regions[0].parsed["runner"]
    assert runner.providers == ("OpenVINOCPU:f32",) and runner.precision == "f32"
    out = blk(*args)
    outs = [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        _within(got, want)


def _conv_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(8, 3, strides=2), nn.GlobalAvgPool2D(), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    return net


def _x(*shape, seed=0):
    return mx.np.array(np.random.RandomState(seed).rand(*shape).astype(np.float32))


def test_a_small_conv_net_at_other_batches_and_sizes_matches_numpy():
    net = _conv_net()
    x = _x(2, 3, 12, 12)
    net.hybridize(backend="numpy")
    ref = {s: net(_x(*s, seed=1)).asnumpy() for s in [(2, 3, 12, 12), (5, 3, 12, 12),
                                                        (1, 3, 20, 20)]}
    net.optimize_for(x, backend="openvino")
    runner = _regions(net)[0].parsed["runner"]
    for shape, want in ref.items():
        _within(net(_x(*shape, seed=1)).asnumpy(), want)
    assert runner.fallback_calls == 0 and len(runner.cache) == 2    # 12×12 (any batch), 20×20


def test_bf16_without_native_support_runs_f32_and_says_why():
    if ov_engine.bf16_support() is None:
        pytest.skip("this CPU computes bf16 natively: no fallback to observe")
    net = _conv_net()
    x = _x(2, 3, 12, 12)
    net.hybridize(backend="numpy")
    want = net(x).asnumpy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net.optimize_for(x, backend="openvino", precision="bf16")
    runner = _regions(net)[0].parsed["runner"]
    assert runner.precision == "f32" and "no native bf16" in runner.precision_reason
    assert any("no native bf16" in str(w.message) for w in caught)
    _within(net(x).asnumpy(), want)


def test_bf16_with_native_support_stays_within_the_bf16_bound():
    if ov_engine.bf16_support() is not None:
        pytest.skip(f"no native bf16 here: {ov_engine.bf16_support()}")
    net = _conv_net()
    x = _x(2, 3, 12, 12)
    net.hybridize(backend="numpy")
    want = net(x).asnumpy()
    net.optimize_for(x, backend="openvino", precision="bf16")
    assert _regions(net)[0].parsed["runner"].precision == "bf16"
    _within(net(x).asnumpy(), want, 1e-2)


def test_an_unknown_precision_is_refused_before_building():
    net = _conv_net()
    x = _x(1, 3, 8, 8)
    net.hybridize(backend="numpy")
    net(x)
    with pytest.raises((ValueError, MXNetError), match="precision"):
        net.optimize_for(x, backend="openvino", precision="fp8")


def test_threads_follow_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    net = _conv_net()
    x = _x(1, 3, 8, 8)
    net.hybridize(backend="numpy")
    net(x)
    seen = []
    real = ov_engine.openvino_session
    monkeypatch.setattr("framework.onnx.runtime.openvino_session",
                        lambda model, threads, precision: seen.append(threads) or
                        real(model, threads, precision))
    net.optimize_for(x, backend="openvino")
    assert seen == [1]


def test_without_openvino_the_backend_names_the_package(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "openvino", None)
    net = _conv_net()
    x = _x(1, 3, 8, 8)
    net.hybridize(backend="numpy")
    net(x)
    with pytest.raises(MissingDependencyError, match="'openvino' package"):
        net.optimize_for(x, backend="openvino")


def test_mxnet_int8_exports_run_whole_on_openvino():
    """MXNet 1.9.1's calibrated INT8 exports (QDQ lowering) on OpenVINO: the whole graph is one
    region and the output stays within the INT8 fixtures' bound of MXNet's."""
    from int8.int8_fixtures import NAMES, imports, output_bound
    for name in [n for n in NAMES if "_none_" not in n]:
        net, x, io = imports(name)
        net.optimize_for(mx.np.array(x), backend="openvino")
        assert [n.opname for n in net._cached_graph[1].topo() if not n.is_var] == [OP], name
        y = net(mx.np.array(x)).asnumpy()
        np.testing.assert_allclose(y, io["output"], rtol=0, atol=output_bound(name), err_msg=name)


def test_hybridize_with_backend_openvino_compiles_at_the_first_call():
    net = _conv_net()
    x = _x(2, 3, 12, 12)
    net.hybridize(backend="numpy")
    want = net(x).asnumpy()
    net.hybridize(backend="openvino")
    _within(net(x).asnumpy(), want)
    served = [n for n in net._cached_op.symbol.topo() if not n.is_var]
    assert [n.opname for n in served] == [OP] and served[0].attrs["engine"] == "openvino"
