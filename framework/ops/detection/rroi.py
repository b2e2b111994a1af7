"""Rotated roi align: `_contrib_RROIAlign`.

Takes a (N, C, H, W) feature map and (R, 6) rois `[batch_index, center_x, center_y, width,
height, angle_degrees]` in image coordinates (scaled by `spatial_scale`) and returns
(R, C, ph, pw): each bin averages a grid of bilinear samples taken in the roi's frame, rotated by
the angle about its center (counter-clockwise in image axes, y pointing down). MXNet 1.9.1's CPU
kernel's clamping: samples beyond [-1, size] count as 0, the rest clamp to the map's last pixel.
"""
from __future__ import annotations

import math

import numpy as np

from ...base import OperatorError, ShapeError
from ..nnutil import parse_cfloat
from ..attrs import Attr, Int, Shape
from ..registry import register


def _shape(a, s):
    d, r = tuple(s[0]), tuple(s[1])
    if len(d) != 4:
        raise ShapeError(f"RROIAlign: data must be 4-D (N, C, H, W), got {d}")
    if len(r) != 2 or r[1] != 6:
        raise ShapeError(f"RROIAlign: rois must be (num_rois, 6), got {r}")
    if len(a.pooled_size) != 2 or min(a.pooled_size) <= 0:
        raise ShapeError(f"RROIAlign: pooled_size must be two positive sizes, "
                         f"got {a.pooled_size}")
    return [(r[0], d[1]) + tuple(a.pooled_size)]


def _taps(v, size: int):
    """Lower/upper pixel and the upper weight along one axis, with the kernel's clamping."""
    v = np.maximum(v, v.dtype.type(0))
    low = v.astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    frac = np.where(edge, v.dtype.type(0), v - low.astype(v.dtype))
    return low, high, frac


def _roi(a, x, roi):
    """(C, ph, pw) for one rotated roi."""
    dt = x.dtype.type
    _, C, H, W = x.shape
    PH, PW = a.pooled_size
    scale = dt(a.spatial_scale)
    cx, cy = roi[1] * scale, roi[2] * scale
    rw, rh = max(roi[3] * scale, dt(1)), max(roi[4] * scale, dt(1))
    theta = dt(float(roi[5]) * math.pi / 180.0)
    gh = a.sampling_ratio if a.sampling_ratio > 0 else int(math.ceil(rh / dt(PH)))
    gw = a.sampling_ratio if a.sampling_ratio > 0 else int(math.ceil(rw / dt(PW)))
    bh, bw = rh / dt(PH), rw / dt(PW)
    # sample offsets in the roi frame: (PH, gh) rows and (PW, gw) columns
    yy = (-rh / dt(2) + np.arange(PH, dtype=x.dtype)[:, None] * bh) \
        + (np.arange(gh, dtype=x.dtype)[None, :] + dt(0.5)) * bh / dt(gh)
    xx = (-rw / dt(2) + np.arange(PW, dtype=x.dtype)[:, None] * bw) \
        + (np.arange(gw, dtype=x.dtype)[None, :] + dt(0.5)) * bw / dt(gw)
    yy, xx = yy[:, :, None, None], xx[None, None]               # (PH, gh, PW, gw)
    cos, sin = np.cos(theta), np.sin(theta)
    sx = xx * cos + yy * sin + cx
    sy = yy * cos - xx * sin + cy
    inside = (sy >= -1.0) & (sy <= H) & (sx >= -1.0) & (sx <= W)
    y0, y1, ly = _taps(sy, H)
    x0, x1, lx = _taps(sx, W)
    hy, hx = dt(1) - ly, dt(1) - lx
    img = x[int(roi[0])]
    z = dt(0)
    val = (np.where(inside, hy * hx, z) * img[:, y0, x0] + np.where(inside, hy * lx, z)
           * img[:, y0, x1] + np.where(inside, ly * hx, z) * img[:, y1, x0]
           + np.where(inside, ly * lx, z) * img[:, y1, x1])     # (C, PH, gh, PW, gw)
    return val.sum(axis=(2, 4), dtype=x.dtype) / dt(gh * gw)


@register("_contrib_RROIAlign",
          attrs={"pooled_size": Shape(), "spatial_scale": Attr(parse_cfloat),
                 "sampling_ratio": Int(-1)},
          inputs=("data", "rois"), infer_shape=_shape, strict=True)
def rroi_align(a, x, rois):
    """Roi align over rotated boxes (text and aerial detectors)."""
    oshape = _shape(a, [x.shape, rois.shape])[0]
    rois = rois.astype(x.dtype, copy=False)
    b = rois[:, 0].astype(np.int64)
    if ((b < 0) | (b >= x.shape[0])).any():
        raise OperatorError(f"RROIAlign: roi batch indices must lie in [0, {x.shape[0]})")
    out = np.empty(oshape, x.dtype)
    for i in range(len(rois)):
        out[i] = _roi(a, x, rois[i])
    return out
