"""Convolution (1-D/2-D/3-D, groups, dilation, NC*/N*C layouts).

Strategy: a strided view of the (padded) input gives every window without copying; one copy turns
it into the im2col matrix and ONE batched matmul does the work. 1x1 convolutions go straight to a
matmul; depthwise / channel-multiplier convolutions loop over the kernel positions (never over
channels or windows) with vectorised multiply-adds.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...base import ShapeError
from .. import parallel
from ..nnutil import (OptStr, channel_last, check_param_shapes, prod, spatial, to_channel_first,
                      to_channel_last)
from ..attrs import Bool, Int, Shape
from ..lowering import lowers
from ..lowering_layout import channel_first_weight, channel_wrapped
from ..compiled.nhwc import part_taps, scratch
from ..registry import register

LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")

CONV_ATTRS = {
    "kernel": Shape(), "stride": Shape(()), "dilate": Shape(()), "pad": Shape(()),
    "num_filter": Int(), "num_group": Int(1), "workspace": Int(1024), "no_bias": Bool(False),
    "cudnn_tune": OptStr(("off", "limited_workspace", "fastest")), "cudnn_off": Bool(False),
    "layout": OptStr(LAYOUTS),
}


def conv_params(a, nd: int):
    """(stride, pad, dilate) expanded to `nd` spatial dims (MXNet's parser defaults)."""
    return (spatial(a.stride, nd, 1, "stride"), spatial(a.pad, nd, 0, "pad"),
            spatial(a.dilate, nd, 1, "dilate"))


def pad_spatial(x: np.ndarray, lo, hi=None, value=0) -> np.ndarray:
    """Pad the trailing len(lo) axes of x (lo before, hi after) with a constant, or return x."""
    hi = lo if hi is None else hi
    if not any(lo) and not any(hi):
        return x
    nd = len(lo)
    lead = x.shape[: x.ndim - nd]
    shape = lead + tuple(s + l + h for s, l, h in zip(x.shape[x.ndim - nd:], lo, hi))
    out = np.full(shape, value, dtype=x.dtype) if value != 0 else np.zeros(shape, x.dtype)
    sl = (Ellipsis,) + tuple(slice(l, l + s) for l, s in zip(lo, x.shape[x.ndim - nd:]))
    out[sl] = x
    return out


def window_view(xp: np.ndarray, kernel, stride, dilate, out_sp) -> np.ndarray:
    """View (N, C, *kernel, *out) of the padded input xp (N, C, *spatial): no copy."""
    nd = len(kernel)
    st = xp.strides
    shape = xp.shape[:2] + tuple(kernel) + tuple(out_sp)
    strides = st[:2] + tuple(st[2 + i] * dilate[i] for i in range(nd)) + \
        tuple(st[2 + i] * stride[i] for i in range(nd))
    return as_strided(xp, shape=shape, strides=strides, writeable=False)


def out_size(n, k, s, p, d):
    return (n + 2 * p - (d * (k - 1) + 1)) // s + 1


_COLS_BYTES = 16 << 20          # im2col working set per chunk of samples


def conv_nc(x, w, b, stride, pad, dilate, groups: int, out=None):
    """Convolution on channel-first data: x (N, C, *sp), w (F, C/g, *k), b (F,) or None."""
    N, C = x.shape[:2]
    sp = x.shape[2:]
    nd = len(sp)
    F, Cg = w.shape[:2]
    k = w.shape[2:]
    if len(k) != nd:
        raise ShapeError(f"Convolution: weight {w.shape} does not fit data {x.shape}")
    if C != Cg * groups or F % groups:
        raise ShapeError(f"Convolution: data has {C} channels, weight {tuple(w.shape)} with "
                         f"num_group={groups} expects {Cg * groups}")
    osp = tuple(out_size(sp[i], k[i], stride[i], pad[i], dilate[i]) for i in range(nd))
    if any(o <= 0 for o in osp):
        raise ShapeError(f"Convolution: kernel {tuple(k)} (dilate {dilate}) does not fit input "
                         f"{tuple(sp)} padded by {pad}")
    P = prod(osp)
    dt = np.result_type(x.dtype, w.dtype)
    if out is not None and (out.shape != (N, F) + osp or out.dtype != dt
                            or not out.flags.c_contiguous):
        out = None
    if groups == 1 and all(v == 1 for v in k) and not any(pad):
        # 1x1: a plain matmul over the (strided) input
        xs = x[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)] \
            if any(s != 1 for s in stride) else x
        cols = xs.reshape(N, C, P)
        res = np.matmul(w.reshape(F, C), cols,
                        out=None if out is None else out.reshape(N, F, P))
    elif Cg == 1 and groups > 1:
        res = _depthwise(x, w, stride, pad, dilate, groups, osp, out)
    elif nd == 2 and groups == 1 and x.dtype == w.dtype:
        res = out if out is not None else np.empty((N, F) + osp, dt)
        _conv2d_nchw(x, w, b, tuple(k), tuple(stride), tuple(pad), tuple(dilate), osp, res)
        return res
    else:
        xp = pad_spatial(x, pad)
        V = window_view(xp, k, stride, dilate, osp)             # (N, C, *k, *out)
        K = prod(k)
        res = out.reshape(N, F, P) if out is not None else np.empty((N, F, P), dt)
        wm = w.reshape(F, C * K) if groups == 1 else w.reshape(groups, F // groups, Cg * K)
        # im2col in batch chunks: bounded memory, the columns stay cache-warm for the matmul
        step = max(1, _COLS_BYTES // max(1, C * K * P * x.itemsize))
        for n0 in range(0, N, step):
            n1 = min(N, n0 + step)
            if groups == 1:
                cols = V[n0:n1].reshape(n1 - n0, C * K, P)      # the one im2col copy
                np.matmul(wm, cols, out=res[n0:n1])
            else:
                cols = V[n0:n1].reshape(n1 - n0, groups, Cg * K, P)
                np.matmul(wm, cols, out=res[n0:n1].reshape(n1 - n0, groups, F // groups, P))
    res = res.reshape((N, F) + osp)
    if b is not None:
        res += b.reshape((1, F) + (1,) * nd).astype(res.dtype, copy=False)
    return out if out is not None else res


def _conv2d_nchw(x, w, b, k, stride, pad, dilate, osp, out):
    """2-D, ungrouped, channel-first: im2col in (C, kh, kw, OH, OW) order into a per-thread
    zero-bordered scratch (no padded copy of the input: each tap copies its valid range only),
    then out[n] (F, P) = W (F, K) · cols (K, P), split over blocks of filters on the intra-op
    threads, bias added per block while it is cache-warm."""
    N, C, H, W = x.shape
    F = w.shape[0]
    P = osp[0] * osp[1]
    K = C * k[0] * k[1]
    wm = w.reshape(F, K)
    tp = part_taps((H, W), osp, k, stride, pad, dilate, 0, osp[0])
    cols = scratch(("colsT", C, H, W, k, stride, pad, dilate), (C, k[0], k[1]) + osp, x.dtype,
                   zero=True)
    c2 = cols.reshape(K, P)
    o3 = out.reshape(N, F, P)
    blocks = parallel.split(F, parallel.parts(F, 32) if P * F * K > (1 << 21) else 1)
    for n in range(N):
        xn = x[n]
        for i, j, osl, isl in tp:
            cols[(slice(None), i, j) + osl] = xn[(slice(None),) + isl]

        def run(q, n=n):
            f0, f1 = blocks[q]
            ov = o3[n, f0:f1]
            np.matmul(wm[f0:f1], c2, out=ov)
            if b is not None:
                ov += b[f0:f1, None].astype(ov.dtype, copy=False)
        parallel.run(run, len(blocks))


def _depthwise(x, w, stride, pad, dilate, groups, osp, out):
    """Cg == 1 (depthwise, channel multiplier m = F / C): multiply-add per kernel position."""
    N, C = x.shape[:2]
    F = w.shape[0]
    m = F // groups
    k = w.shape[2:]
    nd = len(k)
    xp = pad_spatial(x, pad)
    V = window_view(xp, k, stride, dilate, osp)                 # (N, C, *k, *out)
    wk = w.reshape(C, m, prod(k))                               # per channel, per multiplier
    dt = np.result_type(x.dtype, w.dtype)
    res = np.zeros((N, C, m) + osp, dtype=dt) if out is None else out.reshape((N, C, m) + osp)
    if out is not None:
        res[...] = 0
    bshape = (1, C, m) + (1,) * nd
    tmp = np.empty((N, C, m) + osp, dtype=dt)
    for j, idx in enumerate(np.ndindex(*k)):
        xs = V[(slice(None), slice(None)) + idx]                # (N, C, *out) strided view
        np.multiply(xs[:, :, None], wk[:, :, j].reshape(bshape), out=tmp)
        res += tmp
    return res.reshape((N, F) + osp)


# -- op definition ----------------------------------------------------------------------------
def _nd(a):
    return len(a.kernel)


def _conv_inputs(a):
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def _conv_shape(a, s):
    if len(s) > 1:
        check_param_shapes("Convolution", s, _conv_param_shapes(a, s))
    x = tuple(s[0])
    nd = _nd(a)
    if len(x) != nd + 2:
        raise ShapeError(f"Convolution: kernel {a.kernel} needs {nd + 2}-D data, got {x}")
    stride, pad, dilate = conv_params(a, nd)
    last = channel_last(a.layout)
    sp = x[1:-1] if last else x[2:]
    osp = tuple(out_size(sp[i], a.kernel[i], stride[i], pad[i], dilate[i]) for i in range(nd))
    return [(x[0],) + osp + (a.num_filter,) if last else (x[0], a.num_filter) + osp]


def _conv_param_shapes(a, s):
    x = tuple(s[0])
    C = x[-1] if channel_last(a.layout) else x[1]
    k = tuple(a.kernel)
    w = (a.num_filter,) + k + (C // a.num_group,) if channel_last(a.layout) \
        else (a.num_filter, C // a.num_group) + k
    out = [x, w]
    if not a.no_bias:
        out.append((a.num_filter,))
    return out


def _conv_flops(a, ins, outs):
    x = ins[0]
    C = x[-1] if channel_last(a.layout) else x[1]
    return 2 * prod(outs[0]) * (C // a.num_group) * prod(a.kernel)


@register("Convolution", "_npx_convolution", attrs=CONV_ATTRS,
          inputs=_conv_inputs, infer_shape=_conv_shape, infer_param_shapes=_conv_param_shapes,
          strict=True, out=True, flops=_conv_flops, dtype_pair=("data", "weight"), layer="conv",
          data_shape=lambda a, w: ((-1, w[1] * a.num_group) + (-1,) * (len(w) - 2), 0)
          if len(w) >= 3 and a.layout in (None, "NCW", "NCHW", "NCDHW") else None)
def convolution(a, x, w, b=None, out=None):
    """N-D convolution (cross-correlation) with stride, pad, dilate, groups and bias."""
    nd = _nd(a)
    if x.ndim != nd + 2:
        raise ShapeError(f"Convolution: kernel {a.kernel} needs {nd + 2}-D data, got {x.shape}")
    stride, pad, dilate = conv_params(a, nd)
    if channel_last(a.layout):
        res = conv_nc(to_channel_first(x), to_channel_first(w), b, stride, pad, dilate,
                      a.num_group)
        res = to_channel_last(res)
        if out is not None:
            out[...] = res
            return out
        return np.ascontiguousarray(res)
    if tuple(w.shape[2:]) != tuple(a.kernel):
        raise ShapeError(f"Convolution: weight shape {tuple(w.shape)} does not match kernel "
                         f"{tuple(a.kernel)}")
    return conv_nc(x, w, b, stride, pad, dilate, a.num_group, out=out)


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(convolution)
def _conv_onnx(ctx, node, ins):
    a = node.parsed
    nd = _nd(a)
    stride, pad, dilate = conv_params(a, nd)
    last = channel_last(a.layout)
    w = channel_first_weight(ctx, ins[1], nd + 2) if last else ins[1]
    return channel_wrapped(ctx, ins[0], last, lambda x: ctx.op(
        "Conv", [x, w] + ins[2:], kernel_shape=list(a.kernel), strides=list(stride),
        pads=list(pad) * 2, dilations=list(dilate), group=a.num_group))
