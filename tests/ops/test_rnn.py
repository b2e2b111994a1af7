"""Fused RNN op (rnn_relu / rnn_tanh / lstm / gru, layers, bidirectional, projection) against
step-by-step cell equations, and _rnn_param_concat."""
import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def make_params(rng, mode, I, H, L, D, P=None):
    """Per-(layer, direction) weights and the flat vector in MXNet/cuDNN order: all weights
    (i2h, h2h[, h2r]) per layer and direction, then all biases (i2h, h2h)."""
    G = GATES[mode]
    Hp = P or H
    ws, bs, flat_w, flat_b = {}, {}, [], []
    for layer in range(L):
        inp = I if layer == 0 else D * Hp
        for d in range(D):
            wx, wh = rand(rng, G * H, inp) * 0.5, rand(rng, G * H, Hp) * 0.5
            wr = rand(rng, P, H) * 0.5 if P else None
            bx, bh = rand(rng, G * H) * 0.3, rand(rng, G * H) * 0.3
            ws[layer, d] = (wx, wh, wr)
            bs[layer, d] = (bx, bh)
            flat_w += [wx.ravel(), wh.ravel()] + ([wr.ravel()] if P else [])
            flat_b += [bx, bh]
    return ws, bs, np.concatenate(flat_w + flat_b).astype(np.float32)


def sig(v):
    return 1 / (1 + np.exp(-v))


def cell(mode, x, h, c, w, b, H):
    wx, wh, wr = w
    bx, bh = b
    if mode == "lstm":
        g = x @ wx.T + bx + h @ wh.T + bh
        i, f, gg, o = sig(g[:, :H]), sig(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), \
            sig(g[:, 3 * H:])
        c = f * c + i * gg
        h = o * np.tanh(c)
        if wr is not None:
            h = h @ wr.T
        return h, c
    if mode == "gru":
        xi, hh = x @ wx.T + bx, h @ wh.T + bh
        r = sig(xi[:, :H] + hh[:, :H])
        z = sig(xi[:, H:2 * H] + hh[:, H:2 * H])
        n = np.tanh(xi[:, 2 * H:] + r * hh[:, 2 * H:])     # linear before reset (cuDNN)
        return (1 - z) * n + z * h, None
    g = x @ wx.T + bx + h @ wh.T + bh
    return (np.maximum(g, 0) if mode == "rnn_relu" else np.tanh(g)), None


def rnn_ref(mode, x, ws, bs, h0, c0, H, L, D):
    X = x.astype(np.float64)
    T = X.shape[0]
    hy, cy = [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            h = h0[k].astype(np.float64)
            c = None if c0 is None else c0[k].astype(np.float64)
            ys = [None] * T
            for t in (range(T - 1, -1, -1) if d else range(T)):
                h, c = cell(mode, X[t], h, c, ws[layer, d], bs[layer, d], H)
                ys[t] = h
            outs.append(np.stack(ys))
            hy.append(h)
            cy.append(c)
        X = np.concatenate(outs, axis=2)
    return X, np.stack(hy), (np.stack(cy) if mode == "lstm" else None)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_relu", "rnn_tanh"])
@pytest.mark.parametrize("L,D", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_rnn_modes(mode, L, D):
    rng = np.random.default_rng(hash((mode, L, D)) % 2**32)
    T, N, I, H = 5, 3, 4, 6
    ws, bs, flat = make_params(rng, mode, I, H, L, D)
    x = rand(rng, T, N, I)
    h0 = rand(rng, L * D, N, H) * 0.5
    c0 = rand(rng, L * D, N, H) * 0.5 if mode == "lstm" else None
    attrs = {"mode": mode, "state_size": H, "num_layers": L, "bidirectional": D == 2,
             "state_outputs": True}
    ins = [x, flat, h0] + ([c0] if mode == "lstm" else [])
    outs = run_op("RNN", attrs, *ins)
    y, hy, cy = rnn_ref(mode, x, ws, bs, h0, c0, H, L, D)
    np.testing.assert_allclose(outs[0], y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(outs[1], hy, rtol=RTOL, atol=ATOL)
    if mode == "lstm":
        np.testing.assert_allclose(outs[2], cy, rtol=RTOL, atol=ATOL)
    (only,) = run_op("RNN", {**attrs, "state_outputs": False}, *ins)
    np.testing.assert_array_equal(only, outs[0])


def test_zero_batch_state_means_zeros():
    """1.x graphs build begin states with `_zeros((L, 0, H))`: a 0 batch dim means zeros."""
    rng = np.random.default_rng(30)
    ws, bs, flat = make_params(rng, "lstm", 4, 5, 2, 1)
    x = rand(rng, 3, 2, 4)
    empty = np.zeros((2, 0, 5), np.float32)
    out = run_op("RNN", {"mode": "lstm", "state_size": 5, "num_layers": 2}, x, flat, empty,
                 empty, check=False)[0]
    zeros = np.zeros((2, 2, 5), np.float32)
    ref = run_op("RNN", {"mode": "lstm", "state_size": 5, "num_layers": 2}, x, flat, zeros,
                 zeros)[0]
    np.testing.assert_array_equal(out, ref)


def test_lstm_projection():
    rng = np.random.default_rng(31)
    T, N, I, H, P, L, D = 4, 2, 3, 6, 2, 2, 2
    ws, bs, flat = make_params(rng, "lstm", I, H, L, D, P)
    x = rand(rng, T, N, I)
    h0, c0 = rand(rng, L * D, N, P) * 0.5, rand(rng, L * D, N, H) * 0.5
    outs = run_op("RNN", {"mode": "lstm", "state_size": H, "num_layers": L,
                          "bidirectional": True, "state_outputs": True,
                          "projection_size": P}, x, flat, h0, c0)
    y, hy, cy = rnn_ref("lstm", x, ws, bs, h0, c0, H, L, D)
    assert outs[0].shape == (T, N, D * P)
    np.testing.assert_allclose(outs[0], y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(outs[1], hy, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(outs[2], cy, rtol=RTOL, atol=ATOL)


def test_sequence_length():
    rng = np.random.default_rng(32)
    T, N, I, H = 5, 3, 2, 4
    ws, bs, flat = make_params(rng, "gru", I, H, 1, 2)
    x = rand(rng, T, N, I)
    h0 = np.zeros((2, N, H), np.float32)
    lens = np.array([5, 2, 3], np.float32)
    y, hy = run_op("RNN", {"mode": "gru", "state_size": H, "num_layers": 1,
                           "bidirectional": True, "state_outputs": True,
                           "use_sequence_length": True}, x, flat, h0, lens)
    for n in range(N):
        ln = int(lens[n])
        ry, rh, _ = rnn_ref("gru", x[:ln, n:n + 1], ws, bs, h0[:, n:n + 1], None, H, 1, 2)
        np.testing.assert_allclose(y[:ln, n:n + 1], ry, rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(y[ln:, n], 0)
        np.testing.assert_allclose(hy[:, n:n + 1], rh, rtol=RTOL, atol=ATOL)


def test_structure_and_errors():
    from framework.base import ShapeError
    from framework.ops.registry import get_op
    op = get_op("RNN")
    a = op.parse_attrs({"mode": "lstm", "state_size": "8", "num_layers": "2",
                        "state_outputs": "True", "p": "0", "projection_size": "None",
                        "lstm_state_clip_min": "None", "lstm_state_clip_max": "None",
                        "lstm_state_clip_nan": "False", "use_sequence_length": "False",
                        "bidirectional": "False"})
    assert op.input_names(a) == ["data", "parameters", "state", "state_cell"]
    assert [op.output_name(a, i) for i in range(3)] == \
        ["output", "state_output", "statecell_output"]
    assert op.infer_param_shapes(a, [(6, 2, 5), None, None, None]) == \
        [(6, 2, 5), ((5 + 8 + 2) * 32 + (8 + 8 + 2) * 32,), (2, 2, 8), (2, 2, 8)]
    assert op.flops(a, [(6, 2, 5)], []) > 0
    g = op.parse_attrs({"mode": "gru", "state_size": 2, "num_layers": 1})
    assert op.input_names(g) == ["data", "parameters", "state"] and op.n_outputs(g) == 1
    with pytest.raises(ShapeError):
        run_op("RNN", {"mode": "gru", "state_size": 2, "num_layers": 1},
               np.zeros((3, 2, 4), np.float32), np.zeros(42, np.float32),
               np.zeros((1, 2, 2), np.float32))


def test_lstm_state_clip_ignored_like_mxnet_cpu():
    """MXNet's CPU LSTM ignores lstm_state_clip_* (only its cuDNN path clips); so do we."""
    rng = np.random.default_rng(33)
    ws, bs, flat = make_params(rng, "lstm", 3, 4, 1, 1)
    x = rand(rng, 6, 2, 3) * 5
    z = np.zeros((1, 2, 4), np.float32)
    attrs = {"mode": "lstm", "state_size": 4, "num_layers": 1, "state_outputs": True}
    clipped = run_op("RNN", {**attrs, "lstm_state_clip_min": -0.1, "lstm_state_clip_max": 0.1,
                             "lstm_state_clip_nan": True}, x, flat, z, z)
    plain = run_op("RNN", attrs, x, flat, z, z)
    for a, b in zip(clipped, plain):
        np.testing.assert_array_equal(a, b)


def test_rnn_param_concat():
    rng = np.random.default_rng(34)
    parts = [rand(rng, 6), rand(rng, 4), rand(rng, 3)]
    (y,) = run_op("_rnn_param_concat", {"num_args": 3, "dim": 0}, *parts)
    np.testing.assert_array_equal(y, np.concatenate(parts))


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "gru_bidir_states"),
                                          ("mxnet-1.9.1", "lstm_2layer"),
                                          ("mxnet-1.9.1", "rnn_relu_tanh"),
                                          ("mxnet-1.9.1", "lstm_gru_cells_unrolled"),
                                          ("mxnet-2.0.0b1", "embedding_lstm")])
def test_fixture(version, name):
    check_fixture(version, name)
