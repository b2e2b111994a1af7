"""Convolutional recurrent cells: with 1-wide kernels on a length-1 signal they are exactly the
dense cells (same weights), and output/state shapes follow the i2h convolution."""
from __future__ import annotations

import numpy as onp
import pytest

from framework import np
from framework.gluon import rnn

I, H, N = 3, 4, 2


@pytest.mark.parametrize("conv,dense", [(rnn.Conv1DRNNCell, rnn.RNNCell),
                                        (rnn.Conv1DLSTMCell, rnn.LSTMCell),
                                        (rnn.Conv1DGRUCell, rnn.GRUCell)])
def test_pointwise_conv_cell_is_the_dense_cell(conv, dense):
    x = onp.random.uniform(-1, 1, (5, N, I)).astype(onp.float32)        # TNC
    d = dense(H, input_size=I)
    d.initialize()
    c = conv((I, 1), H, 1, 1)
    c.initialize()
    for name in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"):
        w = onp.random.uniform(-0.5, 0.5, getattr(d, name).shape).astype(onp.float32)
        getattr(d, name).set_data(np.array(w))
        getattr(c, name).set_data(np.array(w.reshape(getattr(c, name).shape)))
    want, want_states = d.unroll(5, np.array(x), layout="TNC", merge_outputs=True)
    got, got_states = c.unroll(5, np.array(x[..., None]), layout="TNC", merge_outputs=True)
    onp.testing.assert_allclose(got.asnumpy()[..., 0], want.asnumpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(got_states, want_states):
        onp.testing.assert_allclose(g.asnumpy()[..., 0], w.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell,in_shape,out_shape", [
    (lambda: rnn.Conv1DLSTMCell((4, 9), 5, 3, 3), (2, 4, 9), (2, 5, 7)),
    (lambda: rnn.Conv2DGRUCell((4, 6, 8), 5, (3, 1), 3, i2h_pad=(1, 0)), (1, 4, 6, 8), (1, 5, 6, 8)),
    (lambda: rnn.Conv3DRNNCell((2, 5, 6, 7), 3, 3, 5, i2h_dilate=2), (1, 2, 5, 6, 7), (1, 3, 1, 2, 3)),
])
def test_conv_cell_shapes(cell, in_shape, out_shape):
    c = cell()
    c.initialize()
    outs, states = c.unroll(2, [np.ones(in_shape)] * 2)
    assert [o.shape for o in outs] == [out_shape] * 2
    assert all(s.shape == out_shape for s in states)


def test_even_h2h_kernel_refused():
    with pytest.raises(ValueError, match="odd"):
        rnn.Conv2DRNNCell((3, 8, 8), 4, 3, 2)
