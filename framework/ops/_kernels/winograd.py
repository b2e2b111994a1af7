"""Winograd convolution F(m×m, 3×3), m = 2 or 4, for `_hs_conv2d` (3×3, stride 1, pad 1, NHWC).

Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A on (m+2)² input tiles that overlap by 2: F(4, 3) needs 36
multiplies per 16 outputs where im2col + GEMM needs 144, and its transformed input is 2.25× the
input instead of im2col's 9× — so it saves both the GEMM work and the im2col copy.

Both transforms are GEMMs, never per-tile Python or per-coefficient NumPy passes: the tiles of a
chunk are copied once, tap-major, into a ((m+2)², tiles·C) matrix (one strided copy, 2.25× the
input for F(4, 3)), the input transform is Bᵀ⊗Bᵀ times that matrix, the products are (m+2)²
GEMMs against the transformed weight, and the output transform is Aᵀ⊗Aᵀ times the products,
scattered back into NHWC by one strided copy. Whole-array transforms with the common
sub-expressions of Bᵀ / Aᵀ took ~25 memory passes and ran single-threaded; as GEMMs they read
and write each buffer once, at BLAS speed, and BLAS's own threads parallelise them. The bias
joins M[1, 1], whose column of Aᵀ is all ones, so it reaches every output for 1/(m+2)² of a pass.

Work is split into chunks of (sample, tile-row) ranges whose transformed input fits a cache-sized
budget; chunks are independent (transform, 36 GEMMs, back-transform), so the intra-op threads run
them without synchronising.
"""
from __future__ import annotations

import weakref
from functools import lru_cache

import numpy as np

from .. import parallel
from .nhwc_util import scratch

_G = {2: np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]]),
      4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                   [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])}
_CHUNK_BYTES = 4 << 20          # transformed input + product of one chunk


def ok(k, stride, pad, dilate, groups) -> bool:
    return (tuple(k) == (3, 3) and tuple(stride) == (1, 1) and tuple(pad) == (1, 1)
            and tuple(dilate) == (1, 1) and groups == 1)


def choose_tile(N: int, H: int, W: int, C: int, F: int) -> int:
    """0 (use im2col + GEMM), 2 or 4: the tile that pays for this layer (measured on ResNet
    shapes against im2col, serially and on 2 BLAS threads, bench/RESULTS.md). The tiles' batched
    GEMMs need wide channels and enough tiles to run near BLAS speed; F(4, 3)'s transformed
    weight is 4x the 3x3 weight, so it is kept to narrower layers."""
    if C < 64 or F < 64:
        return 0
    if N * -(-H // 4) * -(-W // 4) >= 40 and C <= 128 and F <= 128:
        return 4
    if N * -(-H // 2) * -(-W // 2) >= 40:
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


# -- transforms as GEMMs ------------------------------------------------------------------------------
_BT = {2: [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
       4: [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
           [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]}
_AT = {2: [[1, 1, 1, 0], [0, 1, -1, -1]],
       4: [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]}


@lru_cache(maxsize=8)
def _kron(m: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(Bᵀ⊗Bᵀ, Aᵀ⊗Aᵀ): the 2-D tile transforms as one matrix each, so that a whole chunk's input
    transform is one ((m+2)², (m+2)²) × ((m+2)², tiles·C) GEMM and its output transform one
    (m², (m+2)²) × ((m+2)², tiles·F) GEMM — BLAS speed, and BLAS threads, for the transforms."""
    bt, at = np.array(_BT[m], np.float64), np.array(_AT[m], np.float64)
    kb, ka = np.kron(bt, bt).astype(dtype), np.kron(at, at).astype(dtype)
    kb.flags.writeable = ka.flags.writeable = False
    return kb, ka


# -- the convolution ---------------------------------------------------------------------------------
@lru_cache(maxsize=1024)
def _chunks(N, th, tw, a, C, F, itemsize, nthreads):
    """[(n0, n1, r0, r1)]: samples × tile rows whose two work buffers fit the budget, at least
    one per helper thread when there is enough work."""
    per_row = 2 * a * a * tw * max(C, F) * itemsize
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
    # zero-bordered padded input covering every tile; keyed by (H, W) too: sizes that share a
    # tile grid must not share a stale border
    xp = scratch(("wino_x", m, H, W), (N, m * th + 2, m * tw + 2, C), x.dtype, zero=True)
    xp[:, 1:H + 1, 1:W + 1] = x
    exact = H == m * th and W == m * tw
    y = out if exact else scratch(("wino_y", m), (N, m * th, m * tw, F), out.dtype)
    parts = _chunks(N, th, tw, a, C, F, x.itemsize, parallel._nthreads)

    def run(i):
        n0, n1, r0, r1 = parts[i]
        _chunk(xp[n0:n1], u, m, b, y[n0:n1], r0, r1, tw)
    parallel.run(run, len(parts))
    if not exact:
        np.copyto(out, y[:, :H, :W])
    return out


def _chunk(xp, u, m, b, y, r0, r1, tw):
    n, C, F = xp.shape[0], xp.shape[3], u.shape[2]
    a, rows = m + 2, r1 - r0
    T = n * rows * tw
    dt = xp.dtype
    kb, ka = _kron(m, dt)
    # two buffers, each used twice: tiles → transformed input, products → output tiles
    size = a * a * T * max(C, F)
    buf0, buf1 = scratch(("wino_0", m), (size,), dt), scratch(("wino_1", m), (size,), dt)
    # the (m+2)² overlapping tiles of the chunk, tap-major: d[i, j, n, ty, tx, c] =
    # xp[n, m·ty + i, m·tx + j, c] (a strided view; one copy makes it a GEMM operand)
    st = xp.strides
    tiles = np.ndarray((a, a, n, rows, tw, C), dt, xp, m * r0 * st[1],
                       (st[1], st[2], st[0], m * st[1], m * st[2], st[3]))
    d = buf0[:a * a * T * C].reshape(a * a, T * C)
    np.copyto(d.reshape(tiles.shape), tiles)
    v = buf1[:a * a * T * C].reshape(a * a, T, C)
    np.matmul(kb, d, out=v.reshape(a * a, T * C))
    prod_ = buf0[:a * a * T * F].reshape(a * a, T, F)
    np.matmul(v, u, out=prod_)
    if b is not None:
        prod_[a + 1] += b                       # Aᵀ's column 1 is all ones: every output gets it
    yt = buf1[:m * m * T * F].reshape(m * m, T * F)
    np.matmul(ka, prod_.reshape(a * a, T * F), out=yt)
    yv = y[:, m * r0: m * r1].reshape(n, rows, m, tw, m, F).transpose(2, 4, 0, 1, 3, 5)
    np.copyto(yv, yt.reshape(m, m, n, rows, tw, F))
