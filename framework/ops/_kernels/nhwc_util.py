"""Helpers of the channels-last kernels (ops/compiled/nhwc.py): per-thread scratch buffers, kernel-tap
geometry (valid output ranges, so that padding is never materialised where a tap loop is used),
padded copies, window views, row splits for the intra-op threads and the fused epilogue."""
from __future__ import annotations

import math
import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from .. import parallel

_SCRATCH_BYTES = 96 << 20     # per thread; least recently used buffers are dropped beyond it
_tls = threading.local()


def scratch(key: tuple, shape: tuple, dtype, zero: bool = False) -> np.ndarray:
    """A buffer private to this thread, reused across calls with the same key. With `zero`, it is
    zero-filled once at creation and callers only ever write the same positions into it, so it
    is kept per shape; otherwise one flat buffer per key serves every shape (grown to the
    largest), so that layers of different sizes share their working memory."""
    cache: OrderedDict | None = getattr(_tls, "bufs", None)
    if cache is None:
        cache = _tls.bufs = OrderedDict()
        _tls.nbytes = 0
    dtype = np.dtype(dtype)
    k = (key, shape, dtype, True) if zero else (key, dtype)
    buf = cache.get(k)
    if zero and buf is not None:
        return buf
    size = math.prod(shape)
    if buf is not None and buf.size >= size:
        return buf[:size].reshape(shape)
    if buf is not None:
        del cache[k]
        _tls.nbytes -= buf.nbytes
    buf = np.zeros(shape, dtype) if zero else np.empty(size, dtype)
    cache[k] = buf
    _tls.nbytes += buf.nbytes
    while _tls.nbytes > _SCRATCH_BYTES and len(cache) > 1:
        _, old = cache.popitem(last=False)
        _tls.nbytes -= old.nbytes
    return buf if zero else buf.reshape(shape)


def clear_scratch() -> None:
    """Drop this thread's scratch buffers (tests, memory measurements)."""
    _tls.bufs = OrderedDict()
    _tls.nbytes = 0


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


def im2col_nhwc(x, cols, tp):
    """cols (N, OH, OW, kh, kw, *ct) ← windows of x (N, H, W, *ct); cols' border stays zero."""
    for i, j, osl, isl in tp:
        if osl is not None:
            cols[(slice(None),) + osl + (i, j)] = x[(slice(None),) + isl]


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
    return _row_parts_cached(N, OH, work > _MIN_PAR, parallel._nthreads)


@lru_cache(maxsize=1024)
def _row_parts_cached(N, OH, big, nthreads):
    if N > 1:
        k = parallel.parts(N) if big else 1
        return tuple((a, b, 0, OH) for a, b in parallel.split(N, k))
    k = parallel.parts(OH) if big else 1
    return tuple((0, 1, a, b) for a, b in parallel.split(OH, k))


_MIN_PAR = 1 << 17              # elements of work below which an op is not split


def _windows(xp, n0, n1, a, b, osp, k, stride, dilate):
    """View (n, rows, OW, kh, kw, C) of the padded input: the windows of output rows [a, b)."""
    st = xp.strides
    return np.ndarray((n1 - n0, b - a, osp[1], k[0], k[1], xp.shape[3]), xp.dtype, xp,
                      n0 * st[0] + a * stride[0] * st[1],
                      (st[0], st[1] * stride[0], st[2] * stride[1], st[1] * dilate[0],
                       st[2] * dilate[1], st[3]))


def _epilogue(o, b, res, act, lo, hi, scale=None):
    if scale is not None:
        o *= scale
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
    parallel.run(run, len(prts))
    return out


@lru_cache(maxsize=1024)
def _pad_hi(sp, osp, k, stride, pad, dilate):
    """Bottom/right padding so that every window lies inside the padded buffer."""
    return tuple(max(0, (osp[i] - 1) * stride[i] + dilate[i] * (k[i] - 1) + 1 - pad[i] - sp[i])
                 for i in range(2))


def _pad_nhwc(x, pad, hi=None, nchw=False):
    """x (N, H, W, C) (or (N, C, H, W) with nchw) copied into this thread's zero-bordered
    padded NHWC scratch."""
    if nchw:
        x = x.transpose(0, 2, 3, 1)
    N, H, W, C = x.shape
    hi = pad if hi is None else hi
    if not any(pad) and not any(hi) and x.flags.c_contiguous:
        return x
    xp = scratch(("pad", pad, hi), (N, H + pad[0] + hi[0], W + pad[1] + hi[1], C), x.dtype,
                 zero=True)
    xp[:, pad[0]:pad[0] + H, pad[1]:pad[1] + W] = x
    return xp
