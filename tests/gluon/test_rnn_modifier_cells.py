"""Residual/Zoneout/Dropout/Bidirectional cells, LSTMPCell, and MXNet 2's cell
`infer_shape(i, x, is_bidirect)` signature."""
from __future__ import annotations

import numpy as onp
import pytest

from framework import np
from framework.gluon import HybridBlock, rnn, utils


def _init(cell, x, bidir=False):
    cell.infer_shape(0, x, bidir)
    cell.initialize()
    return cell


def test_residual_adds_the_input():
    x = np.random.uniform(size=(3, 4, 6))
    base = rnn.GRUCell(6)
    cell = _init(rnn.ResidualCell(base), x)
    out, _ = cell.unroll(4, x, merge_outputs=True)
    base._modified = False
    ref, _ = base.unroll(4, x, merge_outputs=True)
    onp.testing.assert_allclose(out.asnumpy(), ref.asnumpy() + x.asnumpy(), rtol=1e-6)
    assert sorted(cell.collect_params()) == ["base_cell.h2h_bias", "base_cell.h2h_weight",
                                             "base_cell.i2h_bias", "base_cell.i2h_weight"]


def test_zoneout_and_dropout_are_identities_at_inference():
    x = np.random.uniform(size=(2, 3, 5))
    base = rnn.RNNCell(4)
    zone = _init(rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5), x)
    out, _ = zone.unroll(3, x, merge_outputs=True)
    base._modified = False
    ref, _ = base.unroll(3, x, merge_outputs=True)
    onp.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())
    d_out, states = rnn.DropoutCell(0.5).unroll(3, x, merge_outputs=True)
    assert d_out is x and states == []
    with pytest.raises(AssertionError, match="modifier cell"):
        base._modified = True
        base.begin_state(2)


def test_bidirectional_is_forward_and_reversed_backward():
    x = np.random.uniform(size=(2, 5, 3))
    cell = _init(rnn.BidirectionalCell(rnn.LSTMCell(4), rnn.LSTMCell(4)), x, True)
    out, states = cell.unroll(5, x, merge_outputs=True)
    assert out.shape == (2, 5, 8) and len(states) == 4
    lo, _ = cell.l_cell.unroll(5, x, merge_outputs=True)
    ro, _ = cell.r_cell.unroll(5, np.flip(x, axis=1), merge_outputs=True)
    onp.testing.assert_allclose(out.asnumpy()[..., :4], lo.asnumpy(), rtol=1e-6)
    onp.testing.assert_allclose(out.asnumpy()[..., 4:], onp.flip(ro.asnumpy(), 1), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        cell(x[:, 0], cell.begin_state(2))


def test_bidirectional_valid_length_masks_and_matches_each_sequence():
    x = np.random.uniform(size=(6, 3, 4))            # TNC
    lengths = [2, 6, 4]
    cell = _init(rnn.BidirectionalCell(rnn.GRUCell(5), rnn.GRUCell(5)), x, True)
    out, _ = cell.unroll(6, x, layout="TNC", valid_length=np.array(lengths))
    for i, n in enumerate(lengths):
        one, _ = cell.unroll(n, x[:n, i:i + 1], layout="TNC", merge_outputs=True)
        onp.testing.assert_allclose(out.asnumpy()[:n, i:i + 1], one.asnumpy(), rtol=1e-5)
        assert not out.asnumpy()[n:, i].any()


def test_lstmp_cell_matches_the_fused_projected_lstm():
    T, N, I, H, P = 3, 2, 6, 8, 5
    x = np.random.uniform(size=(T, N, I))
    fused = rnn.LSTM(H, projection_size=P, layout="TNC")
    fused.initialize()
    begin = fused.begin_state(N)
    fused(x, begin)
    cell = _init(rnn.LSTMPCell(H, P), x)
    for name, val in utils.split_rnn_params(fused.rnn_param.data(), "lstm", 1, I, H,
                                            projection_size=P).items():
        getattr(cell, name[3:]).set_data(val)
    want, want_states = fused(x, begin)
    got, got_states = cell.unroll(T, x, layout="TNC", merge_outputs=True,
                                  begin_state=cell.begin_state(N))
    onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(got_states[0].asnumpy(), want_states[0].asnumpy()[0], rtol=1e-5)
    onp.testing.assert_allclose(got_states[1].asnumpy(), want_states[1].asnumpy()[0], rtol=1e-5)


def test_infer_shape_signature_for_stacks():
    x = np.zeros((4, 7))
    stack = rnn.HybridSequentialRNNCell()
    for _ in range(3):
        stack.add(rnn.LSTMCell(10))
    stack.infer_shape(0, x, False)
    assert [stack[i].i2h_weight.shape for i in range(3)] == [(40, 7), (40, 10), (40, 10)]
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.GRUCell(4))
    seq.add(rnn.GRUCell(4))
    seq.infer_shape(0, x, True)                      # a plain stack passes is_bidirect through
    assert seq[1].i2h_weight.shape == (12, 8)


def test_single_step_unroll_hybridized():
    class Net(HybridBlock):
        def __init__(self):
            super().__init__()
            self.cell = rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3))

        def forward(self, x, valid):
            return self.cell.unroll(1, x, valid_length=valid, merge_outputs=True)[0]

        def infer_shape(self, x, *args):
            self.cell.infer_shape(0, x, True)

    net = Net()
    x = np.random.uniform(size=(4, 1, 2))
    net.infer_shape(x)
    net.initialize()
    want = net(x, np.ones((4,))).asnumpy()
    net.hybridize()                                   # one step: a one-output split in the plan
    onp.testing.assert_allclose(net(x, np.ones((4,))).asnumpy(), want, rtol=1e-6)
