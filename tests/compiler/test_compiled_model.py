"""`compile_model` (framework/gluon/compile.py) → `CompiledModel`
(framework/compiler/compiled.py): the one typed object the server runs — inputs, outputs,
engine, run, run_hooked, buffers and the compiled regions' memory."""
import numpy as np
import pytest

import framework as mx
from framework.compiler.compiled import CompiledModel, TensorInfo
from framework.compiler.engine import EngineChoice, select_engine
from framework.gluon import compile_model, nn
from framework.onnx import partition

OP = "_sg_onnxruntime"


def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.GlobalAvgPool2D(), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True, backend="numpy")
    return net


def _x(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, np.float32)


def test_the_traced_model_describes_and_runs_the_block():
    net, x = _net(), _x(2, 3, 8, 8)
    want = net(mx.np.array(x)).asnumpy()
    model = compile_model(net, [x])
    assert isinstance(model, CompiledModel)
    assert model.inputs == [TensorInfo("data", (2, 3, 8, 8), np.dtype(np.float32))]
    assert len(model.outputs) == 1 and model.graph == "traced"
    assert model.engine == EngineChoice("numpy") and model.regions == []
    np.testing.assert_array_equal(model.run([x])[0], want)
    np.testing.assert_array_equal(model([x])[0], want)
    seen = []
    out = model.run_hooked([x], lambda name, op, arr: seen.append(op))
    np.testing.assert_array_equal(out[0], want)
    assert "BatchNorm" in seen and "Convolution" in seen


def test_buffers_are_reserved_counted_and_released():
    net, x = _net(), _x(1, 3, 8, 8)
    model = compile_model(net, [x])
    model.reserve([x], 3)
    assert model.buffer_bytes() > 0
    per_set = model.buffer_bytes() // sum(model.op.idle_sets().values())
    model.reserve([x], 4)
    assert model.buffer_bytes() == per_set * sum(model.op.idle_sets().values())
    model.release_buffers()
    assert model.buffer_bytes() == 0 and model.op.idle_sets() == {}


def test_an_onnxruntime_twin_reports_its_regions_and_sessions():
    net, x = _net(), _x(2, 3, 8, 8)
    want = net(mx.np.array(x)).asnumpy()
    model = compile_model(net, [x], select_engine("onnxruntime"), ["data"],
                          intra_op_threads=1, shape_cache=2)
    assert model.engine == EngineChoice("onnxruntime") and model.graph == "partitioned"
    assert len(model.regions) >= 1 and "CPUExecutionProvider" in model.providers
    assert model.compiled_nodes >= 4
    assert [st.node.opname for st in model.op.fast.steps] == [OP]
    np.testing.assert_allclose(model.run([x])[0], want, rtol=1e-4, atol=1e-5)
    at_load = model.session_bytes()
    model.run([_x(1, 3, 12, 12)])                   # a new shape: one specialized session more
    assert model.session_bytes() >= at_load
    assert len(model.regions[0].cache) == 2
    model.reset_shape_counts()
    # the block keeps its traced graph: its own cached op is untouched
    np.testing.assert_array_equal(net(mx.np.array(x)).asnumpy(), want)


def test_a_compiled_engine_that_takes_no_node_says_numpy(monkeypatch):
    monkeypatch.setattr(partition, "lowerable", lambda n: False)
    net, x = _net(), _x(1, 3, 8, 8)
    model = compile_model(net, [x], EngineChoice("onnxruntime"))
    assert model.engine.name == "numpy" and model.graph == "traced"
    assert "no node of the graph lowers" in model.engine.reason


def test_a_graph_name_outside_the_three_is_refused():
    net, x = _net(), _x(1, 3, 8, 8)
    net(mx.np.array(x))
    op, spec = net.compiled()
    with pytest.raises(ValueError, match="graph must be"):
        CompiledModel(op, spec, EngineChoice(), "fused")
