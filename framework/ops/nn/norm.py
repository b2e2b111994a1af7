"""Normalisation layers at inference: BatchNorm (moving stats), LayerNorm, GroupNorm, InstanceNorm,
L2Normalization, LRN."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from .. import legacy_forms
from ..nnutil import CF, check_param_shapes, prod
from ..attrs import Bool, Int, Str
from ..lowering import lowers
from ..lowering_layout import per_axis
from ..registry import register


def _axis(axis, ndim, op):
    if not -ndim <= axis < ndim:
        raise OperatorError(f"{op}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _bshape(ndim, axis, n):
    s = [1] * ndim
    s[axis] = n
    return tuple(s)


def _norm_flops(a, ins, outs):
    return 5 * prod(ins[0])


def _f(x):
    return x if x.dtype.kind == "f" and x.dtype != np.float16 else x.astype(np.float32)


def _stats_type(n: int):
    """`infer_type` of a norm whose hidden statistics are in the dtype `_f` computes in."""
    def infer(a, d):
        dt = np.dtype(d[0])
        acc = dt if dt.kind == "f" and dt != np.float16 else np.dtype(np.float32)
        return [dt] + [acc] * (n - 1)
    return infer


# -- BatchNorm --------------------------------------------------------------------------------
BN_ATTRS = {"eps": CF(1e-3), "momentum": CF(0.9), "fix_gamma": Bool(True),
            "use_global_stats": Bool(False), "output_mean_var": Bool(False), "axis": Int(1),
            "cudnn_off": Bool(False), "min_calib_range": CF(None), "max_calib_range": CF(None)}


def _bn_shape(a, s):
    if len(s) > 1:
        check_param_shapes("BatchNorm", s, _bn_param_shapes(a, s))
    x = tuple(s[0])
    ax = _axis(a.axis, len(x), "BatchNorm")
    return [x, (x[ax],), (x[ax],)]


def _bn_param_shapes(a, s):
    x = tuple(s[0])
    c = (x[_axis(a.axis, len(x), "BatchNorm")],)
    return [x, c, c, c, c]


def _bn_type(a, d):
    return [d[0], np.dtype(np.float32), np.dtype(np.float32)] if d[0] == np.float16 else [d[0]] * 3


@register("BatchNorm", "_npx_batch_norm", attrs=BN_ATTRS,
          inputs=("data", "gamma", "beta", "moving_mean", "moving_var"), aux=(3, 4),
          num_outputs=3, num_visible=lambda a: 3 if a.output_mean_var else 1,
          output_names=("output", "mean", "var"), infer_shape=_bn_shape,
          infer_param_shapes=_bn_param_shapes, infer_type=_bn_type, strict=True, out=True,
          flops=_norm_flops, dtype_pair=("data", "gamma"), float_only=True)
def batch_norm(a, x, gamma, beta, mean, var, out=None):
    """Inference: y = (x - moving_mean) / sqrt(moving_var + eps) * gamma + beta (gamma = 1 with
    fix_gamma). Hidden outputs: mean = moving_mean, var = 1/sqrt(moving_var + eps) (MXNet's CPU
    kernel returns the inverse std there)."""
    ax = _axis(a.axis, x.ndim, "BatchNorm")
    C = x.shape[ax]
    if mean.size != C or var.size != C:
        raise ShapeError(f"BatchNorm: moving stats of size {mean.size} do not match {C} "
                         f"channels (axis {a.axis}) of data {x.shape}")
    acc = np.float64 if x.dtype == np.float64 else np.float32
    invstd = (1.0 / np.sqrt(var.astype(acc) + acc(a.eps))).astype(acc)
    g = np.ones(C, acc) if a.fix_gamma else gamma.astype(acc, copy=False).reshape(C)
    scale = g * invstd
    shift = beta.astype(acc, copy=False).reshape(C) - mean.astype(acc, copy=False) * scale
    bs = _bshape(x.ndim, ax, C)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    if out is not None and (out.shape != x.shape or out.dtype != dt):
        out = None
    y = np.multiply(x, scale.reshape(bs).astype(dt, copy=False), out=out)
    y += shift.reshape(bs).astype(dt, copy=False)
    return y, mean.astype(acc, copy=True).reshape(C), invstd


# -- LayerNorm --------------------------------------------------------------------------------
def _moments_shape(x, ax):
    s = list(x)
    s[ax] = 1
    return tuple(s)


def _ln_shape(a, s):
    if len(s) > 1:
        check_param_shapes("LayerNorm", s, _ln_param_shapes(a, s))
    x = tuple(s[0])
    m = _moments_shape(x, _axis(a.axis, len(x), "LayerNorm"))
    return [x, m, m]


def _ln_param_shapes(a, s):
    x = tuple(s[0])
    c = (x[_axis(a.axis, len(x), "LayerNorm")],)
    return [x, c, c]


@register("LayerNorm", "_npx_layer_norm",
          attrs={"axis": Int(-1), "eps": CF(1e-5), "output_mean_var": Bool(False)},
          inputs=("data", "gamma", "beta"), num_outputs=3,
          num_visible=lambda a: 3 if a.output_mean_var else 1,
          output_names=("output", "mean", "std"), infer_shape=_ln_shape,
          infer_param_shapes=_ln_param_shapes, strict=True, flops=_norm_flops,
          infer_type=_stats_type(3),
          dtype_pair=("data", "gamma"))
def layer_norm(a, x, gamma, beta):
    """Normalise over `axis`: (x - mean) / sqrt(var + eps) * gamma + beta; hidden mean, std."""
    ax = _axis(a.axis, x.ndim, "LayerNorm")
    xf = _f(x)
    mean = np.mean(xf, axis=ax, keepdims=True)
    d = xf - mean
    var = np.mean(np.square(d), axis=ax, keepdims=True)
    std = np.sqrt(var + xf.dtype.type(a.eps))
    bs = _bshape(x.ndim, ax, x.shape[ax])
    d /= std
    d *= gamma.astype(xf.dtype, copy=False).reshape(bs)
    d += beta.astype(xf.dtype, copy=False).reshape(bs)
    return d.astype(x.dtype, copy=False), mean, std


# -- GroupNorm --------------------------------------------------------------------------------
def _gn_shape(a, s):
    x = tuple(s[0])
    return [x, (x[0], a.num_groups), (x[0], a.num_groups)]


def _gn_param_shapes(a, s):
    x = tuple(s[0])
    return [x, (x[1],), (x[1],)]


@register("GroupNorm", "_npx_group_norm",
          attrs={"num_groups": Int(1), "eps": CF(1e-5), "output_mean_var": Bool(False)},
          inputs=("data", "gamma", "beta"), num_outputs=3,
          num_visible=lambda a: 3 if a.output_mean_var else 1,
          output_names=("output", "mean", "std"), infer_shape=_gn_shape,
          infer_param_shapes=_gn_param_shapes, strict=True, flops=_norm_flops,
          infer_type=_stats_type(3),
          dtype_pair=("data", "gamma"), legacy=legacy_forms.group_norm)
def group_norm(a, x, gamma, beta):
    """Normalise over (channels of a group, spatial). gamma/beta per channel (2.x) or per group
    (1.x, shape (num_groups,))."""
    N, C = x.shape[:2]
    G = a.num_groups
    if C % G:
        raise ShapeError(f"GroupNorm: {C} channels are not divisible by num_groups={G}")
    xf = _f(x)
    xg = xf.reshape(N, G, -1)
    mean = xg.mean(axis=2, keepdims=True)
    d = xg - mean
    var = np.mean(np.square(d), axis=2, keepdims=True)
    std = np.sqrt(var + xf.dtype.type(a.eps))
    d /= std
    g = gamma.astype(xf.dtype, copy=False).reshape(-1)
    b = beta.astype(xf.dtype, copy=False).reshape(-1)
    if g.size == G and G != C:                   # MXNet 1.x: one gamma per group
        d *= g.reshape(1, G, 1)
        d += b.reshape(1, G, 1)
        y = d.reshape(x.shape)
    else:
        y = d.reshape(x.shape)
        bs = (1, C) + (1,) * (x.ndim - 2)
        y *= g.reshape(bs)
        y += b.reshape(bs)
    return y.astype(x.dtype, copy=False), mean.reshape(N, G), std.reshape(N, G)


# -- InstanceNorm -----------------------------------------------------------------------------
def _in_shape(a, s):
    if len(s) > 1:
        check_param_shapes("InstanceNorm", s, _in_param_shapes(a, s))
    x = tuple(s[0])
    return [x, x[:2], x[:2]]


def _in_param_shapes(a, s):
    x = tuple(s[0])
    return [x, (x[1],), (x[1],)]


@register("InstanceNorm", "_npx_instance_norm", attrs={"eps": CF(1e-3)},
          inputs=("data", "gamma", "beta"), num_outputs=3, num_visible=1,
          output_names=("output", "mean", "var"), infer_shape=_in_shape,
          infer_param_shapes=_in_param_shapes, strict=True, flops=_norm_flops,
          infer_type=_stats_type(3),
          dtype_pair=("data", "gamma"), profiler_scope=True)
def instance_norm(a, x, gamma, beta):
    """Normalise each (sample, channel) over the spatial axes."""
    N, C = x.shape[:2]
    xf = _f(x)
    xr = xf.reshape(N, C, -1)
    mean = xr.mean(axis=2, keepdims=True)
    d = xr - mean
    var = np.mean(np.square(d), axis=2, keepdims=True)
    d /= np.sqrt(var + xf.dtype.type(a.eps))
    d *= gamma.astype(xf.dtype, copy=False).reshape(1, C, 1)
    d += beta.astype(xf.dtype, copy=False).reshape(1, C, 1)
    return d.reshape(x.shape).astype(x.dtype, copy=False), mean.reshape(N, C), var.reshape(N, C)


# -- L2Normalization --------------------------------------------------------------------------
def _l2_shape(a, s):
    x = tuple(s[0])
    if a.mode == "instance":
        n = (x[0],)
    elif a.mode == "channel":
        n = (x[0],) + x[2:]
    else:
        n = x[:2]
    return [x, n]


@register("L2Normalization", attrs={"eps": CF(1e-10), "mode": Str(
          "instance", choices=("instance", "spatial", "channel"))},
          num_outputs=2, num_visible=1, output_names=("output", "norm"),
          infer_shape=_l2_shape, strict=True, flops=_norm_flops, infer_type=_stats_type(2))
def l2_normalization(a, x):
    """x / sqrt(sum(x²) + eps) over all but axis 0 (instance), axis 1 (channel) or the spatial
    axes (spatial)."""
    xf = _f(x)
    if a.mode == "instance":
        axes = tuple(range(1, x.ndim))
    elif a.mode == "channel":
        axes = (1,)
    else:
        axes = tuple(range(2, x.ndim))
    norm = np.sqrt(np.sum(np.square(xf), axis=axes, keepdims=True) + xf.dtype.type(a.eps))
    y = (xf / norm).astype(x.dtype, copy=False)
    return y, norm.reshape(_l2_shape(a, [x.shape])[1])


# -- LRN --------------------------------------------------------------------------------------
@register("LRN", attrs={"alpha": CF(1e-4), "beta": CF(0.75), "knorm": CF(2.0), "nsize": Int()},
          num_outputs=2, num_visible=1, output_names=("output", "tmp_norm"),
          infer_shape=lambda a, s: [tuple(s[0]), tuple(s[0])], strict=True, flops=_norm_flops)
def lrn(a, x):
    """x * (knorm + alpha/nsize * Σ_window x²)^(-beta); the window spans (nsize-1)//2 channels
    on each side (for an even nsize that is nsize-1 channels, as MXNet's oneDNN kernel)."""
    xf = _f(x)
    C = x.shape[1]
    half = (a.nsize - 1) // 2
    sq = np.square(xf)
    win = sq.copy()
    for off in range(1, min(half, C - 1) + 1):  # loop over window offsets, never over channels
        win[:, off:] += sq[:, :C - off]
        win[:, :C - off] += sq[:, off:]
    norm = win * xf.dtype.type(a.alpha / a.nsize) + xf.dtype.type(a.knorm)
    y = xf * np.power(norm, xf.dtype.type(-a.beta))
    return y.astype(x.dtype, copy=False), norm.astype(x.dtype, copy=False)


# -- ONNX lowering ------------------------------------------------------------------------------


def batch_norm_onnx(ctx, a, ins):
    """Inference BatchNorm; fix_gamma uses ones for gamma. Axis 1 maps to ONNX
    BatchNormalization (which ONNX Runtime fuses into a preceding Conv); other axes multiply-add
    a per-channel scale and shift. With output_mean_var, MXNet's CPU outputs follow: the moving
    mean and the inverse std."""
    x, gamma, beta, mean, var = ins
    r = ctx.rank(x)
    ax = _axis(a.axis, r, "BatchNorm")
    C = ctx.shape(x)[ax]
    if a.fix_gamma:
        gamma = ctx.const(np.ones(C, ctx.dtype(x)), hint="ones")
    invstd = None
    if ax == 1 and r >= 2:
        y = ctx.op("BatchNormalization", [x, gamma, beta, mean, var], epsilon=float(a.eps))
    else:
        invstd = _invstd_onnx(ctx, var, a.eps)
        scale = ctx.op("Mul", [gamma, invstd])
        shift = ctx.op("Sub", [beta, ctx.op("Mul", [mean, scale])])
        y = ctx.op("Add", [ctx.op("Mul", [x, per_axis(ctx, scale, r, ax)]),
                           per_axis(ctx, shift, r, ax)])
    if not a.output_mean_var:
        return y
    return [y, ctx.op("Identity", [mean]), invstd or _invstd_onnx(ctx, var, a.eps)]


def _invstd_onnx(ctx, var, eps):
    return ctx.op("Reciprocal", [ctx.op("Sqrt", [ctx.op("Add", [var, ctx.scalar(float(eps),
                                                                                 var)])])])


@lowers(batch_norm)
def _bn_onnx(ctx, node, ins):
    return batch_norm_onnx(ctx, node.parsed, ins)


def _normalize_onnx(ctx, x, axes):
    """(x - mean) / sqrt(var + eps) pieces over `axes`: (mean, centred x, var)."""
    m = ctx.op("ReduceMean", [x, ctx.ints(axes)], keepdims=1)
    d = ctx.op("Sub", [x, m])
    return m, d, ctx.op("ReduceMean", [ctx.op("Mul", [d, d]), ctx.ints(axes)], keepdims=1)


@lowers(layer_norm)
def _layer_norm_onnx(ctx, node, ins):
    a = node.parsed
    x, gamma, beta = ins
    r = ctx.rank(x)
    ax = _axis(a.axis, r, "LayerNorm")
    if ax == r - 1 and not a.output_mean_var:
        return ctx.op("LayerNormalization", ins, axis=-1, epsilon=float(a.eps))
    m, d, var = _normalize_onnx(ctx, x, [ax])
    std = ctx.op("Sqrt", [ctx.op("Add", [var, ctx.scalar(float(a.eps), x)])])
    y = ctx.op("Add", [ctx.op("Mul", [ctx.op("Div", [d, std]), per_axis(ctx, gamma, r, ax)]),
                       per_axis(ctx, beta, r, ax)])
    return [y, m, std]


@lowers(group_norm)
def _group_norm_onnx(ctx, node, ins):
    a = node.parsed
    x, gamma, beta = ins
    r, G = ctx.rank(x), a.num_groups
    C = ctx.shape(x)[1]
    xg = ctx.op("Reshape", [x, ctx.ints([0, G, -1])])
    m, d, var = _normalize_onnx(ctx, xg, [2])
    std = ctx.op("Sqrt", [ctx.op("Add", [var, ctx.scalar(float(a.eps), x)])])
    d = ctx.op("Div", [d, std])
    if ctx.shape(gamma)[0] == G and G != C:          # MXNet 1.x: one gamma per group
        d = ctx.op("Add", [ctx.op("Mul", [d, per_axis(ctx, gamma, 3, 1)]),
                           per_axis(ctx, beta, 3, 1)])
        y = ctx.op("Reshape", [d, ctx.shape_of(x)])
    else:
        y = ctx.op("Reshape", [d, ctx.shape_of(x)])
        y = ctx.op("Add", [ctx.op("Mul", [y, per_axis(ctx, gamma, r, 1)]),
                           per_axis(ctx, beta, r, 1)])
    stats = ctx.ints([0, G])
    return [y, ctx.op("Reshape", [m, stats]), ctx.op("Reshape", [std, stats])]


@lowers(instance_norm)
def _instance_norm_onnx(ctx, node, ins):
    return ctx.op("InstanceNormalization", ins, epsilon=float(node.parsed.eps))


@lowers(l2_normalization)
def _l2_normalization_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    r = ctx.rank(x)
    axes = {"instance": range(1, r), "channel": [1]}.get(a.mode, range(2, r))
    ss = ctx.op("ReduceSumSquare", [x, ctx.ints(axes)], keepdims=1)
    norm = ctx.op("Sqrt", [ctx.op("Add", [ss, ctx.scalar(float(a.eps), x)])])
    return [ctx.op("Div", [x, norm]), ctx.op("Reshape", [norm, ctx.reshape_target(1)])]


@lowers(lrn)
def _lrn_onnx(ctx, node, ins):
    """ONNX LRN sums `size` channels; MXNet (nsize-1)//2 on each side: an even nsize becomes
    size nsize-1 with alpha rescaled so alpha/size stays MXNet's alpha/nsize."""
    a = node.parsed
    size = a.nsize if a.nsize % 2 else a.nsize - 1
    return ctx.op("LRN", ins, size=size, alpha=float(a.alpha) * size / a.nsize,
                  beta=float(a.beta), bias=float(a.knorm))
