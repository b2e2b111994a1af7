"""`hybridize()` compiles onto ONNX Runtime by default (compiler/engine.py): outputs within the
numerics bound of the NumPy reference, the NumPy engine by argument, environment variable or
when onnxruntime is missing, and op hooks, summary and export still see the traced NumPy graph.
The rest of the suite pins the NumPy engine (tests/conftest.py); these tests take the default."""
from __future__ import annotations

import numpy as np
import pytest

import framework as mx
from fixture_util import FIXTURES, load_fixture
from framework.compiler import engine as engines
from framework.gluon import SymbolBlock, nn
from framework.onnx.runtime import SessionConfig, make_session, usable_cores
from framework.symbol import backends as sym_backends
from framework.ops import parallel

OP = "_sg_onnxruntime"
FIXTURE_CASES = ["mini_resnet_v1", "mini_mobilenet_v2", "mini_densenet", "mini_inception",
                 "lstm_2layer", "mini_squeezenet"]


def _within_bound(got, want):
    """Deep nets: max|Δ| ≤ 1e-4·max(1, max|ref|)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= 1e-4 * max(1.0, float(np.max(np.abs(want))))


def _served_ops(block) -> list[str]:
    return [n.opname for n in block._cached_op.symbol.topo() if not n.is_var]


def _convnet():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(), nn.Conv2D(16, 3), nn.GlobalAvgPool2D(), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    return net


def _x(*shape, seed=0):
    return mx.np.array(np.random.RandomState(seed).rand(*shape).astype(np.float32))


def test_the_default_is_onnxruntime_when_installed(default_engine):
    assert default_engine == "onnxruntime"


@pytest.mark.parametrize("name", FIXTURE_CASES)
def test_hybridize_runs_onnxruntime_and_gives_mxnets_outputs(default_engine, name):
    sym, _, inputs, expected = load_fixture("mxnet-1.9.1", name)
    d = FIXTURES / "mxnet-1.9.1"
    names = [n for n in sym.list_inputs() if n in inputs]
    blk = SymbolBlock.imports(str(d / f"{name}-symbol.json"), names, str(d / f"{name}-0000.params"))
    blk.hybridize()
    out = blk(*[mx.np.array(inputs[n]) for n in names])
    assert OP in _served_ops(blk)
    for got, want in zip(out if isinstance(out, (list, tuple)) else [out], expected):
        _within_bound(got.asnumpy(), want)


def test_gluon_net_within_rtol_of_imperative_and_new_shapes_specialize(default_engine):
    net = _convnet()
    x = _x(2, 3, 16, 16)
    want = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert _served_ops(net) == [OP]
    y = _x(3, 3, 24, 20, seed=1)
    net.hybridize(False)
    want_y = net(y).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(y).asnumpy(), want_y, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("how", ["argument", "HYBRIDSERVE_ENGINE", "MXNET_SUBGRAPH_BACKEND",
                                 "not installed"])
def test_the_numpy_engine_on_request_is_exact(default_engine, monkeypatch, how):
    net = _convnet()
    x = _x(2, 3, 16, 16)
    want = net(x).asnumpy()
    if how == "HYBRIDSERVE_ENGINE":
        monkeypatch.setenv("HYBRIDSERVE_ENGINE", "numpy")
    elif how == "MXNET_SUBGRAPH_BACKEND":
        monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "NONE")
    elif how == "not installed":
        monkeypatch.setattr(engines, "_ort_importable", lambda: False)
    net.hybridize(**({"backend": "numpy"} if how == "argument" else {}))
    np.testing.assert_array_equal(net(x).asnumpy(), want)
    assert OP not in _served_ops(net)


def test_mxnet_cpu_backend_names_and_the_explicit_setting(monkeypatch):
    monkeypatch.setattr(engines, "_ort_importable", lambda: True)
    monkeypatch.delenv("HYBRIDSERVE_ENGINE", raising=False)
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "MKLDNN")
    prev = engines.set_default_engine(None)
    try:
        assert engines.default_engine() == "onnxruntime"
        monkeypatch.setenv("HYBRIDSERVE_ENGINE", "numpy")      # ours first
        assert engines.default_engine() == "numpy"
        engines.set_default_engine("onnxruntime")               # the process's choice first
        assert engines.default_engine() == "onnxruntime"
        with pytest.raises(ValueError, match="engine must be"):
            engines.set_default_engine("tensorrt")
    finally:
        engines.set_default_engine(prev)


def test_a_graph_the_default_engine_cannot_take_runs_on_numpy(default_engine, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("lowering exploded")
    monkeypatch.setitem(sym_backends._BACKENDS, "onnxruntime", broken)
    net = _convnet()
    x = _x(1, 3, 8, 8)
    want = net(x).asnumpy()
    net.hybridize()
    with pytest.warns(UserWarning, match="lowering exploded.*runs on NumPy"):
        got = net(x).asnumpy()
    np.testing.assert_array_equal(got, want)


def test_op_hooks_summary_and_export_see_the_traced_numpy_graph(default_engine, tmp_path):
    net, ref = _convnet(), _convnet()
    x = _x(1, 3, 8, 8)
    net(x), ref(x)                      # parameters' shapes known
    ref.load_dict({k: p.data() for k, p in net.collect_params().items()})
    net.hybridize()
    ref.hybridize(backend="numpy")
    net(x), ref(x)
    assert OP in _served_ops(net)
    seen: dict[str, list] = {"net": [], "ref": []}
    for key, blk in (("net", net), ("ref", ref)):
        blk.register_op_hook(lambda name, op, arr, k=key: seen[k].append((op, arr.asnumpy())))
        blk(x)
    # the same NumPy kernels on the same nodes: every hooked tensor equal
    assert [op for op, _ in seen["net"]] == [op for op, _ in seen["ref"]]
    assert "Convolution" in [op for op, _ in seen["net"]] and OP not in [op for op, _ in seen["net"]]
    for (_, a), (_, b) in zip(seen["net"], seen["ref"]):
        np.testing.assert_array_equal(a, b)
    net.export(str(tmp_path / "a"))
    sym = mx.sym.load(str(tmp_path / "a-symbol.json"))
    assert [n.opname for n in sym.topo() if not n.is_var] == \
        [n.opname for n in ref._cached_graph[1].topo() if not n.is_var]


def test_session_threads_follow_omp_num_threads_and_the_framework_setting(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert SessionConfig().threads() == 1
    import onnx.helper as h
    from onnx import TensorProto
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    sess = make_session(h.make_model(g), SessionConfig())
    assert sess.get_session_options().intra_op_num_threads == 1
    prev = parallel.set_intra_op_threads(3, limit_blas=False)
    try:
        assert SessionConfig().threads() == 3          # the framework's own setting first
    finally:
        parallel.set_intra_op_threads(prev, limit_blas=False)
    assert SessionConfig(intra_op_threads=2).threads() == 2
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert SessionConfig().threads() == usable_cores()


def test_a_symbolblock_runs_its_cached_op_on_the_default_engine(default_engine):
    """A SymbolBlock always runs its cached op (as in MXNet), hybridized or not."""
    sym, _, inputs, expected = load_fixture("mxnet-1.9.1", "mini_resnet_v1")
    d = FIXTURES / "mxnet-1.9.1"
    blk = SymbolBlock.imports(str(d / "mini_resnet_v1-symbol.json"), ["data"],
                              str(d / "mini_resnet_v1-0000.params"))
    _within_bound(blk(mx.np.array(inputs["data"])).asnumpy(), expected[0])
    assert OP in _served_ops(blk)


@pytest.mark.parametrize("layer", ["batchnorm", "convnet"])
def test_load_dict_after_hybridize_uses_the_new_parameters(default_engine, layer):
    """The engine's compiled graph may hold parameter values (ONNX Runtime initializers, folded
    BatchNorm); load_dict / load_parameters must reach the next call, as in MXNet."""
    if layer == "batchnorm":
        net = nn.BatchNorm(use_global_stats=True)
        net.initialize()
    else:
        net = _convnet()
    x = _x(2, 4 if layer == "batchnorm" else 3, 8, 8)
    net.hybridize()
    net(x)
    rng = np.random.RandomState(5)
    new = {k: mx.np.array(rng.uniform(0.5, 2.0, p.shape).astype(np.float32))
           for k, p in net.collect_params().items()}
    net.load_dict(new)
    want = net(x).asnumpy()
    fresh = nn.BatchNorm(use_global_stats=True) if layer == "batchnorm" else _convnet()
    fresh.initialize(force_reinit=True)
    fresh(x)
    fresh.load_dict(new)                 # never hybridized: computes with `new`
    _within_bound(want, fresh(x).asnumpy())


class _SortTwice(mx.gluon.HybridBlock):
    def forward(self, x):
        return mx.np.sort(x, axis=-1) * 2


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float64"])
def test_non_float32_inputs_are_typed_as_given(default_engine, dtype):
    """The engine builds its sessions for the inputs' dtypes (not float32 for all)."""
    blk = _SortTwice()
    blk.hybridize()
    x = np.array([[3, 1, 2], [9, 7, 8]], dtype=dtype)
    out = blk(mx.np.array(x, dtype=dtype))
    assert out.dtype == np.dtype(dtype)
    assert out.asnumpy().tolist() == (np.sort(x, axis=-1) * 2).tolist()


def test_a_block_called_with_another_dtype_runs_it(default_engine):
    blk = _SortTwice()
    blk.hybridize()
    x = np.array([3, 1, 2])
    assert blk(mx.np.array(x, dtype="float32")).asnumpy().tolist() == [2.0, 4.0, 6.0]
    assert OP in _served_ops(blk)
    again = blk(mx.np.array(x, dtype="int8"))
    assert again.dtype == np.int8 and again.asnumpy().tolist() == [2, 4, 6]


@pytest.mark.parametrize("fn", ["any", "all"])
@pytest.mark.parametrize("shape,axis", [((6, 0, 5), (1,)), ((6, 0, 5), None),
                                        ((0, 7, 5), (0, 2)), ((3, 4), (1,))])
def test_any_all_over_empty_axes_on_the_engine(default_engine, fn, shape, axis):
    """any() of nothing is False, all() of nothing True (ONNX ReduceMax of an empty axis is -inf)."""
    class Agg(mx.gluon.HybridBlock):
        def forward(self, a):
            return getattr(mx.np, fn)(a, axis=axis, keepdims=True)
    blk = Agg()
    blk.hybridize()
    x = np.random.RandomState(0).normal(0, 5, size=shape).astype(np.int8)
    got = blk(mx.np.array(x, dtype="int8"))
    assert OP in _served_ops(blk)
    assert got.asnumpy().tolist() == getattr(np, fn)(x, axis=axis, keepdims=True).tolist()
