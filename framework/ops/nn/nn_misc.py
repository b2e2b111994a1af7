"""Dropout (inference), Embedding, UpSampling, _contrib_BilinearResize2D, Pad, depth_to_space,
space_to_depth."""
from __future__ import annotations

import math

import numpy as np

from ... import random as _random
from ...base import OperatorError, ShapeError
from ..nnutil import CF, OptBool, check_param_shapes, prod
from ..attrs import Bool, DType, Int, Shape, Str
from .deconv import deconv_nc
from ..lowering import lowers, refuse_if
from ..registry import register


# -- Dropout ----------------------------------------------------------------------------------
def _drop_shape(a, s):
    return [tuple(s[0]), tuple(s[0])]


@register("Dropout", "_npx_dropout",
          attrs={"p": CF(0.5), "mode": Str("training", choices=("training", "always")),
                 "axes": Shape(()), "cudnn_off": OptBool(False)},
          num_outputs=2, num_visible=1, output_names=("output", "mask"),
          infer_shape=_drop_shape, strict=True)
def dropout(a, x):
    """Identity at inference (mode='training'; hybridserve has no training mode). With
    mode='always' the mask is drawn from `mx.random` and kept values are scaled by 1/(1-p);
    `axes` share the mask along those axes. Hidden output: the mask."""
    if a.mode != "always" or a.p <= 0:
        return x, np.ones_like(x)
    shape = list(x.shape)
    for ax in a.axes or ():
        shape[ax] = 1
    keep = 1.0 - float(a.p)
    if keep <= 0:
        mask = np.zeros(shape, x.dtype)
    else:
        mask = ((_random.generator().random(shape) < keep) / keep).astype(x.dtype)
    return x * mask, np.broadcast_to(mask, x.shape).copy()


# -- Embedding --------------------------------------------------------------------------------
def _emb_shape(a, s):
    if len(s) > 1:
        check_param_shapes("Embedding", s, _emb_param_shapes(a, s))
    return [tuple(s[0]) + (a.output_dim,)]


def _emb_param_shapes(a, s):
    return [tuple(s[0]), (a.input_dim, a.output_dim)]


def _emb_type(a, d):
    return [d[1] if len(d) > 1 and d[1] is not None else np.dtype(a.dtype or np.float32)]


@register("Embedding", "_npx_embedding",
          attrs={"input_dim": Int(), "output_dim": Int(), "dtype": DType(np.dtype(np.float32)),
                 "sparse_grad": Bool(False)},
          inputs=("data", "weight"), infer_shape=_emb_shape,
          infer_param_shapes=_emb_param_shapes, infer_type=_emb_type, strict=True,
          monitor_indexed_outputs=True)
def embedding(a, idx, weight):
    """weight[idx]: float indices truncate toward zero and are clipped into [0, input_dim-1]."""
    if weight.ndim != 2:
        raise ShapeError(f"Embedding: weight must be 2-D, got {weight.shape}")
    i = idx if idx.dtype.kind in "iu" else idx.astype(np.int64)
    return np.take(weight, i, axis=0, mode="clip")


# -- UpSampling -------------------------------------------------------------------------------
def _up_inputs(a):
    if a.sample_type == "bilinear":
        return ("data", "weight")
    return [f"arg{i}" for i in range(a.num_args)]


def _up_shape(a, s):
    x = tuple(s[0])
    oh, ow = x[2] * a.scale, x[3] * a.scale
    if a.sample_type == "bilinear":
        return [(x[0], x[1], oh, ow)]
    if a.multi_input_mode == "sum":
        c = x[1]
    else:
        c = sum(tuple(v)[1] for v in s)
    return [(x[0], c, oh, ow)]


def _bilinear_kernel(scale):
    return 2 * scale - scale % 2


def _up_param_shapes(a, s):
    x = tuple(s[0])
    if a.sample_type == "bilinear":
        k = _bilinear_kernel(a.scale)
        return [x, (a.num_filter or x[1], 1, k, k)]
    return [tuple(v) for v in s]


def _nearest(x, sh, sw):
    return np.repeat(np.repeat(x, sh, axis=2), sw, axis=3)


@register("UpSampling", attrs={"scale": Int(), "num_filter": Int(0),
                               "sample_type": Str(choices=("nearest", "bilinear")),
                               "multi_input_mode": Str("concat", choices=("concat", "sum")),
                               "num_args": Int(), "workspace": Int(512)},
          inputs=_up_inputs, infer_shape=_up_shape, infer_param_shapes=_up_param_shapes,
          strict=True)
def upsampling(a, *xs):
    """nearest: repeat each input up to input0 * scale, then concat (or sum) along channels;
    bilinear: a depthwise Deconvolution with the given weight (kernel 2s - s%2, stride s)."""
    x0 = xs[0]
    if x0.ndim != 4:
        raise ShapeError(f"UpSampling: input must be 4-D, got {x0.shape}")
    oh, ow = x0.shape[2] * a.scale, x0.shape[3] * a.scale
    if a.sample_type == "bilinear":
        w = xs[1]
        s = a.scale
        k = _bilinear_kernel(s)
        p = int(math.ceil((s - 1) / 2.0))
        C = x0.shape[1]
        return deconv_nc(x0, w, None, (k, k), (s, s), (1, 1), (p, p), (oh, ow), C)
    outs = []
    for x in xs:
        if oh % x.shape[2] or ow % x.shape[3]:
            raise ShapeError(f"UpSampling: input {x.shape} cannot be scaled to {(oh, ow)}")
        outs.append(_nearest(x, oh // x.shape[2], ow // x.shape[3]))
    if len(outs) == 1:
        return outs[0]
    if a.multi_input_mode == "sum":
        res = outs[0].copy()
        for o in outs[1:]:
            res += o
        return res
    return np.concatenate(outs, axis=1)


# -- BilinearResize2D -------------------------------------------------------------------------
_BR_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
             "to_odd_up")


def _br_size(a, x, like=None):
    H, W = x[2], x[3]
    m = a.mode
    if m == "size":
        if a.scale_height is not None:
            return int(np.float32(a.scale_height) * np.float32(H)), \
                int(np.float32(a.scale_width if a.scale_width is not None else a.scale_height)
                    * np.float32(W))
        return a.height, a.width
    if m == "odd_scale":
        def f(n, sc):
            return int(n * sc) if n % 2 == 0 else int((n - 1) * sc) + 1
        return f(H, a.scale_height), f(W, a.scale_width)
    if m == "like":
        if like is None:
            raise OperatorError("BilinearResize2D(mode='like') needs a second input")
        return like[2], like[3]
    if m == "to_even_down":
        return H - H % 2, W - W % 2
    if m == "to_even_up":
        return H + H % 2, W + W % 2
    if m == "to_odd_down":
        return H - (1 - H % 2), W - (1 - W % 2)
    return H + (1 - H % 2), W + (1 - W % 2)


def _br_shape(a, s):
    x = tuple(s[0])
    oh, ow = _br_size(a, x, tuple(s[1]) if len(s) > 1 else None)
    return [x[:2] + (oh, ow)]


def _interp_axis(n_in, n_out, align):
    """(i0, i1, l0, l1) of MXNet's bilinear source index along one axis (float32 arithmetic)."""
    if n_out > 1:
        scale = np.float32((n_in - 1) / (n_out - 1)) if align else np.float32(n_in / n_out)
    else:
        scale = np.float32(0)
    d = np.arange(n_out, dtype=np.float32)
    if align:
        src = scale * d
    else:
        src = scale * (d + np.float32(0.5)) - np.float32(0.5)
        src = np.where(src < 0, np.float32(0), src)
    i0 = src.astype(np.int64)
    step = (i0 < n_in - 1).astype(np.int64)
    l1 = (src - i0).astype(np.float32)
    return i0, i0 + step, np.float32(1) - l1, l1


@register("_contrib_BilinearResize2D",
          attrs={"height": Int(1), "width": Int(1), "scale_height": CF(None),
                 "scale_width": CF(None), "mode": Str("size", choices=_BR_MODES),
                 "align_corners": Bool(True)},
          inputs=lambda a: ("data", "like") if a.mode == "like" else ("data",),
          infer_shape=_br_shape, strict=True,
          flops=lambda a, i, o: 7 * prod(o[0]))       # 4 weighted taps: 4 mul + 3 add
def bilinear_resize2d(a, x, like=None):
    """Bilinear resize of (N, C, H, W) with MXNet's index rules (align_corners or half-pixel)."""
    if x.ndim != 4:
        raise ShapeError(f"BilinearResize2D: input must be 4-D, got {x.shape}")
    H, W = x.shape[2:]
    oh, ow = _br_size(a, x.shape, None if like is None else like.shape)
    if (oh, ow) == (H, W):
        return x.copy()
    xf = x if x.dtype.kind == "f" else x.astype(np.float32)
    h0, h1, hl0, hl1 = _interp_axis(H, oh, a.align_corners)
    w0, w1, wl0, wl1 = _interp_axis(W, ow, a.align_corners)
    dt = xf.dtype
    rows = xf[:, :, h0, :] * hl0.astype(dt)[:, None] + xf[:, :, h1, :] * hl1.astype(dt)[:, None]
    out = rows[..., w0] * wl0.astype(dt) + rows[..., w1] * wl1.astype(dt)
    return out.astype(x.dtype, copy=False)


# -- Pad --------------------------------------------------------------------------------------
def _pad_pairs(a, ndim):
    pw = tuple(a.pad_width)
    if len(pw) != 2 * ndim:
        raise ShapeError(f"Pad: pad_width {pw} needs {2 * ndim} values for {ndim}-D input")
    return [(pw[2 * i], pw[2 * i + 1]) for i in range(ndim)]


def _pad_shape(a, s):
    x = tuple(s[0])
    return [tuple(n + lo + hi for n, (lo, hi) in zip(x, _pad_pairs(a, len(x))))]


@register("Pad", "pad", "_npx_pad",
          attrs={"mode": Str(choices=("constant", "edge", "reflect")), "pad_width": Shape(),
                 "constant_value": CF(0.0)},
          infer_shape=_pad_shape, strict=True)
def pad(a, x):
    """Pad with a constant, the edge values or a reflection (edge excluded, as numpy 'reflect')."""
    pairs = _pad_pairs(a, x.ndim)
    if a.mode == "constant":
        return np.pad(x, pairs, mode="constant", constant_values=x.dtype.type(a.constant_value))
    return np.pad(x, pairs, mode=a.mode)


# -- depth_to_space / space_to_depth ----------------------------------------------------------
def _d2s_shape(a, s):
    N, C, H, W = tuple(s[0])
    b = a.block_size
    return [(N, C // (b * b), H * b, W * b)]


def _s2d_shape(a, s):
    N, C, H, W = tuple(s[0])
    b = a.block_size
    return [(N, C * b * b, H // b, W // b)]


@register("depth_to_space", attrs={"block_size": Int()},
          infer_shape=_d2s_shape, strict=True)
def depth_to_space(a, x):
    """(N, C, H, W) → (N, C/b², H·b, W·b), DCR order (MXNet)."""
    N, C, H, W = x.shape
    b = a.block_size
    if C % (b * b):
        raise ShapeError(f"depth_to_space: channels {C} not divisible by block_size² {b * b}")
    y = x.reshape(N, b, b, C // (b * b), H, W).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(N, C // (b * b), H * b, W * b)


@register("space_to_depth", attrs={"block_size": Int()},
          infer_shape=_s2d_shape, strict=True)
def space_to_depth(a, x):
    """(N, C, H, W) → (N, C·b², H/b, W/b) (inverse of depth_to_space)."""
    N, C, H, W = x.shape
    b = a.block_size
    if H % b or W % b:
        raise ShapeError(f"space_to_depth: spatial size {(H, W)} not divisible by {b}")
    y = x.reshape(N, C, H // b, b, W // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(N, C * b * b, H // b, W // b)


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(dropout, check=refuse_if(random_dropout_at_inference=lambda a: a.mode == "always"
                                 and a.p > 0))
def _dropout_onnx(ctx, node, ins):
    """Identity at inference (mode='training'); the hidden mask is ones."""
    return ctx.op("Identity", ins)


@lowers(embedding)
def _embedding_onnx(ctx, node, ins):
    """weight[idx], indices truncated and clipped into [0, input_dim-1] as the kernel."""
    n = ctx.shape(ins[1])[0]
    i = ctx.op("Cast", [ins[0]], to=ctx.tensor_type(np.int64))
    i = ctx.op("Clip", [i, ctx.const(np.asarray(0, np.int64)),
                        ctx.const(np.asarray(n - 1, np.int64))])
    return ctx.op("Gather", [ins[1], i], axis=0)


@lowers(upsampling, check=refuse_if(bilinear_upsampling=lambda a: a.sample_type == "bilinear"))
def _upsampling_onnx(ctx, node, ins):
    """Nearest: each input repeated up to input0·scale (ONNX Resize, integer scales)."""
    a = node.parsed
    s0 = ctx.shape(ins[0])
    oh, ow = s0[2] * a.scale, s0[3] * a.scale
    outs = []
    for x in ins:
        h, w = ctx.shape(x)[2:]
        scales = ctx.const(np.asarray([1, 1, oh // h, ow // w], np.float32))
        outs.append(ctx.op("Resize", [x, "", scales], mode="nearest", nearest_mode="floor",
                           coordinate_transformation_mode="asymmetric"))
    if len(outs) == 1:
        return outs[0]
    return ctx.op("Sum", outs) if a.multi_input_mode == "sum" else \
        ctx.op("Concat", outs, axis=1)


def _interp_matrix(n_in, n_out, align, dtype):
    """(n_out, n_in): the kernel's bilinear weights along one axis as a matrix."""
    i0, i1, l0, l1 = _interp_axis(n_in, n_out, align)
    m = np.zeros((n_out, n_in), np.float64)
    np.add.at(m, (np.arange(n_out), i0), l0)
    np.add.at(m, (np.arange(n_out), i1), l1)
    return m.astype(dtype)


@lowers(bilinear_resize2d)
def _bilinear_resize_onnx(ctx, node, ins):
    """out = A_h · x · A_wᵀ with MXNet's interpolation weights as constant matrices."""
    a = node.parsed
    x = ins[0]
    H, W = ctx.shape(x)[2:]
    oh, ow = _br_size(a, ctx.shape(x), ctx.shape(ins[1]) if len(ins) > 1 else None)
    if (oh, ow) == (H, W):
        return ctx.op("Identity", [x])
    dt = ctx.dtype(x)
    t = ctx.op("MatMul", [x, ctx.const(_interp_matrix(W, ow, a.align_corners, dt).T.copy())])
    return ctx.op("MatMul", [ctx.const(_interp_matrix(H, oh, a.align_corners, dt)), t])


@lowers(pad)
def _pad_onnx(ctx, node, ins):
    a = node.parsed
    pairs = _pad_pairs(a, ctx.rank(ins[0]))
    pads = ctx.ints([p[0] for p in pairs] + [p[1] for p in pairs])
    value = ctx.const(np.asarray(a.constant_value, ctx.dtype(ins[0])))
    return ctx.op("Pad", [ins[0], pads, value if a.mode == "constant" else ""], mode=a.mode)


@lowers(depth_to_space)
def _d2s_onnx(ctx, node, ins):
    return ctx.op("DepthToSpace", ins, blocksize=node.parsed.block_size, mode="DCR")


@lowers(space_to_depth)
def _s2d_onnx(ctx, node, ins):
    return ctx.op("SpaceToDepth", ins, blocksize=node.parsed.block_size)
