"""Image resampling as two small matrices: out = Wh · img · Wwᵀ (per channel).

The weights follow OpenCV's `cv::resize`, which MXNet's image operators call: pixel centres at
half-integers (INTER_LINEAR, INTER_CUBIC with a = -0.75, taps clamped at the border),
INTER_NEAREST at `floor(i · scale)`, INTER_AREA as box coverage when shrinking. Integer images
are rounded and saturated back to their dtype. OpenCV computes uint8 bilinear in fixed point, so
a value may differ by one from this float computation.
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError

INTERP_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area"}


def _linear(n_in: int, n_out: int) -> np.ndarray:
    w = np.zeros((n_out, n_in))
    f = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    x0 = np.floor(f).astype(np.int64)
    t = f - x0
    t[x0 < 0] = 0.0
    x0 = np.clip(x0, 0, n_in - 1)
    t[x0 >= n_in - 1] = 0.0
    rows = np.arange(n_out)
    np.add.at(w, (rows, x0), 1.0 - t)
    np.add.at(w, (rows, np.minimum(x0 + 1, n_in - 1)), t)
    return w


def _cubic(n_in: int, n_out: int, a: float = -0.75) -> np.ndarray:
    w = np.zeros((n_out, n_in))
    f = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    x0 = np.floor(f).astype(np.int64)
    t = f - x0
    rows = np.arange(n_out)
    for k in range(-1, 3):
        d = np.abs(t - k)
        c = np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                     np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
        np.add.at(w, (rows, np.clip(x0 + k, 0, n_in - 1)), c)
    return w


def _nearest(n_in: int, n_out: int) -> np.ndarray:
    w = np.zeros((n_out, n_in))
    idx = np.minimum(np.floor(np.arange(n_out) * (n_in / n_out)).astype(np.int64), n_in - 1)
    w[np.arange(n_out), idx] = 1.0
    return w


def _area_linear(n_in: int, n_out: int) -> np.ndarray:
    """INTER_AREA when either axis grows: two taps at floor(i · scale), weighted by how far the
    output pixel's right edge lies past the source pixel's (OpenCV's rule)."""
    w = np.zeros((n_out, n_in))
    i = np.arange(n_out)
    x0 = np.floor(i * (n_in / n_out)).astype(np.int64)
    f = (i + 1) - (x0 + 1) * (n_out / n_in)
    f = np.where(f <= 0, 0.0, f - np.floor(f))
    np.add.at(w, (i, np.minimum(x0, n_in - 1)), 1.0 - f)
    np.add.at(w, (i, np.minimum(x0 + 1, n_in - 1)), f)
    return w


def _area(n_in: int, n_out: int) -> np.ndarray:
    scale = n_in / n_out
    lo = np.arange(n_out)[:, None] * scale
    px = np.arange(n_in)[None, :]
    cover = np.clip(np.minimum(px + 1, lo + scale) - np.maximum(px, lo), 0, None)
    return cover / scale


_WEIGHTS = {0: _nearest, 1: _linear, 2: _cubic, 3: _area}


def axis_weights(n_in: int, n_out: int, interp: int) -> np.ndarray:
    fn = _WEIGHTS.get(int(interp))
    if fn is None:
        raise OperatorError(f"image resize: interp={interp} is not supported "
                            f"(supported: {sorted(INTERP_NAMES.items())})")
    return fn(n_in, n_out)


def resize_hwc(img: np.ndarray, height: int, width: int, interp: int) -> np.ndarray:
    """Resize an (H, W, C) or (N, H, W, C) image to (height, width), keeping its dtype."""
    h_ax = img.ndim - 3
    n_h, n_w = img.shape[h_ax], img.shape[h_ax + 1]
    if (n_h, n_w) == (height, width):
        return img.copy()
    ct = np.float64 if img.dtype == np.float64 else np.float32
    if int(interp) == 3 and (height > n_h or width > n_w):   # OpenCV: box filter only when
        wh, ww = _area_linear(n_h, height), _area_linear(n_w, width)  # neither axis grows
    else:
        wh, ww = axis_weights(n_h, height, interp), axis_weights(n_w, width, interp)
    wh, ww = wh.astype(ct), ww.astype(ct)
    out = np.einsum("oh,...hwc->...owc", wh, img.astype(ct, copy=False))
    out = np.einsum("pw,...owc->...opc", ww, out)
    return saturate(out, img.dtype)


def saturate(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """OpenCV's saturate_cast: integer targets round and clip to their range."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(x), info.min, info.max).astype(dtype)
    return x.astype(dtype, copy=False)
