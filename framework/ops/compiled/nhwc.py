"""Internal channels-last kernels that the compiler's layout pass (compiler/passes/layout.py)
rewrites 2-D convolutions and unfoldable BatchNorms into. Not MXNet operators: their names start
with `_hs_`, their weights are stored GEMM-ready, and they carry a fused epilogue.

`_hs_conv2d`: data (N, H, W, C) (or NCHW with data_layout='NCHW', for the graph's first conv),
output (N, OH, OW, F). One im2col copy into a per-thread, zero-bordered scratch buffer (padding is
never copied: each kernel tap copies only its valid output range, the border stays zero from the
buffer's creation), then ONE sgemm (np.matmul with out=) against the pre-transformed weight,
then the epilogue in place on the GEMM output: + bias, + residual (`with_sum`), activation.
1x1 stride-1 convolutions are a plain GEMM on the input, against a transposed view of MXNet's own
weight (algo "gemm1x1", optional folded-BatchNorm `scale`); depthwise convolutions are a
multiply-add per kernel tap over contiguous channel vectors.

`_hs_affine`: y = act(x * scale + shift) along one axis (an inference BatchNorm that could not be
folded into a convolution, with its ReLU fused), in place on the output buffer.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...base import ShapeError
from .._kernels import nhwc_util as _u
from .. import parallel
from .._kernels import winograd
from .._kernels.nhwc_algos import (_conv_shift, _depthwise_einsum, _depthwise_part, _grouped_nhwc,
                          _shift_to_gemm, _SHIFT_MIN_PIXELS)
from .._kernels.nhwc_util import (_epilogue, _epilogue_all, _full_tap, _pad_hi, _pad_nhwc,  # noqa: F401
                         _row_parts, _windows, apply_act, clear_scratch, im2col_nhwc, out_size,
                         part_taps, scratch, tap_range, taps)
from ..nnutil import CF, prod
from ..attrs import Bool, Int, Shape, Str
from ..registry import register

ACTS = ("none", "relu", "clip", "sigmoid", "tanh")

def choose_algo(w_shape, k, stride, pad, dilate, groups, data_layout,
                in_shape: tuple | None = None, dtype=np.float32) -> str:
    """The `_hs_conv2d` algorithm for a weight (F, C/g, kh, kw), from the weight and, when the
    example input's (NCHW) shape is known, its size: Winograd where it pays (ops/_kernels/winograd.py),
    so that the graph holds only the transformed weight — in float32/float64 only (its
    transforms lose too much precision in float16, and NumPy has no float16 BLAS)."""
    F, C = w_shape[:2]
    if in_shape is not None and len(in_shape) == 4 and data_layout == "NHWC" \
            and np.dtype(dtype).kind == "f" and np.dtype(dtype).itemsize >= 4 \
            and winograd.ok(k, stride, pad, dilate, groups):
        m = winograd.choose_tile(in_shape[0], in_shape[2], in_shape[3], C, F)
        if m:
            return _WINO_ALGO[m]
    if groups == 1 and data_layout == "NHWC" and tuple(stride) == (1, 1) \
            and tuple(k) != (1, 1) and k[0] * k[1] > 1 and 2 * F <= C:
        return "shift"
    return "gemm"


_WINO_ALGO = {2: "winograd", 4: "winograd4"}
_WINO_TILE = {v: k for k, v in _WINO_ALGO.items()}


def prepare_weight(w: np.ndarray, groups: int, data_layout: str = "NHWC",
                   algo: str = "gemm") -> np.ndarray:
    """MXNet OIHW weight → the `_hs_conv2d` layout (done once, at optimisation time).
    groups == 1: (kh·kw·C, F) (whatever the data layout); "shift": (F·kh·kw, C);
    "winograd"/"winograd4": ((m+2)², C, F); depthwise (C/g == 1): (kh, kw, C, m); other groups:
    (g, kh·kw·Cg, F/g)."""
    F, Cg, kh, kw = w.shape
    if algo == "shift":
        return np.ascontiguousarray(w.transpose(0, 2, 3, 1).reshape(F * kh * kw, Cg))
    if algo in _WINO_TILE:
        return winograd.transform_weight(w, _WINO_TILE[algo])
    if groups == 1:
        return np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(kh * kw * Cg, F))
    if Cg == 1:
        m = F // groups
        return np.ascontiguousarray(w.reshape(groups, m, kh, kw).transpose(2, 3, 0, 1))
    fg = F // groups
    g = w.reshape(groups, fg, Cg, kh, kw).transpose(0, 3, 4, 2, 1)
    return np.ascontiguousarray(g.reshape(groups, kh * kw * Cg, fg))


_COLS_BYTES = 8 << 20           # im2col working set per chunk (rows and samples)


def conv2d_nhwc(x, w, b, res, k, stride, pad, dilate, groups, num_filter, act="none",
                lo=0.0, hi=6.0, data_layout="NHWC", out=None, algo="gemm", scale=None):
    if data_layout == "NCHW":
        N, C, H, W = x.shape
    else:
        N, H, W, C = x.shape
    F = num_filter
    osp = (out_size(H, k[0], stride[0], pad[0], dilate[0]),
           out_size(W, k[1], stride[1], pad[1], dilate[1]))
    if osp[0] <= 0 or osp[1] <= 0:
        raise ShapeError(f"Convolution: kernel {tuple(k)} does not fit input {(H, W)} padded by "
                         f"{tuple(pad)}")
    if C % groups:
        raise ShapeError(f"Convolution: {C} channels are not divisible by num_group={groups}")
    dt = np.result_type(x.dtype, w.dtype)
    oshape = (N,) + osp + (F,)
    if out is None or out.shape != oshape or out.dtype != dt or not out.flags.c_contiguous:
        out = np.empty(oshape, dt)
    Cg = C // groups
    tp = (H, W)
    if algo == "gemm1x1":
        w, scale = weight_1x1(w, scale, N * osp[0] * osp[1])
    # work in "element passes": output elements, or multiply-adds / 16 for the GEMMs
    work = max(N * osp[0] * osp[1] * max(F, C), N * osp[0] * osp[1] * F * k[0] * k[1] * Cg // 16)
    if groups == 1 and algo == "shift" and H * W < _SHIFT_MIN_PIXELS:
        # small images: the padded grid wastes too much; im2col + GEMM with the weight re-laid
        w, algo = _shift_to_gemm(w, k, F), "gemm"
    if groups == 1 and algo == "shift":
        x = _pad_nhwc(x, pad, _pad_hi((H, W), osp, k, stride, pad, dilate))
        return _conv_shift(x, w, b, res, (k, stride, pad, dilate, osp, tp), out, act, lo, hi)
    elif groups == 1 and algo in _WINO_TILE:
        winograd.conv3x3(x, w, _WINO_TILE[algo], b, out)
        return _epilogue_all(out, None, res, act, lo, hi)
    elif groups == 1 and (m := _wino_tile(x, w, k, stride, pad, dilate, data_layout, N, H, W, C,
                                          F)):
        # chosen per call from the input size: the transformed weight is cached per weight
        winograd.conv3x3(x, winograd.from_gemm_weight(w, m), m, b, out)
        return _epilogue_all(out, None, res, act, lo, hi)
    elif groups == 1 and (data_layout == "NCHW" or not (k[0] == 1 and k[1] == 1 and not any(pad))):
        # im2col from a zero-bordered padded copy of the input (NHWC, whatever the data layout):
        # each window row (kw taps x C channels) is one contiguous run of the padded input
        x = _pad_nhwc(x, pad, _pad_hi((H, W), osp, k, stride, pad, dilate), data_layout == "NCHW")
        if parallel._nthreads > 1 and N * osp[0] * osp[1] < _SMALL_M \
                and F >= 64 * parallel._nthreads and work > _u._MIN_PAR:
            return _conv_split_f(x, w, b, res, (k, stride, pad, dilate, osp, tp), out, act, lo, hi)
        body = _im2col_part
    elif groups == 1:
        if parallel._nthreads > 1 and N * osp[0] * osp[1] < _SMALL_M \
                and F >= 64 * parallel._nthreads and work > _u._MIN_PAR:
            return _conv_split_f(x, w, b, res, (k, stride, pad, dilate, osp, tp), out, act, lo, hi,
                                 scale)
        body = _1x1_part
    elif Cg == 1 and w.shape[3] == 1 and x.dtype == w.dtype:
        # padded so every window lies inside the buffer (right/bottom pad as the windows need)
        x = _pad_nhwc(x, pad, _pad_hi((H, W), osp, k, stride, pad, dilate))
        w = w[..., 0]
        body = _depthwise_einsum
    elif Cg == 1:
        body = _depthwise_part
    else:
        _grouped_nhwc(x, w, k, stride, pad, dilate, groups, osp, out)
        return _epilogue_all(out, b, res, act, lo, hi)
    prts = _row_parts(N, osp[0], work)
    geo = (k, stride, pad, dilate, osp, tp)

    def run(i):
        n0, n1, r0, r1 = prts[i]
        o = out[n0:n1, r0:r1]
        body(x[n0:n1], w, geo, o, r0, r1)
        _epilogue(o, b, None if res is None else res[n0:n1, r0:r1], act, lo, hi, scale)
    parallel.run(run, len(prts))
    return out


def weight_1x1(w, scale, M):
    """("gemm1x1") MXNet's own (F, C, 1, 1) weight as the (C, F) GEMM operand: a transposed view
    that BLAS reads as is, so the optimised graph shares the block's parameter instead of holding
    a re-laid copy. A folded BatchNorm's per-channel scale goes where it costs fewer multiplies:
    into a scratch copy of the weight (F·C) or onto the GEMM output in the epilogue (M·F).
    Returns (weight, scale left for the epilogue)."""
    w2 = w.reshape(w.shape[0], -1)
    if scale is None or w2.shape[1] > M:
        return w2.T, scale
    ws = scratch(("w1x1",), w2.shape, np.result_type(w2.dtype, scale.dtype))
    np.multiply(w2, scale[:, None], out=ws)
    return ws.T, None


def _wino_tile(x, w, k, stride, pad, dilate, data_layout, N, H, W, C, F) -> int:
    if (data_layout != "NHWC" or not winograd.ok(k, stride, pad, dilate, 1)
            or x.dtype != w.dtype or x.dtype.kind != "f" or x.dtype.itemsize < 4):
        return 0
    return winograd.choose_tile(N, H, W, C, F)


_SMALL_M = 256                  # output pixels below which a GEMM is split over output channels


def _conv_split_f(x, w, b, res, geo, out, act, lo, hi, scale=None):
    """Columns once (by the caller), then each helper thread runs the GEMM and the epilogue for
    its block of output channels. x: the input (1x1) or its padded copy (im2col)."""
    k, stride, pad, dilate, osp, sp = geo
    N, C = x.shape[0], x.shape[3]
    F = out.shape[3]
    if k[0] == 1 and k[1] == 1 and not any(pad):
        xs = x[:, ::stride[0], ::stride[1]]
        if not xs.flags.c_contiguous:
            buf = scratch(("1x1f",), xs.shape, x.dtype)
            np.copyto(buf, xs)
            xs = buf
        cols = xs.reshape(-1, C)
    else:
        c6 = scratch(("colsf",), (N,) + osp + (k[0], k[1], C), x.dtype)
        np.copyto(c6, _windows(x, 0, N, 0, osp[0], osp, k, stride, dilate))
        cols = c6.reshape(N * osp[0] * osp[1], -1)
    o2 = out.reshape(-1, F)
    blocks = parallel.split(F, parallel.parts(F, 64))

    def run(i):
        f0, f1 = blocks[i]
        ov = o2[:, f0:f1]
        np.matmul(cols, w[:, f0:f1], out=ov)
        _epilogue(ov, None if b is None else b[f0:f1],
                  None if res is None else res.reshape(-1, F)[:, f0:f1], act, lo, hi,
                  None if scale is None else scale[f0:f1])
    parallel.run(run, len(blocks))
    return out


def _1x1_part(x, w, geo, o, r0, r1):
    k, stride, pad, dilate, osp, tp = geo
    xs = x[:, r0 * stride[0]:(r1 - 1) * stride[0] + 1:stride[0], ::stride[1]]
    if not xs.flags.c_contiguous:
        buf = scratch(("1x1", r0, r1), xs.shape, x.dtype)
        np.copyto(buf, xs)
        xs = buf
    np.matmul(xs.reshape(-1, x.shape[3]), w, out=o.reshape(-1, o.shape[3]))


@lru_cache(maxsize=1024)
def _im2col_chunks(N, OW, K, itemsize, r0, r1, budget):
    """[(n0, n1, a, b)]: row/sample chunks of one part whose columns fit the budget."""
    rows_per = max(1, min(r1 - r0, budget // max(1, OW * K * itemsize)))
    nper = max(1, min(N, budget // max(1, (r1 - r0) * OW * K * itemsize))) \
        if rows_per >= r1 - r0 else 1
    return tuple((n0, min(N, n0 + nper), a, min(r1, a + rows_per))
                 for n0 in range(0, N, nper) for a in range(r0, r1, rows_per))


def _im2col_part(xp, w, geo, o, r0, r1):
    """im2col + GEMM over output rows [r0, r1) of every sample, from the padded input xp, in
    chunks of rows whose columns fit `_COLS_BYTES` (cache-resident between copy and GEMM)."""
    k, stride, pad, dilate, osp, sp = geo
    N, C = xp.shape[0], xp.shape[3]
    F = o.shape[3]
    K = k[0] * k[1] * C
    for n0, n1, a, b in _im2col_chunks(N, osp[1], K, xp.itemsize, r0, r1, _COLS_BYTES):
        cols = scratch(("cols",), (n1 - n0, b - a, osp[1], k[0], k[1], C), xp.dtype)
        np.copyto(cols, _windows(xp, n0, n1, a, b, osp, k, stride, dilate))
        ov = o[n0:n1, a - r0:b - r0]
        np.matmul(cols.reshape(-1, K), w, out=ov.reshape(-1, F) if n1 - n0 == 1
                  else _contig_rows(o, n0, n1, a - r0, b - r0, F))


def _contig_rows(o, n0, n1, a, b, F):
    v = o[n0:n1, a:b]
    if not v.flags.c_contiguous:
        raise AssertionError("im2col chunk of several samples must cover whole images")
    return v.reshape(-1, F)


def _hs_conv_inputs(a):
    names = ["data", "weight"] + (["scale"] if a.with_scale else [])
    if not a.no_bias:
        names.append("bias")
    if a.with_sum:
        names.append("sum")
    return names


def _hs_conv_shape(a, s):
    x = tuple(s[0])
    if a.data_layout == "NCHW":
        N, _, H, W = x
    else:
        N, H, W, _ = x
    stride, pad, dilate = a.stride or (1, 1), a.pad or (0, 0), a.dilate or (1, 1)
    return [(N, out_size(H, a.kernel[0], stride[0], pad[0], dilate[0]),
             out_size(W, a.kernel[1], stride[1], pad[1], dilate[1]), a.num_filter)]


def _hs_conv_flops(a, ins, outs):
    x = ins[0]
    C = x[1] if a.data_layout == "NCHW" else x[-1]
    return 2 * prod(outs[0]) * (C // a.num_group) * prod(a.kernel)


HS_CONV_ATTRS = {"kernel": Shape(), "stride": Shape((1, 1)), "pad": Shape((0, 0)),
                 "dilate": Shape((1, 1)), "num_filter": Int(), "num_group": Int(1),
                 "no_bias": Bool(False), "with_sum": Bool(False), "with_scale": Bool(False),
                 "act_type": Str("none", choices=ACTS), "a_min": CF(0.0), "a_max": CF(6.0),
                 "data_layout": Str("NHWC", choices=("NHWC", "NCHW")),
                 "algo": Str("gemm", choices=("gemm", "gemm1x1", "shift", "winograd",
                                                   "winograd4"))}


@register("_hs_conv2d", attrs=HS_CONV_ATTRS, inputs=_hs_conv_inputs, infer_shape=_hs_conv_shape,
          strict=True, out=True, flops=_hs_conv_flops)
def hs_conv2d(a, x, w, *rest, out=None):
    """Channels-last 2-D convolution with GEMM-ready weight and fused bias/residual/activation."""
    rest = list(rest)
    scale = rest.pop(0) if a.with_scale else None
    b = None if a.no_bias else rest.pop(0)
    res = rest.pop(0) if a.with_sum else None
    return conv2d_nhwc(x, w, b, res, tuple(a.kernel), tuple(a.stride), tuple(a.pad),
                       tuple(a.dilate), a.num_group, a.num_filter, a.act_type, a.a_min, a.a_max,
                       a.data_layout, out, a.algo, scale)
