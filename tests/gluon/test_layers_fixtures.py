"""Real-MXNet fixtures (tests/fixtures/mxnet-1.9.1, mxnet-2.0.0b1) against hybridserve.

1. every fixture loads through `SymbolBlock.imports` and reproduces MXNet's recorded outputs;
2. the fixture models built from this issue's layers (norm layers, Embedding, advanced
   activations, containers, rnn layers and cells, model-zoo blocks) are rebuilt with hybridserve's
   Gluon classes, given the fixture's parameters, and reproduce the outputs imperatively and
   hybridized — which checks the layers themselves, not just the operators.
"""
from __future__ import annotations

import warnings

import numpy as onp
import pytest

import framework as mx
from fixture_util import FIXTURES, VERSIONS, fixture_names
from framework import np, npx
from framework.gluon import HybridBlock, SymbolBlock, nn, rnn
from framework.gluon.model_zoo.vision import densenet, mobilenet, resnet, squeezenet
from framework.io.params_file import load_params, strip_prefixes
from framework.symbol import load as load_symbol

RTOL, ATOL = 1e-4, 1e-5


def _io(version: str, name: str):
    io = onp.load(FIXTURES / version / f"{name}-io.npz")
    ins = sorted((k for k in io.files if k.startswith("data")), key=lambda k: int(k[4:] or 0))
    outs = sorted((k for k in io.files if k.startswith("output")), key=lambda k: int(k[6:] or 0))
    return [io[k] for k in ins], [io[k] for k in outs], ins


def _as_list(res):
    return list(res) if isinstance(res, (list, tuple)) else [res]


def _check(res, expected) -> None:
    res = _as_list(res)
    assert len(res) == len(expected)
    for i, (r, e) in enumerate(zip(res, expected)):
        r = r.asnumpy()
        assert r.shape == e.shape, f"output {i}: shape {r.shape} != {e.shape}"
        onp.testing.assert_allclose(r, e, rtol=RTOL, atol=ATOL, err_msg=f"output {i}")


ALL = [(v, n) for v in VERSIONS for n in fixture_names(v)]


@pytest.mark.parametrize("version,name", ALL, ids=[f"{v}/{n}" for v, n in ALL])
def test_fixture_imports(version, name):
    d = FIXTURES / version
    xs, expected, ins = _io(version, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = SymbolBlock.imports(str(d / f"{name}-symbol.json"), ins,
                                  str(d / f"{name}-0000.params"))
    _check(net(*[np.array(x) for x in xs]), expected)


def test_fixture_count():
    assert len(ALL) == 55


# -- rebuilding the MXNet 2.0.0b1 fixtures with hybridserve's layers --------------------------
class Fn(HybridBlock):
    """forward = fn(self, *inputs), children from a dict (as the fixture generator does)."""

    def __init__(self, fn, children=None):
        super().__init__()
        self._fn = fn
        for k, v in (children or {}).items():
            setattr(self, k, v)

    def forward(self, *args):
        return self._fn(self, *args)


def _embedding_lstm():
    def f(s, idx):
        e = s.emb(idx)
        return s.out(s.lstm(e)), s.gru(e)
    return Fn(f, dict(emb=nn.Embedding(15, 5),
                      lstm=rnn.LSTM(8, num_layers=2, layout="NTC", input_size=5),
                      gru=rnn.GRU(4, layout="NTC", bidirectional=True, input_size=5),
                      out=nn.Dense(3, flatten=False)))


def _activations_2():
    def f(s, x):
        x3 = x * 3
        return (npx.relu(x3), npx.sigmoid(x3), npx.activation(x3, act_type="tanh"),
                npx.activation(x3, act_type="softrelu"), npx.activation(x3, act_type="softsign"),
                s.leaky(x3), s.prelu(x3), s.elu(x3), s.selu(x3), s.gelu(x3), s.swish(x3),
                s.silu(x3))
    return Fn(f, dict(leaky=nn.LeakyReLU(0.1), prelu=nn.PReLU(in_channels=3), elu=nn.ELU(0.7),
                      selu=nn.SELU(), gelu=nn.GELU(), swish=nn.Swish(beta=1.5), silu=nn.SiLU()))


def _nn_layers_2():
    def f(s, x):
        y = npx.relu(s.bn(s.c1(x)))
        i = s.inorm(s.gn(s.dc(s.bn2(s.c2(y)))))
        ln = s.ln(np.transpose(s.ap(i), (0, 2, 3, 1)))
        return s.dense_nf(ln), s.dense(s.drop(s.gap(s.mp(i))))
    return Fn(f, dict(
        c1=nn.Conv2D(8, 3, padding=1, groups=2), bn=nn.BatchNorm(),
        c2=nn.Conv2D(8, 3, padding=2, dilation=2, use_bias=False), bn2=nn.BatchNorm(scale=False),
        dc=nn.Conv2DTranspose(6, 4, strides=2, padding=1), gn=nn.GroupNorm(num_groups=3),
        inorm=nn.InstanceNorm(scale=True),
        ap=nn.AvgPool2D(3, 2, padding=1, count_include_pad=False),
        mp=nn.MaxPool2D(3, 2, ceil_mode=True), ln=nn.LayerNorm(),
        dense_nf=nn.Dense(3, flatten=False), gap=nn.GlobalAvgPool2D(), drop=nn.Dropout(0.5),
        dense=nn.Dense(4)))


MX2_REBUILD = {"embedding_lstm": _embedding_lstm, "activations_2": _activations_2,
               "nn_layers_2": _nn_layers_2}


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("name", sorted(MX2_REBUILD))
def test_rebuild_mx2_fixture(name, hybridize):
    xs, expected, _ = _io("mxnet-2.0.0b1", name)
    net = MX2_REBUILD[name]()
    net.initialize()
    arrays = [np.array(x) for x in xs]
    net(*arrays)                                     # deferred shapes from the first call
    net.load_parameters(str(FIXTURES / "mxnet-2.0.0b1" / f"{name}-0000.params"))
    if hybridize:
        net.hybridize()
    _check(net(*arrays), expected)


def test_rebuilt_lstm_graph_matches_mxnet_export():
    """Same operators as MXNet 2.0.0b1's own export of the model (one flat rnn_param each)."""
    xs, _, _ = _io("mxnet-2.0.0b1", "embedding_lstm")
    net = _embedding_lstm()
    net.initialize()
    net.hybridize()
    net(np.array(xs[0]))
    sym, params = net.export(None)
    ref = load_symbol(str(FIXTURES / "mxnet-2.0.0b1" / "embedding_lstm-symbol.json"))
    ops = sorted(n.op.name for n in sym.topo() if not n.is_var)
    assert ops == sorted(n.op.name for n in ref.topo() if not n.is_var)
    assert sorted(params) == sorted(f"arg:{n}" for n in ref.list_arguments() if n != "data")
    assert params["arg:lstm.rnn_param"].shape == (1056,)


# -- rebuilding 1.9.1 fixtures: 1.x names differ, so parameters are matched by graph position --
def _load_by_position(net, version: str, name: str, xs) -> None:
    """Give `net` the fixture's parameters, pairing variables in graph (DFS) order."""
    net.hybridize()
    net(*[np.array(x) for x in xs])
    mine = [n for n in net.export(None)[0].list_inputs() if not n.startswith("data")]
    ref_sym = load_symbol(str(FIXTURES / version / f"{name}-symbol.json"))
    theirs = [n for n in ref_sym.list_inputs() if not n.startswith("data")]
    values = strip_prefixes(load_params(str(FIXTURES / version / f"{name}-0000.params")))
    assert len(mine) == len(theirs), (mine, theirs)
    params = net.collect_params()
    for m, t in zip(mine, theirs):
        assert params[m].shape == values[t].shape, (m, t)
        params[m].set_data(np.array(values[t]))


def _rnn_flat(values: dict, prefix: str) -> onp.ndarray:
    """1.x per-gate RNN weights → the 2.x flat vector (weights, then biases, in layer order)."""
    keys = [k for k in values if k.startswith(prefix)]
    order = sorted(keys, key=lambda k: (k.endswith("bias"), keys.index(k)))
    return onp.concatenate([values[k].reshape(-1) for k in order])


@pytest.mark.parametrize("name", ["gru_bidir_states", "lstm_2layer", "rnn_relu_tanh"])
def test_rebuild_mx1_rnn_fixture(name):
    xs, expected, _ = _io("mxnet-1.9.1", name)
    sym = load_symbol(str(FIXTURES / "mxnet-1.9.1" / f"{name}-symbol.json"))
    raw = strip_prefixes(load_params(str(FIXTURES / "mxnet-1.9.1" / f"{name}-0000.params")))
    values = {n: raw[n] for n in sym.list_inputs() if n in raw}     # graph order
    if name == "gru_bidir_states":
        gru = rnn.GRU(6, bidirectional=True, input_size=5)
        net = Fn(lambda s, x, h0: (lambda o: (o[0], o[1][0]))(s.gru(x, [h0])), dict(gru=gru))
        flats = {"gru": _rnn_flat(values, "model0_gru0_")}
    elif name == "lstm_2layer":
        net = Fn(lambda s, x: s.dense(s.lstm(x)),
                 dict(lstm=rnn.LSTM(8, num_layers=2, layout="NTC", input_size=5),
                      dense=nn.Dense(3, flatten=False)))
        flats = {"lstm": _rnn_flat(values, "model0_lstm0_")}
    else:
        net = Fn(lambda s, x: (s.r1(x), s.r2(x)),
                 dict(r1=rnn.RNN(5, activation="relu", input_size=4),
                      r2=rnn.RNN(3, activation="tanh", num_layers=2, input_size=4)))
        flats = {"r1": _rnn_flat(values, "model0_rnn0_"), "r2": _rnn_flat(values, "model0_rnn1_")}
    net.initialize()
    arrays = [np.array(x) for x in xs]
    net(*arrays)
    params = net.collect_params()
    for layer, flat in flats.items():
        params[f"{layer}.rnn_param"].set_data(np.array(flat))
    for k, v in values.items():
        if "dense" in k:
            params["dense." + k.rsplit("_", 1)[1]].set_data(np.array(v))
    _check(net(*arrays), expected)
    net.hybridize()
    _check(net(*arrays), expected)


def test_rebuild_mx1_cells_unrolled():
    xs, expected, _ = _io("mxnet-1.9.1", "lstm_gru_cells_unrolled")

    def f(s, x):
        o1, _ = s.lstm.unroll(4, x, layout="NTC", merge_outputs=True)
        o2, st = s.gru.unroll(4, o1, layout="NTC", merge_outputs=True)
        return o2, st[0]
    net = Fn(f, dict(lstm=rnn.LSTMCell(6, input_size=5), gru=rnn.GRUCell(4, input_size=6)))
    net.initialize()
    net(np.array(xs[0]))
    values = strip_prefixes(load_params(
        str(FIXTURES / "mxnet-1.9.1" / "lstm_gru_cells_unrolled-0000.params")))
    for k, v in values.items():
        cell = "lstm" if "lstm" in k else "gru"
        net.collect_params()[f"{cell}.{k.split('_', 2)[2]}"].set_data(np.array(v))
    _check(net(np.array(xs[0])), expected)


def _mini_mobilenet_v2():
    feats = nn.HybridSequential()
    feats.add(nn.Conv2D(8, 3, strides=2, padding=1, use_bias=False), nn.BatchNorm(scale=True),
              mobilenet.RELU6())
    feats.add(mobilenet.LinearBottleneck(8, 8, 1, 1), mobilenet.LinearBottleneck(8, 12, 6, 2),
              mobilenet.LinearBottleneck(12, 12, 6, 1))
    feats.add(nn.Conv2D(16, 1, use_bias=False), nn.BatchNorm(), mobilenet.RELU6(),
              nn.GlobalAvgPool2D())
    out = nn.HybridSequential()
    out.add(nn.Conv2D(10, 1, use_bias=False), nn.Flatten())
    return Fn(lambda s, x: s.out(s.features(x)), dict(features=feats, out=out))


def _mini_mobilenet_v1():
    b = nn.HybridSequential()
    mobilenet._add_conv(b, channels=8, kernel=3, pad=1, stride=2)
    mobilenet._add_conv_dw(b, dw_channels=8, channels=16, stride=1)
    mobilenet._add_conv_dw(b, dw_channels=16, channels=16, stride=2)
    b.add(nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(10))
    return b


def _mini_squeezenet():
    b = nn.HybridSequential()
    b.add(nn.Conv2D(8, kernel_size=3, strides=2), nn.Activation("relu"),
          nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True),
          squeezenet._fire(4, 8, 8), squeezenet._fire(4, 8, 8),
          nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True),
          nn.Dropout(0.5), nn.Conv2D(10, kernel_size=1), nn.Activation("relu"),
          nn.AvgPool2D(3), nn.Flatten())
    return b


MINI_ZOO = {
    "mini_resnet_v1": lambda: resnet.ResNetV1(resnet.BasicBlockV1, [1, 1, 1, 1],
                                              [4, 4, 8, 12, 16], classes=10, thumbnail=True),
    "mini_resnet_v2_bottleneck": lambda: resnet.ResNetV2(resnet.BottleneckV2, [1, 1, 1, 1],
                                                         [8, 8, 12, 16, 24], classes=10),
    "mini_resnet_v1_bottleneck": lambda: resnet.ResNetV1(resnet.BottleneckV1, [1, 1, 1, 1],
                                                         [8, 8, 12, 16, 24], classes=10),
    "mini_densenet": lambda: densenet.DenseNet(8, 4, [2, 2], bn_size=2, classes=10),
    "mini_mobilenet_v2": _mini_mobilenet_v2,
    "mini_mobilenet_v1": _mini_mobilenet_v1,
    "mini_squeezenet": _mini_squeezenet,
}


@pytest.mark.parametrize("name", sorted(MINI_ZOO))
def test_rebuild_mini_zoo_fixture(name):
    """hybridserve's zoo blocks have MXNet 1.9.1's graph: same parameters in the same order,
    same outputs with the fixture's weights."""
    xs, expected, _ = _io("mxnet-1.9.1", name)
    net = MINI_ZOO[name]()
    net.initialize(mx.init.Xavier())
    _load_by_position(net, "mxnet-1.9.1", name, xs)
    _check(net(*[np.array(x) for x in xs]), expected)
