"""Layers added for MXNet interop: reprs, parameters, deferred shapes, cast, RNN layer/cell API.

Expected reprs and parameter layouts were observed with real MXNet 2.0.0b1.
"""
from __future__ import annotations

import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import nn, rnn


def test_norm_reprs_before_and_after_shape_inference():
    net = nn.HybridSequential()
    net.add(nn.BatchNorm(), nn.LayerNorm(), nn.InstanceNorm(), nn.GroupNorm(2),
            nn.Embedding(10, 4), nn.BatchNormReLU())
    assert repr(net) == """HybridSequential(
  (0): BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, in_channels=-1)
  (1): LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=-1)
  (2): InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=-1)
  (3): GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True, in_channels=-1)
  (4): Embedding(10 -> 4, float32)
  (5): BatchNormReLU(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, in_channels=-1)
)"""
    net2 = nn.HybridSequential()
    net2.add(nn.BatchNorm(), nn.LayerNorm(), nn.InstanceNorm(), nn.GroupNorm(2))
    net2.initialize()
    net2(np.ones((2, 4, 3, 3)))
    assert [repr(b).rsplit(", ", 1)[1] for b in net2] == ["in_channels=4)", "in_channels=3)",
                                                          "in_channels=4)", "in_channels=4)"]
    assert repr(nn.BatchNorm(in_channels=3)).endswith("in_channels=3)")


def test_batchnorm_parameters_and_cast():
    bn = nn.BatchNorm(scale=False)
    assert list(bn.collect_params()) == ["gamma", "beta", "running_mean", "running_var"]
    assert bn.gamma.grad_req == "null" and bn.running_var.grad_req == "null"
    bn.initialize()
    x = np.array(onp.random.RandomState(0).standard_normal((2, 3, 4)).astype(onp.float32))
    bn(x)
    assert bn.gamma.shape == (3,)
    bn.cast("float16")
    assert all(onp.dtype(p.dtype) == onp.float32 for p in bn.collect_params().values())


def test_batchnorm_relu_and_sync_bn_math():
    x = np.array(onp.random.RandomState(1).standard_normal((2, 3, 4, 4)).astype(onp.float32))
    a, b, c = nn.BatchNorm(), nn.BatchNormReLU(), nn.SyncBatchNorm(num_devices=1)
    for blk in (a, b, c):
        blk.initialize()
    ya = a(x).asnumpy()
    onp.testing.assert_array_equal(b(x).asnumpy(), onp.maximum(ya, 0))
    onp.testing.assert_array_equal(c(x).asnumpy(), ya)
    assert "ndev=1, key=UUID(" in repr(c)


def test_instance_norm_other_axis_matches_axis_1():
    x = onp.random.RandomState(2).standard_normal((2, 5, 3, 4)).astype(onp.float32)
    a, b = nn.InstanceNorm(), nn.InstanceNorm(axis=3)
    a.initialize()
    b.initialize()
    want = a(np.array(onp.swapaxes(x, 1, 3))).asnumpy()
    onp.testing.assert_allclose(b(np.array(x)).asnumpy(), onp.swapaxes(want, 1, 3), rtol=1e-6)


def test_activation_reprs_and_prelu():
    assert repr(nn.LeakyReLU(0.1)) == "LeakyReLU(0.1)"
    for blk in (nn.PReLU(), nn.ELU(), nn.SELU(), nn.GELU(), nn.Swish(), nn.SiLU()):
        assert repr(blk) == f"{type(blk).__name__}(\n\n)"
    with pytest.raises(AssertionError, match="no less than 0"):
        nn.LeakyReLU(-1)
    p = nn.PReLU(in_channels=3)
    p.initialize()
    assert p.alpha.shape == (3,)
    onp.testing.assert_array_equal(p.alpha.data().asnumpy(), [0.25] * 3)
    x = np.array([[[-4.0]], [[2.0]], [[-1.0]]]).reshape(1, 3, 1, 1)
    onp.testing.assert_array_equal(p(x).asnumpy().ravel(), [-1.0, 2.0, -0.25])


def test_concatenate_containers():
    c = nn.HybridConcatenate(axis=1)
    c.add(nn.Identity(), nn.Dense(3, flatten=False))
    c.initialize()
    assert c(np.ones((2, 4))).shape == (2, 7)
    assert nn.HybridConcurrent is nn.HybridConcatenate and nn.Concurrent is nn.Concatenate
    s = nn.Concatenate()                    # default axis -1
    s.add(nn.Identity(), nn.Identity())
    assert s(np.ones((2, 3))).shape == (2, 6)


def test_rnn_layer_reprs_params_and_states():
    assert repr(rnn.LSTM(8, num_layers=2, layout="NTC", input_size=5)) == \
        "LSTM(5 -> 8, NTC, num_layers=2)"
    assert repr(rnn.GRU(4, bidirectional=True)) == "GRU(None -> 4, TNC, bidirectional)"
    assert repr(rnn.RNN(3, dropout=0.5)) == "RNN(None -> 3, TNC, dropout=0.5)"
    lstm = rnn.LSTM(8, num_layers=2)
    lstm.initialize()
    assert repr(lstm.collect_params()["rnn_param"]) == "Parameter (shape=(-1,), dtype=float32)"
    out = lstm(np.ones((5, 2, 3)))
    assert out.shape == (5, 2, 8) and repr(lstm) == "LSTM(3 -> 8, TNC, num_layers=2)"
    assert lstm.rnn_param.shape == (992,)
    out, states = lstm(np.ones((5, 2, 3)), lstm.begin_state(2))
    assert [s.shape for s in states] == [(2, 2, 8), (2, 2, 8)]
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        lstm(np.ones((5, 2, 3)), [np.zeros((2, 3, 8)), np.zeros((2, 3, 8))])
    assert '"rnnfused"' in lstm.rnn_param._var_attrs()["__init__"]


def test_rnn_layer_hybridized_matches_imperative():
    x = np.array(onp.random.RandomState(3).standard_normal((3, 4, 5)).astype(onp.float32))
    for layer in (rnn.LSTM(6, num_layers=2, bidirectional=True, layout="NTC"),
                  rnn.GRU(4), rnn.RNN(3, activation="tanh", num_layers=2),
                  rnn.LSTM(6, projection_size=3)):
        layer.initialize(mx.init.Normal(0.5))   # Xavier refuses the fused 1-D pieces, as in MXNet
        a = layer(x).asnumpy()
        layer.hybridize()
        onp.testing.assert_array_equal(layer(x).asnumpy(), a)


def test_cells():
    assert repr(rnn.LSTMCell(4)) == "LSTMCell(-1 -> 16)"
    assert repr(rnn.GRUCell(3, input_size=2)) == "GRUCell(2 -> 9)"
    assert repr(rnn.RNNCell(5)) == "RNNCell(-1 -> 5, tanh)"
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.LSTMCell(4))
    seq.add(rnn.LSTMCell(4))
    assert repr(seq) == "SequentialRNNCell(\n(0): LSTMCell(-1 -> 16)\n(1): LSTMCell(-1 -> 16)\n)"
    seq.initialize()
    x = np.array(onp.random.RandomState(4).standard_normal((2, 5, 3)).astype(onp.float32))
    outs, states = seq.unroll(5, x, layout="NTC", merge_outputs=True)
    assert outs.shape == (2, 5, 4) and len(states) == 4
    cell = rnn.GRUCell(4, input_size=3)
    cell.initialize()
    outs, states = cell.unroll(5, x, merge_outputs=False)
    assert len(outs) == 5 and outs[0].shape == (2, 4)
    lengths = np.array([2.0, 5.0])
    masked, last = cell.unroll(5, x, merge_outputs=True, valid_length=lengths)
    m = masked.asnumpy()
    assert onp.all(m[0, 2:] == 0) and onp.allclose(last[0].asnumpy()[0], m[0, 1])
