"""MXNet 1.9.1's standalone INT8 operators (`_contrib_quantize_v2`, `_contrib_dequantize`,
`_contrib_requantize`, `_contrib_quantized_*`), with the oneDNN semantics of its CPU build.

A quantized tensor travels as three outputs: the int8/uint8/int32 data and the real range
[min, max] (shape-(1,) float32 arrays) that its levels map onto (ops/_kernels/int8.py). The fused
convolution / fully-connected nodes are in ops/quantized/mkldnn_conv.py and ops/quantized/mkldnn_fc.py. ONNX
lowerings are at the end of each module.
"""
from __future__ import annotations

import numpy as np

from .._kernels import int8_onnx as qo
from ...base import OperatorError, ShapeError
from .._kernels import int8 as q
from ..attrs import Attrs, Bool, Float, Int, Str
from ..lowering import lowers, refuse_if
from ..nn.pool import POOL_ATTRS, _pool_shape, pooling
from ..registry import register
from ..tensor.shape import _concat_shape

_OUT3 = ("output", "min_output", "max_output")
_F32 = q.F32
_ONE = (1,)


def _ranged(shape) -> list:
    """Output shapes of a quantized op: the data's, then min and max."""
    return [tuple(shape), _ONE, _ONE]


def _calib(a: Attrs) -> tuple:
    return a.min_calib_range, a.max_calib_range


def _has_calib(a: Attrs) -> bool:
    return a.min_calib_range is not None and a.max_calib_range is not None


CALIB_ATTRS = {"min_calib_range": Float(None), "max_calib_range": Float(None)}


def float_ranges(a: Attrs, names: list[str]) -> list:
    """Input dtypes of a quantized op: its range inputs (…min…, …max…) are float32."""
    return [_F32 if "min" in n or "max" in n else None for n in names]


# -- quantize / dequantize / requantize ---------------------------------------------------------
def _quantize_v2_type(a: Attrs, d: list) -> list:
    dt = np.dtype(d[0]) if d[0] is not None else _F32
    out = dt if dt in q.QDTYPES else q.auto_dtype(a.out_type, *_calib(a))
    return [out, _F32, _F32]


@register("_contrib_quantize_v2", "_npx_contrib_quantize_v2",
          attrs={"out_type": Str("int8", choices=("auto", "int8", "uint8")), **CALIB_ATTRS,
                 "shifted_output": Bool(None)},
          num_outputs=3, infer_shape=lambda a, s: _ranged(s[0]),
          infer_type=_quantize_v2_type, strict=True, quantized=True, monitor_indexed_outputs=True)
def quantize_v2(a: Attrs, x: np.ndarray):
    """float32 → int8/uint8 over the calibrated range (or the data's own min/max); int8/uint8
    data passes through with its range."""
    if a.shifted_output:
        raise OperatorError("_contrib_quantize_v2: shifted (asymmetric) output is not supported")
    if x.dtype in q.QDTYPES:
        if _has_calib(a):
            return (x, *q.range_out(*_calib(a)))
        lo = 0.0 if x.dtype == np.uint8 else -q.INT8_RANGE
        hi = q.UINT8_RANGE if x.dtype == np.uint8 else q.INT8_RANGE
        return x, *q.range_out(lo, hi)
    lo, hi = _calib(a) if _has_calib(a) else (x.min(), x.max())
    dt = q.auto_dtype(a.out_type, *_calib(a))
    if dt == np.int8:
        amax = q.abs_max(lo, hi)
        out_lo, out_hi = -amax, amax
    else:
        out_lo, out_hi = lo, hi
    scale = q.quant_scale(dt, lo, hi)
    return (q.saturate(x.astype(np.float32) * scale, dt), *q.range_out(out_lo, out_hi))


@register("_contrib_quantize", "_npx_contrib_quantize", inputs=("data", "min_range", "max_range"),
          attrs={"out_type": Str("uint8", choices=("int8", "uint8"))},
          num_outputs=3, infer_shape=lambda a, s: _ranged(s[0]),
          infer_type=lambda a, d: [np.dtype(a.out_type), _F32, _F32], strict=True, quantized=True,
          monitor_indexed_outputs=True, input_dtypes=float_ranges)
def quantize(a: Attrs, x: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """float32 → int8 (127 levels, range ±max|range|) or uint8 (255 levels, range as given)."""
    amax = q.abs_max(q.scalar(lo), q.scalar(hi))
    dt = np.dtype(a.out_type)
    levels = np.float32(127 if dt == np.int8 else 255)
    rng = (-amax, amax) if dt == np.int8 else (q.scalar(lo), q.scalar(hi))
    return q.saturate(x.astype(np.float32) * (levels / amax), dt), *q.range_out(*rng)


def dequantize_array(x: np.ndarray, lo, hi) -> np.ndarray:
    """Levels → real values: int8 and uint8 over 127.5 / 255.5 levels, int32 over INT32_MAX."""
    amax = q.abs_max(lo, hi)
    levels = {np.dtype(np.int8): q.INT8_RANGE, np.dtype(np.uint8): q.UINT8_RANGE}.get(
        x.dtype, q.INT32_MAX)
    return x.astype(np.float32) * np.float32(amax / levels)


@register("_contrib_dequantize", inputs=("data", "min_range", "max_range"),
          attrs={"out_type": Str("float32", choices=("float32",))},
          infer_shape=lambda a, s: [tuple(s[0])], infer_type=lambda a, d: [_F32], strict=True, quantized=True,
          input_dtypes=float_ranges)
def dequantize(a: Attrs, x: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """int8/uint8/int32 → float32 over the range [min, max]."""
    if x.dtype not in q.QDTYPES and x.dtype != np.int32:
        raise OperatorError(f"_contrib_dequantize: data must be int8, uint8 or int32, got {x.dtype}")
    return dequantize_array(x, q.scalar(lo), q.scalar(hi))


def _requantize_type(a: Attrs, d: list) -> list:
    return [q.auto_dtype(a.out_type, *_calib(a)), _F32, _F32]


@register("_contrib_requantize", "_npx_requantize", inputs=("data", "min_range", "max_range"),
          attrs={"out_type": Str("int8", choices=("auto", "int8", "uint8")), **CALIB_ATTRS},
          num_outputs=3, infer_shape=lambda a, s: _ranged(s[0]),
          infer_type=_requantize_type, strict=True, quantized=True, monitor_indexed_outputs=True,
          input_dtypes=float_ranges)
def requantize(a: Attrs, x: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """int32 → int8/uint8 over the calibrated range, or over the range the data reaches."""
    if x.dtype != np.int32:
        raise OperatorError(f"_contrib_requantize: data must be int32, got {x.dtype}")
    in_amax = q.abs_max(q.scalar(lo), q.scalar(hi))
    if _has_calib(a):
        real = q.abs_max(*_calib(a))
    else:
        levels = np.abs(x).max() if x.size else 0
        real = np.float32(np.float32(levels) * in_amax / q.INT32_MAX)
    dt = q.auto_dtype(a.out_type, *_calib(a))
    levels = np.float32(127 if dt == np.int8 else 255)
    scale = np.float32(in_amax / q.INT32_MAX) * np.float32(levels / real)
    out_lo = -real if dt == np.int8 else 0.0
    return q.saturate(x.astype(np.float32) * scale, dt), *q.range_out(out_lo, real)


# -- layers that keep their input's levels ------------------------------------------------------
def _pool_type(a: Attrs, d: list) -> list:
    return [np.dtype(d[0]), np.dtype(d[1]), np.dtype(d[2])]     # the range passes through


@register("_contrib_quantized_pooling", "_npx_quantized_pooling", inputs=("data", "min_data", "max_data"),
          attrs=POOL_ATTRS, num_outputs=3, output_names=_OUT3,
          infer_shape=lambda a, s: _ranged(_pool_shape(a, [s[0]])[0]), infer_type=_pool_type,
          strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_pooling(a: Attrs, x: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Max or average pooling of int8/uint8 levels; the range is unchanged (averages round to
    nearest, as oneDNN does)."""
    q.check_qdtype(x, "_contrib_quantized_pooling")
    if a.pool_type not in ("max", "avg"):
        raise OperatorError(f"_contrib_quantized_pooling: pool_type {a.pool_type!r} is not "
                            "supported for int8 (max or avg)")
    res = pooling.kernel(a, x.astype(np.float32))
    res = res[0] if isinstance(res, tuple) else res
    return q.saturate(res, x.dtype), lo, hi


@register("_contrib_quantized_act", "_npx_quantized_act", inputs=("data", "min_data", "max_data"),
          attrs={"act_type": Str(choices=("relu",))}, num_outputs=3, output_names=_OUT3,
          infer_shape=lambda a, s: _ranged(s[0]), infer_type=_pool_type, strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_act(a: Attrs, x: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """ReLU on int8/uint8 levels; the range is unchanged."""
    q.check_qdtype(x, "_contrib_quantized_act")
    return np.maximum(x, x.dtype.type(0)), lo, hi


@register("_contrib_quantized_flatten", "_npx_quantized_flatten", inputs=("data", "min_data", "max_data"),
          num_outputs=3, output_names=_OUT3,
          infer_shape=lambda a, s: _ranged((s[0][0], int(np.prod(s[0][1:])))),
          infer_type=_pool_type, strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_flatten(a: Attrs, x: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Flatten to 2-D; levels and range unchanged."""
    return x.reshape(x.shape[0], -1), lo, hi


# -- layers that combine ranges -----------------------------------------------------------------
def _concat_inputs(a: Attrs) -> list:
    n = a.num_args
    return ([f"data{i}" for i in range(n)]
            + [f"{m}_data{i}" for i in range(n) for m in ("min", "max")])


def _concat_type(a: Attrs, d: list) -> list:
    dts = [np.dtype(t) for t in d[:a.num_args]]
    return [np.dtype(np.int8) if np.int8 in dts else np.dtype(np.uint8), _F32, _F32]


@register("_contrib_quantized_concat", attrs={"num_args": Int(), "dim": Int(1)},
          inputs=_concat_inputs, num_outputs=3, output_names=_OUT3,
          infer_shape=lambda a, s: _ranged(_concat_shape(a, s[:a.num_args])[0]),
          infer_type=_concat_type, strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_concat(a: Attrs, *ins: np.ndarray):
    """Concatenate levels after rescaling every input onto the widest range (int8 if any input
    is int8); an input already at that scale is copied as is."""
    n = a.num_args
    xs, mins, maxs = ins[:n], ins[n::2], ins[n + 1::2]
    lo = min(0.0, *(q.scalar(m) for m in mins))
    hi = max(0.0, *(q.scalar(m) for m in maxs))
    dt = _concat_type(a, [x.dtype for x in xs])[0]
    out_scale = q.quant_scale(dt, lo, hi)
    parts = []
    for x, mn, mx in zip(xs, mins, maxs):
        q.check_qdtype(x, "_contrib_quantized_concat")
        s = q.quant_scale(x.dtype, q.scalar(mn), q.scalar(mx))
        parts.append(x.astype(dt) if s == out_scale else q.saturate(x * (out_scale / s), dt))
    return np.concatenate(parts, axis=a.dim), *q.range_out(lo, hi)


def _add_type(a: Attrs, d: list) -> list:
    if not _has_calib(a):
        return [np.dtype(np.int32), _F32, _F32]
    same = np.dtype(d[0]) == np.dtype(d[1])
    return [np.dtype(d[0]) if same else np.dtype(np.int8), _F32, _F32]


def _add_shape(a: Attrs, s: list) -> list:
    if tuple(s[0]) != tuple(s[1]):
        raise ShapeError(f"_contrib_quantized_elemwise_add: shapes {s[0]} and {s[1]} differ")
    return _ranged(s[0])


@register("_contrib_quantized_elemwise_add", "_npx_quantized_elemwise_add",
          inputs=("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"), attrs=CALIB_ATTRS,
          num_outputs=3, output_names=_OUT3, infer_shape=_add_shape, infer_type=_add_type,
          strict=True, quantized=True,
          input_dtypes=float_ranges)
def quantized_elemwise_add(a: Attrs, x, y, x_lo, x_hi, y_lo, y_hi):
    """Sum of two quantized tensors: onto the calibrated range (int8/uint8), else int32 levels
    over the range |x|max + |y|max."""
    ax, ay = q.abs_max(q.scalar(x_lo), q.scalar(x_hi)), q.abs_max(q.scalar(y_lo), q.scalar(y_hi))
    dt = _add_type(a, [x.dtype, y.dtype])[0]
    if _has_calib(a):
        lo, hi = _calib(a)
        out_scale = q.quant_scale(dt, lo, hi)
    else:
        hi = ax + ay
        lo = -hi
        out_scale = q.INT32_MAX / hi if hi else q.INT32_MAX
    fx = np.float32(out_scale / q.quant_scale(x.dtype, q.scalar(x_lo), q.scalar(x_hi)))
    fy = np.float32(out_scale / q.quant_scale(y.dtype, q.scalar(y_lo), q.scalar(y_hi)))
    if x.dtype != y.dtype:
        # oneDNN sums one type: MXNet first rescales the uint8 operand into int8 levels
        if x.dtype == np.uint8:
            x, fx = q.saturate(x * fx, np.int8), np.float32(1)
        else:
            y, fy = q.saturate(y * fy, np.int8), np.float32(1)
    total = x.astype(np.float32) * fx + y.astype(np.float32) * fy
    return q.saturate(total, dt), *q.range_out(lo, hi)


# -- ONNX lowerings (QDQ: ONNX Runtime fuses them into its integer kernels) ---------------------

_uncalibrated = refuse_if(its_range_is_computed_at_run_time=lambda a: not _has_calib(a))


@lowers(quantize_v2, check=refuse_if(
    its_range_is_computed_at_run_time=lambda a: not _has_calib(a),
    shifted_output=lambda a: bool(a.shifted_output)))
def _quantize_v2_onnx(ctx, node, ins):
    a = node.parsed
    lo, hi = _calib(a)
    if ctx.dtype(ins[0]) in q.QDTYPES:
        return [ctx.op("Identity", ins[:1]), *qo.range_outputs(ctx, lo, hi)]
    dt = q.auto_dtype(a.out_type, lo, hi)
    out = (-q.abs_max(lo, hi), q.abs_max(lo, hi)) if dt == np.int8 else (lo, hi)
    return [qo.quantize(ctx, ins[0], qo.level(dt, lo, hi), dt), *qo.range_outputs(ctx, *out)]


@lowers(quantize)
def _quantize_onnx(ctx, node, ins):
    lo, hi = qo.const_range(ctx, ins[1], ins[2])
    dt = np.dtype(node.parsed.out_type)
    amax = q.abs_max(lo, hi)
    step = amax / np.float32(127 if dt == np.int8 else 255)
    out = (-amax, amax) if dt == np.int8 else (lo, hi)
    return [qo.quantize(ctx, ins[0], step, dt), *qo.range_outputs(ctx, *out)]


@lowers(dequantize)
def _dequantize_onnx(ctx, node, ins):
    lo, hi = qo.const_range(ctx, ins[1], ins[2])
    dt = ctx.dtype(ins[0])
    if dt == np.int32:
        return qo.dequantize(ctx, ins[0], q.abs_max(lo, hi) / q.INT32_MAX)
    return qo.dequantize(ctx, ins[0], qo.level(dt, lo, hi))


@lowers(requantize, check=_uncalibrated)
def _requantize_onnx(ctx, node, ins):
    a = node.parsed
    lo, hi = qo.const_range(ctx, ins[1], ins[2])
    real = qo.dequantize(ctx, ins[0], q.abs_max(lo, hi) / q.INT32_MAX)
    dt = q.auto_dtype(a.out_type, *_calib(a))
    amax = q.abs_max(*_calib(a))
    out = qo.quantize(ctx, real, amax / np.float32(127 if dt == np.int8 else 255), dt)
    return [out, *qo.range_outputs(ctx, -amax if dt == np.int8 else 0.0, amax)]


def _same_levels(ctx, ins, fn):
    """An op on the real values whose result keeps the input's levels and range."""
    lo, hi = qo.const_range(ctx, ins[1], ins[2])
    step = qo.level(ctx.dtype(ins[0]), lo, hi)
    y = fn(qo.dequantize(ctx, ins[0], step))
    return [qo.quantize(ctx, y, step, ctx.dtype(ins[0])), ins[1], ins[2]]


@lowers(quantized_pooling, check=refuse_if(
    pool_type_other_than_max_or_avg=lambda a: a.pool_type not in ("max", "avg")))
def _quantized_pooling_onnx(ctx, node, ins):
    if node.parsed.pool_type == "max":        # max commutes with the levels: stays integer
        return [pooling.onnx.fn(ctx, node, ins[:1]), ins[1], ins[2]]
    return _same_levels(ctx, ins, lambda x: pooling.onnx.fn(ctx, node, [x]))


@lowers(quantized_act)
def _quantized_act_onnx(ctx, node, ins):
    return _same_levels(ctx, ins, lambda x: ctx.op("Relu", [x]))


@lowers(quantized_flatten)
def _quantized_flatten_onnx(ctx, node, ins):
    return [ctx.op("Flatten", ins[:1], axis=1), ins[1], ins[2]]


@lowers(quantized_concat)
def _quantized_concat_onnx(ctx, node, ins):
    a = node.parsed
    n = a.num_args
    ranges = [qo.const_range(ctx, ins[n + 2 * i], ins[n + 2 * i + 1]) for i in range(n)]
    lo = min(0.0, *(r[0] for r in ranges))
    hi = max(0.0, *(r[1] for r in ranges))
    dt = _concat_type(a, [ctx.dtype(x) for x in ins[:n]])[0]
    reals = [qo.dequantize(ctx, x, qo.level(ctx.dtype(x), *r)) for x, r in zip(ins[:n], ranges)]
    y = ctx.op("Concat", reals, axis=a.dim)
    ctx.bind(y, ctx.out_shape(0), np.float32, ctx.out_varying[0])
    return [qo.quantize(ctx, y, qo.level(dt, lo, hi), dt), *qo.range_outputs(ctx, lo, hi)]


@lowers(quantized_elemwise_add, check=_uncalibrated)
def _quantized_add_onnx(ctx, node, ins):
    a = node.parsed
    dts = [ctx.dtype(ins[0]), ctx.dtype(ins[1])]
    dt = _add_type(a, dts)[0]
    step = qo.level(dt, *_calib(a))
    reals = [qo.dequantize_input(ctx, ins, k, 2 + 2 * k, 3 + 2 * k) for k in (0, 1)]
    if dts[0] != dts[1]:              # MXNet rounds the uint8 operand to int8 output levels first
        k = dts.index(np.dtype(np.uint8))
        reals[k] = qo.dequantize(ctx, qo.quantize(ctx, reals[k], step, np.int8), step)
    y = ctx.op("Add", reals)
    ctx.bind(y, ctx.out_shape(0), np.float32, ctx.out_varying[0])
    return [qo.quantize(ctx, y, step, dt), *qo.range_outputs(ctx, *_calib(a))]
