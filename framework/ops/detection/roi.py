"""Region-of-interest feature extraction: `_contrib_ROIAlign` and `ROIPooling`.

Both take a (N, C, H, W) feature map and (R, 5) rois `[batch_index, x1, y1, x2, y2]` in image
coordinates (scaled by `spatial_scale`) and return (R, C, ph, pw).
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from .flops import roi_align_flops, roi_pooling_flops
from ..nnutil import parse_cfloat
from ..attrs import Attr, Bool, Int, Shape
from ..registry import register

_CHUNK = 1 << 23   # elements of the rois' (window, C) patches per step: bounds memory


def _roi_shape(op: str, a, s, channels_div: int = 1):
    d, r = tuple(s[0]), tuple(s[1])
    if len(d) != 4:
        raise ShapeError(f"{op}: data must be 4-D (N, C, H, W), got {d}")
    if len(r) != 2 or r[1] != 5:
        raise ShapeError(f"{op}: rois must be (num_rois, 5), got {r}")
    ph, pw = a.pooled_size
    if d[1] % channels_div:
        raise ShapeError(f"{op}: {d[1]} channels do not divide by pooled_size {ph}x{pw}")
    return [(r[0], d[1] // channels_div, ph, pw)]


# -- ROIAlign ---------------------------------------------------------------------------------
def _align_shape(a, s):
    div = a.pooled_size[0] * a.pooled_size[1] if a.position_sensitive else 1
    return _roi_shape("ROIAlign", a, s, div)


def _axis_taps(start, bin_size, pooled: int, grid: int, size: int):
    """Per roi, bin and sample along one axis: (low, high, w_low, w_high, inside) with MXNet's
    clamping; `inside` is False for samples beyond [-1, size]."""
    dt = start.dtype.type
    p = np.arange(pooled, dtype=start.dtype)[None, :, None]
    g = (np.arange(grid, dtype=start.dtype) + dt(0.5))[None, None, :]
    b = bin_size[:, None, None]
    pos = (start[:, None, None] + p * b) + g * b / dt(grid)
    inside = (pos >= -1.0) & (pos <= size)
    pos = np.where(pos <= 0, dt(0), pos)
    low = pos.astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    pos = np.where(edge, low.astype(start.dtype), pos)
    frac = pos - low.astype(start.dtype)
    return low, high, dt(1) - frac, frac, inside


def _interp_window(taps, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per roi, the window of rows its samples touch along one axis, and the (R, pooled, span)
    weights averaging each bin's samples over that window (out-of-range samples weigh 0):
    the 2-D bin average is My @ patch @ Mx.T because the sample grid and MXNet's validity test
    are both separable. Returns (window indices (R, span), clamped into the map; weights).
    Rounding differs from MXNet's per-sample sums at float32 level."""
    low, high, w_low, w_high, inside = taps
    R, P, G = low.shape
    first = low.reshape(R, -1).min(axis=1)
    span = int((high.reshape(R, -1).max(axis=1) - first).max()) + 1
    z = w_low.dtype.type(0)
    m = np.zeros((R, P, span), w_low.dtype)
    at = (np.arange(R)[:, None, None], np.arange(P)[None, :, None])
    np.add.at(m, at + (low - first[:, None, None],), np.where(inside, w_low, z))
    np.add.at(m, at + (high - first[:, None, None],), np.where(inside, w_high, z))
    rows = np.minimum(first[:, None] + np.arange(span), size - 1)   # clamped rows weigh 0
    return rows, m / w_low.dtype.type(G)


def _align_group(a, hwc, rois, grid_h: int, grid_w: int):
    """ROIAlign of rois that share one sampling grid, from the (N, H, W, C) map; returns
    (R, C_out, ph, pw). Each roi reads only the window of the map its samples touch: patch
    (Hw, Ww, C) rows gathered whole, contracted along the width then the height by GEMMs."""
    dt = hwc.dtype.type
    N, H, W, C = hwc.shape
    PH, PW = a.pooled_size
    off = dt(0.5) if a.aligned else dt(0)
    scale = dt(a.spatial_scale)
    sw, sh = rois[:, 1] * scale - off, rois[:, 2] * scale - off
    rw, rh = rois[:, 3] * scale - off - sw, rois[:, 4] * scale - off - sh
    if not a.aligned:
        rw, rh = np.maximum(rw, dt(1)), np.maximum(rh, dt(1))
    hrows, my = _interp_window(_axis_taps(sh, rh / dt(PH), PH, grid_h, H), H)
    wrows, mx = _interp_window(_axis_taps(sw, rw / dt(PW), PW, grid_w, W), W)
    R, Hw, Ww = len(rois), hrows.shape[1], wrows.shape[1]
    bidx = rois[:, 0].astype(np.int64)
    patch = hwc[bidx[:, None, None], hrows[:, :, None], wrows[:, None, :]]  # (R, Hw, Ww, C)
    t = np.matmul(mx[:, None], patch)                               # (R, Hw, PW, C)
    full = np.matmul(my, t.reshape(R, Hw, PW * C)).reshape(R, PH, PW, C)
    full = full.transpose(0, 3, 1, 2)                               # (R, C, PH, PW)
    if not a.position_sensitive:
        return full
    co = C // (PH * PW)
    ch = (np.arange(co)[:, None, None] * PH * PW + np.arange(PH)[:, None] * PW + np.arange(PW))
    return np.take_along_axis(full, ch[None].repeat(len(rois), 0), 1)


def _patch_sizes(a, shape, rois) -> np.ndarray:
    """Elements of each roi's (window, C) patch, over-estimated by a row and column of margin
    on each side: sizes the chunks that bound memory."""
    C, H, W = shape[1:]
    ext = np.abs(rois[:, 3:5] - rois[:, 1:3]).astype(np.float64) * float(a.spatial_scale)
    hw = np.minimum(np.ceil(ext) + 3, [W, H])
    return np.maximum(1, hw[:, 0] * hw[:, 1] * C).astype(np.int64)


def _grid(a, rois, dt, axis: int) -> np.ndarray:
    if a.sample_ratio > 0:
        return np.full(len(rois), a.sample_ratio, np.int64)
    off = dt(0.5) if a.aligned else dt(0)
    scale = dt(a.spatial_scale)
    ext = (rois[:, 3 + axis] * scale - off) - (rois[:, 1 + axis] * scale - off)
    if not a.aligned:
        ext = np.maximum(ext, dt(1))
    return np.ceil(ext / dt(a.pooled_size[1 - axis])).astype(np.int64)


@register("_contrib_ROIAlign",
          attrs={"pooled_size": Shape(), "spatial_scale": Attr(parse_cfloat),
                 "sample_ratio": Int(-1), "position_sensitive": Bool(False),
                 "aligned": Bool(False)},
          inputs=("data", "rois"), infer_shape=_align_shape, strict=True, flops=roi_align_flops,
          out=True)
def roi_align(a, x, rois, out=None):
    """Bilinear average over a grid of samples per bin (Mask R-CNN). `sample_ratio <= 0` picks
    ceil(roi size / pooled size) samples per roi; `aligned` shifts by half a pixel. Rois with a
    negative batch index give zeros (MXNet leaves most of their output unwritten)."""
    oshape = _align_shape(a, [x.shape, rois.shape])[0]
    rois = rois.astype(x.dtype, copy=False)
    if out is None or out.shape != oshape or out.dtype != x.dtype:
        out = np.empty(oshape, x.dtype)     # a planned buffer is reused: no page faults
    gh, gw = _grid(a, rois, x.dtype.type, 1), _grid(a, rois, x.dtype.type, 0)
    if a.aligned:
        dt = x.dtype.type
        ext = rois[:, 3:5] * dt(a.spatial_scale) - rois[:, 1:3] * dt(a.spatial_scale)
        if (ext[rois[:, 0] >= 0] <= 0).any():
            raise OperatorError("ROIAlign: with aligned=True every roi needs a positive size")
    live = rois[:, 0].astype(np.int64) >= 0
    out[~live] = 0
    patch = _patch_sizes(a, x.shape, rois)
    hwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))   # channels last: gathers whole rows
    for g in {(int(h), int(w)) for h, w in zip(gh[live], gw[live])}:
        idx = np.flatnonzero(live & (gh == g[0]) & (gw == g[1]))
        step = max(1, _CHUNK // int(patch[idx].max()))
        for s in range(0, len(idx), step):
            part = idx[s:s + step]
            out[part] = _align_group(a, hwc, rois[part], *g)
    return out


# -- ROIPooling -------------------------------------------------------------------------------
def _round_half_away(v: np.ndarray) -> np.ndarray:
    return (np.sign(v) * np.floor(np.abs(v) + v.dtype.type(0.5))).astype(np.int64)


def _bins(start, extent: int, pooled: int, size: int):
    dt = np.float32
    bin_size = dt(extent) / dt(pooled)
    p = np.arange(pooled, dtype=dt)
    lo = np.floor(p * bin_size).astype(np.int64) + start
    hi = np.ceil((p + dt(1)) * bin_size).astype(np.int64) + start
    return np.clip(lo, 0, size), np.clip(hi, 0, size)


@register("ROIPooling", "_npx_roi_pooling",
          attrs={"pooled_size": Shape(), "spatial_scale": Attr(parse_cfloat)},
          inputs=("data", "rois"), num_outputs=2, num_visible=1,
          output_names=("output", "maxidx"),
          infer_shape=lambda a, s: _roi_shape("ROIPooling", a, s) * 2, strict=True,
          flops=roi_pooling_flops)
def roi_pooling(a, x, rois):
    """Max over each bin of the roi rounded to feature-map cells (Fast R-CNN); empty bins and rois
    with an out-of-range batch index give 0. Hidden output: flat input index of each max."""
    oshape = _roi_shape("ROIPooling", a, [x.shape, rois.shape])[0]
    N, C, H, W = x.shape
    PH, PW = a.pooled_size
    out = np.zeros(oshape, x.dtype)
    arg = np.full(oshape, -1, x.dtype)
    r = rois.astype(x.dtype, copy=False)
    lowest = x.dtype.type(-np.finfo(np.float32).max)    # MXNet's initial maximum
    corners = _round_half_away(r[:, 1:5] * x.dtype.type(np.float32(a.spatial_scale)))
    for i in range(len(r)):
        b = int(r[i, 0])
        if not 0 <= b < N:
            continue
        x1, y1, x2, y2 = (int(v) for v in corners[i])
        hs, he = _bins(y1, max(y2 - y1 + 1, 1), PH, H)
        ws, we = _bins(x1, max(x2 - x1 + 1, 1), PW, W)
        plane = x[b].reshape(C, H * W)
        for p in range(PH):
            for q in range(PW):
                if he[p] <= hs[p] or we[q] <= ws[q]:
                    continue
                cells = (np.arange(hs[p], he[p])[:, None] * W + np.arange(ws[q], we[q])).ravel()
                vals = plane[:, cells]
                k = np.argmax(vals, axis=1)
                out[i, :, p, q] = np.maximum(vals[np.arange(C), k], lowest)
                arg[i, :, p, q] = b * C * H * W + np.arange(C) * H * W + cells[k]
    return out, arg
