"""Position-sensitive roi pooling (R-FCN): `_contrib_PSROIPooling` and its deformable form
`_contrib_DeformablePSROIPooling`.

Both take a (N, output_dim·group²·…, H, W) score map and (R, 5) rois `[batch_index, x1, y1, x2,
y2]` whose corners are rounded to whole pixels, and return (R, output_dim, pooled, pooled): the
bin (ph, pw) of output channel d averages channel (d·group + gh)·group + gw, (gh, gw) being the
bin's cell in the group × group grid. PSROIPooling averages the bin's whole pixels; the deformable
form averages sample_per_part² bilinear samples of a bin shifted by a learned fraction
(`trans`·`trans_std`) of the roi size. Float32 arithmetic in MXNet 1.9.1's CPU order.
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from ..nnutil import parse_cfloat
from ..attrs import Attr, Bool, Int
from ..registry import register


def _rois_shape(op: str, s, out_dim: int, pooled: int):
    d, r = tuple(s[0]), tuple(s[1])
    if len(d) != 4:
        raise ShapeError(f"{op}: data must be 4-D (N, C, H, W), got {d}")
    if len(r) != 2 or r[1] != 5:
        raise ShapeError(f"{op}: rois must be (num_rois, 5), got {r}")
    return (r[0], out_dim, pooled, pooled)


def _group(pooled: int, group: int, dt) -> np.ndarray:
    """The group-grid cell of each bin index, clamped into [0, group)."""
    g = np.floor(np.arange(pooled, dtype=dt) * dt(group) / dt(pooled)).astype(np.int64)
    return np.clip(g, 0, group - 1)


def _channels(out_dim: int, pooled: int, group: int, C: int, op: str, dt) -> np.ndarray:
    """(out_dim, pooled, pooled) input channel of each output element."""
    g = _group(pooled, group, dt)
    c = (np.arange(out_dim)[:, None, None] * group + g[:, None]) * group + g[None, :]
    if c.max(initial=-1) >= C:
        raise ShapeError(f"{op}: output_dim {out_dim} x group {group}² needs {c.max() + 1} "
                         f"channels, data has {C}")
    return c


def _batch_index(op: str, rois: np.ndarray, N: int) -> np.ndarray:
    b = rois[:, 0].astype(np.int64)
    if ((b < 0) | (b >= N)).any():
        raise OperatorError(f"{op}: roi batch indices must lie in [0, {N}), got "
                            f"{sorted(set(b[(b < 0) | (b >= N)].tolist()))[:5]}")
    return b


def _rounded_corners(rois: np.ndarray, scale, dt):
    """Corners rounded half away from zero, (x1, y1) and (x2 + 1, y2 + 1) scaled."""
    r = np.sign(rois[:, 1:5]) * np.floor(np.abs(rois[:, 1:5]) + 0.5)
    r = r.astype(dt)
    return r[:, :2] * scale, (r[:, 2:] + dt(1)) * scale


# -- PSROIPooling ------------------------------------------------------------------------------
def _ps_group(a) -> int:
    return a.group_size if a.group_size > 0 else a.pooled_size


@register("_contrib_PSROIPooling",
          attrs={"spatial_scale": Attr(parse_cfloat), "output_dim": Int(), "pooled_size": Int(),
                 "group_size": Int(0)},
          inputs=("data", "rois"), strict=True,
          infer_shape=lambda a, s: [_rois_shape("PSROIPooling", s, a.output_dim, a.pooled_size)])
def psroi_pooling(a, x, rois):
    """Average of each bin's whole pixels in its position-sensitive channel; empty bins give 0."""
    oshape = _rois_shape("PSROIPooling", [x.shape, rois.shape], a.output_dim, a.pooled_size)
    N, C, H, W = x.shape
    P, dt = a.pooled_size, x.dtype.type
    ch = _channels(a.output_dim, P, _ps_group(a), C, "PSROIPooling", dt)
    rois = rois.astype(x.dtype, copy=False)
    b = _batch_index("PSROIPooling", rois, N)
    start, end = _rounded_corners(rois, dt(a.spatial_scale), dt)
    size = np.maximum(end - start, dt(0.1))                      # (R, 2): width, height
    step = size / dt(P)
    p = np.arange(P, dtype=x.dtype)
    lo = np.floor(p[None, None] * step[:, :, None] + start[:, :, None]).astype(np.int64)
    hi = np.ceil((p + dt(1))[None, None] * step[:, :, None] + start[:, :, None]).astype(np.int64)
    lim = np.array([W, H])[None, :, None]
    lo, hi = np.clip(lo, 0, lim), np.clip(hi, 0, lim)           # (R, 2, P)
    # a summed-area table per image and channel: each bin is four lookups
    sat = np.zeros((N, C, H + 1, W + 1), np.float64)
    sat[:, :, 1:, 1:] = x.astype(np.float64).cumsum(2).cumsum(3)
    bi, ci = b[:, None, None, None], ch[None]
    ys, ye = lo[:, 1, None, :, None], hi[:, 1, None, :, None]
    xs, xe = lo[:, 0, None, None, :], hi[:, 0, None, None, :]
    total = sat[bi, ci, ye, xe] - sat[bi, ci, ys, xe] - sat[bi, ci, ye, xs] + sat[bi, ci, ys, xs]
    area = (ye - ys) * (xe - xs)
    out = np.where(area > 0, total / np.maximum(area, 1), 0.0).astype(x.dtype)
    return out.reshape(oshape)


# -- DeformablePSROIPooling --------------------------------------------------------------------
def _dps_inputs(a):
    return ("data", "rois") if a.no_trans else ("data", "rois", "trans")


def _dps_shape(a, s):
    out = _rois_shape("DeformablePSROIPooling", s, a.output_dim, a.pooled_size)
    if not a.no_trans:
        t = tuple(s[2])
        part = a.part_size or a.pooled_size
        if len(t) != 4 or t[0] != out[0] or t[1] % 2 or t[2:] != (part, part) or \
                a.output_dim % max(t[1] // 2, 1):
            raise ShapeError(f"DeformablePSROIPooling: trans must be (num_rois, 2·classes, "
                             f"{part}, {part}) with output_dim divisible by classes, got {t}")
    return [out, out]


def _dps_offsets(a, trans, R: int, dt):
    """(dx, dy) per roi, output channel and bin: the learned shift, times trans_std."""
    P, D = a.pooled_size, a.output_dim
    if a.no_trans:
        z = np.zeros((R, D, P, P), dt)
        return z, z
    part = a.part_size or a.pooled_size
    classes = trans.shape[1] // 2
    cls = np.arange(D) // (D // classes)
    pp = np.floor(np.arange(P, dtype=dt) / dt(P) * dt(part)).astype(np.int64)
    t = trans.astype(dt, copy=False)
    tx = t[:, 2 * cls][:, :, pp[:, None], pp[None, :]]         # (R, D, P, P)
    ty = t[:, 2 * cls + 1][:, :, pp[:, None], pp[None, :]]
    std = dt(a.trans_std)
    return tx * std, ty * std


@register("_contrib_DeformablePSROIPooling",
          attrs={"spatial_scale": Attr(parse_cfloat), "output_dim": Int(), "group_size": Int(),
                 "pooled_size": Int(), "part_size": Int(0), "sample_per_part": Int(1),
                 "trans_std": Attr(parse_cfloat, 0.0), "no_trans": Bool(False)},
          inputs=_dps_inputs, num_outputs=2, num_visible=1, output_names=("output", "top_count"),
          strict=True, infer_shape=_dps_shape)
def deformable_psroi_pooling(a, x, rois, trans=None):
    """Average of sample_per_part² bilinear samples per bin, the bin shifted by `trans`; samples
    beyond half a pixel outside the map are skipped. Hidden output: the samples taken."""
    oshape = _dps_shape(a, [x.shape, rois.shape] + ([] if trans is None else [trans.shape]))[0]
    N, C, H, W = x.shape
    P, S, dt = a.pooled_size, a.sample_per_part, x.dtype.type
    ch = _channels(a.output_dim, P, a.group_size, C, "DeformablePSROIPooling", dt)
    rois = rois.astype(x.dtype, copy=False)
    b = _batch_index("DeformablePSROIPooling", rois, N)
    start, end = _rounded_corners(rois, dt(a.spatial_scale), dt)
    start, end = start - dt(0.5), end - dt(0.5)
    size = np.maximum(end - start, dt(0.1))                      # (R, 2): width, height
    step = size / dt(P)
    sub = step / dt(S)
    tx, ty = _dps_offsets(a, trans, len(rois), dt)              # (R, D, P, P)
    p = np.arange(P, dtype=x.dtype)
    # bin origins (R, D, P, P), then samples (R, D, P, P, S, S)
    w0 = (p[None, None, None, :] * step[:, 0, None, None, None] + start[:, 0, None, None, None]) \
        + tx * size[:, 0, None, None, None]
    h0 = (p[None, None, :, None] * step[:, 1, None, None, None] + start[:, 1, None, None, None]) \
        + ty * size[:, 1, None, None, None]
    k = np.arange(S, dtype=x.dtype)
    ws = w0[..., None, None] + (k[None, :] * sub[:, 0, None, None, None, None, None])
    hs = h0[..., None, None] + (k[:, None] * sub[:, 1, None, None, None, None, None])
    ok = (ws >= dt(-0.5)) & (ws <= dt(W - 0.5)) & (hs >= dt(-0.5)) & (hs <= dt(H - 0.5))
    ws, hs = np.clip(ws, dt(0), dt(W - 1)), np.clip(hs, dt(0), dt(H - 1))
    x1, y1 = np.floor(ws).astype(np.int64), np.floor(hs).astype(np.int64)
    x2, y2 = np.ceil(ws).astype(np.int64), np.ceil(hs).astype(np.int64)
    fx, fy = ws - x1.astype(x.dtype), hs - y1.astype(x.dtype)
    bi = b[:, None, None, None, None, None]
    ci = ch[None, :, :, :, None, None]
    one = dt(1)
    val = ((one - fx) * (one - fy) * x[bi, ci, y1, x1] + (one - fx) * fy * x[bi, ci, y2, x1]
           + fx * (one - fy) * x[bi, ci, y1, x2] + fx * fy * x[bi, ci, y2, x2])
    val = np.where(ok, val, dt(0))
    count = ok.sum(axis=(-2, -1)).astype(x.dtype)
    total = val.sum(axis=(-2, -1), dtype=x.dtype)
    out = np.where(count > 0, total / np.maximum(count, one), dt(0)).astype(x.dtype)
    return out.reshape(oshape), count.reshape(oshape)
