"""Deconvolution (transposed convolution), 1-D/2-D/3-D, groups, dilation, adj, target_shape.

One batched matmul gives the columns (weightᵀ · input) for every kernel position; col2im is a
strided add per kernel position (a loop over the kernel, never over channels or pixels).
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..nnutil import (OptShape, OptStr, channel_last, check_param_shapes, prod, spatial,
                      to_channel_first, to_channel_last)
from ..attrs import Bool, Int, Shape
from .conv import LAYOUTS
from ..lowering import lowers
from ..lowering_layout import channel_first_weight, channel_wrapped
from ..registry import register

DECONV_ATTRS = {
    "kernel": Shape(), "stride": Shape(()), "dilate": Shape(()), "pad": Shape(()),
    "adj": Shape(()), "target_shape": OptShape(None), "num_filter": Int(), "num_group": Int(1),
    "workspace": Int(1024), "no_bias": Bool(True),
    "cudnn_tune": OptStr(("off", "limited_workspace", "fastest")), "cudnn_off": Bool(False),
    "layout": OptStr(LAYOUTS),
}


def deconv_geometry(a, in_sp):
    """(stride, dilate, pad, adj, out_sp) for the spatial input size `in_sp` (MXNet's InferPad)."""
    nd = len(a.kernel)
    k = tuple(a.kernel)
    stride = spatial(a.stride, nd, 1, "stride")
    dilate = spatial(a.dilate, nd, 1, "dilate")
    ts = a.target_shape
    if ts is not None and len(ts) and any(t for t in ts):
        pad, adj = [], []
        for i in range(nd):
            total = stride[i] * (in_sp[i] - 1) + dilate[i] * (k[i] - 1) + 1
            if total < ts[i]:
                raise ShapeError("Deconvolution: too big target shape")
            total -= ts[i]
            adj.append(total % 2)
            pad.append((total + 1) // 2)
    else:
        pad = list(spatial(a.pad, nd, 0, "pad"))
        adj = list(spatial(a.adj, nd, 0, "adj"))
    out_sp = tuple(stride[i] * (in_sp[i] - 1) + dilate[i] * (k[i] - 1) + 1 - 2 * pad[i] + adj[i]
                   for i in range(nd))
    return stride, dilate, tuple(pad), tuple(adj), out_sp


def deconv_nc(x, w, b, kernel, stride, dilate, pad, out_sp, groups: int):
    """x (N, C, *in), w (C, F/g, *k) → (N, F, *out_sp)."""
    N, C = x.shape[:2]
    in_sp = x.shape[2:]
    nd = len(in_sp)
    Cw, Fg = w.shape[:2]
    k = tuple(w.shape[2:])
    if Cw != C or C % groups or k != tuple(kernel):
        raise ShapeError(f"Deconvolution: weight shape {tuple(w.shape)} does not fit data "
                         f"{tuple(x.shape)} (num_group={groups}, kernel={tuple(kernel)})")
    Cg = C // groups
    F = Fg * groups
    K = prod(k)
    Pin = prod(in_sp)
    # columns: (N, g, Fg*K, Pin) = W_gᵀ (Fg*K, Cg) @ x_g (Cg, Pin)
    wt = w.reshape(groups, Cg, Fg * K).transpose(0, 2, 1)
    cols = np.matmul(wt, x.reshape(N, groups, Cg, Pin))
    cols = cols.reshape((N, F) + k + tuple(in_sp))
    # full (uncropped) output, big enough for the pad + adj crop window
    span = tuple(stride[i] * (in_sp[i] - 1) + dilate[i] * (k[i] - 1) + 1 for i in range(nd))
    full = tuple(max(span[i], pad[i] + out_sp[i]) for i in range(nd))
    dt = cols.dtype
    res = np.zeros((N, F) + full, dtype=dt)
    for idx in np.ndindex(*k):
        sl = tuple(slice(idx[i] * dilate[i], idx[i] * dilate[i] + stride[i] * (in_sp[i] - 1) + 1,
                         stride[i]) for i in range(nd))
        res[(slice(None), slice(None)) + sl] += cols[(slice(None), slice(None)) + idx]
    crop = tuple(slice(pad[i], pad[i] + out_sp[i]) for i in range(nd))
    res = res[(slice(None), slice(None)) + crop]
    if any(pad) or full != out_sp:
        res = np.ascontiguousarray(res)
    if b is not None:
        res += b.reshape((1, F) + (1,) * nd).astype(dt, copy=False)
    return res


def _inputs(a):
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def _shape(a, s):
    if len(s) > 1:
        check_param_shapes("Deconvolution", s, _param_shapes(a, s))
    x = tuple(s[0])
    nd = len(a.kernel)
    if len(x) != nd + 2:
        raise ShapeError(f"Deconvolution: kernel {a.kernel} needs {nd + 2}-D data, got {x}")
    last = channel_last(a.layout)
    in_sp = x[1:-1] if last else x[2:]
    osp = deconv_geometry(a, in_sp)[4]
    return [(x[0],) + osp + (a.num_filter,) if last else (x[0], a.num_filter) + osp]


def _param_shapes(a, s):
    x = tuple(s[0])
    last = channel_last(a.layout)
    C = x[-1] if last else x[1]
    k = tuple(a.kernel)
    w = (C,) + k + (a.num_filter // a.num_group,) if last else \
        (C, a.num_filter // a.num_group) + k
    out = [x, w]
    if not a.no_bias:
        out.append((a.num_filter,))
    return out


def _flops(a, ins, outs):
    x = ins[0]
    return 2 * prod(x) * (a.num_filter // a.num_group) * prod(a.kernel)


@register("Deconvolution", "_npx_deconvolution", attrs=DECONV_ATTRS, inputs=_inputs,
          infer_shape=_shape, infer_param_shapes=_param_shapes, strict=True, out=True,
          flops=_flops, dtype_pair=("data", "weight"))
def deconvolution(a, x, w, b=None, out=None):
    """Transposed convolution: out = stride*(in-1) + dilate*(k-1) + 1 - 2*pad + adj."""
    nd = len(a.kernel)
    if x.ndim != nd + 2:
        raise ShapeError(f"Deconvolution: kernel {a.kernel} needs {nd + 2}-D data, "
                         f"got {x.shape}")
    last = channel_last(a.layout)
    if last:
        x, w = to_channel_first(x), to_channel_first(w)
    stride, dilate, pad, adj, out_sp = deconv_geometry(a, x.shape[2:])
    if any(v >= s for v, s in zip(adj, stride)) and any(adj):
        raise ShapeError(f"Deconvolution: adj {adj} must be smaller than stride {stride}")
    res = deconv_nc(x, w, b, a.kernel, stride, dilate, pad, out_sp, a.num_group)
    if last:
        res = np.ascontiguousarray(to_channel_last(res))
    if out is not None and out.shape == res.shape and out.dtype == res.dtype:
        out[...] = res
        return out
    return res


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(deconvolution)
def _deconv_onnx(ctx, node, ins):
    a = node.parsed
    nd = len(a.kernel)
    last = channel_last(a.layout)
    shape = ctx.shape(ins[0])
    stride, dilate, pad, adj, _ = deconv_geometry(a, shape[1:-1] if last else shape[2:])
    w = channel_first_weight(ctx, ins[1], nd + 2) if last else ins[1]
    return channel_wrapped(ctx, ins[0], last, lambda x: ctx.op(
        "ConvTranspose", [x, w] + ins[2:], kernel_shape=list(a.kernel), strides=list(stride),
        pads=list(pad) * 2, dilations=list(dilate), group=a.num_group,
        output_padding=list(adj) if any(adj) else None))
