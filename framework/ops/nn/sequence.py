"""Sequence ops (SequenceMask / SequenceLast / SequenceReverse) and small 1.x math helpers
(smooth_l1, _contrib_div_sqrt_dim)."""
from __future__ import annotations

import numpy as np

from ..attrs import Bool, Float, Int
from ..lowering import lowers
from ..registry import expose, register
from ..common import ScalarAttr, same_shape, truncate_to


def _seq_inputs(a):
    return ("data", "sequence_length") if a.use_sequence_length else ("data",)


def _lengths(a, lens, T, N):
    if not a.use_sequence_length or lens is None:
        return np.full((N,), T, dtype=np.int64)
    return np.clip(lens.astype(np.int64).reshape(-1), 0, T)


def _tn(x, axis):
    """Time and batch sizes for time axis `axis` (0: TNC, 1: NTC)."""
    return (x.shape[0], x.shape[1]) if axis == 0 else (x.shape[1], x.shape[0])


@register("SequenceMask", "_npx_sequence_mask",
          attrs={"use_sequence_length": Bool(False), "value": Float(0.0), "axis": Int(0)},
          inputs=_seq_inputs, infer_shape=same_shape, strict=True)
def sequence_mask(a, x, lens=None):
    """Set steps t >= length[n] to `value` (time axis 0, or 1 for batch-major data)."""
    if not a.use_sequence_length:
        return x.copy()
    T, N = _tn(x, a.axis)
    L = _lengths(a, lens, T, N)
    t = np.arange(T)
    keep = t[:, None] < L[None, :] if a.axis == 0 else t[None, :] < L[:, None]
    keep = keep.reshape(keep.shape + (1,) * (x.ndim - 2))
    return np.where(keep, x, x.dtype.type(a.value))


def _last_shape(a, s):
    s = tuple(s[0])
    return [s[:a.axis] + s[a.axis + 1:]]


@register("SequenceLast", "_npx_sequence_last",
          attrs={"use_sequence_length": Bool(False), "axis": Int(0)},
          inputs=_seq_inputs, infer_shape=_last_shape, strict=True)
def sequence_last(a, x, lens=None):
    """The last valid step of every sequence."""
    T, N = _tn(x, a.axis)
    L = _lengths(a, lens, T, N)
    idx = np.maximum(L - 1, 0)
    n = np.arange(N)
    return x[idx, n] if a.axis == 0 else x[n, idx]


@register("SequenceReverse", "_npx_sequence_reverse",
          attrs={"use_sequence_length": Bool(False), "axis": Int(0)},
          inputs=_seq_inputs, infer_shape=same_shape, strict=True)
def sequence_reverse(a, x, lens=None):
    """Reverse the first length[n] steps of every sequence (time axis 0)."""
    T, N = x.shape[0], x.shape[1]
    L = _lengths(a, lens, T, N)
    t = np.arange(T)[:, None]
    src = np.where(t < L[None, :], L[None, :] - 1 - t, t)
    return x[src, np.arange(N)[None, :]]


@register("smooth_l1", attrs={"scalar": ScalarAttr(1.0)}, infer_shape=same_shape, strict=True)
def smooth_l1(a, x):
    """0.5·(σx)² where |x| < 1/σ², else |x| − 0.5/σ²  (σ = scalar)."""
    # MXNet computes in float and stores into x's dtype: integers get the truncated value
    xf = x if x.dtype.kind == "f" else x.astype(np.float32)
    s2 = xf.dtype.type(a.scalar * a.scalar)
    ax = np.abs(xf)
    y = np.where(ax < 1.0 / s2, xf.dtype.type(0.5) * s2 * xf * xf, ax - xf.dtype.type(0.5) / s2)
    return truncate_to(x.dtype, y)


@register("_contrib_div_sqrt_dim", "_npx_div_sqrt_dim", infer_shape=same_shape)
def div_sqrt_dim(a, x):
    """x / sqrt(x.shape[-1]); on integers both are truncated, as MXNet's `DType(sqrt(d))`."""
    return truncate_to(x.dtype, x / x.dtype.type(np.sqrt(x.shape[-1])))


# -- ONNX lowering ------------------------------------------------------------------------------


def _lengths_onnx(ctx, x, lens, axis):
    """int64 lengths (N,), clipped into [0, T] as the kernel."""
    T = ctx.shape(x)[axis]
    i = ctx.op("Cast", [ctx.op("Reshape", [lens, ctx.ints([-1])])], to=ctx.tensor_type(np.int64))
    return ctx.op("Clip", [i, ctx.const(np.asarray(0, np.int64)),
                           ctx.const(np.asarray(T, np.int64))])


@lowers(sequence_mask)
def _sequence_mask_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    if not a.use_sequence_length:
        return ctx.op("Identity", [x])
    T, r = ctx.shape(x)[a.axis], ctx.rank(x)
    L = _lengths_onnx(ctx, x, ins[1], a.axis)
    t = ctx.const(np.arange(T, dtype=np.int64).reshape((T, 1) if a.axis == 0 else (1, T)))
    Lb = ctx.op("Unsqueeze", [L, ctx.ints([0 if a.axis == 0 else 1])])
    keep = ctx.op("Less", [t, Lb])                                  # (T, N) or (N, T)
    keep = ctx.op("Unsqueeze", [keep, ctx.ints(range(2, r))]) if r > 2 else keep
    return ctx.op("Where", [keep, x, ctx.const(np.asarray(a.value, ctx.dtype(x)))])


@lowers(sequence_last)
def _sequence_last_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    T = ctx.shape(x)[a.axis]
    if a.use_sequence_length:
        L = _lengths_onnx(ctx, x, ins[1], a.axis)
        idx = ctx.op("Max", [ctx.op("Sub", [L, ctx.const(np.asarray(1, np.int64))]),
                             ctx.const(np.asarray(0, np.int64))])
    else:
        return ctx.op("Gather", [x, ctx.const(np.asarray(T - 1, np.int64))], axis=a.axis)
    # x[idx[n], n]: batch axis first, then one gathered step per row
    xn = x if a.axis == 1 else ctx.op("Transpose", [x], perm=[1, 0] + list(range(2, ctx.rank(x))))
    pick = ctx.op("Unsqueeze", [idx, ctx.ints([1])])
    return ctx.op("GatherND", [xn, pick], batch_dims=1)


@lowers(sequence_reverse)
def _sequence_reverse_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    if not a.use_sequence_length:
        T = ctx.shape(x)[0]
        return ctx.op("Slice", [x, ctx.ints([-1]), ctx.ints([-T - 1]), ctx.ints([0]),
                                ctx.ints([-1])])
    L = _lengths_onnx(ctx, x, ins[1], 0)
    return ctx.op("ReverseSequence", [x, L], batch_axis=1, time_axis=0)


@lowers(smooth_l1)
def _smooth_l1_onnx(ctx, node, ins):
    x = ins[0]
    s2 = float(node.parsed.scalar) ** 2
    ax = ctx.op("Abs", [x])
    quad = ctx.op("Mul", [ctx.op("Mul", [x, x]), ctx.scalar(0.5 * s2, x)])
    lin = ctx.op("Sub", [ax, ctx.scalar(0.5 / s2, x)])
    return ctx.op("Where", [ctx.op("Less", [ax, ctx.scalar(1.0 / s2, x)]), quad, lin])


@lowers(div_sqrt_dim)
def _div_sqrt_dim_onnx(ctx, node, ins):
    return ctx.op("Div", [ins[0], ctx.scalar(np.sqrt(ctx.shape(ins[0])[-1]), ins[0])])


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
expose("smooth_l1", "npx.smooth_l1(data, scalar=1.0)")
