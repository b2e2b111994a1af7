"""MXNet 2.0's INT8 operators that 1.9.1 lacks (oneDNN CPU semantics): the NumPy-style add with
broadcasting, the element-wise product, and the layout/lookup ops that keep their input's
levels (transpose, npx reshape, embedding). Quantized tensors travel as in ops/quantized/standalone.py:
data, then shape-(1,) float32 min and max.
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from .._kernels import int8 as q
from ..nn.activation import sigmoid as _sigmoid
from ..attrs import Attrs, Bool, DType, Int, Shape, Str
from ..nn.nn_misc import embedding
from .standalone import CALIB_ATTRS, _OUT3, _calib, _has_calib, _ranged, float_ranges
from ..registry import register
from ..tensor.reshape import npx_reshape_shape
from ..nn.rnn import RNN_ATTRS, rnn, unpack_params
from ..tensor.shape import _perm, _tr_shape

_F32 = q.F32
_INT8_LEVELS = np.float32(127.0)      # MXNet's kInt8Range in its 2.0 element-wise kernels
_UINT8_LEVELS = np.float32(255.0)
_BIN_INPUTS = ("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max")


def _levels(dtype) -> np.float32:
    return _INT8_LEVELS if np.dtype(dtype) == np.int8 else _UINT8_LEVELS


def _keep_type(a: Attrs, d: list) -> list:
    return [np.dtype(d[0]), _F32, _F32]


# -- add with broadcasting ----------------------------------------------------------------------
def _npi_add_type(a: Attrs, d: list) -> list:
    if not _has_calib(a):
        return [np.dtype(np.int32), _F32, _F32]
    return [q.auto_dtype("auto", *_calib(a)) if np.dtype(d[0]) == np.dtype(d[1]) == np.uint8
            else np.dtype(np.int8), _F32, _F32]


def _npi_add_shape(a: Attrs, s: list) -> list:
    try:
        return _ranged(np.broadcast_shapes(tuple(s[0]), tuple(s[1])))
    except ValueError as e:
        raise ShapeError(f"_contrib_quantized_npi_add: shapes {s[0]} and {s[1]} do not "
                         "broadcast") from e


@register("_contrib_quantized_npi_add", "_npx_quantized_npi_add", inputs=_BIN_INPUTS,
          attrs=CALIB_ATTRS, num_outputs=3, output_names=_OUT3, infer_shape=_npi_add_shape,
          infer_type=_npi_add_type, strict=True, quantized=True, input_dtypes=float_ranges)
def quantized_npi_add(a: Attrs, x, y, x_lo, x_hi, y_lo, y_hi):
    """x + y (broadcasting) of two quantized tensors, each scaled onto the output's levels:
    the calibrated range (int8, or uint8 when both inputs are), else int32 over
    |x|max + |y|max. With equal shapes and mixed types, oneDNN first halves the uint8 operand
    into int8 (rounding) and doubles its scale, as MXNet 2.0 does."""
    for v, what in ((x, "lhs"), (y, "rhs")):
        q.check_qdtype(v, "_contrib_quantized_npi_add", what)
    ax, ay = q.abs_max(q.scalar(x_lo), q.scalar(x_hi)), q.abs_max(q.scalar(y_lo), q.scalar(y_hi))
    dt = _npi_add_type(a, [x.dtype, y.dtype])[0]
    if _has_calib(a):
        lo, hi = _calib(a)
        out_levels = np.float32(2147483647.0) if dt == np.int32 else _levels(dt)
        out_scale = out_levels / q.abs_max(lo, hi)
    else:
        hi = np.float32(ax + ay)
        lo = -hi
        out_scale = q.INT32_MAX / hi if hi else q.INT32_MAX
    fx = np.float32(out_scale / (_levels(x.dtype) / ax)) if ax else np.float32(0)
    fy = np.float32(out_scale / (_levels(y.dtype) / ay)) if ay else np.float32(0)
    if x.dtype != y.dtype and x.shape == y.shape:
        if x.dtype == np.uint8:
            x, fx = q.saturate(x * np.float32(0.5), np.int8), fx * np.float32(2)
        else:
            y, fy = q.saturate(y * np.float32(0.5), np.int8), fy * np.float32(2)
    # int32 levels need more than float32's 24 bits to land on the nearest level
    acc = np.float64 if dt == np.int32 else np.float32
    total = x.astype(acc) * fx + y.astype(acc) * fy
    return q.saturate(total, dt), *q.range_out(lo, hi)


# -- element-wise product -----------------------------------------------------------------------
_MUL_ATTRS = {**CALIB_ATTRS, "enable_float_output": Bool(False)}


def _mul_outputs(a: Attrs) -> int:
    return 1 if a.enable_float_output else 3


def _mul_type(a: Attrs, d: list) -> list:
    if a.enable_float_output:
        return [_F32]
    return [np.dtype(np.int8) if _has_calib(a) else np.dtype(np.int32), _F32, _F32]


def _mul_shape(a: Attrs, s: list) -> list:
    if tuple(s[0]) != tuple(s[1]):
        raise ShapeError(f"_contrib_quantized_elemwise_mul: shapes {s[0]} and {s[1]} differ "
                         "(no broadcasting)")
    return _ranged(s[0])[:_mul_outputs(a)]


@register("_contrib_quantized_elemwise_mul", "_npx_quantized_elemwise_mul", inputs=_BIN_INPUTS,
          attrs=_MUL_ATTRS, num_outputs=_mul_outputs, output_names=_OUT3,
          infer_shape=_mul_shape, infer_type=_mul_type, strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_elemwise_mul(a: Attrs, x, y, x_lo, x_hi, y_lo, y_hi):
    """x * y of two int8 tensors: int32 products over MXNet's s8·s8 range, or (calibrated)
    int8 levels truncated toward zero, or float32 with `enable_float_output`."""
    for v, what in ((x, "lhs"), (y, "rhs")):
        if v.dtype != np.int8:
            raise OperatorError(f"_contrib_quantized_elemwise_mul: {what} must be int8, "
                                f"got {v.dtype}")
    prod = x.astype(np.int32) * y.astype(np.int32)
    sx = _INT8_LEVELS / q.abs_max(q.scalar(x_lo), q.scalar(x_hi))
    sy = _INT8_LEVELS / q.abs_max(q.scalar(y_lo), q.scalar(y_hi))
    if a.enable_float_output:
        return (prod * np.float32(1 / sx / sy)).astype(np.float32)
    if _has_calib(a):
        lo, hi = _calib(a)
        scale = np.float32(_INT8_LEVELS / q.abs_max(lo, hi) / sx / sy)
        out = np.clip(np.trunc(prod * scale), -128, 127).astype(np.int8)
        return out, *q.range_out(lo, hi)
    hi = q.int32_range(q.scalar(x_lo), q.scalar(x_hi), 127, q.scalar(y_lo), q.scalar(y_hi), 127)
    return prod, *q.range_out(-hi, hi)


# -- ops that keep their input's levels ---------------------------------------------------------
@register("_contrib_quantized_transpose", "_npx_quantized_transpose", "quantized_transpose",
          inputs=("data", "min_data", "max_data"), attrs={"axes": Shape(None)}, num_outputs=3,
          output_names=_OUT3, infer_shape=lambda a, s: _ranged(_tr_shape(a, s)[0]),
          infer_type=_keep_type, strict=True, quantized=True, input_dtypes=float_ranges)
def quantized_transpose(a: Attrs, x, lo, hi):
    """Permute the axes of int8/uint8 levels (reversed when `axes` is empty); range unchanged."""
    q.check_qdtype(x, "_contrib_quantized_transpose")
    return (np.ascontiguousarray(x.transpose(_perm(a, x.ndim))),
            *q.range_out(q.scalar(lo), q.scalar(hi)))


@register("_npx_quantized_reshape", inputs=("data", "min_data", "max_data"),
          attrs={"newshape": Shape(), "reverse": Bool(False), "order": Str("C")},
          num_outputs=3, output_names=_OUT3,
          infer_shape=lambda a, s: _ranged(npx_reshape_shape(s[0], a.newshape, a.reverse)),
          infer_type=_keep_type, strict=True, quantized=True, input_dtypes=float_ranges)
def quantized_npx_reshape(a: Attrs, x, lo, hi):
    """npx.reshape's codes (-1…-6, `reverse`) on int8/uint8 levels; range unchanged."""
    q.check_qdtype(x, "_npx_quantized_reshape")
    return (x.reshape(npx_reshape_shape(x.shape, a.newshape, a.reverse)),
            *q.range_out(q.scalar(lo), q.scalar(hi)))


def _emb_q_shape(a: Attrs, s: list) -> list:
    return _ranged(tuple(s[0]) + (a.output_dim,))


@register("_contrib_quantized_embedding", "_npx_quantized_embedding",
          inputs=("data", "weight", "min_weight", "max_weight"),
          attrs={"input_dim": Int(), "output_dim": Int(), "dtype": DType(np.dtype(np.float32)),
                 "sparse_grad": Bool(False)},
          num_outputs=3, output_names=_OUT3, infer_shape=_emb_q_shape,
          infer_type=lambda a, d: [np.dtype(np.int8), _F32, _F32], strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_embedding(a: Attrs, idx, w, lo, hi):
    """Rows of the int8 weight table (indices as Embedding takes them); the weight's range."""
    if w.dtype != np.int8:
        raise OperatorError(f"_contrib_quantized_embedding: weight must be int8, got {w.dtype}")
    return embedding.kernel(a, idx, w), *q.range_out(q.scalar(lo), q.scalar(hi))


# -- LSTM over uint8 data -----------------------------------------------------------------------
def _qrnn_inputs(a: Attrs) -> list[str]:
    return ["data", "parameters", "state", "state_cell", "data_scale", "data_shift"]


def _qrnn_outputs(a: Attrs) -> int:
    return 3 if a.state_outputs else 1


def _qrnn_shape(a: Attrs, s: list) -> list:
    T, N, _ = s[0]
    D = 2 if a.bidirectional else 1
    out = [(T, N, D * a.state_size)]
    if a.state_outputs:
        out += [(a.num_layers * D, N, a.state_size)] * 2
    return out


def _int8_rows(w: np.ndarray) -> np.ndarray:
    """`w` as oneDNN's int8 LSTM sees it: int8 levels, one symmetric scale per gate row."""
    amax = np.abs(w).max(axis=1, keepdims=True).astype(np.float32)
    scale = np.where(amax > 0, _INT8_LEVELS / np.where(amax > 0, amax, 1), 1).astype(np.float32)
    return q.saturate(w * scale, np.int8).astype(np.float32) / scale


def _lstm_direction(p: dict, X: np.ndarray, h: np.ndarray, c: np.ndarray, reverse: bool,
                    u8) -> tuple:
    """One layer, one direction; `u8(v)`: v after the uint8 round trip of the data's scale and
    shift (what the recurrent input goes through)."""
    H = h.shape[1]
    wx, wh = _int8_rows(p["wx"]), _int8_rows(p["wh"])
    xg = np.matmul(X, wx.T) + (p["bx"] + p["bh"]).astype(np.float32)
    y = np.zeros(X.shape[:2] + (H,), np.float32)
    for t in (range(X.shape[0] - 1, -1, -1) if reverse else range(X.shape[0])):
        g = xg[t] + u8(h) @ wh.T
        i, f, o = (_sigmoid(g[:, k * H:(k + 1) * H]) for k in (0, 1, 3))
        c = f * c + i * np.tanh(g[:, 2 * H:3 * H])
        h = o * np.tanh(c)
        y[t] = h
    return y, h, c


@register("_contrib_quantized_rnn", "_npx_contrib_quantized_rnn", inputs=_qrnn_inputs,
          attrs={**RNN_ATTRS, "quantized": Bool(True)}, num_outputs=_qrnn_outputs,
          output_names=("output", "state_output", "statecell_ouput"), infer_shape=_qrnn_shape,
          infer_type=lambda a, d: [_F32] * _qrnn_outputs(a), strict=True, quantized=True,
          input_dtypes=lambda a, names: [np.dtype(np.uint8)] + [_F32] * (len(names) - 1))
def quantized_rnn(a: Attrs, x, params, state, state_cell, scale, shift):
    """LSTM (MXNet 2.0's oneDNN int8 LSTM) over uint8 data q = x·scale + shift: int8 weights
    with per-gate-row scales, float32 biases and cell state; the hidden state feeding the next
    step (and the next layer's input) passes through the same uint8 quantization; outputs
    float32."""
    if a.mode != "lstm" or a.projection_size:
        raise OperatorError("_contrib_quantized_rnn: only LSTM without projection is supported")
    if x.dtype != np.uint8:
        raise OperatorError(f"_contrib_quantized_rnn: data must be uint8, got {x.dtype}")
    s, z = q.scalar(scale), q.scalar(shift)

    def u8(v):
        return (np.clip(np.rint(v * s + z), 0, 255) - z) / s

    T, N, I = x.shape
    D = 2 if a.bidirectional else 1
    layers = unpack_params(a, params.astype(np.float32, copy=False), I)
    hx = np.asarray(state, np.float32).reshape(a.num_layers * D, N, a.state_size)
    cx = np.asarray(state_cell, np.float32).reshape(a.num_layers * D, N, a.state_size)
    X = (x.astype(np.float32) - z) / s
    hy, cy = [], []
    for layer in range(a.num_layers):
        if layer:
            X = u8(X)
        outs = []
        for d in range(D):
            y, h, c = _lstm_direction(layers[layer][d], X, hx[layer * D + d], cx[layer * D + d],
                                      d == 1, u8)
            outs.append(y)
            hy.append(h)
            cy.append(c)
        X = np.concatenate(outs, axis=2) if D == 2 else outs[0]
    return (X, np.stack(hy), np.stack(cy)) if a.state_outputs else X


# -- asymmetric uint8 quantization (the quantized LSTM's data) ----------------------------------
@register("_contrib_quantize_asym", attrs=CALIB_ATTRS, num_outputs=3,
          output_names=("output", "scale", "shift"),
          infer_shape=lambda a, s: _ranged(s[0]),
          infer_type=lambda a, d: [np.dtype(np.uint8), _F32, _F32], strict=True, quantized=True)
def quantize_asym(a: Attrs, x):
    """uint8 q = x·scale + shift with scale = 255/(max − min), shift = 255 − max·scale over the
    calibrated range (else the data's own), rounded half up and clamped; int8 data shifts by 128,
    uint8 data passes through (scale 1, shift 0)."""
    if x.dtype == np.uint8:
        return x.copy(), *q.range_out(1.0, 0.0)
    if x.dtype == np.int8:
        return (x.astype(np.int16) + 128).astype(np.uint8), *q.range_out(1.0, 128.0)
    lo, hi = _calib(a) if _has_calib(a) else (np.float32(x.min()), np.float32(x.max()))
    scale = np.float32(255.0 / (np.float32(hi) - np.float32(lo)))
    shift = np.float32(255.0 - np.float32(hi) * scale)
    out = np.clip(np.floor(x.astype(np.float32) * scale + shift + np.float32(0.5)), 0, 255)
    return out.astype(np.uint8), *q.range_out(scale, shift)


# MXNet's FQuantizedOp of the fused RNN: an LSTM without projection runs as the INT8 LSTM
rnn.quantized_as = lambda a: (quantized_rnn.name if a.mode == "lstm" and not a.projection_size
                              else None)
