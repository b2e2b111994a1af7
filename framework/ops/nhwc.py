"""Internal channels-last kernels that the compiler's layout pass (compiler/passes/layout.py)
rewrites 2-D convolutions and unfoldable BatchNorms into. Not MXNet operators: their names start
with `_hs_`, their weights are stored GEMM-ready, and they carry a fused epilogue.

`_hs_conv2d`: data (N, H, W, C) (or NCHW with data_layout='NCHW', for the graph's first conv),
output (N, OH, OW, F). One im2col copy into a per-thread, zero-bordered scratch buffer (padding is
never copied: each kernel tap copies only its valid output range, the border stays zero from the
buffer's creation), then ONE sgemm (np.matmul with out=) against the pre-transformed weight,
then the epilogue in place on the GEMM output: + bias, + residual (`with_sum`), activation.
1x1 stride-1 convolutions are a plain GEMM on the input; depthwise convolutions are a
multiply-add per kernel tap over contiguous channel vectors.

`_hs_affine`: y = act(x * scale + shift) along one axis (an inference BatchNorm that could not be
folded into a convolution, with its ReLU fused), in place on the output buffer.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from ..base import ShapeError
from . import _parallel
from ._nnutil import CF, prod
from .attrs import Bool, Int, Shape, Str
from .registry import register

ACTS = ("none", "relu", "clip", "sigmoid", "tanh")

# -- per-thread scratch buffers ----------------------------------------------------------------
_SCRATCH_BYTES = 96 << 20     # per thread; least recently used buffers are dropped beyond it
_tls = threading.local()


def scratch(key: tuple, shape: tuple, dtype, zero: bool = False) -> np.ndarray:
    """A buffer private to this thread, reused across calls with the same key. With `zero`, it is
    zero-filled once at creation and callers only ever write the same positions into it."""
    cache: OrderedDict | None = getattr(_tls, "bufs", None)
    if cache is None:
        cache = _tls.bufs = OrderedDict()
        _tls.nbytes = 0
    k = (key, shape, dtype, zero)
    buf = cache.get(k)
    if buf is not None:
        return buf
    buf = np.zeros(shape, dtype) if zero else np.empty(shape, dtype)
    cache[k] = buf
    _tls.nbytes += buf.nbytes
    while _tls.nbytes > _SCRATCH_BYTES and len(cache) > 1:
        _, old = cache.popitem(last=False)
        _tls.nbytes -= old.nbytes
    return buf


def clear_scratch() -> None:
    """Drop this thread's scratch buffers (tests, memory measurements)."""
    _tls.bufs = OrderedDict()
    _tls.nbytes = 0


# -- geometry ------------------------------------------------------------------------------
def out_size(n, k, s, p, d):
    return (n + 2 * p - (d * (k - 1) + 1)) // s + 1


def tap_range(n, o, k_off, s, p):
    """Output positions [o0, o1) whose input index o*s + k_off - p lies in [0, n), and the first
    input index."""
    lo = -(-(p - k_off) // s) if p > k_off else 0
    hi = min(o, (n - 1 + p - k_off) // s + 1) if n - 1 + p - k_off >= 0 else 0
    lo = min(lo, o)
    hi = max(hi, lo)
    return lo, hi, lo * s + k_off - p


@lru_cache(maxsize=4096)
def taps(sp, osp, k, stride, pad, dilate):
    """For each kernel tap (i, j): (i, j, output slices, input slices) over the valid range."""
    res = []
    for i in range(k[0]):
        r0, r1, ih = tap_range(sp[0], osp[0], i * dilate[0], stride[0], pad[0])
        for j in range(k[1]):
            c0, c1, iw = tap_range(sp[1], osp[1], j * dilate[1], stride[1], pad[1])
            if r1 <= r0 or c1 <= c0:
                res.append((i, j, None, None))
                continue
            osl = (slice(r0, r1), slice(c0, c1))
            isl = (slice(ih, ih + (r1 - r0 - 1) * stride[0] + 1, stride[0]),
                   slice(iw, iw + (c1 - c0 - 1) * stride[1] + 1, stride[1]))
            res.append((i, j, osl, isl))
    return tuple(res)


def _full_tap(tp, osp):
    for t in tp:
        osl = t[2]
        if osl is not None and osl[0] == slice(0, osp[0]) and osl[1] == slice(0, osp[1]):
            return t
    return None


# -- epilogue ------------------------------------------------------------------------------
def apply_act(y: np.ndarray, act: str, lo: float = 0.0, hi: float = 6.0) -> np.ndarray:
    """Activation in place on y."""
    if act == "relu":
        np.maximum(y, y.dtype.type(0), out=y)
    elif act == "clip":
        np.clip(y, y.dtype.type(lo), y.dtype.type(hi), out=y)
    elif act == "sigmoid":
        with np.errstate(over="ignore"):
            np.negative(y, out=y)
            np.exp(y, out=y)
            y += 1
            np.reciprocal(y, out=y)
    elif act == "tanh":
        np.tanh(y, out=y)
    return y


# -- convolution ---------------------------------------------------------------------------
def im2col_nhwc(x, cols, tp):
    """cols (N, OH, OW, kh, kw, *ct) ← windows of x (N, H, W, *ct); cols' border stays zero."""
    for i, j, osl, isl in tp:
        if osl is not None:
            cols[(slice(None),) + osl + (i, j)] = x[(slice(None),) + isl]


def choose_algo(w_shape, k, stride, pad, dilate, groups, data_layout) -> str:
    """The `_hs_conv2d` algorithm for a weight (F, C/g, kh, kw), decided from the weight alone."""
    F, C = w_shape[:2]
    if groups == 1 and data_layout == "NHWC" and tuple(stride) == (1, 1) \
            and tuple(k) != (1, 1) and 2 * F <= C:
        return "shift"
    return "gemm"


def prepare_weight(w: np.ndarray, groups: int, data_layout: str = "NHWC",
                   algo: str = "gemm") -> np.ndarray:
    """MXNet OIHW weight → the `_hs_conv2d` layout (done once, at optimisation time).
    groups == 1: (kh·kw·C, F) ((c, kh, kw) order for NCHW data); "shift": (C, kh·kw·F);
    "winograd": (16, C, F); depthwise (C/g == 1): (kh, kw, C, m); other groups:
    (g, kh·kw·Cg, F/g)."""
    F, Cg, kh, kw = w.shape
    if algo == "shift":
        return np.ascontiguousarray(w.transpose(1, 2, 3, 0).reshape(Cg, kh * kw * F))
    if algo == "winograd":
        return prepare_winograd_weight(w)
    if groups == 1:
        if data_layout == "NCHW":
            return np.ascontiguousarray(w.reshape(F, Cg * kh * kw).T)
        return np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(kh * kw * Cg, F))
    if Cg == 1:
        m = F // groups
        return np.ascontiguousarray(w.reshape(groups, m, kh, kw).transpose(2, 3, 0, 1))
    fg = F // groups
    return np.ascontiguousarray(
        w.reshape(groups, fg, Cg, kh, kw).transpose(0, 3, 4, 2, 1).reshape(groups, kh * kw * Cg, fg))


_COLS_BYTES = 8 << 20           # im2col working set per chunk (rows and samples)

# Winograd F(2x2, 3x3): Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A on 4x4 input tiles, 2x2 output tiles
_WG = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])


def winograd_ok(k, stride, pad, dilate, groups) -> bool:
    return (tuple(k) == (3, 3) and tuple(stride) == (1, 1) and tuple(pad) == (1, 1)
            and tuple(dilate) == (1, 1) and groups == 1)


def prepare_winograd_weight(w: np.ndarray) -> np.ndarray:
    """OIHW 3x3 weight → (16, C, F): the 4x4 transformed kernels G g Gᵀ, GEMM-ready."""
    u = np.einsum("ik,fckl,jl->ijcf", _WG, w.astype(np.float64), _WG)
    F, C = w.shape[:2]
    return np.ascontiguousarray(u.reshape(16, C, F).astype(w.dtype))


def _winograd(x, w, b, out):
    """3x3 / stride 1 / pad 1 convolution of NHWC x by Winograd F(2x2, 3x3): 8 vectorised adds
    transform the input tiles, one batched matmul (16 GEMMs of (tiles, C) x (C, F)), 8 adds
    transform back straight into the output; the bias joins the centre element of the product
    (it reaches all four outputs of a tile). 2.25x fewer multiplies than im2col + GEMM."""
    N, H, W, C = x.shape
    F = w.shape[2]
    th, tw = (H + 1) // 2, (W + 1) // 2
    step = max(1, min(N, _COLS_BYTES // max(1, 16 * th * tw * max(C, F) * x.itemsize)))
    even = H % 2 == 0 and W % 2 == 0
    for n0 in range(0, N, step):
        n1 = min(N, n0 + step)
        n = n1 - n0
        T = n * th * tw
        key = ("wino", n, H, W, C)
        xp = scratch(key, (n, 2 * th + 2, 2 * tw + 2, C), x.dtype, zero=True)
        xp[:, 1:H + 1, 1:W + 1] = x[n0:n1]
        s = xp.strides
        # rows[i] (n, th, tw, 4, C): input row 2*ti + i, columns 2*tj + j for j = 0..3
        rows = [np.lib.stride_tricks.as_strided(
            xp[:, i:], (n, th, tw, 4, C), (s[0], 2 * s[1], 2 * s[2], s[2], s[3]), writeable=False)
            for i in range(4)]
        t = scratch(("wino_t", T, C), (4, n, th, tw, 4, C), x.dtype)
        np.subtract(rows[0], rows[2], out=t[0])
        np.add(rows[1], rows[2], out=t[1])
        np.subtract(rows[2], rows[1], out=t[2])
        np.subtract(rows[1], rows[3], out=t[3])
        v = scratch(("wino_v", T, C), (4, 4, T, C), x.dtype)
        tc = t.reshape(4, T, 4, C)
        np.subtract(tc[:, :, 0], tc[:, :, 2], out=v[:, 0])
        np.add(tc[:, :, 1], tc[:, :, 2], out=v[:, 1])
        np.subtract(tc[:, :, 2], tc[:, :, 1], out=v[:, 2])
        np.subtract(tc[:, :, 1], tc[:, :, 3], out=v[:, 3])
        m = scratch(("wino_m", T, F), (16, T, F), out.dtype)
        np.matmul(v.reshape(16, T, C), w, out=m)
        if b is not None:
            m[5] += b
        m4 = m.reshape(4, 4, T, F)
        sc = scratch(("wino_s", T, F), (2, 4, T, F), out.dtype)
        np.add(m4[0], m4[1], out=sc[0])
        sc[0] += m4[2]
        np.subtract(m4[1], m4[2], out=sc[1])
        sc[1] -= m4[3]
        if even:
            y = out[n0:n1]
        else:
            y = scratch(("wino_y", n, th, tw, F), (n, 2 * th, 2 * tw, F), out.dtype)
        yv = y.reshape(n, th, 2, tw, 2, F).transpose(2, 4, 0, 1, 3, 5)   # (a, b, n, th, tw, F)
        s5 = sc.reshape(2, 4, n, th, tw, F)
        y0, y1 = yv[:, 0], yv[:, 1]
        np.add(s5[:, 0], s5[:, 1], out=y0)
        y0 += s5[:, 2]
        np.subtract(s5[:, 1], s5[:, 2], out=y1)
        y1 -= s5[:, 3]
        if not even:
            out[n0:n1] = y[:, :H, :W]


@lru_cache(maxsize=4096)
def part_taps(sp, osp, k, stride, pad, dilate, r0, r1):
    """taps(...) restricted to output rows [r0, r1), output slices relative to r0."""
    res = []
    s = stride[0]
    for i, j, osl, isl in taps(sp, osp, k, stride, pad, dilate):
        if osl is None:
            continue
        a, b = max(osl[0].start, r0), min(osl[0].stop, r1)
        if a >= b:
            continue
        ih = isl[0].start + (a - osl[0].start) * s
        res.append((i, j, (slice(a - r0, b - r0), osl[1]),
                    (slice(ih, ih + (b - a - 1) * s + 1, s), isl[1])))
    return tuple(res)


def _row_parts(N, OH, work):
    """Split (batch, output rows) into parts for the helper threads: [(n0, n1, r0, r1)]."""
    return _row_parts_cached(N, OH, work > _MIN_PAR, _parallel._nthreads)


@lru_cache(maxsize=1024)
def _row_parts_cached(N, OH, big, nthreads):
    if N > 1:
        k = _parallel.parts(N) if big else 1
        return tuple((a, b, 0, OH) for a, b in _parallel.split(N, k))
    k = _parallel.parts(OH) if big else 1
    return tuple((0, 1, a, b) for a, b in _parallel.split(OH, k))


_MIN_PAR = 1 << 17              # elements of work below which an op is not split


def conv2d_nhwc(x, w, b, res, k, stride, pad, dilate, groups, num_filter, act="none",
                lo=0.0, hi=6.0, data_layout="NHWC", out=None, algo="gemm"):
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
    # work in "element passes": output elements, or multiply-adds / 16 for the GEMMs
    work = max(N * osp[0] * osp[1] * max(F, C), N * osp[0] * osp[1] * F * k[0] * k[1] * Cg // 16)
    if groups == 1 and algo == "shift":
        body = _shift_part
        work = N * H * W * C * k[0] * k[1] * F // 16
    elif groups == 1 and algo == "winograd":
        _winograd(x, w, b, out)
        return _epilogue_all(out, None, res, act, lo, hi)
    elif groups == 1 and data_layout == "NCHW":
        body = _nchw_in_part
    elif groups == 1 and (k[0] == 1 and k[1] == 1 and not any(pad) or _parallel._nthreads > 1
                          and N * osp[0] * osp[1] < _SMALL_M and F >= 64 * _parallel._nthreads):
        # few output pixels: split the GEMM over output channels instead of rows (each thread
        # reads only its share of the weights, and keeps a GEMM of full height)
        if N * osp[0] * osp[1] < _SMALL_M and _parallel._nthreads > 1 \
                and F >= 64 * _parallel._nthreads and work > _MIN_PAR:
            return _conv_split_f(x, w, b, res, (k, stride, pad, dilate, osp, tp), out, act, lo, hi)
        body = _1x1_part if k[0] == 1 and k[1] == 1 and not any(pad) else _im2col_part
    elif groups == 1:
        body = _im2col_part
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
        _epilogue(o, b, None if res is None else res[n0:n1, r0:r1], act, lo, hi)
    _parallel.run(run, len(prts))
    return out


_SMALL_M = 256                  # output pixels below which a GEMM is split over output channels


def _conv_split_f(x, w, b, res, geo, out, act, lo, hi):
    """Columns once (by the caller), then each helper thread runs the GEMM and the epilogue for
    its block of output channels."""
    k, stride, pad, dilate, osp, sp = geo
    N, H, W, C = x.shape
    F = out.shape[3]
    if k[0] == 1 and k[1] == 1 and not any(pad):
        xs = x[:, ::stride[0], ::stride[1]]
        if not xs.flags.c_contiguous:
            buf = scratch(("1x1f",), xs.shape, x.dtype)
            np.copyto(buf, xs)
            xs = buf
        cols = xs.reshape(-1, C)
    else:
        ptp = part_taps(sp, osp, k, stride, pad, dilate, 0, osp[0])
        c6 = scratch(("colsf", sp, k, stride, pad, dilate), (N,) + osp + (k[0], k[1], C),
                     x.dtype, zero=True)
        im2col_nhwc(x, c6, ptp)
        cols = c6.reshape(N * osp[0] * osp[1], -1)
    o2 = out.reshape(-1, F)
    blocks = _parallel.split(F, _parallel.parts(F, 64))

    def run(i):
        f0, f1 = blocks[i]
        ov = o2[:, f0:f1]
        np.matmul(cols, w[:, f0:f1], out=ov)
        _epilogue(ov, None if b is None else b[f0:f1],
                  None if res is None else res.reshape(-1, F)[:, f0:f1], act, lo, hi)
    _parallel.run(run, len(blocks))
    return out


def _epilogue(o, b, res, act, lo, hi):
    if b is not None:
        o += b
    if res is not None:
        o += res
    if act != "none":
        apply_act(o, act, lo, hi)


def _epilogue_all(out, b, res, act, lo, hi):
    N, OH = out.shape[:2]
    prts = _row_parts(N, OH, out.size)

    def run(i):
        n0, n1, r0, r1 = prts[i]
        _epilogue(out[n0:n1, r0:r1], b, None if res is None else res[n0:n1, r0:r1], act, lo, hi)
    _parallel.run(run, len(prts))
    return out


def _1x1_part(x, w, geo, o, r0, r1):
    k, stride, pad, dilate, osp, tp = geo
    n = x.shape[0]
    xs = x[:, r0 * stride[0]:(r1 - 1) * stride[0] + 1:stride[0], ::stride[1]]
    if not xs.flags.c_contiguous:
        buf = scratch(("1x1", r0, r1), xs.shape, x.dtype)
        np.copyto(buf, xs)
        xs = buf
    np.matmul(xs.reshape(-1, x.shape[3]), w, out=o.reshape(-1, o.shape[3]))
    del n


@lru_cache(maxsize=1024)
def _im2col_chunks(N, sp, osp, k, stride, pad, dilate, C, itemsize, r0, r1, budget):
    """[(n0, n1, a, b, taps, scratch key, cols shape)]: row/sample chunks of one part."""
    OW = osp[1]
    K = k[0] * k[1] * C
    rows_per = max(1, min(r1 - r0, budget // max(1, OW * K * itemsize)))
    nper = max(1, min(N, budget // max(1, (r1 - r0) * OW * K * itemsize))) \
        if rows_per >= r1 - r0 else 1
    res = []
    for n0 in range(0, N, nper):
        n1 = min(N, n0 + nper)
        for a in range(r0, r1, rows_per):
            b = min(r1, a + rows_per)
            ptp = part_taps(sp, osp, k, stride, pad, dilate, a, b)
            sig = tuple((t[0], t[1], t[2][0].start, t[2][0].stop) for t in ptp)
            res.append((n0, n1, a - r0, b - r0, ptp, ("cols", sp, k, stride, pad, dilate, sig),
                        (n1 - n0, b - a, OW, k[0], k[1], C)))
    return tuple(res)


def _im2col_part(x, w, geo, o, r0, r1):
    """im2col + GEMM over output rows [r0, r1) of every sample, in chunks of rows whose columns
    fit `_COLS_BYTES` (cache-resident between the copy and the GEMM). Chunks with the same
    zero-border pattern share one scratch buffer."""
    k, stride, pad, dilate, osp, sp = geo
    N = x.shape[0]
    C = x.shape[3]
    F = o.shape[3]
    K = k[0] * k[1] * C
    dt = x.dtype
    for n0, n1, a, b, ptp, key, shape in _im2col_chunks(N, sp, osp, k, stride, pad, dilate, C,
                                                        x.itemsize, r0, r1, _COLS_BYTES):
        cols = scratch(key, shape, dt, zero=True)
        im2col_nhwc(x[n0:n1], cols, ptp)
        ov = o[n0:n1, a:b]
        np.matmul(cols.reshape(-1, K), w,
                  out=ov.reshape(-1, F) if n1 - n0 == 1 else _contig_rows(o, n0, n1, a, b, F))


def _contig_rows(o, n0, n1, a, b, F):
    v = o[n0:n1, a:b]
    if not v.flags.c_contiguous:
        raise AssertionError("im2col chunk of several samples must cover whole images")
    return v.reshape(-1, F)


def _nchw_in_part(x, w, geo, o, r0, r1):
    """groups == 1 with NCHW data (the graph's input): im2col in (C, kh, kw, OH, OW) order, whose
    copies run along contiguous input rows, then out (P, F) = colsᵀ · w."""
    k, stride, pad, dilate, osp, tp = geo
    N, C, H, W = x.shape
    rows = r1 - r0
    P = rows * osp[1]
    K = C * k[0] * k[1]
    ptp = part_taps(tp, osp, k, stride, pad, dilate, r0, r1)
    key = ("colsT", C, H, W, tuple(k), tuple(stride), tuple(pad), tuple(dilate), r0, r1)
    cols = scratch(key, (C, k[0], k[1], rows, osp[1]), x.dtype, zero=True)
    for n in range(N):
        xn = x[n]
        for i, j, osl, isl in ptp:
            cols[(slice(None), i, j) + osl] = xn[(slice(None),) + isl]
        np.matmul(cols.reshape(K, P).T, w, out=o[n].reshape(P, -1))


def _shift_part(x, w, geo, o, r0, r1):
    """Stride-1 convolution with few filters (F < C): Z = x · W (C, kh·kw·F), one GEMM over the
    input pixels, then out = Σ_taps Z[shifted by the tap, tap] over each tap's valid range. Writes
    kh·kw·F values per input pixel instead of im2col's kh·kw·C."""
    k, stride, pad, dilate, osp, tp = geo
    N, H, W, C = x.shape
    F = o.shape[3]
    ptp = part_taps(tp, osp, k, stride, pad, dilate, r0, r1)
    # input rows this part reads
    i0 = max(0, r0 - pad[0])
    i1 = min(H, r1 - 1 - pad[0] + (k[0] - 1) * dilate[0] + 1)
    xs = x[:, i0:i1]
    if not xs.flags.c_contiguous:
        buf = scratch(("shift_x", i0, i1), xs.shape, x.dtype)
        np.copyto(buf, xs)
        xs = buf
    z = scratch(("shift_z", i0, i1, F), (N, i1 - i0, W, k[0], k[1], F), o.dtype)
    np.matmul(xs.reshape(-1, C), w, out=z.reshape(-1, k[0] * k[1] * F))
    full = None
    for t in ptp:
        if t[2][0] == slice(0, r1 - r0) and t[2][1] == slice(0, osp[1]):
            full = t
            break
    if full is None:
        o[...] = 0
    else:
        i, j, osl, isl = full
        np.copyto(o, z[:, isl[0].start - i0:isl[0].stop - i0, isl[1], i, j])
    for t in ptp:
        if t is full:
            continue
        i, j, osl, isl = t
        ov = o[(slice(None),) + osl]
        ov += z[:, isl[0].start - i0:isl[0].stop - i0, isl[1], i, j]


@lru_cache(maxsize=1024)
def _pad_hi(sp, osp, k, stride, pad, dilate):
    """Bottom/right padding so that every window lies inside the padded buffer."""
    return tuple(max(0, (osp[i] - 1) * stride[i] + dilate[i] * (k[i] - 1) + 1 - pad[i] - sp[i])
                 for i in range(2))


def _pad_nhwc(x, pad, hi=None):
    """x (N, H, W, C) copied into this thread's zero-bordered padded scratch."""
    N, H, W, C = x.shape
    hi = pad if hi is None else hi
    xp = scratch(("pad", pad, hi), (N, H + pad[0] + hi[0], W + pad[1] + hi[1], C), x.dtype,
                 zero=True)
    xp[:, pad[0]:pad[0] + H, pad[1]:pad[1] + W] = x
    return xp


_TILED: dict = {}


def _tiled_weight(w3, OW):
    """Depthwise weight (kh, kw, C) tiled along OW: (kh, kw, OW·C), cached per weight array."""
    key = (id(w3), w3.shape, OW)
    hit = _TILED.get(key)
    if hit is not None and hit[0] is w3:
        return hit[1]
    kh, kw, C = w3.shape
    wt = np.ascontiguousarray(np.broadcast_to(w3[:, :, None, :], (kh, kw, OW, C))).reshape(
        kh, kw, OW * C)
    if len(_TILED) > 512:
        _TILED.clear()
    _TILED[key] = (w3, wt)
    return wt


def _depthwise_einsum(xp, w3, geo, o, r0, r1):
    """Depthwise, multiplier 1, on the padded input: one einsum over a strided window view
    (multiply-accumulate over the kernel taps in a single pass). With unit width stride the
    (OW, C) axes merge into one long contiguous inner loop (weights tiled along OW)."""
    k, stride, pad, dilate, osp, tp = geo
    N, Hp, Wp, C = xp.shape
    st = xp.strides
    rows = r1 - r0
    off = r0 * stride[0] * st[1]
    if stride[1] == 1:
        OWC = osp[1] * C
        v = np.ndarray((N, rows, k[0], k[1], OWC), xp.dtype, xp, off,
                       (st[0], st[1] * stride[0], st[1] * dilate[0], st[2] * dilate[1], st[3]))
        np.einsum("nhijk,ijk->nhk", v, _tiled_weight(w3, osp[1]),
                  out=o.reshape(N, rows, OWC))
    else:
        v = np.ndarray((N, rows, osp[1], k[0], k[1], C), xp.dtype, xp, off,
                       (st[0], st[1] * stride[0], st[2] * stride[1], st[1] * dilate[0],
                        st[2] * dilate[1], st[3]))
        np.einsum("nhwijc,ijc->nhwc", v, w3, out=o)


def _depthwise_part(x, w, geo, o, r0, r1):
    """Depthwise (C/g == 1, channel multiplier m): per kernel tap, one multiply into a scratch
    and one add into the output, over the tap's valid output range (no padded copy)."""
    k, stride, pad, dilate, osp, tp = geo
    N, H, W, C = x.shape
    m = w.shape[3]
    o5 = o.reshape(o.shape[:3] + (C, m))
    xv = x[..., None]                                  # (N, H, W, C, 1): broadcast over m
    ptp = part_taps(tp, osp, k, stride, pad, dilate, r0, r1)
    full = None
    for t in ptp:
        if t[2][0] == slice(0, r1 - r0) and t[2][1] == slice(0, osp[1]):
            full = t
            break
    if full is None:
        o5[...] = 0
    else:
        i, j, osl, isl = full
        np.multiply(xv[(slice(None),) + isl], w[i, j], out=o5)
    tmp = scratch(("dw", r0, r1), o5.shape, o.dtype)
    for t in ptp:
        if t is full:
            continue
        i, j, osl, isl = t
        idx = (slice(None),) + osl
        tv = tmp[idx]
        np.multiply(xv[(slice(None),) + isl], w[i, j], out=tv)
        o5[idx] += tv


def _grouped_nhwc(x, w, k, stride, pad, dilate, groups, osp, out):
    """General groups: im2col in (g, N, OH, OW, kh, kw, Cg) order, one batched matmul over the
    groups, one transposing copy into the (N, OH, OW, g, F/g) output."""
    N, H, W, C = x.shape
    Cg = C // groups
    fg = w.shape[2]
    P = osp[0] * osp[1]
    K = k[0] * k[1] * Cg
    tp = taps((H, W), osp, k, stride, pad, dilate)
    key = ("gcols", N, H, W, tuple(k), tuple(stride), tuple(pad), tuple(dilate), groups)
    cols = scratch(key, (groups, N) + osp + (k[0], k[1], Cg), x.dtype, zero=True)
    im2col_nhwc(x.reshape(N, H, W, groups, Cg).transpose(3, 0, 1, 2, 4)
                .reshape(groups * N, H, W, Cg), cols.reshape((groups * N,) + cols.shape[2:]), tp)
    res = np.matmul(cols.reshape(groups, N * P, K), w)          # (g, NP, F/g)
    out.reshape(N * P, groups, fg)[...] = res.transpose(1, 0, 2)


def _hs_conv_inputs(a):
    names = ["data", "weight"]
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
                 "no_bias": Bool(False), "with_sum": Bool(False),
                 "act_type": Str("none", choices=ACTS), "a_min": CF(0.0), "a_max": CF(6.0),
                 "data_layout": Str("NHWC", choices=("NHWC", "NCHW")),
                 "algo": Str("gemm", choices=("gemm", "shift", "winograd"))}


@register("_hs_conv2d", attrs=HS_CONV_ATTRS, inputs=_hs_conv_inputs, infer_shape=_hs_conv_shape,
          strict=True, out=True, flops=_hs_conv_flops)
def hs_conv2d(a, x, w, *rest, out=None):
    """Channels-last 2-D convolution with GEMM-ready weight and fused bias/residual/activation."""
    rest = list(rest)
    b = None if a.no_bias else rest.pop(0)
    res = rest.pop(0) if a.with_sum else None
    return conv2d_nhwc(x, w, b, res, tuple(a.kernel), tuple(a.stride), tuple(a.pad),
                       tuple(a.dilate), a.num_group, a.num_filter, a.act_type, a.a_min, a.a_max,
                       a.data_layout, out, a.algo)


