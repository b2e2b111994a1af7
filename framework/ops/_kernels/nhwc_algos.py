"""Alternative convolution algorithms of `_hs_conv2d` (ops/compiled/nhwc.py) (Winograd: ops/_kernels/winograd.py):
the "shift" GEMM for convolutions with few filters, depthwise and grouped convolutions."""
from __future__ import annotations

import numpy as np

from . import nhwc_util as _u
from .. import parallel
from .nhwc_util import (_epilogue, im2col_nhwc, part_taps,
                         scratch, taps)

_COLS_BYTES = 8 << 20

def _conv_shift(x, w, b, res, geo, out, act, lo, hi):
    """Stride-1 convolution with few filters (F < C/2), channels-last. One GEMM over the padded
    input pixels for all the taps at once, transposed so that each (filter, tap) row is
    contiguous over the pixels: Z (F·kh·kw, pixels) = W · xpᵀ. On the padded-width pixel grid a
    tap is a constant shift, so out = Σ_taps Z[:, tap, shifted]: kh·kw - 1 adds with long
    contiguous rows, then one transposing copy into NHWC. Writes kh·kw·F values per pixel
    instead of im2col's kh·kw·C. Filter blocks go to the intra-op threads."""
    k, stride, pad, dilate, osp, sp = geo
    N, Hp, Wp, C = x.shape                         # x: the padded input
    F = out.shape[3]
    T = k[0] * k[1]
    L = N * Hp * Wp
    extra = (k[1] - 1) * dilate[1]
    zt = scratch(("shiftz",), (F, T, L + extra), out.dtype)
    if extra:
        zt[:, :, L:] = 0
    acc = scratch(("shifta",), (F, L), out.dtype)
    M = L - (Hp - osp[0]) * Wp                      # last needed position + 1 (padded grid)
    xt = x.reshape(L, C).T
    offs = [(i * k[1] + j, i * dilate[0] * Wp + j * dilate[1])
            for i in range(k[0]) for j in range(k[1])]
    blocks = parallel.split(F, parallel.parts(F, 8) if L * C * T * F // 16 > _u._MIN_PAR else 1)

    def run(q):
        f0, f1 = blocks[q]
        z = zt[f0:f1]
        np.matmul(w[f0 * T:f1 * T], xt, out=z.reshape((f1 - f0) * T, L + extra)[:, :L])
        a = acc[f0:f1, :M]
        (t0, o0), (t1, o1) = offs[0], offs[1]
        np.add(z[:, t0, o0:o0 + M], z[:, t1, o1:o1 + M], out=a)
        for t, off in offs[2:]:
            a += z[:, t, off:off + M]
        src = acc[f0:f1].reshape(f1 - f0, N, Hp, Wp)[:, :, :osp[0], :osp[1]]
        o = out[..., f0:f1]
        np.copyto(o, src.transpose(1, 2, 3, 0))
        _epilogue(o, None if b is None else b[f0:f1], None if res is None else res[..., f0:f1],
                  act, lo, hi)
    parallel.run(run, len(blocks))
    return out


_TILED: dict = {}
_SHIFT_MIN_PIXELS = 28 * 28
_RELAID: dict = {}


def _shift_to_gemm(w, k, F):
    """"shift" weight (F·kh·kw, C) → the im2col layout (kh·kw·C, F), cached per weight array."""
    key = id(w)
    hit = _RELAID.get(key)
    if hit is not None and hit[0] is w:
        return hit[1]
    C = w.shape[1]
    g = np.ascontiguousarray(w.reshape(F, k[0], k[1], C).transpose(1, 2, 3, 0).reshape(-1, F))
    if len(_RELAID) > 4096:
        _RELAID.clear()
    _RELAID[key] = (w, g)
    return g



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
