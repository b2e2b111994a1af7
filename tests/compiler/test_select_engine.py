"""`select_engine()` (framework/compiler/engine.py): the one decision of which engine a graph
compiles onto, and the reason whenever it is not the one asked for — the setting, a missing
package, a graph no node of which lowers, a CPU without bf16 — as hybridize, optimize_for and the
server see it."""
import sys

import numpy as np
import pytest

import framework as mx
from framework.compiler import engine as engines
from framework.compiler.engine import EngineChoice, select_engine
from framework.gluon import HybridBlock, nn
from framework.onnx import openvino as ov_engine


class _NoLowering(HybridBlock):
    """A graph of one op that has no ONNX lowering."""
    def forward(self, x):
        return mx.np.arctan2(x, x)


def _graph(block, *shape):
    block.initialize()
    block.hybridize(backend="numpy")
    block(mx.np.ones(shape))
    return block.compiled()[0].symbol


@pytest.fixture
def no_setting(monkeypatch):
    """Nothing chosen by the process or the environment."""
    monkeypatch.delenv(engines.ENV, raising=False)
    monkeypatch.delenv(engines.MXNET_ENV, raising=False)
    prev = engines.set_default_engine(None)
    yield
    engines.set_default_engine(prev)


def test_the_default_is_onnxruntime_without_a_reason(no_setting):
    assert select_engine() == EngineChoice("onnxruntime", "f32", "")
    assert select_engine().backend == "onnxruntime" and select_engine().compiled


@pytest.mark.parametrize("var,value", [("HYBRIDSERVE_ENGINE", "numpy"),
                                       ("MXNET_SUBGRAPH_BACKEND", "NONE")])
def test_a_setting_that_says_numpy_is_the_reason(no_setting, monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    got = select_engine()
    assert (got.name, got.reason, got.backend) == ("numpy", f"{var}={value}", None)
    # an explicit request is not overridden by the setting, and needs no reason
    assert select_engine("onnxruntime") == EngineChoice("onnxruntime")


def test_the_process_setting_is_named(no_setting):
    engines.set_default_engine("numpy")
    assert select_engine().reason == "set_default_engine=numpy"


def test_onnxruntime_missing_falls_back_to_numpy_and_says_so(no_setting, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)        # import fails
    got = select_engine()
    assert got.name == "numpy" and "'onnxruntime' package is not installed" in got.reason
    assert select_engine("ort").name == "numpy"
    # an explicit optimize_for keeps the name: its backend raises what is missing
    assert select_engine("onnxruntime", fallback=False).name == "onnxruntime"


def test_a_graph_where_no_node_lowers_runs_numpy_naming_a_node():
    got = select_engine("onnxruntime", _graph(_NoLowering(), 2, 3))
    assert got.name == "numpy"
    assert got.reason.startswith("no node of the graph lowers to ONNX")
    assert "arctan2" in got.reason and "has no ONNX lowering" in got.reason


def test_a_graph_with_one_lowerable_node_keeps_the_engine():
    net = nn.HybridSequential()
    net.add(nn.Dense(4), _NoLowering())
    assert select_engine("onnxruntime", _graph(net, 2, 3)) == EngineChoice("onnxruntime")


def test_openvino_missing_falls_back_to_onnxruntime(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino", None)
    got = select_engine("openvino", precision="bf16")
    assert (got.name, got.precision) == ("onnxruntime", "f32")
    assert got.reason.startswith("openvino not used: the 'openvino' package is not installed")
    assert got.requested == "openvino"          # what was asked stays known


@pytest.mark.parametrize("native", [True, False])
def test_bf16_follows_the_cpu(monkeypatch, native):
    monkeypatch.setattr(ov_engine, "bf16_support",
                        lambda: None if native else "this CPU has no native bf16 (test)")
    got = select_engine(precision="bf16")           # bf16 alone means OpenVINO
    assert got.name == "openvino"
    if native:
        assert (got.precision, got.reason) == ("bf16", "")
    else:
        assert got.precision == "f32"
        assert got.reason == "bf16 not used: this CPU has no native bf16 (test)"


def test_bf16_asked_of_an_engine_that_runs_f32():
    assert select_engine("onnxruntime", precision="bf16") == EngineChoice(
        "onnxruntime", "f32", "bf16 not used: the onnxruntime engine runs f32")
    assert select_engine("numpy", precision="bf16").reason == \
        "bf16 not used: the numpy engine runs f32"


def test_names_the_server_default_and_other_backends():
    assert select_engine(None, default="numpy") == EngineChoice("numpy")
    assert select_engine("ORT").name == "onnxruntime"
    assert select_engine("none").name == "numpy"
    other = select_engine("hybridserve")          # a NumPy pass pipeline
    assert other.backend == "hybridserve" and not other.compiled
    with pytest.raises(ValueError, match="precision"):
        select_engine("openvino", precision="fp8")


def test_hybridize_records_the_choice(no_setting, monkeypatch):
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "NONE")
    net = nn.Dense(3)
    net.initialize()
    net.hybridize()
    assert net.engine_choice is None                # nothing built yet
    x = mx.np.ones((2, 5))
    want = net(x).asnumpy()
    assert net.engine_choice == EngineChoice("numpy", "f32", "MXNET_SUBGRAPH_BACKEND=NONE")
    monkeypatch.delenv("MXNET_SUBGRAPH_BACKEND")
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert net.engine_choice == EngineChoice("onnxruntime")
    blk = _NoLowering()
    blk.hybridize()
    blk(x)
    assert blk.engine_choice.name == "numpy" and "no node" in blk.engine_choice.reason


def test_a_default_engine_that_fails_says_why(no_setting, monkeypatch):
    from framework.symbol import backends

    def broken(*a, **k):
        raise RuntimeError("lowering exploded")
    monkeypatch.setitem(backends._BACKENDS, "onnxruntime", broken)
    net = nn.Dense(3)
    net.initialize()
    net.hybridize()
    with pytest.warns(UserWarning, match="runs on NumPy"):
        net(mx.np.ones((1, 4)))
    assert net.engine_choice.name == "numpy" and "lowering exploded" in net.engine_choice.reason


@pytest.mark.parametrize("name", ["numpy", "NONE"])
def test_optimize_for_the_reference_engine_by_name(name):
    net = nn.Dense(3)
    net.initialize()
    x = mx.np.ones((2, 4))
    want = net(x).asnumpy()
    net.optimize_for(x, backend=name)
    np.testing.assert_array_equal(net(x).asnumpy(), want)
    assert net.engine_choice == EngineChoice("numpy")
