"""The fused RNN operator (rnn_relu, rnn_tanh, lstm, gru; stacked, bidirectional, LSTM projection)
and `_rnn_param_concat`.

Flat parameter vector, as MXNet / cuDNN pack it: first every weight, for each layer and each
direction `[W_i2h (G*H, in), W_h2h (G*H, Hp), (LSTM projection W_hr (P, H))]`, then every bias,
for each layer and direction `[b_i2h (G*H), b_h2h (G*H)]`. Gate order: LSTM i, f, g(c), o;
GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)) ("linear before reset", cuDNN).

The input projection of all time steps is one matmul per layer and direction; only the recurrent
matmul runs per step.

As MXNet's CPU kernels: `p` (dropout between layers) is an inference no-op and
`lstm_state_clip_min/max/nan` are accepted but not applied (only MXNet's cuDNN path clips).
`use_sequence_length` (cuDNN-only in MXNet) is supported: steps past a sequence's length keep
its state and output zeros.
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from ..nnutil import CF, OptInt, check_param_shapes
from .activation import sigmoid as _sigmoid_inplace
from ..attrs import Bool, Int, Str
from ..lowering import Unsupported, lowers, refuse_if
from ..registry import register

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}

RNN_ATTRS = {
    "state_size": Int(), "num_layers": Int(), "bidirectional": Bool(False),
    "mode": Str(choices=tuple(_GATES)), "p": CF(0.0), "state_outputs": Bool(False),
    "projection_size": OptInt(None), "lstm_state_clip_min": CF(None),
    "lstm_state_clip_max": CF(None), "lstm_state_clip_nan": Bool(False),
    "use_sequence_length": Bool(False),
}


def _inputs(a):
    names = ["data", "parameters", "state"]
    if a.mode == "lstm":
        names.append("state_cell")
    if a.use_sequence_length:
        names.append("sequence_length")
    return names


def _nout(a):
    if not a.state_outputs:
        return 1
    return 3 if a.mode == "lstm" else 2


def param_size(a, input_size: int) -> int:
    """Length of the flat parameter vector (MXNet's GetRnnParamSize)."""
    H = a.state_size
    D = 2 if a.bidirectional else 1
    G = _GATES[a.mode]
    P = a.projection_size
    size = H * D * G
    if P:
        s1 = (input_size + P + 2) * size
        s2 = (P * D + P + 2) * size
    else:
        s1 = (input_size + H + 2) * size
        s2 = (H * D + H + 2) * size
    total = s1 + (a.num_layers - 1) * s2
    if P:
        total += P * H * a.num_layers * D
    return total


def _shape(a, s):
    if len(s) > 1:
        check_param_shapes("RNN", s, _param_shapes(a, s))
    T, N, I = tuple(s[0])
    D = 2 if a.bidirectional else 1
    H = a.state_size
    Hp = a.projection_size or H
    outs = [(T, N, D * Hp)]
    if a.state_outputs:
        outs.append((a.num_layers * D, N, Hp))
        if a.mode == "lstm":
            outs.append((a.num_layers * D, N, H))
    return outs


def _param_shapes(a, s):
    x = tuple(s[0])
    if len(x) != 3:
        raise ShapeError(f"RNN: data must be (seq_len, batch, input_size), got {x}")
    T, N, I = x
    D = 2 if a.bidirectional else 1
    H = a.state_size
    Hp = a.projection_size or H
    out = [x, (param_size(a, I),), (a.num_layers * D, N, Hp)]
    if a.mode == "lstm":
        out.append((a.num_layers * D, N, H))
    if a.use_sequence_length:
        out.append((N,))
    return out


def _flops(a, ins, outs):
    T, N, I = ins[0]
    D = 2 if a.bidirectional else 1
    H = a.state_size
    Hp = a.projection_size or H
    G = _GATES[a.mode]
    total = 0
    for layer in range(a.num_layers):
        inp = I if layer == 0 else D * Hp
        total += 2 * T * N * G * H * (inp + Hp) * D
        if a.projection_size:
            total += 2 * T * N * H * Hp * D
    return total


def unpack_params(a, flat: np.ndarray, input_size: int):
    """Split the flat vector into per (layer, direction) dicts of weights and biases."""
    H = a.state_size
    D = 2 if a.bidirectional else 1
    G = _GATES[a.mode]
    P = a.projection_size
    Hp = P or H
    need = param_size(a, input_size)
    if flat.size != need:
        raise ShapeError(f"RNN: parameter vector has {flat.size} elements, expected {need} "
                         f"(mode={a.mode}, layers={a.num_layers}, state_size={H}, "
                         f"input_size={input_size}, bidirectional={a.bidirectional})")
    flat = flat.reshape(-1)
    off = 0
    layers = []
    for layer in range(a.num_layers):
        inp = input_size if layer == 0 else D * Hp
        dirs = []
        for _ in range(D):
            wx = flat[off:off + G * H * inp].reshape(G * H, inp)
            off += G * H * inp
            wh = flat[off:off + G * H * Hp].reshape(G * H, Hp)
            off += G * H * Hp
            wr = None
            if P:
                wr = flat[off:off + P * H].reshape(P, H)
                off += P * H
            dirs.append({"wx": wx, "wh": wh, "wr": wr})
        layers.append(dirs)
    for layer in range(a.num_layers):
        for d in range(D):
            layers[layer][d]["bx"] = flat[off:off + G * H]
            off += G * H
            layers[layer][d]["bh"] = flat[off:off + G * H]
            off += G * H
    return layers


def _state(s, L, N, Hs, dt, name):
    """Initial state array; a batch dim of 0 (MXNet 1.x `_zeros((L, 0, H))`) means zeros."""
    if s is None or s.size == 0:
        return np.zeros((L, N, Hs), dt)
    if s.shape != (L, N, Hs):
        raise ShapeError(f"RNN: {name} has shape {tuple(s.shape)}, expected {(L, N, Hs)}")
    return s.astype(dt, copy=False)


def _run_direction(a, X, p, h0, c0, reverse, lengths):
    """One layer, one direction. X (T, N, in) → (y (T, N, Hp), h_T, c_T)."""
    T, N, _ = X.shape
    H = a.state_size
    mode = a.mode
    dt = X.dtype
    wx, wh, wr, bx, bh = p["wx"], p["wh"], p["wr"], p["bx"], p["bh"]
    xg = np.matmul(X.reshape(T * N, -1), wx.T).reshape(T, N, -1)   # all steps at once
    if mode == "gru":
        xg += bx
    else:
        xg += bx + bh
    whT = np.ascontiguousarray(wh.T)
    wrT = None if wr is None else np.ascontiguousarray(wr.T)
    h = h0.copy()
    c = None if c0 is None else c0.copy()
    Hp = h.shape[1]
    y = np.zeros((T, N, Hp), dt)
    steps = range(T - 1, -1, -1) if reverse else range(T)
    for t in steps:
        hg = h @ whT
        if mode == "lstm":
            g = xg[t] + hg
            i = _sigmoid_inplace(g[:, :H])
            f = _sigmoid_inplace(g[:, H:2 * H])
            gg = np.tanh(g[:, 2 * H:3 * H])
            o = _sigmoid_inplace(g[:, 3 * H:])
            cn = f * c + i * gg
            hn = o * np.tanh(cn)
            if wrT is not None:
                hn = hn @ wrT
        elif mode == "gru":
            hg += bh
            xt = xg[t]
            r = _sigmoid_inplace(xt[:, :H] + hg[:, :H])
            z = _sigmoid_inplace(xt[:, H:2 * H] + hg[:, H:2 * H])
            n = np.tanh(xt[:, 2 * H:] + r * hg[:, 2 * H:])
            hn = (1 - z) * n + z * h
            cn = None
        else:
            g = xg[t] + hg
            hn = np.maximum(g, 0) if mode == "rnn_relu" else np.tanh(g)
            cn = None
        if lengths is not None:
            live = (t < lengths)[:, None]
            hn = np.where(live, hn, h)
            if cn is not None:
                cn = np.where(live, cn, c)
            y[t] = np.where(live, hn, 0)
        else:
            y[t] = hn
        h = hn
        if cn is not None:
            c = cn
    return y, h, c


@register("RNN", "_npx_rnn", attrs=RNN_ATTRS, inputs=_inputs, num_outputs=_nout,
          output_names=("output", "state_output", "statecell_output"), infer_shape=_shape,
          infer_param_shapes=_param_shapes, strict=True, flops=_flops,
          dtype_pair=("data", "parameters"), float_only=True)
def rnn(a, x, params, state, state_cell=None, sequence_length=None):
    """Fused multi-layer (bi)directional RNN / LSTM / GRU over TNC data (inference; p ignored)."""
    if a.mode != "lstm" and a.use_sequence_length and sequence_length is None:
        sequence_length, state_cell = state_cell, None
    if x.ndim != 3:
        raise ShapeError(f"RNN: data must be (seq_len, batch, input_size), got {x.shape}")
    T, N, I = x.shape
    D = 2 if a.bidirectional else 1
    L = a.num_layers
    H = a.state_size
    Hp = a.projection_size or H
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    layers = unpack_params(a, params.astype(dt, copy=False), I)
    hx = _state(state, L * D, N, Hp, dt, "state")
    cx = _state(state_cell, L * D, N, H, dt, "state_cell") if a.mode == "lstm" else None
    lengths = None
    if a.use_sequence_length:
        if sequence_length is None:
            raise OperatorError("RNN: use_sequence_length=True needs a sequence_length input")
        lengths = np.asarray(sequence_length).reshape(-1).astype(np.int64)
    X = x.astype(dt, copy=False)
    hy, cy = [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            y, h, c = _run_direction(a, X, layers[layer][d], hx[k],
                                     None if cx is None else cx[k], d == 1, lengths)
            outs.append(y)
            hy.append(h)
            cy.append(c)
        X = outs[0] if D == 1 else np.concatenate(outs, axis=2)
    if not a.state_outputs:
        return X
    res = (X, np.stack(hy))
    if a.mode == "lstm":
        res = res + (np.stack(cy),)
    return res


# -- _rnn_param_concat ------------------------------------------------------------------------
def _cat_inputs(a):
    return [f"arg{i}" for i in range(a.num_args)]


def _cat_shape(a, s):
    s = [tuple(v) for v in s]
    ax = a.dim % len(s[0])
    out = list(s[0])
    out[ax] = sum(v[ax] for v in s)
    return [tuple(out)]


@register("_rnn_param_concat", attrs={"num_args": Int(), "dim": Int(1)}, inputs=_cat_inputs,
          infer_shape=_cat_shape, strict=True)
def rnn_param_concat(a, *xs):
    """Concatenate the (flattened) RNN parameters along `dim` (Concat with RNN shape rules)."""
    return np.concatenate(xs, axis=a.dim)


# -- ONNX lowering ------------------------------------------------------------------------------

# ONNX gate order from MXNet's: LSTM i,f,g,o → i,o,f,c; GRU r,z,n → z,r,h
_ONNX_GATES = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_relu": [0], "rnn_tanh": [0]}


def _onnx_layer_params(a, flat, input_size: int, layer: int):
    """W (D, G·H, in), R (D, G·H, H), B (D, 2·G·H) of one layer in ONNX gate order; `flat` is the
    packed vector or an index vector (then the results index into it)."""
    H, G = a.state_size, _GATES[a.mode]
    order = _ONNX_GATES[a.mode]
    dirs = unpack_params(a, flat, input_size)[layer]

    def gates(v):
        return v.reshape((G, H) + v.shape[1:])[order].reshape(v.shape)
    W = np.stack([gates(d["wx"]) for d in dirs])
    R = np.stack([gates(d["wh"]) for d in dirs])
    B = np.stack([np.concatenate([gates(d["bx"]), gates(d["bh"])]) for d in dirs])
    return W, R, B


def _layer_tensors(ctx, a, flat_name, input_size, layer):
    flat = ctx.value(flat_name)
    if flat is not None:                       # parameters: repack here, not in the graph
        return [ctx.const(t.astype(flat.dtype), hint="rnn_w")
                for t in _onnx_layer_params(a, flat.reshape(-1), input_size, layer)]
    idx = np.arange(param_size(a, input_size), dtype=np.int64)
    flat1 = ctx.op("Reshape", [flat_name, ctx.ints([-1])])
    return [ctx.op("Gather", [flat1, ctx.const(t, hint="rnn_idx")], axis=0)
            for t in _onnx_layer_params(a, idx, input_size, layer)]


def _layer_state(ctx, state, layer, D):
    if not state:
        return ""
    return ctx.op("Slice", [state, ctx.ints([layer * D]), ctx.ints([(layer + 1) * D]),
                            ctx.ints([0])])


@lowers(rnn, check=refuse_if(
    LSTM_projection=lambda a: bool(a.projection_size),
    LSTM_state_clipping=lambda a: a.lstm_state_clip_min is not None
    or a.lstm_state_clip_max is not None))
def _rnn_onnx(ctx, node, ins):
    """One ONNX LSTM / GRU (linear_before_reset) / RNN node per layer, both directions in it."""
    a = node.parsed
    x, flat, state = ins[0], ins[1], ins[2]
    cell = ins[3] if a.mode == "lstm" else ""
    lens = ins[-1] if a.use_sequence_length else ""
    if lens:
        lens = ctx.op("Cast", [lens], to=ctx.tensor_type(np.int32))
    if ctx.dtype(x) != np.float32:
        raise Unsupported(f"RNN on {ctx.dtype(x)} data")
    D = 2 if a.bidirectional else 1
    H = a.state_size
    kind = {"lstm": "LSTM", "gru": "GRU"}.get(a.mode, "RNN")
    extra = {"linear_before_reset": 1} if a.mode == "gru" else {}
    if kind == "RNN":
        extra = {"activations": ["Relu" if a.mode == "rnn_relu" else "Tanh"] * D}
    size = ctx.shape(x)[2]                    # the packing follows the first layer's input
    hs, cs = [], []
    for layer in range(a.num_layers):
        W, R, B = _layer_tensors(ctx, a, flat, size, layer)
        args = [x, W, R, B, lens, _layer_state(ctx, state, layer, D)]
        if kind == "LSTM":
            args.append(_layer_state(ctx, cell, layer, D))
        outs = ctx.op(kind, args, n_out=3 if kind == "LSTM" else 2, hidden_size=H,
                      direction="bidirectional" if D == 2 else "forward", **extra)
        y = ctx.op("Transpose", [outs[0]], perm=[0, 2, 1, 3])        # (T, N, D, H)
        x = ctx.op("Reshape", [y, ctx.ints([0, 0, -1])])
        hs.append(outs[1])
        cs.append(outs[2] if kind == "LSTM" else None)
    if not a.state_outputs:
        return x
    res = [x, ctx.op("Concat", hs, axis=0) if len(hs) > 1 else hs[0]]
    if kind == "LSTM":
        res.append(ctx.op("Concat", cs, axis=0) if len(cs) > 1 else cs[0])
    return res


@lowers(rnn_param_concat)
def _rnn_param_concat_onnx(ctx, node, ins):
    vals = [ctx.value(v) for v in ins]
    if all(v is not None for v in vals):       # parameters: one packed constant
        return ctx.const(np.concatenate(vals, axis=node.parsed.dim), hint="rnn_params")
    return ctx.op("Concat", ins, axis=node.parsed.dim)
