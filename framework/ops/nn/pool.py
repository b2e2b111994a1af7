"""Pooling (max / avg / sum / lp; 1-D, 2-D, 3-D; global; valid / full / same conventions;
count_include_pad) and _contrib_AdaptiveAvgPooling2D.

Windows are strided views of the padded input; the reduction runs as one vectorised NumPy op per
kernel offset (a loop over the kernel, never over windows or channels). Averages divide by
MXNet's per-window counts, computed separably per axis.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ...base import OperatorError, ShapeError
from ..nnutil import OptBool, OptInt, OptShape, OptStr, channel_last, prod, spatial, \
    to_channel_first, to_channel_last
from .. import parallel
from .._kernels.nhwc_util import _row_parts, scratch, tap_range
from ..attrs import Bool, Shape, Str
from .conv import LAYOUTS, pad_spatial
from ..lowering import lowers, refuse_if
from ..lowering_layout import channel_wrapped
from ..registry import register

POOL_ATTRS = {
    "kernel": Shape(()), "pool_type": Str("max", choices=("max", "avg", "sum", "lp")),
    "global_pool": Bool(False), "cudnn_off": Bool(False),
    "pooling_convention": Str("valid", choices=("full", "valid", "same")),
    "stride": Shape(()), "pad": Shape(()), "p_value": OptInt(None),
    "count_include_pad": OptBool(None), "layout": OptStr(LAYOUTS),
    "output_size": OptShape(None),
}


def _pool_out(n, k, s, p, conv):
    if conv == "valid":
        return 1 + (n + 2 * p - k) // s
    if conv == "full":
        return 1 + int(math.ceil((n + 2 * p - k) / s))
    return int(math.ceil((n + 2 * p) / s))           # same


def pool_geometry(a, sp):
    """(kernel, stride, pad, out_sp) for spatial input size sp (non-global)."""
    nd = len(sp)
    k = tuple(a.kernel)
    if len(k) != nd:
        raise ShapeError(f"Pooling: kernel {k} needs {nd + 2}-D data")
    stride = spatial(a.stride, nd, 1, "stride")
    pad = spatial(a.pad, nd, 0, "pad")
    for i in range(nd):
        if k[i] > sp[i] + 2 * pad[i]:
            raise ShapeError(f"Pooling: kernel size ({k[i]}) exceeds input ({sp[i]} padded to "
                             f"{sp[i] + 2 * pad[i]})")
    out = tuple(_pool_out(sp[i], k[i], stride[i], pad[i], a.pooling_convention)
                for i in range(nd))
    return k, stride, pad, out


def _n_out(a):
    # MXNet's oneDNN build gives max pooling a hidden "workspace" output
    return 2 if (a.pool_type == "max" and 1 <= len(a.kernel or ()) <= 3
                 and not channel_last(a.layout)) else 1


def _pool_shape(a, s):
    x = tuple(s[0])
    if not 3 <= len(x) <= 5:
        raise ShapeError(f"Pooling: input data should be 3-D, 4-D or 5-D, got {x}")
    last = channel_last(a.layout)
    sp = x[1:-1] if last else x[2:]
    if a.global_pool:
        osp = (1,) * len(sp)
    else:
        osp = pool_geometry(a, sp)[3]
    o = (x[0],) + osp + (x[-1],) if last else x[:2] + osp
    return [o] * _n_out(a)


def _window_counts(n, k, s, p, o, include_pad):
    """Per-axis divisor of MXNet's avg pooling for each output position."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, n + p)
    if include_pad:
        return np.maximum(end - start, 0).astype(np.float64)
    return np.maximum(np.minimum(end, n) - np.maximum(start, 0), 0).astype(np.float64)


def _lp_pow(x, p):
    return x if p == 1 else (x * x if p == 2 else (x * x * x if p == 3 else np.power(x, p)))


def _lp_root(x, p):
    if p == 1:
        return x
    if p == 2:
        return np.sqrt(x)
    if p == 3:
        return np.cbrt(x)
    return np.power(x, 1.0 / p)


def pool_nc(a, x):
    """Pooling on channel-first data x (N, C, *sp)."""
    sp = x.shape[2:]
    nd = len(sp)
    t = a.pool_type
    if t == "lp" and a.p_value is None:
        raise OperatorError("Pooling: p_value is required for lp pooling")
    if a.global_pool:
        axes = tuple(range(2, 2 + nd))
        if t == "max":
            return np.max(x, axis=axes, keepdims=True)
        if t == "avg":
            return np.mean(x, axis=axes, keepdims=True, dtype=_acc(x)).astype(x.dtype)
        if t == "sum":
            return np.sum(x, axis=axes, keepdims=True, dtype=_acc(x)).astype(x.dtype)
        return _lp_root(np.sum(_lp_pow(x, a.p_value), axis=axes, keepdims=True),
                        a.p_value).astype(x.dtype, copy=False)
    k, stride, pad, osp = pool_geometry(a, sp)
    if a.pooling_convention == "same":
        lo = tuple(max((osp[i] - 1) * stride[i] + k[i] - sp[i], 0) // 2 for i in range(nd))
    else:
        lo = pad
    # right padding so every window lies inside the buffer
    hi = tuple(max((osp[i] - 1) * stride[i] + k[i] - sp[i] - lo[i], 0) for i in range(nd))
    if t == "max":
        # MXNet's max starts from the lowest finite value: a window with no input element
        # (possible with the 'full' convention) gives that value, not -inf
        fill = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = pad_spatial(x, lo, hi, fill)
    else:
        src = _lp_pow(x, a.p_value) if t == "lp" else x
        xp = pad_spatial(src, lo, hi, 0)
    res = None
    for idx in np.ndindex(*k):
        sl = (slice(None), slice(None)) + tuple(
            slice(idx[i], idx[i] + stride[i] * (osp[i] - 1) + 1, stride[i]) for i in range(nd))
        v = xp[sl]
        if res is None:
            res = v.copy()
        elif t == "max":
            np.maximum(res, v, out=res)
        else:
            res += v
    if t == "avg":
        inc = True if a.count_include_pad is None else a.count_include_pad
        div = None
        for i in range(nd):
            c = _window_counts(sp[i], k[i], stride[i], lo[i], osp[i], inc)
            c = c.reshape((-1,) + (1,) * (nd - 1 - i))
            div = c if div is None else div * c
        # windows lying entirely in the padding have no elements: MXNet gives 0 there
        res /= np.where(div > 0, div, 1).astype(res.dtype)
    elif t == "lp":
        res = _lp_root(res, a.p_value).astype(x.dtype, copy=False)
    return res


def _acc(x):
    return np.float32 if x.dtype == np.float16 else None


def _pool_flops(a, ins, outs):
    x = ins[0]
    if a.global_pool:
        return prod(x)
    return prod(outs[0]) * prod(a.kernel)


def pool_nhwc(a, x, out=None):
    """Max / avg / sum pooling of channels-last 2-D data (N, H, W, C) without a padded copy.
    The window reduction is separable: first along W into a per-thread scratch (one sample's
    needed rows at a time, so it stays in cache), then along H into the output; per pass one
    np.maximum / np.add per kernel offset over that offset's valid range (strided views whose
    inner axis is the contiguous channel vector) — kh + kw passes instead of kh·kw."""
    N, H, W, C = x.shape
    t = a.pool_type
    dt = x.dtype
    if a.global_pool:
        if t == "max":
            return np.max(x, axis=(1, 2), keepdims=True, out=out)
        r = np.sum(x, axis=(1, 2), keepdims=True, dtype=_acc(x), out=out if _acc(x) is None
                   else None)
        if t == "avg":
            r /= r.dtype.type(H * W)
        return r.astype(dt, copy=False)
    k, stride, pad, osp = pool_geometry(a, (H, W))
    lo = tuple(max((osp[i] - 1) * stride[i] + k[i] - (H, W)[i], 0) // 2 for i in range(2)) \
        if a.pooling_convention == "same" else pad
    oshape = (N,) + osp + (C,)
    if out is None or out.shape != oshape or out.dtype != dt:
        out = np.empty(oshape, dt)
    op = np.maximum if t == "max" else np.add
    fill = np.finfo(dt).min if t == "max" else 0
    prts = _row_parts(N, osp[0], out.size * len(k))

    def run(i):
        n0, n1, r0, r1 = prts[i]
        # input rows the output rows [r0, r1) read, and the row offset of the first one
        a0 = max(0, r0 * stride[0] - lo[0])
        b0 = min(H, (r1 - 1) * stride[0] - lo[0] + k[0])
        tmp = scratch(("pool_w",), (max(b0 - a0, 0), osp[1], C), dt)
        for n in range(n0, n1):
            _pool_axis(x[n, a0:b0], tmp, 1, k[1], stride[1], lo[1], op, fill)
            _pool_axis(tmp, out[n, r0:r1], 0, k[0], stride[0], a0 + lo[0] - r0 * stride[0],
                       op, fill)
    parallel.run(run, len(prts))
    if t == "avg":
        inc = True if a.count_include_pad is None else a.count_include_pad
        ch = _window_counts(H, k[0], stride[0], lo[0], osp[0], inc)
        cw = _window_counts(W, k[1], stride[1], lo[1], osp[1], inc)
        div = ch[:, None] * cw[None, :]
        div = np.where(div > 0, div, 1).astype(dt)
        if np.all(div == div.flat[0]):
            out /= div.flat[0]
        else:
            out /= div[None, :, :, None]
    return out


def _pool_axis(src, dst, axis, k, s, lo, op, fill):
    """dst[..., o, ...] = op over j < k of src[..., o·s + j − lo, ...] along `axis`, over the
    valid positions only; outputs no offset reaches keep `fill`."""
    lead = (slice(None),) * axis
    taps, full = _axis_taps(src.shape[axis], dst.shape[axis], k, s, lo)
    if full is not None:
        np.copyto(dst, src[lead + (full[2],)])
    else:
        dst.fill(fill)
    for tp in taps:
        if tp is not full:
            d = dst[lead + (slice(tp[0], tp[1]),)]
            op(d, src[lead + (tp[2],)], out=d)


@lru_cache(maxsize=1024)
def _axis_taps(n_in, n_out, k, s, lo):
    """The kernel offsets of one pooling axis that reach any output: (output start, output end,
    input slice) each, and the one that covers every output (or None) — once per geometry."""
    taps = []
    for j in range(k):
        o0, o1, i0 = tap_range(n_in, n_out, j, s, lo)
        if o1 > o0:
            taps.append((o0, o1, slice(i0, i0 + (o1 - o0 - 1) * s + 1, s)))
    return tuple(taps), next((tp for tp in taps if tp[0] == 0 and tp[1] == n_out), None)


def _nhwc_fast(a, x):
    return (channel_last(a.layout) and x.ndim == 4 and a.pool_type in ("max", "avg", "sum")
            and x.dtype.kind == "f")


@register("Pooling", "_npx_pooling", attrs=POOL_ATTRS, num_outputs=_n_out,
          num_visible=1, output_names=("output", "workspace"), infer_shape=_pool_shape,
          strict=True, out=True, flops=_pool_flops, layer="pool",
          quantized_as=lambda a: ("_contrib_quantized_pooling" if a.pool_type in ("max", "avg")
                               else None))
def pooling(a, x, out=None):
    """Pooling; max pooling also returns its (hidden) workspace output, as MXNet's CPU build."""
    if not 3 <= x.ndim <= 5:
        raise ShapeError(f"Pooling: input data should be 3-D, 4-D or 5-D, got {x.shape}")
    if _nhwc_fast(a, x):
        return pool_nhwc(a, x, out)
    if channel_last(a.layout):
        res = np.ascontiguousarray(to_channel_last(pool_nc(a, to_channel_first(x))))
    else:
        res = pool_nc(a, x)
    if out is not None and out.shape == res.shape and out.dtype == res.dtype:
        np.copyto(out, res)
        res = out
    return (res, res) if _n_out(a) == 2 else res


# -- adaptive average pooling -------------------------------------------------------------------
def _adaptive_size(a, x):
    os_ = a.output_size
    if os_ is None or len(os_) == 0:
        return 1, 1
    if len(os_) == 1:
        return os_[0], os_[0]
    return os_[0], os_[1]


def _avg_matrix(n, o, dtype):
    """(o, n) matrix averaging MXNet's adaptive windows [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    j = np.arange(n)
    m = (j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])
    return (m / (end - start)[:, None]).astype(dtype)


def _adaptive_shape(a, s):
    x = tuple(s[0])
    oh, ow = _adaptive_size(a, None)
    return [x[:2] + (oh, ow)]


@register("_contrib_AdaptiveAvgPooling2D",
          attrs={"output_size": OptShape(())}, infer_shape=_adaptive_shape, float_only=True,
          flops=lambda a, i, o: prod(i[0]) + prod(o[0]))   # every input summed once, then /n
def adaptive_avg_pooling2d(a, x):
    """Average over MXNet's adaptive windows: out = A_h · x · A_wᵀ (separable)."""
    if x.ndim != 4:
        raise ShapeError(f"AdaptiveAvgPooling2D: input must be 4-D, got {x.shape}")
    oh, ow = _adaptive_size(a, x)
    H, W = x.shape[2:]
    dt = x.dtype if x.dtype.kind == "f" else np.float32
    ah = _avg_matrix(H, oh, dt)
    aw = _avg_matrix(W, ow, dt)
    t = np.matmul(x.astype(dt, copy=False), aw.T)       # (N, C, H, ow)
    return np.matmul(ah, t)                             # (N, C, oh, ow)


# -- ONNX lowering ------------------------------------------------------------------------------


def _global_pool_onnx(ctx, a, x, nd):
    t = a.pool_type
    if t == "max":
        return ctx.op("GlobalMaxPool", [x])
    if t == "avg":
        return ctx.op("GlobalAveragePool", [x])
    if t == "sum" or a.p_value == 1:
        return ctx.op("ReduceSum", [x, ctx.ints(range(2, 2 + nd))], keepdims=1)
    return ctx.op("GlobalLpPool", [x], p=2)


def _window_pool_onnx(ctx, a, x, sp):
    """Explicit pads (lo, hi) make every MXNet convention a floor-mode ONNX pool of the same
    output size; averages whose MXNet divisor differs from ONNX's get it as a constant."""
    nd = len(sp)
    k, stride, pad, osp = pool_geometry(a, sp)
    lo = tuple(max((osp[i] - 1) * stride[i] + k[i] - sp[i], 0) // 2 for i in range(nd)) \
        if a.pooling_convention == "same" else pad
    hi = tuple(max((osp[i] - 1) * stride[i] + k[i] - sp[i] - lo[i], 0) for i in range(nd))
    geo = dict(kernel_shape=list(k), strides=list(stride), pads=list(lo) + list(hi))
    t = a.pool_type
    if t == "max":
        return ctx.op("MaxPool", [x], **geo)
    if t == "lp" and a.p_value == 2:
        return ctx.op("LpPool", [x], p=2, **geo)
    inc = t != "avg" or a.count_include_pad is None or a.count_include_pad
    if not inc:
        return ctx.op("AveragePool", [x], count_include_pad=0, **geo)
    kk = prod(k)
    div = np.ones(osp)
    for i in range(nd):
        c = _window_counts(sp[i], k[i], stride[i], lo[i], osp[i], True)
        div = div * c.reshape((-1,) + (1,) * (nd - 1 - i))
    y = ctx.op("AveragePool", [x], count_include_pad=1, **geo)
    if t == "avg" and np.all(div == kk):
        return y
    y = ctx.op("Mul", [y, ctx.scalar(kk, x)])          # the window sums
    if t == "avg":
        y = ctx.op("Div", [y, ctx.const(np.where(div > 0, div, 1).astype(ctx.dtype(x)))])
    return y


@lowers(pooling, check=refuse_if(
    lp_pooling_with_p_value_other_than_1_or_2=lambda a: a.pool_type == "lp"
    and a.p_value not in (1, 2)))
def _pool_onnx(ctx, node, ins):
    a = node.parsed
    last = channel_last(a.layout)
    shape = ctx.shape(ins[0])
    sp = shape[1:-1] if last else shape[2:]

    def run(x):
        if a.global_pool:
            return _global_pool_onnx(ctx, a, x, len(sp))
        return _window_pool_onnx(ctx, a, x, sp)
    return channel_wrapped(ctx, ins[0], last, run)


@lowers(adaptive_avg_pooling2d)
def _adaptive_avg_pool_onnx(ctx, node, ins):
    """out = A_h · x · A_wᵀ with MXNet's adaptive windows as constant averaging matrices."""
    x = ins[0]
    oh, ow = _adaptive_size(node.parsed, None)
    H, W = ctx.shape(x)[2:]
    dt = ctx.dtype(x)
    t = ctx.op("MatMul", [x, ctx.const(_avg_matrix(W, ow, dt).T.copy())])
    return ctx.op("MatMul", [ctx.const(_avg_matrix(H, oh, dt)), t])
