"""Fused RNN layers take the initializer given to `initialize()` for their weights, as MXNet 2
does (biases keep their 'zeros')."""
import numpy as onp

import framework as mx
from framework import np


def _param(layer, init=None):
    layer.initialize(init) if init is not None else layer.initialize()
    layer(np.ones((2, 1, 3)))
    return layer.rnn_param.data().asnumpy()


def test_block_initializer_reaches_the_fused_weights():
    p = _param(mx.gluon.rnn.LSTM(4, input_size=3), mx.init.One())
    n_weights = 4 * 4 * (3 + 4)
    assert (p[:n_weights] == 1).all() and (p[n_weights:] == 0).all()
    p = _param(mx.gluon.rnn.GRU(2, num_layers=2, bidirectional=True, input_size=3),
               mx.init.Constant(0.5))
    assert set(onp.unique(p)) == {0.0, 0.5}


def test_default_is_uniform_and_own_initializers_fall_back():
    p = _param(mx.gluon.rnn.RNN(4, input_size=3))
    w = p[:4 * 7]
    assert 0 < onp.abs(w).max() <= 0.07 and len(onp.unique(w)) > 10
    p = _param(mx.gluon.rnn.RNN(4, input_size=3, i2h_weight_initializer=mx.init.One()),
               mx.init.Constant(2.0))
    assert onp.abs(p[:12]).max() <= 0.07          # had its own: MXNet falls back to 'uniform'
    assert (p[12:28] == 2.0).all()                # h2h weights take the block initializer
