"""Winograd convolution F(m×m, 3×3), m = 2 or 4, for `_hs_conv2d` (3×3, stride 1, pad 1, NHWC).

Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A on (m+2)² input tiles that overlap by 2: F(4, 3) needs 36
multiplies per 16 outputs where im2col + GEMM needs 144, and its transformed input is 2.25× the
input instead of im2col's 9× — so it saves both the GEMM work and the im2col copy.

Every transform is a few whole-array NumPy passes over contiguous slabs, never per-tile Python:
the row transform reads input rows `4·t + r` of all tiles at once (a stride-4 view whose rows are
contiguous), the column transform reads columns of those slabs (runs of C contiguous floats), and
both use the common sub-expressions of Bᵀ / Aᵀ (18 and 13 passes for 6 and 4 outputs). The bias
joins M[1, 1], whose column of Aᵀ is all ones, so it reaches every output for 1/(m+2)² of a pass.

Work is split into chunks of (sample, tile-row) ranges whose transformed input fits a cache-sized
budget; chunks are independent (transform, 36 GEMMs, back-transform), so the intra-op threads run
them without synchronising.
"""
from __future__ import annotations

import weakref
from functools import lru_cache

import numpy as np

from . import _parallel
from ._nhwc_util import scratch

_G = {2: np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]]),
      4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                   [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])}
_CHUNK_BYTES = 4 << 20          # transformed input + product of one chunk


def ok(k, stride, pad, dilate, groups) -> bool:
    return (tuple(k) == (3, 3) and tuple(stride) == (1, 1) and tuple(pad) == (1, 1)
            and tuple(dilate) == (1, 1) and groups == 1)


def choose_tile(N: int, H: int, W: int, C: int, F: int, gemm_parallel: bool = False) -> int:
    """0 (use im2col + GEMM), 2 or 4: the tile that pays for this layer (measured on ResNet
    shapes, bench/RESULTS.md). The transforms are whole-array passes, so they pay only with wide
    channels; the batched GEMM of the tiles needs enough tiles to run near BLAS speed; F(4, 3)'s
    transformed weight is 4x the 3x3 weight, so it is kept to narrower layers. When BLAS threads
    parallelise the GEMMs but nothing else (`gemm_parallel`), im2col's one big GEMM scales and
    the transforms do not: only F(2, 3) on the widest mid-size layers still wins."""
    if C < 64 or F < 64:
        return 0
    tiles2 = N * -(-H // 2) * -(-W // 2)
    if gemm_parallel:
        return 2 if C >= 256 and F >= 256 and H >= 14 and W >= 14 and tiles2 >= 40 else 0
    if N * -(-H // 4) * -(-W // 4) >= 40 and C <= 128 and F <= 128:
        return 4
    if tiles2 >= 40:
        return 2
    return 0


def transform_weight(w: np.ndarray, m: int) -> np.ndarray:
    """OIHW 3×3 weight → ((m+2)², C, F): G g Gᵀ per (filter, channel), GEMM-ready (float64 math)."""
    g = _G[m]
    u = np.einsum("ik,fckl,jl->ijcf", g, w.astype(np.float64), g)
    a = m + 2
    return np.ascontiguousarray(u.reshape(a * a, w.shape[1], w.shape[0]).astype(w.dtype))


_FROM_GEMM: dict[int, tuple] = {}


def from_gemm_weight(wg: np.ndarray, m: int) -> np.ndarray:
    """The transformed weight of an im2col-layout weight (9·C, F), cached while `wg` lives."""
    key = id(wg)
    hit = _FROM_GEMM.get(key)
    if hit is not None and hit[0]() is wg and m in hit[1]:
        return hit[1][m]
    C, F = wg.shape[0] // 9, wg.shape[1]
    u = transform_weight(wg.reshape(3, 3, C, F).transpose(3, 2, 0, 1), m)
    if hit is None or hit[0]() is not wg:
        hit = (weakref.ref(wg), {})
        _FROM_GEMM[key] = hit
        weakref.finalize(wg, _FROM_GEMM.pop, key, None)
    hit[1][m] = u
    return u


# -- transforms (common sub-expressions of Bᵀ and Aᵀ) ---------------------------------------------
def _bt4(d, o, t):
    """o[0..5] = Bᵀ d for F(4, 3); d: 6 input views, o: 6 outputs, t: 2 temporaries."""
    np.subtract(d[4], d[2], out=o[3])                    # c = d4 - d2
    np.subtract(d[0], d[2], out=o[0])
    o[0] *= 4
    o[0] += o[3]                                         # 4(d0 - d2) + (d4 - d2)
    np.subtract(d[1], d[3], out=o[5])
    o[5] *= 4
    o[5] += d[5]
    o[5] -= d[3]                                         # 4(d1 - d3) + (d5 - d3)
    np.multiply(d[2], 4, out=t[0])
    np.subtract(d[4], t[0], out=t[0])                    # a = d4 - 4 d2
    np.multiply(d[1], 4, out=t[1])
    np.subtract(d[3], t[1], out=t[1])                    # b = d3 - 4 d1
    np.add(t[0], t[1], out=o[1])
    np.subtract(t[0], t[1], out=o[2])
    np.subtract(d[3], d[1], out=t[0])
    t[0] *= 2                                            # e = 2 (d3 - d1)
    np.subtract(o[3], t[0], out=o[4])
    o[3] += t[0]


def _bt2(d, o, t):
    np.subtract(d[0], d[2], out=o[0])
    np.add(d[1], d[2], out=o[1])
    np.subtract(d[2], d[1], out=o[2])
    np.subtract(d[1], d[3], out=o[3])


def _at4(s, y, t):
    """y[0..3] = Aᵀ s for F(4, 3); s: 6 views, y: 4 outputs (written once each: they may be
    strided views of the result), t: 5 temporaries."""
    p, q, r, u, w = t
    np.add(s[1], s[2], out=p)
    np.subtract(s[1], s[2], out=q)
    np.add(s[3], s[4], out=r)
    np.subtract(s[3], s[4], out=u)
    np.add(s[0], p, out=w)
    np.add(w, r, out=y[0])
    np.multiply(u, 2, out=w)
    np.add(q, w, out=y[1])
    np.multiply(r, 4, out=w)
    np.add(p, w, out=y[2])
    np.multiply(u, 8, out=w)
    w += q
    np.add(w, s[5], out=y[3])


def _at2(s, y, t):
    np.add(s[0], s[1], out=t[0])
    np.add(t[0], s[2], out=y[0])
    np.subtract(s[1], s[2], out=t[0])
    np.subtract(t[0], s[3], out=y[1])


_BT = {2: _bt2, 4: _bt4}
_AT = {2: _at2, 4: _at4}


# -- the convolution ---------------------------------------------------------------------------------
@lru_cache(maxsize=1024)
def _chunks(N, th, tw, a, C, F, itemsize, nthreads):
    """[(n0, n1, r0, r1)]: samples × tile rows whose transformed input + product fit the budget,
    at least one per helper thread when there is enough work."""
    per_row = a * a * tw * (C + F) * itemsize
    rows = max(1, min(th, _CHUNK_BYTES // max(1, per_row)))
    if nthreads > 1 and N == 1:
        rows = min(rows, -(-th // nthreads))
    if rows < th:
        return tuple((n, n + 1, r, min(th, r + rows)) for n in range(N) for r in range(0, th, rows))
    ns = max(1, min(N, _CHUNK_BYTES // max(1, per_row * th)))
    if nthreads > 1 and N > 1:
        ns = min(ns, -(-N // nthreads))
    return tuple((n, min(N, n + ns), 0, th) for n in range(0, N, ns))


def conv3x3(x: np.ndarray, u: np.ndarray, m: int, b, out: np.ndarray) -> np.ndarray:
    """out (N, H, W, F) ← 3×3 / stride 1 / pad 1 convolution of x (N, H, W, C) with the
    transformed weight u ((m+2)², C, F), plus bias b (or None). No activation/residual."""
    N, H, W, C = x.shape
    F = u.shape[2]
    a = m + 2
    th, tw = -(-H // m), -(-W // m)
    # zero-bordered padded input, columns stored phase-major: padded column m·j + ph at [ph, j],
    # so that the column transform reads runs of whole tile rows (see _chunk)
    # keyed by (H, W) too: sizes that share a tile grid must not share a stale border
    xp = scratch(("wino_x", m, H, W), (N, m * th + 2, m, tw + 1, C), x.dtype, zero=True)
    for ph in range(m):
        j0 = 1 if ph == 0 else 0                    # padded column 0 is the left border
        src = x[:, :, m * j0 + ph - 1::m]
        xp[:, 1:H + 1, ph, j0:j0 + src.shape[2]] = src
    exact = H == m * th and W == m * tw
    y = out if exact else scratch(("wino_y", m), (N, m * th, m * tw, F), out.dtype)
    parts = _chunks(N, th, tw, a, C, F, x.itemsize, _parallel._nthreads)

    def run(i):
        n0, n1, r0, r1 = parts[i]
        _chunk(xp[n0:n1], u, m, b, y[n0:n1], r0, r1, tw)
    _parallel.run(run, len(parts))
    if not exact:
        np.copyto(out, y[:, :H, :W])
    return out


def _chunk(xp, u, m, b, y, r0, r1, tw):
    n, C, F = xp.shape[0], xp.shape[4], u.shape[2]
    a, rows = m + 2, r1 - r0
    T = n * rows * tw
    dt = xp.dtype
    # rows pass: t[k] = Σ_r Bᵀ[k, r] · padded row m·t + r (whole rows, phase-major columns)
    t = scratch(("wino_t", m), (a, n, rows, m, tw + 1, C), dt)
    tmp = scratch(("wino_tt", m), (2, n, rows, m, tw + 1, C), dt)
    _BT[m]([xp[:, m * r0 + r: m * r1 + r: m] for r in range(a)], t, tmp)
    # columns pass, all k at once: v[k, l] = Σ_c Bᵀ[l, c] · t[k] column m·j + c, which is
    # phase c % m, tile j + c // m: contiguous runs of tw·C
    v = scratch(("wino_v", m), (a, a, n, rows, tw, C), dt)
    tmp2 = scratch(("wino_vt", m), (2, a, n, rows, tw, C), dt)
    _BT[m]([t[:, :, :, c % m, c // m: c // m + tw] for c in range(a)],
           [v[:, l_] for l_ in range(a)], tmp2)
    prod_ = scratch(("wino_m", m), (a, a, T, F), dt)
    np.matmul(v.reshape(a * a, T, C), u, out=prod_.reshape(a * a, T, F))
    if b is not None:
        prod_[1, 1] += b                        # Aᵀ's column 1 is all ones
    # back, all l at once: s[i, l] = Σ_k Aᵀ[i, k] · M[k, l]; then y[i, j] = Σ_l Aᵀ[j, l] · s[i, l]
    s = scratch(("wino_s", m), (m, a, T, F), dt)
    tmp3 = scratch(("wino_st", m), (5, a, T, F), dt)
    _AT[m]([prod_[k] for k in range(a)], s, tmp3)
    yv = y[:, m * r0: m * r1].reshape(n, rows, m, tw, m, F).transpose(2, 4, 0, 1, 3, 5)
    s6 = s.reshape(m, a, n, rows, tw, F)
    _AT[m]([s6[:, l_] for l_ in range(a)], [yv[:, j] for j in range(m)],
           [tt[:m].reshape(m, n, rows, tw, F) for tt in tmp3])
