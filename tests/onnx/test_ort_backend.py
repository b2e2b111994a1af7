"""optimize_for(backend='onnxruntime'): every committed fixture gives MXNet's recorded outputs;
regions are maximal around ops ONNX cannot take; batch changes, threads, parameter updates,
op hooks and export round trips behave as on the NumPy engine."""
import json
import sys
import threading

import numpy as np
import pytest

import framework as mx
from fixture_util import FIXTURES, VERSIONS, fixture_names, load_fixture
from framework.gluon import SymbolBlock, nn, rnn
from framework.onnx import MissingDependencyError

CASES = [(v, n) for v in VERSIONS for n in fixture_names(v)]
OP = "_sg_onnxruntime"


def _within_bound(got, want):
    """The project's deep-net bound: max|Δ| ≤ 1e-4 · max(1, max|ref|)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    if want.size:
        assert float(np.max(np.abs(got - want))) <= 1e-4 * max(1.0, float(np.max(np.abs(want))))


def _outputs(out) -> list[np.ndarray]:
    return [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _ops(block) -> list[str]:
    return [n.opname for n in block._cached_graph[1].topo() if not n.is_var]


def _imports(version, name):
    sym, params, inputs, expected = load_fixture(version, name)
    d = FIXTURES / version
    names = [n for n in sym.list_inputs() if n in inputs]
    blk = SymbolBlock.imports(str(d / f"{name}-symbol.json"), names,
                              str(d / f"{name}-0000.params"))
    return blk, [mx.np.array(inputs[n]) for n in names], expected


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_fixture_through_onnxruntime_matches_mxnet(version, name):
    blk, args, expected = _imports(version, name)
    blk.optimize_for(*args, backend="onnxruntime")
    assert OP in _ops(blk)
    outs = _outputs(blk(*args))
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        _within_bound(got, want)


def _mlp(act="relu"):
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation=act), nn.Dense(8), nn.Dense(4))
    net.initialize(mx.init.Xavier())
    return net


class _Mixed(nn.HybridBlock):
    """Dense → erfinv (no ONNX lowering) → Dense, with a skip around erfinv: a region may not
    take both Dense layers (it would feed and read erfinv)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Dense(6), nn.Dense(6)

    def forward(self, x):
        h = mx.np.tanh(self.a(x)) * 0.5
        return self.b(mx.npx.erfinv(h) + h)


def _reference(block, x):
    block.hybridize()
    return block(x).asnumpy()


def test_regions_stop_at_an_op_onnx_cannot_take():
    net = _Mixed()
    net.initialize()
    x = mx.np.array(np.random.RandomState(0).uniform(-1, 1, (3, 5)).astype(np.float32))
    want = _reference(net, x)
    net.optimize_for(x, backend="ORT")
    ops = _ops(net)
    assert ops.count(OP) == 2 and "erfinv" in ops and len(ops) == 3
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_monkeypatched_refusal_splits_a_zoo_graph(monkeypatch):
    from framework.onnx import partition
    blk, args, expected = _imports("mxnet-1.9.1", "mini_resnet_v1")
    monkeypatch.setattr(partition, "lowerable", lambda n: n.opname != "Pooling")
    blk.optimize_for(*args, backend="onnxruntime")
    ops = _ops(blk)
    assert "Pooling" in ops and ops.count(OP) >= 2
    assert set(ops) == {"Pooling", OP}
    _within_bound(_outputs(blk(*args))[0], expected[0])


def test_min_nodes_leaves_small_regions_to_numpy():
    net = _Mixed()
    net.initialize()
    x = mx.np.ones((2, 5))
    want = _reference(net, x)
    net.optimize_for(x, backend="onnxruntime", min_nodes=3)
    ops = _ops(net)       # Dense+tanh+scale: one region; the add and the last Dense: NumPy
    assert ops == [OP, "erfinv", "_npi_add", "FullyConnected"]
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_batch_size_changes_reuse_the_dynamic_session():
    blk, args, _ = _imports("mxnet-1.9.1", "mini_mobilenet_v2")
    ref, _, _ = _imports("mxnet-1.9.1", "mini_mobilenet_v2")
    blk.optimize_for(*args, backend="onnxruntime")
    engine = [n for n in blk._cached_graph[1].topo() if n.opname == OP][0].parsed.runner
    assert engine.dynamic
    x = args[0].asnumpy()
    for batch in (3, 1, 5):
        big = mx.np.array(np.concatenate([x] * batch)[:batch] * np.arange(1, batch + 1)
                          .reshape(-1, 1, 1, 1).astype(np.float32))
        ref.hybridize()
        _within_bound(blk(big).asnumpy(), ref(big).asnumpy())
    # one session, keyed by the shape without its batch axis
    assert engine.cache.keys() == [(tuple(x.shape[1:]),)] and engine.fallback_calls == 0


@pytest.mark.parametrize("layer", ["lstm", "gru", "rnn"])
def test_rnn_layers(layer):
    cls = {"lstm": rnn.LSTM, "gru": rnn.GRU, "rnn": rnn.RNN}[layer]
    net = cls(8, num_layers=2, bidirectional=True, layout="NTC")
    net.initialize()
    x = mx.np.array(np.random.RandomState(1).randn(2, 5, 4).astype(np.float32))
    want = _reference(net, x)
    net.optimize_for(x, backend="onnxruntime")
    assert _ops(net) == [OP]
    _within_bound(net(x).asnumpy(), want)
    x3 = mx.np.array(np.random.RandomState(2).randn(3, 5, 4).astype(np.float32))
    plain = cls(8, num_layers=2, bidirectional=True, layout="NTC")
    plain.initialize()
    plain.load_dict({k: p.data() for k, p in net.collect_params().items()})
    _within_bound(net(x3).asnumpy(), _reference(plain, x3))


def test_two_threads_share_one_block():
    blk, args, _ = _imports("mxnet-1.9.1", "mini_resnet_v1")
    blk.optimize_for(*args, backend="onnxruntime", intra_op_threads=1)
    rs = np.random.RandomState(3)
    xs = [mx.np.array(rs.rand(*args[0].shape).astype(np.float32)) for _ in range(2)]
    want = [blk(x).asnumpy() for x in xs]
    errors, got = [], [[], []]

    def work(k):
        try:
            for _ in range(20):
                got[k].append(blk(xs[k]).asnumpy())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        for g in got[k]:
            np.testing.assert_array_equal(g, want[k])


def test_export_writes_mxnet_ops_and_round_trips(tmp_path):
    net = _mlp()
    x = mx.np.array(np.random.RandomState(4).rand(3, 7).astype(np.float32))
    net.optimize_for(x, backend="onnxruntime")
    assert _ops(net) == [OP]
    want = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "mlp"))
    text = open(sym_file).read()
    assert OP not in text and "subgraphs" not in text
    assert [n["op"] for n in json.loads(text)["nodes"]].count("FullyConnected") == 3
    back = SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_op_hooks_see_the_numpy_nodes():
    """A Gluon user's op hook inspects layers: after optimize_for it still sees every original
    node with its NumPy tensor, never the region node."""
    x = mx.np.array(np.random.RandomState(5).rand(2, 7).astype(np.float32))
    net = _mlp()
    net.hybridize()
    net(x)
    seen = {}
    net.register_op_hook(lambda name, op, arr: seen.setdefault(key, []).append(
        (name, op, arr.asnumpy().copy())))
    key = "plain"
    with pytest.warns(UserWarning):
        net(x)
    net.optimize_for(x, backend="onnxruntime")
    assert _ops(net) == [OP]
    key = "ort"
    with pytest.warns(UserWarning):
        net(x)
    assert [(n, o) for n, o, _ in seen["ort"]] == [(n, o) for n, o, _ in seen["plain"]]
    assert len(seen["ort"]) == 4            # 3 FullyConnected, 1 Activation
    for (_, _, a), (_, _, b) in zip(seen["ort"], seen["plain"]):
        np.testing.assert_array_equal(a, b)


def test_optimizing_again_picks_new_parameters_up():
    """Sessions read the parameters of optimize_for time (folded, packed, or in place: outputs
    after set_data are undefined until optimize_for runs again, as with the hybridserve
    backend's folded BatchNorm); optimising again picks the new values up."""
    net = _mlp()
    x = mx.np.ones((2, 7))
    net.optimize_for(x, backend="onnxruntime")
    before = net(x).asnumpy()
    w = net[2].weight
    w.set_data(w.data() * 2)
    net.optimize_for(x, backend="onnxruntime")
    plain = _mlp()
    plain.load_dict({k: p.data() for k, p in net.collect_params().items()})
    after = net(x).asnumpy()
    assert not np.allclose(after, before)
    np.testing.assert_allclose(after, _reference(plain, x), rtol=1e-5, atol=1e-6)


def test_missing_onnxruntime_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    net = _mlp()
    with pytest.raises(MissingDependencyError, match="'onnxruntime'"):
        net.optimize_for(mx.np.ones((1, 7)), backend="onnxruntime")


class _BatchOnAxis1(nn.HybridBlock):
    """The region after erfinv reads a tensor whose batch is on axis 1."""

    def forward(self, x):
        h = mx.npx.erfinv(mx.np.transpose(x) * 0.5)
        return mx.np.tanh(h) + 1


def test_a_region_without_leading_batch_gets_a_session_per_shape():
    net = _BatchOnAxis1()
    rs = np.random.RandomState(6)
    xs = [mx.np.array(rs.uniform(-1, 1, (b, 3)).astype(np.float32)) for b in (2, 5, 2)]
    want = [_reference(net, x) for x in xs]
    net.optimize_for(xs[0], backend="onnxruntime")
    engines = [n.parsed.runner for n in net._cached_graph[1].topo() if n.opname == OP]
    assert len(engines) == 2 and sorted(e.dynamic for e in engines) == [False, True]
    for x, w in zip(xs, want):
        np.testing.assert_allclose(net(x).asnumpy(), w, rtol=1e-5, atol=1e-6)
    static = [e for e in engines if not e.dynamic][0]
    assert sorted(static.cache.keys()) == [("static", (3, 2)), ("static", (3, 5))]
